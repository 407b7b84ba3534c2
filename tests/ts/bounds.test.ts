// Private bounds on the real WASM module: estimated, then used by a release.
import { beforeAll, describe, expect, it } from 'vitest';

import { loadDpQuantiles, type DpQuantiles } from '../../dist/node.js';

import { errorCode as code } from './helpers.js';

let dpq: DpQuantiles;
beforeAll(async () => {
  dpq = await loadDpQuantiles();
});

// 10,000 incomes, log-uniform between 10^2 and 10^6 (a fixed generator).
function incomes(): Float64Array {
  const out = new Float64Array(10000);
  let state = 12345;
  for (let i = 0; i < out.length; i++) {
    state = (state * 48271) % 2147483647;
    out[i] = 10 ** (2 + (4 * state) / 2147483647);
  }
  return out;
}

describe('bounds', () => {
  it('estimates a range that holds the data, then a release uses it', () => {
    const data = incomes();
    const unseeded = dpq.bounds(data, { epsilon: 0.5 });
    expect(unseeded.privacy).toEqual({ kind: 'pure', epsilon: 0.5 });
    expect(unseeded.neighbouring).toBe('add-remove');
    // An empty bin clears with probability up to 5% by the threshold's
    // design (and stretches the range): a fixed seed keeps the range checks
    // from flaking (CI once drew such a bin).
    const b = dpq.bounds(data, { epsilon: 0.5, seed: 4 });
    expect(b.lower).toBeGreaterThan(0);
    expect(b.lower).toBeLessThanOrEqual(128);
    expect(b.upper).toBeGreaterThanOrEqual(2 ** 19);
    expect(b.upper).toBeLessThanOrEqual(2 ** 21);
    expect(b.threshold).toBe(Math.ceil(2 * Math.log(2149 / 0.05)));
    const median = dpq.quantiles(data, { lower: b.lower, upper: b.upper, quantiles: [0.5], epsilon: 0.5 })[0];
    expect(median).toBeGreaterThan(5000);
    expect(median).toBeLessThan(20000);
  });

  it('composes in a session, charges NOT_ENOUGH_DATA too, and checks its input', () => {
    const session = dpq.session({ epsilon: 1.2 });
    const data = incomes();
    const b = session.bounds(data, { epsilon: 0.2 });
    session.release(data, { lower: b.lower, upper: b.upper, quantiles: [0.5], epsilon: 0.7 });
    expect(session.spent.epsilon).toBe(0.9);
    // Three values: no bin clears the threshold except with probability
    // <= 5% (the threshold's design), so a fixed seed keeps this from flaking.
    expect(code(() => session.bounds([1, 2, 3], { epsilon: 0.1, seed: 2 }))).toBe('NOT_ENOUGH_DATA');
    expect(session.spent.epsilon).toBe(1);
    expect(code(() => session.bounds(data, { epsilon: 0.3 }))).toBe('BUDGET_EXCEEDED');
    session.dispose();
    expect(code(() => dpq.bounds(data, { epsilon: 1, rho: 1 }))).toBe('INVALID_PRIVACY');
    expect(code(() => dpq.bounds([1, Number.NaN], { epsilon: 1 }))).toBe('NON_FINITE_VALUE');
    expect(code(() => dpq.bounds(data, { epsilon: 1, lower: 0 } as never))).toBe('INVALID_OPTION');
    expect(dpq.bounds(data, { rho: 0.05 }).privacy).toEqual({ kind: 'zcdp', rho: 0.05 });
    expect(dpq.bounds(data, { epsilon: 1, seed: 3 }).privacy).toEqual({ kind: 'none', reason: 'seeded' });
  });
});
