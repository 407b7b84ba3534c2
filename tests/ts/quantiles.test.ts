// The package as users get it: the built dist/ entry point and the real WASM
// module, no mocks.
import { beforeAll, describe, expect, it } from 'vitest';

import {
  DpQuantilesError,
  loadDpQuantiles,
  type DpQuantiles,
  type QuantilesOptions,
} from '../../dist/node.js';

let dpq: DpQuantiles;
beforeAll(async () => {
  dpq = await loadDpQuantiles();
});

// Deterministic test data (mulberry32), not the library's randomness.
function uniformData(n: number, lower: number, upper: number, seed = 1): Float64Array {
  const out = new Float64Array(n);
  let state = seed >>> 0;
  for (let i = 0; i < n; i++) {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const u = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    out[i] = lower + u * (upper - lower);
  }
  return out;
}

// | #{x < v} - floor(q n) |, the papers' rank error.
function rankError(sorted: Float64Array, q: number, v: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return Math.abs(lo - Math.floor(q * sorted.length));
}

function uniformQuantiles(m: number): number[] {
  return Array.from({ length: m }, (_, i) => (i + 1) / (m + 1));
}

function expectError(fn: () => unknown, code: string, messagePart?: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(DpQuantilesError);
  const error = caught as DpQuantilesError;
  expect(error.code).toBe(code);
  expect(error.message.length).toBeGreaterThan(0);
  if (messagePart !== undefined) expect(error.message).toContain(messagePart);
}

const base = { lower: 0, upper: 100, quantiles: [0.25, 0.5, 0.75], epsilon: 1 };

describe('quantiles', () => {
  it('returns one value per quantile, inside the bounds, non-decreasing', () => {
    const data = uniformData(1000, 10, 90);
    const quantiles = [0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99];
    const values = dpq.quantiles(data, { ...base, quantiles });
    expect(values).toBeInstanceOf(Float64Array);
    expect(values.length).toBe(quantiles.length);
    for (let i = 0; i < values.length; i++) {
      expect(values[i]).toBeGreaterThanOrEqual(0);
      expect(values[i]).toBeLessThanOrEqual(100);
      if (i > 0) expect(values[i]).toBeGreaterThanOrEqual(values[i - 1]);
    }
  });

  it('accepts plain arrays and returns values in the order asked', () => {
    const data = Array.from(uniformData(5000, 0, 100));
    const sorted = Float64Array.from(data).sort();
    const quantiles = [0.9, 0.1, 0.5];
    const values = dpq.quantiles(data, { ...base, quantiles, epsilon: 1e4 });
    quantiles.forEach((q, i) => expect(rankError(sorted, q, values[i])).toBeLessThanOrEqual(1));
  });

  it('is accurate: mean rank error <= 0.5% of n on 10^5 points, eps = 1, m = 99', () => {
    const n = 100_000;
    const data = uniformData(n, -50, 50, 7);
    const sorted = Float64Array.from(data).sort();
    const quantiles = uniformQuantiles(99);
    const values = dpq.quantiles(data, { lower: -100, upper: 100, quantiles, epsilon: 1 });
    let total = 0;
    quantiles.forEach((q, i) => {
      total += rankError(sorted, q, values[i]);
    });
    const mean = total / quantiles.length;
    expect(mean).toBeLessThanOrEqual(0.005 * n);
  });

  it('releases the true quantiles at very large epsilon', () => {
    const data = uniformData(10_000, 0, 100, 3);
    const sorted = Float64Array.from(data).sort();
    const quantiles = uniformQuantiles(19);
    const values = dpq.quantiles(data, { ...base, quantiles, epsilon: 1e4 });
    quantiles.forEach((q, i) => expect(rankError(sorted, q, values[i])).toBeLessThanOrEqual(1));
  });

  it('reproduces with a seed and varies without one', () => {
    const data = uniformData(2000, 0, 100);
    const a = dpq.quantiles(data, { ...base, seed: 42 });
    const b = dpq.quantiles(data, { ...base, seed: 42 });
    const c = dpq.quantiles(data, { ...base, seed: 43 });
    expect(Array.from(a)).toEqual(Array.from(b));
    expect(Array.from(a)).not.toEqual(Array.from(c));
    const d = dpq.quantiles(data, base);
    const e = dpq.quantiles(data, base);
    expect(Array.from(d)).not.toEqual(Array.from(e));
  });

  it('does not modify the caller’s data', () => {
    const data = uniformData(100, -500, 500);
    const copy = Float64Array.from(data);
    dpq.quantiles(data, base);
    expect(Array.from(data)).toEqual(Array.from(copy));
  });

  it('spends rho under zCDP and reports the accounting', () => {
    const data = uniformData(1000, 0, 100);
    const release = dpq.release(data, { lower: 0, upper: 100, quantiles: [0.5, 0.9], rho: 0.5 });
    expect(release.privacy).toEqual({ kind: 'zcdp', rho: 0.5 });
    expect(release.method).toBe('aq');
    expect(release.levels).toBe(2);
    // The default's step look takes 2.5% of rho (continuous data: no
    // step), AQ's first look 5% of the rest; the rest of that splits over
    // the two levels.
    expect(release.stepLook).toEqual({ share: 0.025, step: null });
    expect(release.firstLook?.share).toBe(0.05);
    expect(release.mechanismEpsilon).toBeCloseTo(Math.sqrt((8 * 0.5 * 0.975 * 0.95) / 2), 12);
    expect(release.neighbouring).toBe('add-remove');
    const pure = dpq.release(data, { ...base, epsilon: 2 });
    expect(pure.privacy).toEqual({ kind: 'pure', epsilon: 2 });
    expect(pure.mechanismEpsilon).toBeCloseTo(0.975 * 0.95, 12);
    const paper = dpq.release(data, { ...base, epsilon: 2, method: 'aq', look: 0 });
    expect(paper.firstLook).toBeUndefined();
    expect(paper.mechanismEpsilon).toBeCloseTo(1, 12);
  });

  it('keeps p1 and p99 near the data under loose bounds, and reports its first look', () => {
    // Uniform(-5, 5) under public bounds [-100, 100]: without the look, most
    // releases put p1 or p99 tens of units outside the data.
    const data = uniformData(1000, -5, 5);
    const options = { lower: -100, upper: 100, quantiles: [0.01, 0.99], epsilon: 1 };
    let far = 0;
    let farWithout = 0;
    let exact = 0;
    let seenExact = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const release = dpq.release(data, { ...options, seed });
      const [p1, p99] = release.values;
      if (Math.abs(p1 - -4.9) > 20 || Math.abs(p99 - 4.9) > 20) far++;
      expect(release.firstLook?.share).toBe(0.1);
      // 16 bins of 12.5: the data's two, [-12.5, 12.5] (an empty bin's
      // noise passes the mark about once in 40).
      const [low, high] = release.firstLook?.found ?? [NaN, NaN];
      expect(low).toBeLessThanOrEqual(-5);
      expect(high).toBeGreaterThanOrEqual(5);
      if (low === -12.5 && high === 12.5) exact++;
      // Where it saw most values: the same two bins, a stray bin's noise
      // holding too little of the mass to widen it.
      const [seenLow, seenHigh] = release.firstLook?.seen ?? [NaN, NaN];
      if (seenLow === -12.5 && seenHigh === 12.5) seenExact++;
      const [q1, q99] = dpq.release(data, { ...options, seed, method: 'aq', look: 0 }).values;
      if (Math.abs(q1 - -4.9) > 20 || Math.abs(q99 - 4.9) > 20) farWithout++;
    }
    expect(far).toBeLessThanOrEqual(2);
    expect(farWithout).toBeGreaterThanOrEqual(40);
    expect(exact).toBeGreaterThanOrEqual(30);
    expect(seenExact).toBeGreaterThanOrEqual(55);
    expectError(() => dpq.release(data, { ...options, method: 'aq', look: 0.6 }), 'INVALID_OPTION', 'look');
    expectError(() => dpq.release(data, { ...options, look: 0.1 }), 'INVALID_OPTION', 'needs a method');
    expectError(() => dpq.release(data, { ...options, method: 'aq', look: -0.1 }), 'INVALID_OPTION', 'look');
  });

  it('takes a small tree where the values spread over the bounds, and keeps their extremes near them', () => {
    // Uniform(-70, 70) in [-100, 100], 120 quantiles: AQ's extremes landed
    // in the empty stretch to a bound in about 8% of releases; the default
    // reads its first look and takes AggTree's 16 x 16 tree instead
    // (docs/algorithms/step-look.md). Continuous, so no step is found.
    const data = uniformData(1000, -70, 70, 5);
    const sorted = Float64Array.from(data).sort();
    const quantiles = Array.from({ length: 120 }, (_, i) => (i + 1) / 121);
    const truth = quantiles.map((q) => sorted[Math.floor(q * 1000)]);
    let far = 0;
    let seenWide = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const release = dpq.release(data, { lower: -100, upper: 100, quantiles, epsilon: 1, seed });
      expect(release.method).toBe('aggtree');
      // Few bins pass five noise scales here, so `found` is a part of the
      // values; `seen` (the bins holding 90% of the counted mass) spans them.
      const [low, high] = release.firstLook?.seen ?? [NaN, NaN];
      if (low <= -50 && high >= 50) seenWide++;
      expect(release.levels).toBe(2);
      expect(release.stepLook).toEqual({ share: 0.025, step: null });
      expect(release.firstLook?.share).toBe(0.05);
      // The looks, then each level of counts on what they left: 1 in all.
      expect(0.025 + 0.975 * 0.05 + 2 * release.mechanismEpsilon).toBeCloseTo(1, 9);
      if (quantiles.some((_, i) => Math.abs(release.values[i] - truth[i]) > 20)) far++;
    }
    expect(far).toBeLessThanOrEqual(1);
    expect(seenWide).toBeGreaterThanOrEqual(38);
    // Concentrated values, the same request: AQ, as before.
    expect(dpq.release(uniformData(1000, -5, 5), { lower: -100, upper: 100, quantiles, epsilon: 1, seed: 1 }).method).toBe('aq');
  });

  it('says a seeded release is not private, for releases and streams', () => {
    const data = uniformData(500, 0, 100);
    const seeded = dpq.release(data, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1, seed: 4 });
    expect(seeded.privacy).toEqual({ kind: 'none', reason: 'seeded' });
    const approx = dpq.release(data, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1, seed: 4, method: 'appindexp', delta: 1e-6 });
    expect(approx.privacy).toEqual({ kind: 'none', reason: 'seeded' });
    const stream = dpq.createStream({ lower: 0, upper: 100, alpha: 0.01 });
    stream.push(data);
    expect(stream.release({ quantiles: [0.5], epsilon: 1, seed: 1 }).privacy).toEqual({ kind: 'none', reason: 'seeded' });
    expect(stream.release({ quantiles: [0.5], epsilon: 1 }).privacy).toEqual({ kind: 'pure', epsilon: 1 });
    stream.dispose();
  });

  it('handles no data, one value, one quantile and more quantiles than values', () => {
    expect(dpq.quantiles([], { ...base, quantiles: [0.5] }).length).toBe(1);
    expect(dpq.quantiles([42], base).length).toBe(3);
    const many = dpq.quantiles([1, 2, 3], { ...base, quantiles: uniformQuantiles(1000) });
    expect(many.length).toBe(1000);
    for (let i = 1; i < many.length; i++) expect(many[i]).toBeGreaterThanOrEqual(many[i - 1]);
  });

  it('lists its methods, read-only as typed', () => {
    expect(dpq.methods).toContain('aq');
    expect(Object.isFrozen(dpq.methods)).toBe(true);
    expect(() => (dpq.methods as string[]).push('x')).toThrow();
  });
});

describe('bad input', () => {
  const data = uniformData(100, 0, 100);
  const cases: [string, () => unknown, string, string?][] = [
    ['NaN value', () => dpq.quantiles([1, Number.NaN, 3], base), 'NON_FINITE_VALUE', 'index 1'],
    ['infinite value', () => dpq.quantiles([Infinity], base), 'NON_FINITE_VALUE', 'Infinity'],
    ['bounds reversed', () => dpq.quantiles(data, { ...base, lower: 5, upper: 1 }), 'INVALID_BOUNDS', 'lower'],
    ['equal bounds', () => dpq.quantiles(data, { ...base, lower: 5, upper: 5 }), 'INVALID_BOUNDS'],
    ['infinite bound', () => dpq.quantiles(data, { ...base, upper: Infinity }), 'INVALID_BOUNDS'],
    ['NaN bound', () => dpq.quantiles(data, { ...base, lower: Number.NaN }), 'INVALID_BOUNDS'],
    ['epsilon 0', () => dpq.quantiles(data, { ...base, epsilon: 0 }), 'INVALID_PRIVACY', 'epsilon'],
    ['epsilon negative', () => dpq.quantiles(data, { ...base, epsilon: -1 }), 'INVALID_PRIVACY'],
    ['epsilon NaN', () => dpq.quantiles(data, { ...base, epsilon: Number.NaN }), 'INVALID_PRIVACY'],
    ['epsilon infinite', () => dpq.quantiles(data, { ...base, epsilon: Infinity }), 'INVALID_PRIVACY'],
    // @ts-expect-error: the types require exactly one budget, as the runtime does
    ['both budgets', () => dpq.quantiles(data, { ...base, rho: 1 }), 'INVALID_PRIVACY', 'both'],
    // @ts-expect-error: the types require exactly one budget, as the runtime does
    ['no budget', () => dpq.quantiles(data, { lower: 0, upper: 1, quantiles: [0.5] }), 'INVALID_PRIVACY'],
    // @ts-expect-error: delta goes with method 'appindexp' only, as the runtime says
    ['delta without appindexp', () => dpq.quantiles(data, { ...base, delta: 1e-6 }), 'INVALID_OPTION', 'delta'],
    // @ts-expect-error: the types say delta needs appindexp for an explicit method too
    ['delta with aq', () => dpq.quantiles(data, { ...base, method: 'aq', delta: 1e-6 }), 'INVALID_OPTION', 'delta'],
    // @ts-expect-error: an array-like object is not an array; the types say so, as the runtime does
    ['array-like object', () => dpq.quantiles({ length: 1, 0: 5 }, base), 'INVALID_ARGUMENT'],
    ['rho 0', () => dpq.quantiles(data, { lower: 0, upper: 1, quantiles: [0.5], rho: 0 }), 'INVALID_PRIVACY', 'rho'],
    ['no quantiles', () => dpq.quantiles(data, { ...base, quantiles: [] }), 'INVALID_QUANTILES'],
    ['quantile 0', () => dpq.quantiles(data, { ...base, quantiles: [0.5, 0] }), 'INVALID_QUANTILES', 'quantiles[1]'],
    ['quantile 1', () => dpq.quantiles(data, { ...base, quantiles: [1] }), 'INVALID_QUANTILES'],
    ['quantile NaN', () => dpq.quantiles(data, { ...base, quantiles: [Number.NaN] }), 'INVALID_QUANTILES'],
    ['too many quantiles', () => dpq.quantiles(data, { ...base, quantiles: new Float64Array(2 ** 20 + 1).fill(0.5) }), 'TOO_LARGE'],
    // @ts-expect-error: an unknown method from JavaScript
    ['unknown method', () => dpq.quantiles(data, { ...base, method: 'median' }), 'UNKNOWN_METHOD', "'aq'"],
    // From JavaScript (TypeScript cannot flag it without a method to narrow on).
    ['option AQ does not take', () => dpq.quantiles(data, { ...base, branching: 4 } as QuantilesOptions), 'INVALID_OPTION', 'branching'],
    // @ts-expect-error: an option of the wrong JavaScript type
    ['boolean option', () => dpq.quantiles(data, { ...base, method: 'aggtree', height: true }), 'INVALID_OPTION', 'height'],
    // @ts-expect-error: wrong JavaScript types
    ['data not an array', () => dpq.quantiles('1,2,3', base), 'INVALID_ARGUMENT'],
    // @ts-expect-error: wrong JavaScript types
    ['string in data', () => dpq.quantiles([1, '2'], base), 'INVALID_ARGUMENT', 'data[1]'],
    // @ts-expect-error: wrong JavaScript types
    ['null options', () => dpq.quantiles(data, null), 'INVALID_ARGUMENT'],
    // @ts-expect-error: wrong JavaScript types
    ['string bound', () => dpq.quantiles(data, { ...base, lower: '0' }), 'INVALID_ARGUMENT', 'lower'],
    ['fractional seed', () => dpq.quantiles(data, { ...base, seed: 1.5 }), 'INVALID_ARGUMENT', 'seed'],
    // Messages a person can read: short numbers, grammar, typo hints.
    ['tiny negative epsilon', () => dpq.quantiles(data, { ...base, epsilon: -1e-7 }), 'INVALID_PRIVACY', 'epsilon is -1e-7;'],
    ['negative zero epsilon', () => dpq.quantiles(data, { ...base, epsilon: -0 }), 'INVALID_PRIVACY', 'epsilon is -0;'],
    ['a budget too small for exact noise', () => dpq.quantiles(data, { ...base, epsilon: 1e-300, method: 'aggtree' }), 'INVALID_PRIVACY', 'scale 4e+300 is above'],
    // @ts-expect-error: wrong JavaScript types
    ['undefined in data', () => dpq.quantiles([1, undefined], base), 'INVALID_ARGUMENT', 'data[1] is undefined;'],
    // @ts-expect-error: a typo of quantiles
    ['mistyped option', () => dpq.quantiles(data, { ...base, quantile: [0.5] }), 'INVALID_OPTION', "unknown option 'quantile' (did you mean 'quantiles'?)"],
    ['step wider than the range', () => dpq.quantiles(data, { ...base, lower: 0, upper: 100, step: 1000 }), 'INVALID_OPTION', 'wider than'],
    // @ts-expect-error: a typo of step
    ['mistyped method option', () => dpq.quantiles(data, { ...base, stepp: 1 }), 'INVALID_OPTION', "did you mean 'step'?"],
  ];
  for (const [name, call, code, part] of cases) {
    it(`${name} gives ${code} and the instance keeps working`, () => {
      expectError(call, code, part);
      const values = dpq.quantiles(data, base);
      expect(values.length).toBe(3);
    });
  }
});

describe('memory', () => {
  it('does not grow the heap over 1,000 calls on 10^4 points', () => {
    const data = uniformData(10_000, 0, 100);
    dpq.quantiles(data, base); // warm-up: the first call may grow the heap
    const before = dpq.heapBytes();
    for (let i = 0; i < 1000; i++) {
      dpq.quantiles(data, { ...base, quantiles: uniformQuantiles(20) });
      if (i % 100 === 0) {
        expect(() => dpq.quantiles([Number.NaN], base)).toThrow(DpQuantilesError);
      }
    }
    expect(dpq.heapBytes()).toBe(before);
  });

  it('grows for a large input and still works afterwards', () => {
    const data = uniformData(3_000_000, 0, 100);
    const values = dpq.quantiles(data, { ...base, epsilon: 1e3 });
    const sorted = Float64Array.from(data).sort();
    expect(rankError(sorted, 0.5, values[1])).toBeLessThanOrEqual(0.001 * data.length);
    expect(dpq.quantiles([1, 2, 3], base).length).toBe(3);
  });

  it('releases 10^8 values: 16 bytes of heap a value (their copy and the runs), 1.6 of the 2 GiB', async () => {
    // A fresh instance (its heap grows to about 1.6 GiB). At 24 bytes a
    // value, as when the sort had key arrays of its own, this was refused.
    const big = await loadDpQuantiles();
    const n = 1e8;
    const values = new Uint8Array(n);
    for (let i = 0; i < n; i++) values[i] = (i * 37) % 101;
    const [median] = big.quantiles(values, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1 });
    expect(Math.abs(median - 50)).toBeLessThanOrEqual(1);
    // 1.4 * 10^8 (2.24 GB) still does not fit.
    expectError(() => big.quantiles(new Uint8Array(1.4e8), base), 'TOO_LARGE');
    // 2.65 * 10^8 (under the 2^28 cap): the copy itself cannot be
    // allocated, and the refusal says how many values do fit.
    expectError(() => big.quantiles(new Uint8Array(2.65e8), base), 'TOO_LARGE', '16 bytes a value');
    expect(big.quantiles([1, 2, 3], { ...base, quantiles: [0.5] })).toHaveLength(1);
  }, 60_000);
});

describe('secure randomness and limits', () => {
  it('refuses to release without a secure random source, and works with a seed', async () => {
    // The real module, loaded without the entropy hook the entry points pass.
    const { default: createDpqModule } = await import('../../dist/generated/dpq_module.mjs');
    const { wrapModule } = await import('../../dist/api.js');
    const noEntropy = wrapModule(
      await createDpqModule({ dpqFillRandom: undefined as unknown as (b: Uint8Array) => void }),
    );
    expectError(() => noEntropy.quantiles([1, 2, 3], base), 'ENTROPY_UNAVAILABLE');
    const failing = wrapModule(
      await createDpqModule({
        dpqFillRandom: () => {
          throw new Error('no entropy today');
        },
      }),
    );
    expectError(() => failing.quantiles([1, 2, 3], base), 'ENTROPY_UNAVAILABLE');
    expect(noEntropy.quantiles([1, 2, 3], { ...base, seed: 1 }).length).toBe(3);
  });

  it('fills a 64 KiB pool per crypto call that serves many releases, and retries after a failed fill', async () => {
    const { default: createDpqModule } = await import('../../dist/generated/dpq_module.mjs');
    const { wrapModule } = await import('../../dist/api.js');
    const { webcrypto } = await import('node:crypto');
    const fills: number[] = [];
    let failNext = true;
    const pooled = wrapModule(
      await createDpqModule({
        dpqFillRandom: (bytes: Uint8Array) => {
          fills.push(bytes.length);
          if (failNext) {
            failNext = false;
            throw new Error('not yet');
          }
          webcrypto.getRandomValues(bytes);
        },
      }),
    );
    // The first fill fails: that release is refused, the next one refills.
    expectError(() => pooled.quantiles([1, 2, 3], base), 'ENTROPY_UNAVAILABLE');
    const data = Float64Array.from({ length: 1000 }, (_, i) => (i * 37) % 100);
    const quantiles = Array.from({ length: 120 }, (_, i) => (i + 1) / 121);
    const first = pooled.quantiles(data, { lower: 0, upper: 100, epsilon: 1, quantiles });
    // Releases until three fills after the failed one: the two fills in
    // between served at least 10 releases each (a release takes a few
    // hundred bytes to 3 KiB), not one.
    let releases = 1;
    while (fills.length < 4 && releases < 5000) {
      pooled.quantiles(data, { lower: 0, upper: 100, epsilon: 1, quantiles });
      releases += 1;
    }
    expect(fills.every((length) => length === 65536)).toBe(true);
    expect(fills.length).toBe(4);
    expect(releases).toBeGreaterThanOrEqual(2 * 10);
    expect(first.length).toBe(120);
  });

  it('rejects more values than the heap can hold, before and at allocation', () => {
    // Typed arrays pass the type check cheaply; Uint8Array keeps the test light.
    expectError(() => dpq.quantiles(new Uint8Array(2 ** 28 + 1), base), 'TOO_LARGE');
    // 2^28 - 1 doubles (2 GiB) cannot be allocated in a 2 GiB heap.
    expectError(() => dpq.quantiles(new Uint8Array(2 ** 28 - 1), base), 'TOO_LARGE');
    expect(dpq.quantiles([1, 2, 3], base).length).toBe(3);
  });
});
