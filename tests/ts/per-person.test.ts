// Protecting a person, not a row, on the real WASM module.
import { beforeAll, describe, expect, it } from 'vitest';

import { loadDpQuantiles, type DpQuantiles } from '../../dist/node.js';

import { errorCode as code, lcgData } from './helpers.js';

let dpq: DpQuantiles;
beforeAll(async () => {
  dpq = await loadDpQuantiles();
});

// 1,000 people with one value each in [0, 100), and one person ('heavy')
// with 10,000 values at 100.
function events(): { values: Float64Array; users: (string | number)[] } {
  const light = lcgData(1000, 7);
  const values = new Float64Array(11000);
  values.set(light);
  values.fill(100, 1000);
  const users: (string | number)[] = Array.from({ length: 1000 }, (_, i) => i);
  for (let i = 0; i < 10000; i++) users.push('heavy');
  return { values, users };
}

describe('per person', () => {
  it('one person with 10,000 values cannot move the median', () => {
    const { values, users } = events();
    const base = { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1 } as const;
    // Per value, the heavy person is the median.
    expect(dpq.quantiles(values, base)[0]).toBeGreaterThan(99);
    for (let t = 0; t < 10; t++) {
      const release = dpq.release(values, { ...base, users, maxContributions: 2 });
      expect(release.values[0]).toBeGreaterThan(40);
      expect(release.values[0]).toBeLessThan(60);
      expect(release.neighbouring).toBe('add-remove-user');
      expect(release.maxContributions).toBe(2);
      expect(release.privacy).toEqual({ kind: 'pure', epsilon: 1 });
    }
  });

  it('runs each mechanism with the budget of k values', () => {
    const { values, users } = events();
    const options = { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1 };
    const one = dpq.release(values, options);
    const four = dpq.release(values, { ...options, users, maxContributions: 4 });
    expect(four.mechanismEpsilon).toBeCloseTo(one.mechanismEpsilon / 4, 15);
    const rho = dpq.release(values, { lower: 0, upper: 100, quantiles: [0.5], rho: 0.5, users, maxContributions: 2 });
    const rhoOne = dpq.release(values, { lower: 0, upper: 100, quantiles: [0.5], rho: 0.5 });
    // zCDP: rho / k^2 per value, so the mechanism's epsilon halves at k = 2.
    expect(rho.mechanismEpsilon).toBeCloseTo(rhoOne.mechanismEpsilon / 2, 12);
    expect(rho.privacy).toEqual({ kind: 'zcdp', rho: 0.5 });
  });

  it('works for every method that protects adding or removing, and sanitize', () => {
    const { values, users } = events();
    for (const method of ['aq', 'jointexp', 'hs-jointexp', 'appindexp', 'aggtree', 'tree-cdf'] as const) {
      const release = dpq.release(values, {
        lower: 0,
        upper: 100,
        quantiles: [0.25, 0.5, 0.75],
        epsilon: 4,
        method,
        users,
        maxContributions: 1,
      } as never);
      expect(release.neighbouring).toBe('add-remove-user');
      expect(release.values[1]).toBeLessThan(75);
    }
    const sample = dpq.sanitize(values, { lower: 0, upper: 100, epsilon: 2, size: 99, users, maxContributions: 1 });
    expect(sample[49]).toBeLessThan(75);
  });

  it('composes in sessions', () => {
    const { values, users } = events();
    const people = dpq.session({ epsilon: 2, neighbouring: 'add-remove-user' });
    const options = { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1 };
    people.release(values, { ...options, users, maxContributions: 3 });
    expect(people.spent).toEqual({ epsilon: 1 });
    // A per-value release cannot join a per-person session.
    expect(code(() => people.release(values, options))).toBe('INVALID_PRIVACY');
    // In a per-value session, k = 1 counts twice over.
    const rows = dpq.session({ epsilon: 3 });
    rows.release(values, { ...options, users, maxContributions: 1 });
    expect(rows.spent).toEqual({ epsilon: 2 });
    rows.release(values, { ...options, users, maxContributions: 2 });
    expect(rows.spent).toEqual({ epsilon: 3 });
    people.dispose();
    rows.dispose();
  });

  it('bad input is a typed error and the module keeps working', () => {
    const { values, users } = events();
    const options = { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1 };
    expect(code(() => dpq.release(values, { ...options, users }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.release(values, { ...options, maxContributions: 2 }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.release(values, { ...options, users: users.slice(1), maxContributions: 2 }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(code(() => dpq.release(values, { ...options, users: [...users.slice(1), null] as never, maxContributions: 2 }))).toBe(
      'INVALID_ARGUMENT',
    );
    for (const k of [0, 1.5, -2, Number.NaN, 2 ** 40]) {
      expect(code(() => dpq.release(values, { ...options, users, maxContributions: k }))).toBe('INVALID_OPTION');
    }
    expect(
      code(() =>
        dpq.release(values, { ...options, method: 'inverse-sensitivity', users, maxContributions: 2 } as never),
      ),
    ).toBe('INVALID_OPTION');
    expect(dpq.quantiles(values, options)).toHaveLength(1);
  });
  it('bounds per person: one person\'s many values cannot stretch the range', () => {
    const values: number[] = [];
    const users: string[] = [];
    for (let i = 0; i < 2000; i++) {
      values.push(1 + ((i * 37) % 99));
      users.push(`p${i}`);
    }
    for (let i = 0; i < 10000; i++) {
      values.push(1e9);
      users.push('heavy');
    }
    expect(dpq.bounds(values, { epsilon: 1, seed: 1 }).upper).toBeGreaterThan(1e9);
    let inside = 0;
    for (let seed = 0; seed < 10; seed++) {
      const b = dpq.bounds(values, { epsilon: 1, users, maxContributions: 1, seed });
      expect(b.neighbouring).toBe('add-remove-user');
      expect(b.maxContributions).toBe(1);
      if (b.upper <= 128) inside++;
    }
    expect(inside).toBeGreaterThanOrEqual(8);
    // In a per-person session, and refused without its partner option.
    using session = dpq.session({ epsilon: 2, neighbouring: 'add-remove-user' });
    session.bounds(values, { epsilon: 1, users, maxContributions: 2 });
    expect(session.spent).toEqual({ epsilon: 1 });
    expect(code(() => dpq.bounds(values, { epsilon: 1, users }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.bounds(values, { epsilon: 1, users: ['a'], maxContributions: 1 }))).toBe('INVALID_ARGUMENT');
  });
});
