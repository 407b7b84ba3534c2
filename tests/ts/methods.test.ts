// Every method of the package on the real WASM module.
import { beforeAll, describe, expect, it } from 'vitest';

import {
  loadDpQuantiles,
  type DpQuantiles,
  type QuantileMethod,
  type QuantilesOptions,
} from '../../dist/node.js';

import { readFileSync } from 'node:fs';

import { errorCode as code, lcgData } from './helpers.js';

let dpq: DpQuantiles;
beforeAll(async () => {
  dpq = await loadDpQuantiles();
});


function rankError(sorted: Float64Array, q: number, v: number): number {
  let below = 0;
  while (below < sorted.length && sorted[below] < v) below++;
  return Math.abs(below - Math.floor(q * sorted.length));
}

const METHODS: QuantileMethod[] = [
  'aq',
  'jointexp',
  'inverse-sensitivity',
  'hs-jointexp',
  'appindexp',
  'aggtree',
  'tree-cdf',
];


describe('every method', () => {
  it('is listed', () => {
    expect([...dpq.methods]).toEqual(METHODS);
  });

  for (const method of METHODS) {
    it(`${method}: ordered values in the bounds, in the order asked, under epsilon and rho`, () => {
      for (const budget of [{ epsilon: 1 }, { rho: 0.5 }]) {
        const release = dpq.release(lcgData(2000, 5), {
          lower: 0,
          upper: 100,
          quantiles: [0.9, 0.1, 0.5],
          method,
          ...budget,
        } as QuantilesOptions);
        expect(release.method).toBe(method);
        expect(release.values[1]).toBeLessThanOrEqual(release.values[2]);
        expect(release.values[2]).toBeLessThanOrEqual(release.values[0]);
        for (const v of release.values) {
          expect(v).toBeGreaterThanOrEqual(0);
          expect(v).toBeLessThanOrEqual(100);
        }
        expect(release.privacy.kind).toBe('epsilon' in budget ? 'pure' : 'zcdp');
        expect(release.neighbouring).toBe(method === 'inverse-sensitivity' ? 'replace-one' : 'add-remove');
      }
    });
  }

  it('exponential-mechanism methods release the true quantiles at huge epsilon', () => {
    const values = lcgData(3000, 9);
    const sorted = Float64Array.from(values).sort();
    const quantiles = [0.1, 0.5, 0.9];
    for (const method of ['aq', 'jointexp', 'inverse-sensitivity', 'hs-jointexp', 'appindexp'] as const) {
      const out = dpq.quantiles(values, { lower: 0, upper: 100, quantiles, epsilon: 1e5, method, seed: 2 });
      // Inverse sensitivity's targets leave m records to place: its best
      // tuples tie, each quantile up to m ranks off.
      const slack = method === 'inverse-sensitivity' ? quantiles.length : 1;
      quantiles.forEach((q, i) => expect(rankError(sorted, q, out[i]), method).toBeLessThanOrEqual(slack));
    }
  });
});

describe('method options', () => {
  const base = { lower: 0, upper: 100, quantiles: [0.25, 0.5, 0.75], epsilon: 1 };

  it('accept their documented values', () => {
    const values = lcgData(1000, 5);
    expect(dpq.quantiles(values, { ...base, method: 'hs-jointexp', jitter: 'gaussian', scale: 0.01 })).toHaveLength(3);
    expect(dpq.quantiles(values, { ...base, method: 'aggtree', branching: 4, height: 6 })).toHaveLength(3);
    expect(dpq.quantiles(values, { ...base, method: 'tree-cdf', cells: 256, budget: 'min-variance' })).toHaveLength(3);
    const approx = dpq.release(values, { ...base, method: 'appindexp', delta: 1e-6 });
    expect(approx.privacy).toEqual({ kind: 'approx', epsilon: 1, delta: 1e-6 });
    expect(approx.mechanismEpsilon).toBeGreaterThan(1 / 3);
  });

  it('reject bad values with INVALID_OPTION and keep working', () => {
    const values = lcgData(200, 5);
    const bad: QuantilesOptions[] = [
      { ...base, method: 'aggtree', branching: 1 },
      { ...base, method: 'aggtree', height: 2.5 },
      { ...base, method: 'aggtree', branching: 1024, height: 10 },
      { ...base, method: 'tree-cdf', cells: 1000 },
      // @ts-expect-error: not one of the budget splits
      { ...base, method: 'tree-cdf', budget: 'optimal' },
      // @ts-expect-error: not one of the jitters
      { ...base, method: 'hs-jointexp', jitter: 'laplace' },
      { ...base, method: 'hs-jointexp', scale: -1 },
      { ...base, method: 'appindexp', delta: 0 },
      { ...base, method: 'appindexp', delta: 1 },
      // @ts-expect-error: delta belongs to appindexp only
      { ...base, method: 'jointexp', delta: 1e-6 },
      // @ts-expect-error: a number option given a string
      { ...base, method: 'aggtree', height: '4' },
    ];
    for (const options of bad) {
      expect(code(() => dpq.quantiles(values, options))).toBe('INVALID_OPTION');
      expect(dpq.quantiles(values, base)).toHaveLength(3);
    }
    expect(code(() => dpq.quantiles(values, { lower: 0, upper: 1, quantiles: [0.5], rho: 1, method: 'appindexp', delta: 1e-6 }))).toBe('INVALID_OPTION');
  });

  it('step: integer data give integer releases and an atom is released as itself', () => {
    // Half the values on 40, the rest integers spread over [0, 100].
    const values = Array.from({ length: 1000 }, (_, i) => (i % 2 ? 40 : (i * 37) % 101));
    let exact = 0;
    for (let trial = 0; trial < 100; trial++) {
      const [median] = dpq.quantiles(values, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1, step: 1 });
      if (median === 40) exact++;
    }
    expect(exact).toBeGreaterThanOrEqual(95);
    for (const method of ['aq', 'appindexp', 'jointexp', 'inverse-sensitivity', 'hs-jointexp', 'aggtree'] as const) {
      const out = dpq.quantiles(values, { ...base, method, step: 1 });
      for (const v of out) expect(Number.isInteger(v)).toBe(true);
    }
    const sample = dpq.sanitize(values, { lower: 0, upper: 100, epsilon: 1, size: 20, step: 5 });
    for (const v of sample) expect(v % 5).toBe(0);
    for (const step of [0, -1, Number.NaN, 1e-300]) {
      expect(code(() => dpq.quantiles(values, { ...base, step }))).toBe('INVALID_OPTION');
    }
    expect(code(() => dpq.sanitize(values, { lower: 0, upper: 1, epsilon: 1, step: -1 }))).toBe('INVALID_OPTION');
    // The tree CDF keeps its own grid; AggTree's leaves are the step grid's
    // points, at most 2^21 of them, at least as many as the given shape has.
    // @ts-expect-error: tree-cdf takes no step
    expect(code(() => dpq.quantiles(values, { ...base, method: 'tree-cdf', step: 1 }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.quantiles(values, { ...base, method: 'aggtree', step: 1e-5 }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.quantiles(values, { ...base, method: 'aggtree', step: 1, branching: 3, height: 4 }))).toBe('INVALID_OPTION');
    let tree = 0;
    for (let trial = 0; trial < 100; trial++) {
      const [median] = dpq.quantiles(values, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1, step: 1, method: 'aggtree' });
      if (median === 40) tree++;
    }
    expect(tree).toBeGreaterThanOrEqual(95);
  });

  it("the default ('auto') picks AggTree on a coarse step grid for many quantiles, AQ otherwise", () => {
    const values = Array.from({ length: 1000 }, (_, i) => (i % 2 ? 40 : (i * 37) % 101));
    const many = Array.from({ length: 30 }, (_, i) => (i + 1) / 31);
    const ran = (options: Partial<QuantilesOptions>) =>
      dpq.release(values, { lower: 0, upper: 100, quantiles: many, epsilon: 1, ...options } as QuantilesOptions).method;
    expect(ran({ step: 1 })).toBe('aggtree'); // 101 points, m = 30 >= 5
    expect(ran({ step: 1, method: 'auto' })).toBe('aggtree');
    expect(ran({ step: 1, quantiles: [0.25, 0.5, 0.75] })).toBe('aq'); // m < 5
    expect(ran({ step: 0.01 })).toBe('aq'); // 10,001 points: m >= 416.7
    // No step: the step look finds 1 (whole numbers; seeded here) and the
    // rule picks as with step 1; on continuous data it finds none: AQ.
    const looked = dpq.release(values, { lower: 0, upper: 100, quantiles: many, epsilon: 1, seed: 3 });
    expect(looked.stepLook).toEqual({ share: 0.025, step: 1 });
    expect(looked.method).toBe('aggtree');
    const continuous = values.map((x, i) => x + ((i * 7919) % 997) / 1000);
    expect(dpq.release(continuous, { lower: 0, upper: 100, quantiles: many, epsilon: 1 }).method).toBe('aq');
    expect(ran({ step: 1, epsilon: undefined, rho: 0.5 })).toBe('aq'); // zCDP: m >= 40
    const release = dpq.release(values, { lower: 0, upper: 100, quantiles: many, epsilon: 1, step: 1 });
    for (const v of release.values) expect(Number.isInteger(v)).toBe(true);
    expect(release.resolution).toBe(1);
    // The default takes no method option but step.
    expect(code(() => dpq.quantiles(values, { ...base, branching: 4 } as QuantilesOptions))).toBe('INVALID_OPTION');
  });

  it('Seattle precipitation (57% zeros): the first quartile comes out as 0', () => {
    // The demo's first column, from the vega-datasets package.
    const path = new URL('../../node_modules/vega-datasets/data/seattle-weather.csv', import.meta.url);
    const [header, ...lines] = readFileSync(path, 'utf8').trim().split('\n');
    const at = header.split(',').indexOf('precipitation');
    const values = lines.map((line) => Number(line.split(',')[at]));
    expect(values.filter((x) => x === 0).length / values.length).toBeGreaterThan(0.5);
    // The default grid holds round values (multiples of 10^-3 here), so the
    // zero atom comes out as 0 whether or not 0 is a bound.
    for (const [lower, upper] of [[0, 60], [-20, 120]]) {
      let zero = 0;
      for (let trial = 0; trial < 20; trial++) {
        const [q1] = dpq.quantiles(values, { lower, upper, quantiles: [0.25, 0.5, 0.75], epsilon: 1 });
        if (Math.abs(q1) <= 1e-9) zero++;
      }
      expect(zero).toBeGreaterThanOrEqual(19);
    }
    const release = dpq.release(values, { lower: -20, upper: 120, quantiles: [0.9], epsilon: 1, method: 'aq' });
    expect(release.resolution).toBe(0.001);
    // Every release is a round multiple of the resolution (or a bound).
    expect(Math.abs(release.values[0] * 1000 - Math.round(release.values[0] * 1000))).toBeLessThan(1e-6);
    // The default may first find the data's own step (0.1 mm; the step
    // look), or a finer one, or none; its values are multiples of it.
    const looked = dpq.release(values, { lower: -20, upper: 120, quantiles: [0.9], epsilon: 1 });
    expect([0.001, 0.01, 0.1]).toContain(looked.resolution);
    const steps = looked.values[0] / looked.resolution;
    expect(Math.abs(steps - Math.round(steps))).toBeLessThan(1e-6);
    expect(dpq.release(values, { lower: 0, upper: 60, quantiles: [0.5], epsilon: 1, step: 0.1 }).resolution).toBe(0.1);
    expect(dpq.release(values, { lower: 0, upper: 60, quantiles: [0.5], epsilon: 1, method: 'aggtree' }).resolution).toBe(0);
  });

  it('aggtree: aggregation honaker (default) or none, both accurate', () => {
    const values = lcgData(5000, 8);
    const sorted = Float64Array.from(values).sort();
    for (const aggregation of ['honaker', 'none'] as const) {
      const out = dpq.quantiles(values, { ...base, method: 'aggtree', aggregation, epsilon: 1e3 });
      base.quantiles.forEach((q, i) => expect(rankError(sorted, q, out[i])).toBeLessThanOrEqual(25));
    }
    // @ts-expect-error: not an aggregation
    expect(code(() => dpq.quantiles(values, { ...base, method: 'aggtree', aggregation: 'hay' }))).toBe('INVALID_OPTION');
  });

  it('cap the joint methods\' records publicly: more values are subsampled, never refused by size', () => {
    // A refusal by size would answer "n > limit" for free (docs/refusals.md).
    const quantiles = Array.from({ length: 200 }, (_, i) => (i + 1) / 201);
    for (const method of ['jointexp', 'hs-jointexp', 'inverse-sensitivity'] as const) {
      const many = dpq.release(lcgData(100_000, 5), { ...base, quantiles, method });
      const few = dpq.release(lcgData(100, 5), { ...base, quantiles, method });
      expect(many.recordCap).toBeGreaterThan(100);
      expect(many.recordCap).toBeLessThan(100_000);
      expect(few.recordCap).toBe(many.recordCap); // public: the same for any data
      expect(many.values).toHaveLength(200);
    }
    // A lower cap, stated by the caller; checked against what the method takes.
    const fifty = dpq.release(lcgData(1000, 5), { ...base, method: 'jointexp', maxRecords: 50 });
    expect(fifty.recordCap).toBe(50);
    expect(code(() => dpq.release(lcgData(10, 5), { ...base, method: 'jointexp', maxRecords: 1e12 }))).toBe('INVALID_OPTION');
    // @ts-expect-error: maxRecords is the joint methods' option
    expect(code(() => dpq.release(lcgData(10, 5), { ...base, method: 'aq', maxRecords: 50 }))).toBe('INVALID_OPTION');
    expect(dpq.release(lcgData(100, 5), base).recordCap).toBeUndefined();
  });
});

describe('values a person reads', () => {
  // A value on a step grid is the double nearest lower + k step in decimal,
  // so it prints as the grid's decimal: 2.9, never 2.9000000000000004.
  const decimals = (value: number) => (String(value).split('.')[1] ?? '').length;
  it('print as the step grid\'s decimals, for every method on the grid, with intervals', () => {
    for (const [lower, upper, step, places] of [
      [0, 10, 0.1, 1],
      [-3, 7, 0.01, 2],
    ] as const) {
      const values = Array.from(lcgData(400, 9), (x) => lower + Math.round((x / 100) * (upper - lower) * 10) / 10);
      const quantiles = [0.1, 0.27, 0.5, 0.73, 0.9];
      for (const method of ['auto', 'aq', 'appindexp', 'jointexp', 'inverse-sensitivity', 'hs-jointexp', 'aggtree'] as const) {
        for (const confidence of [undefined, 0.9]) {
          const release = dpq.release(values, {
            lower,
            upper,
            quantiles,
            epsilon: 1,
            method,
            step,
            ...(confidence === undefined ? {} : { confidence }),
          } as never);
          const printed = [...release.values, ...(release.intervals ? [...release.intervals.low, ...release.intervals.high] : [])];
          for (const v of printed) expect(decimals(v), `${method} step ${step}: ${v}`).toBeLessThanOrEqual(places);
        }
      }
      // Sanitize's sample too.
      for (const v of dpq.sanitize(values, { lower, upper, epsilon: 1, step, size: 50 })) {
        expect(decimals(v), `sanitize ${v}`).toBeLessThanOrEqual(places);
      }
    }
  });

  it('bounds of non-negative data start at 0, not at -8.9e-16', () => {
    const zeros = [...Array(300).fill(0), ...Array.from(lcgData(300, 4))];
    for (let seed = 1; seed <= 5; seed++) {
      const b = dpq.bounds(zeros, { epsilon: 1, seed });
      expect(b.lower).toBe(0);
      expect(b.upper).toBeGreaterThan(64);
    }
  });
});

describe('sanitize', () => {
  it('releases a sorted synthetic sample that tracks the data', () => {
    const values = lcgData(5000, 3);
    const sorted = Float64Array.from(values).sort();
    const sample = dpq.sanitize(values, { lower: 0, upper: 100, epsilon: 1e4, size: 100, seed: 1 });
    expect(sample).toHaveLength(100);
    for (let i = 1; i < sample.length; i++) expect(sample[i]).toBeGreaterThanOrEqual(sample[i - 1]);
    for (let i = 0; i < 100; i += 10) {
      expect(rankError(sorted, (i + 1) / 101, sample[i])).toBeLessThanOrEqual(2);
    }
    expect(dpq.sanitize(values, { lower: 0, upper: 100, rho: 0.5 })).toHaveLength(1000);
  });

  it('rejects bad sizes and options', () => {
    const values = lcgData(100, 5);
    expect(code(() => dpq.sanitize(values, { lower: 0, upper: 1, epsilon: 1, size: 0 }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.sanitize(values, { lower: 0, upper: 1, epsilon: 1, size: 2.5 }))).toBe('INVALID_OPTION');
    // @ts-expect-error: sanitize takes no method
    expect(code(() => dpq.sanitize(values, { lower: 0, upper: 1, epsilon: 1, method: 'aq' }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.sanitize(values, { lower: 1, upper: 0, epsilon: 1 }))).toBe('INVALID_BOUNDS');
    expect(code(() => dpq.sanitize([Number.NaN], { lower: 0, upper: 1, epsilon: 1 }))).toBe('NON_FINITE_VALUE');
    expect(dpq.sanitize(values, { lower: 0, upper: 100, epsilon: 1, size: 3 })).toHaveLength(3);
  });
});
