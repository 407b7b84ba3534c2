// Confidence intervals on the real WASM module.
import { beforeAll, describe, expect, it } from 'vitest';

import { loadDpQuantiles, type DpQuantiles } from '../../dist/node.js';

import { errorCode as code, lcgData } from './helpers.js';

let dpq: DpQuantiles;
beforeAll(async () => {
  dpq = await loadDpQuantiles();
});

// The (floor(q n) + 1)-th smallest value: what the intervals are for.
function truth(data: Float64Array, q: number): number {
  const sorted = Float64Array.from(data).sort();
  return sorted[Math.min(Math.floor(q * sorted.length), sorted.length - 1)];
}

describe('confidence intervals', () => {
  it('bracket the true quantile and the released value, and report their share', () => {
    const data = lcgData(2000, 3);
    const quantiles = [0.1, 0.5, 0.9];
    let covered = 0;
    for (let t = 0; t < 50; t++) {
      const release = dpq.release(data, { lower: 0, upper: 100, quantiles, epsilon: 2, confidence: 0.9, step: 0.1 });
      const intervals = release.intervals!;
      expect(intervals.confidence).toBe(0.9);
      expect(intervals.privacy).toEqual({ kind: 'pure', epsilon: 0.5 });
      expect(release.privacy).toEqual({ kind: 'pure', epsilon: 2 });
      quantiles.forEach((q, i) => {
        expect(intervals.low[i]).toBeLessThanOrEqual(release.values[i]);
        expect(intervals.high[i]).toBeGreaterThanOrEqual(release.values[i]);
        // Not vacuous: well inside [0, 100] at n = 2000.
        expect(intervals.high[i] - intervals.low[i]).toBeLessThan(40);
        const x = truth(data, q);
        if (intervals.low[i] <= x && x <= intervals.high[i]) covered++;
      });
    }
    expect(covered).toBeGreaterThanOrEqual(0.9 * 150);
  });

  it('work for every method, with rho, and per person', () => {
    const data = lcgData(1000, 5);
    for (const method of ['aq', 'jointexp', 'appindexp', 'aggtree', 'tree-cdf'] as const) {
      const release = dpq.release(data, { lower: 0, upper: 100, quantiles: [0.5], rho: 1, method, confidence: 0.8, intervalShare: 0.5 } as never);
      expect(release.intervals!.privacy).toEqual({ kind: 'zcdp', rho: 0.5 });
      expect(release.intervals!.low[0]).toBeLessThanOrEqual(release.values[0]);
    }
    const users = Array.from({ length: 1000 }, (_, i) => i % 500);
    const person = dpq.release(data, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 2, users, maxContributions: 2, confidence: 0.9 });
    expect(person.intervals!.high[0]).toBeGreaterThanOrEqual(person.values[0]);
    // Without confidence there are none.
    expect(dpq.release(data, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1 }).intervals).toBeUndefined();
    // A seeded release's intervals protect nobody either.
    expect(dpq.release(data, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1, confidence: 0.9, seed: 1 }).intervals!.privacy).toEqual({
      kind: 'none',
      reason: 'seeded',
    });
  });

  it("'population' covers the distribution's quantile, wider than 'sample'", () => {
    // Fresh samples from Uniform(20, 60), whose q-quantile is 20 + 40 q: at
    // n = 20,000 and epsilon = 8 sampling error matters as much as the noise.
    let seed = 11;
    const uniform = () => {
      // mulberry32: an LCG's low bits would bias the sample.
      seed = (seed + 0x6d2b79f5) | 0;
      let z = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      z = (z + Math.imul(z ^ (z >>> 7), 61 | z)) ^ z;
      return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
    };
    const quantiles = [0.25, 0.5, 0.9];
    let covered = 0;
    let coveredBySample = 0;
    let populationWidth = 0;
    let sampleWidth = 0;
    const trials = 40;
    for (let t = 0; t < trials; t++) {
      const data = Float64Array.from({ length: 20000 }, () => 20 + 40 * uniform());
      const base = { lower: 0, upper: 100, quantiles, epsilon: 8, confidence: 0.9, step: 0.001 };
      const population = dpq.release(data, { ...base, interval: 'population' });
      const sample = dpq.release(data, base);
      expect(population.intervals!.kind).toBe('population');
      expect(sample.intervals!.kind).toBe('sample');
      expect(population.intervals!.privacy).toEqual({ kind: 'pure', epsilon: 2 });
      quantiles.forEach((q, i) => {
        const x = [30, 40, 56][i]; // 20 + 40 q, exactly
        const p = population.intervals!;
        const s = sample.intervals!;
        if (p.low[i] <= x && x <= p.high[i]) covered++;
        if (s.low[i] <= x && x <= s.high[i]) coveredBySample++;
        populationWidth += p.high[i] - p.low[i];
        sampleWidth += s.high[i] - s.low[i];
      });
    }
    expect(covered).toBeGreaterThanOrEqual(0.9 * trials * quantiles.length);
    // Not vacuous: about a unit wide on a range of 100.
    expect(populationWidth / (trials * quantiles.length)).toBeLessThan(3);
    expect(populationWidth).toBeGreaterThan(1.5 * sampleWidth);
    // Sample intervals are for the sample: here they hold the population's
    // quantile less often (about 87% in docs/algorithms/intervals.md).
    expect(coveredBySample).toBeLessThan(covered);
  });

  it('reject bad options with a typed error', () => {
    const data = lcgData(100, 1);
    const base = { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1 };
    for (const confidence of [0, 1, -1, 2, Number.NaN]) {
      expect(code(() => dpq.release(data, { ...base, confidence }))).toBe('INVALID_OPTION');
    }
    expect(code(() => dpq.release(data, { ...base, confidence: 0.9, intervalShare: 1 }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.release(data, { ...base, intervalShare: 0.5 }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.release(data, { ...base, confidence: '0.9' as never }))).toBe('INVALID_ARGUMENT');
    expect(code(() => dpq.release(data, { ...base, interval: 'population' }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.release(data, { ...base, confidence: 0.9, interval: 'everyone' as never }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.release(data, { ...base, confidence: 0.9, interval: 1 as never }))).toBe('INVALID_OPTION');
    const users = Array.from({ length: 100 }, (_, i) => i % 50);
    expect(code(() => dpq.release(data, { ...base, confidence: 0.9, interval: 'population', users, maxContributions: 2 }))).toBe(
      'INVALID_OPTION',
    );
    expect(code(() => dpq.release(data, { ...base, simultaneous: true }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.release(data, { ...base, confidence: 0.9, simultaneous: 'yes' as never }))).toBe('INVALID_OPTION');
  });

  it('for many quantiles come from one noisy tree: narrow, monotone, optionally simultaneous', () => {
    // Nine deciles of 10,000 values from N(50, 10), epsilon 1, 90%: the
    // issue's setting, where one bracket pair per decile was 11.4 wide.
    let state = 11;
    const uniform = () => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return (state + 0.5) / 4294967296;
    };
    const data = Float64Array.from({ length: 10000 }, () => 50 + 10 * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform()));
    const quantiles = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
    for (const simultaneous of [false, true]) {
      let width = 0;
      let together = 0;
      const runs = 40;
      for (let t = 0; t < runs; t++) {
        const release = dpq.release(data, { lower: 0, upper: 100, quantiles, epsilon: 1, confidence: 0.9, simultaneous });
        const intervals = release.intervals!;
        expect(intervals.method).toBe('tree');
        expect(intervals.simultaneous).toBe(simultaneous);
        expect(intervals.privacy).toEqual({ kind: 'pure', epsilon: 0.25 });
        let all = true;
        quantiles.forEach((q, i) => {
          if (i > 0) {
            expect(intervals.low[i]).toBeGreaterThanOrEqual(intervals.low[i - 1]);
            expect(intervals.high[i]).toBeGreaterThanOrEqual(intervals.high[i - 1]);
          }
          const x = truth(data, q);
          all &&= intervals.low[i] <= x && x <= intervals.high[i];
          width += (intervals.high[i] - intervals.low[i]) / (runs * quantiles.length);
        });
        together += all ? 1 : 0;
      }
      // Measured about 1.8 (each) and 2.4 (simultaneous); coverage near 1.
      expect(width).toBeLessThan(simultaneous ? 3.5 : 3);
      expect(together).toBeGreaterThanOrEqual(0.9 * runs);
    }
    // One quantile: the brackets are narrower, and are used.
    const median = dpq.release(data, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1, confidence: 0.9 });
    expect(median.intervals!.method).toBe('brackets');
  });

  it("are drawn on the step the default's look found, as if it had been given", () => {
    // Whole numbers, n = 1,000, nine deciles, epsilon 1, 90%: the step look
    // runs before the intervals, which then use its step's grid (101
    // points, not 4,097). Measured (seeded): mean width about 18 (at most
    // 18.8 over 100 groups of 20 releases), every decile held, every end
    // whole where the look found 1 (it did in 97%); drawn on the default
    // grid as before, 40.9.
    let state = 5;
    const uniform = () => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return (state + 0.5) / 4294967296;
    };
    const data = Float64Array.from({ length: 1000 }, () => Math.floor(20 + 50 * uniform()));
    const quantiles = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
    let found = 0;
    let width = 0;
    let held = 0;
    for (let t = 0; t < 20; t++) {
      const release = dpq.release(data, { lower: 0, upper: 100, quantiles, epsilon: 1, confidence: 0.9 });
      if (release.stepLook!.step !== 1) continue;
      found += 1;
      const intervals = release.intervals!;
      quantiles.forEach((q, i) => {
        expect(Number.isInteger(intervals.low[i]) && Number.isInteger(intervals.high[i])).toBe(true);
        const x = truth(data, q);
        held += intervals.low[i] <= x && x <= intervals.high[i] ? 1 : 0;
        width += intervals.high[i] - intervals.low[i];
      });
    }
    expect(found).toBeGreaterThanOrEqual(15);
    expect(held).toBeGreaterThanOrEqual(0.9 * 9 * found);
    expect(width / (9 * found)).toBeLessThan(26);
  });
});
