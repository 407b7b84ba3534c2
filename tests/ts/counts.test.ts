// The counts path on the real WASM module: bucket counts in, the same
// private quantiles out as from the rows; and DuckDB as the engine that
// counts a 10^7-row Parquet file.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadDpQuantiles, type DpQuantiles, type QuantileMethod } from '../../dist/node.js';

import { errorCode as code, lcgData } from './helpers.js';

let dpq: DpQuantiles;
const dir = mkdtempSync(join(tmpdir(), 'dpq-counts-'));
beforeAll(async () => {
  dpq = await loadDpQuantiles();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// counts[i] by a database's formula: floor((x - lower) / w), clamped.
function bucketCounts(rows: ArrayLike<number>, lower: number, upper: number, buckets: number): Float64Array {
  const width = (upper - lower) / buckets;
  const counts = new Float64Array(buckets);
  for (let i = 0; i < rows.length; i++) {
    counts[Math.min(Math.max(Math.floor((rows[i] - lower) / width), 0), buckets - 1)]++;
  }
  return counts;
}

describe('releaseFromCounts', () => {
  it('releases what the bucketed rows release, bit for bit, for every method', () => {
    // Rows off bucket edges (w = 0.5), with an atom and clamped values.
    const rows = Float64Array.from(lcgData(3000, 9), (x, i) => (i % 4 === 0 ? 40.25 : Math.floor(x * 4) / 4 + 0.1 - 5));
    const counts = bucketCounts(rows, 0, 100, 200);
    for (const method of dpq.methods) {
      for (const extra of [{ epsilon: 1 }, { rho: 0.5, confidence: 0.9 }, { epsilon: 2, confidence: 0.8, interval: 'population' as const }]) {
        if (method === 'inverse-sensitivity' && 'interval' in extra) continue;
        const options = { lower: 0, upper: 100, quantiles: [0.9, 0.25, 0.5], method, seed: 5, ...extra } as never;
        const fromRows = dpq.release(rows, { ...(options as object), buckets: 200 } as never);
        const fromCounts = dpq.releaseFromCounts(counts, options);
        const fromBigints = dpq.releaseFromCounts(Array.from(counts, (c) => BigInt(c)), options);
        expect(Array.from(fromCounts.values), `${method}`).toEqual(Array.from(fromRows.values));
        expect(Array.from(fromBigints.values)).toEqual(Array.from(fromRows.values));
        expect(fromCounts.intervals?.low).toEqual(fromRows.intervals?.low);
        expect(fromCounts.intervals?.high).toEqual(fromRows.intervals?.high);
        expect(fromCounts.privacy).toEqual(fromRows.privacy);
        // Grid methods, and AggTree (its leaves are the buckets), release
        // bucket edges: multiples of 0.5 here.
        if (method !== 'tree-cdf') {
          for (const v of fromCounts.values) expect(v * 2).toBe(Math.round(v * 2));
        }
      }
    }
    // The default reads the buckets as a step grid: AggTree for many
    // quantiles (m >= 4 on at most 256 points under epsilon), AQ for few,
    // from counts as from the bucketed rows.
    for (const m of [3, 4]) {
      const quantiles = Array.from({ length: m }, (_, i) => (i + 1) / (m + 1));
      const options = { lower: 0, upper: 100, quantiles, epsilon: 1, seed: 2 };
      const fromCounts = dpq.releaseFromCounts(counts, options);
      const fromRows = dpq.release(rows, { ...options, buckets: 200 });
      expect(fromCounts.method).toBe(m >= 4 ? 'aggtree' : 'aq');
      expect(fromRows.method).toBe(fromCounts.method);
      expect(Array.from(fromCounts.values)).toEqual(Array.from(fromRows.values));
      expect(fromCounts.resolution).toBe(0.5);
    }
    // quantilesFromCounts: the values alone.
    expect(dpq.quantilesFromCounts(counts, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1, seed: 1 })).toEqual(
      dpq.releaseFromCounts(counts, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1, seed: 1 }).values,
    );
  });

  it('spends from a session like any release', () => {
    const counts = bucketCounts(lcgData(500, 2), 0, 100, 100);
    using session = dpq.session({ epsilon: 1.5 });
    session.releaseFromCounts(counts, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1 });
    expect(session.spent).toEqual({ epsilon: 1 });
    expect(code(() => session.quantilesFromCounts(counts, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1 }))).toBe(
      'BUDGET_EXCEEDED',
    );
  });

  it('releases from the largest totals in milliseconds, every method (work bounded by public parameters)', () => {
    // Ten buckets of 3 10^12 rows ran for minutes before 0.5 (AQ's split
    // draw); each total here must finish like 10^6 rows do.
    for (const total of [1e14, 9e15, 2 ** 53 - 1]) {
      const counts = new Array(10).fill(Math.floor(total / 10));
      counts[9] = total - 9 * counts[0];
      for (const method of dpq.methods) {
        const joint = method.includes('joint') || method === 'inverse-sensitivity';
        const values = dpq.quantilesFromCounts(counts, {
          lower: 0,
          upper: 10,
          quantiles: [1 / 3, 2 / 3],
          epsilon: 1,
          seed: 1,
          method: method as QuantileMethod,
          ...(joint ? { maxRecords: 65536 } : {}),
        } as never);
        expect(Math.abs(values[0] - 3)).toBeLessThanOrEqual(1);
        expect(Math.abs(values[1] - 6)).toBeLessThanOrEqual(1);
      }
    }
  });

  it('rejects bad counts and options with a typed error', () => {
    const base = { lower: 0, upper: 10, quantiles: [0.5], epsilon: 1 };
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(code(() => dpq.releaseFromCounts([1, bad, 2], base))).toBe('INVALID_COUNTS');
    }
    // The position, never the value (a service may pass the message on).
    for (const bad of [-0.5, 1e17, 2.5, -3n, 2n ** 60n] as (number | bigint)[]) {
      let message = '';
      try {
        dpq.releaseFromCounts([1, bad, 2] as never, base);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toMatch(/INVALID_COUNTS.*counts\[1\]|counts\[1\]/);
      expect(message).not.toContain(String(bad));
      expect(message).not.toMatch(/e\+17|1152921504606846976|-0\.5|2\.5/);
    }
    expect(code(() => dpq.releaseFromCounts([1n, -2n], base))).toBe('INVALID_COUNTS');
    expect(code(() => dpq.releaseFromCounts([1n, 2n ** 60n], base))).toBe('INVALID_COUNTS');
    expect(code(() => dpq.releaseFromCounts(['1', 2] as never, base))).toBe('INVALID_ARGUMENT');
    expect(code(() => dpq.releaseFromCounts(7 as never, base))).toBe('INVALID_ARGUMENT');
    expect(code(() => dpq.releaseFromCounts([], base))).toBe('INVALID_OPTION');
    for (const extra of [{ step: 1 }, { buckets: 3 }, { users: ['a', 'b', 'c'], maxContributions: 1 }]) {
      expect(code(() => dpq.releaseFromCounts([1, 2, 3], { ...base, ...extra } as never))).toBe('INVALID_OPTION');
    }
    // Past 2^53 - 1 rows in all: TOO_LARGE, for the data owner only (any
    // fewer release, for every method: nothing is expanded).
    expect(code(() => dpq.releaseFromCounts([Number.MAX_SAFE_INTEGER, 1], base))).toBe('TOO_LARGE');
    expect(dpq.releaseFromCounts([4e9], base).values).toHaveLength(1);
    // The raw path's buckets: with step, or not whole.
    expect(code(() => dpq.release([1, 2], { ...base, buckets: 10, step: 1 }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.release([1, 2], { ...base, buckets: 2.5 }))).toBe('INVALID_OPTION');
    // The module keeps working.
    expect(dpq.quantilesFromCounts([0, 5, 0, 0, 0, 0, 0, 0, 0, 0], { ...base, seed: 1 })[0]).toBeLessThanOrEqual(10);
  });

  it('releases from counts of any size with every method, in the time of the buckets', () => {
    // 10^15 rows, four fifths below 500: a warehouse's GROUP BY. Every method
    // reads the non-empty buckets as runs, so nothing is expanded.
    const counts = Float64Array.from({ length: 1000 }, (_, i) => (i < 500 ? 1.6e12 : 4e11));
    const options = { lower: 0, upper: 1000, quantiles: [0.25, 0.5, 0.9], epsilon: 1 };
    for (const method of ['auto', 'aq', 'appindexp', 'aggtree', 'tree-cdf'] as const) {
      const values = dpq.quantilesFromCounts(counts, { ...options, method });
      // To a bucket: AggTree releases bucket edges (749 for the 750 that
      // ends bucket 749's ranks).
      [156.25, 312.5, 750].forEach((truth, i) => expect(Math.abs(values[i] - truth), method).toBeLessThanOrEqual(1));
    }
    // The joint methods read a uniform subset of their public record cap.
    for (const method of ['jointexp', 'hs-jointexp', 'inverse-sensitivity'] as const) {
      const release = dpq.releaseFromCounts(counts, { ...options, method, maxRecords: 100000, seed: 5 });
      expect(release.recordCap).toBe(100000);
      // A subset of 10^5: sampling error 0.9, 1.0 and 2.4 buckets; five of them.
      [156.25, 312.5, 750].forEach((truth, i) =>
        expect(Math.abs(release.values[i] - truth), method).toBeLessThanOrEqual([4.5, 5, 12][i]),
      );
    }
    // Up to Number.MAX_SAFE_INTEGER rows in all; one more is TOO_LARGE.
    expect(dpq.quantilesFromCounts([Number.MAX_SAFE_INTEGER - 1, 1], { ...options, method: 'tree-cdf' })).toHaveLength(3);
    expect(code(() => dpq.quantilesFromCounts([Number.MAX_SAFE_INTEGER, 1], { ...options, method: 'aq' }))).toBe('TOO_LARGE');
  });

  it('releases from DuckDB counts of a 10^7-row Parquet file exactly as from its rows', async () => {
    const file = join(dir, 'big.parquet');
    const example = join(process.cwd(), 'examples/duckdb-counts.mjs');
    execFileSync(process.execPath, [example, '--generate', '10000000', file], { stdio: 'pipe' });
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const [lower, upper, buckets] = [0, 100, 10000];
    const width = (upper - lower) / buckets;
    // The engine's whole job: one GROUP BY; only the counts come back.
    const grouped = await connection.runAndReadAll(`
      SELECT least(greatest(floor((x - ${lower}) / ${width}), 0), ${buckets - 1})::BIGINT AS bucket, count(*) AS n
      FROM read_parquet('${file}') GROUP BY bucket`);
    const counts = new Array<bigint>(buckets).fill(0n);
    for (const [bucket, n] of grouped.getRows()) counts[Number(bucket)] = n as bigint;
    const total = counts.reduce((a, b) => a + b, 0n);
    expect(total).toBe(10_000_000n);
    // The rows themselves, for the raw path (this test only: users need not).
    const read = await connection.runAndReadAll(`SELECT x FROM read_parquet('${file}')`);
    const rows = Float64Array.from(read.getColumns()[0] as number[]);
    connection.closeSync();
    expect(rows.length).toBe(10_000_000);
    // Our bucketing agrees with the engine's on every bucket.
    expect(Array.from(bucketCounts(rows, lower, upper, buckets))).toEqual(counts.map(Number));
    const quantiles = [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99];
    const sorted = Float64Array.from(rows).sort();
    for (const method of ['aq', 'appindexp', 'aggtree'] as QuantileMethod[]) {
      const options = { lower, upper, quantiles, epsilon: 1, method, seed: 11 } as never;
      const fromCounts = dpq.releaseFromCounts(counts, options);
      const fromRows = dpq.release(rows, { ...(options as object), buckets } as never);
      expect(Array.from(fromCounts.values), method).toEqual(Array.from(fromRows.values));
      // And near the truth: at n = 10^7 within two buckets of the true
      // quantile for the grid methods.
      if (method !== 'aggtree') {
        quantiles.forEach((q, i) => {
          const truth = sorted[Math.floor(q * rows.length)];
          expect(Math.abs(fromCounts.values[i] - truth)).toBeLessThan(2 * width + 1e-9);
        });
      }
    }
    // The example prints the same release for the same seed.
    const printed = JSON.parse(
      execFileSync(process.execPath, [example, file, '--buckets', String(buckets), '--quantiles', quantiles.join(','), '--seed', '11'], {
        encoding: 'utf8',
      }),
    );
    const expected = dpq.releaseFromCounts(counts, { lower, upper, quantiles, epsilon: 1, seed: 11 });
    expect(printed.quantiles.map((e: { value: number }) => e.value)).toEqual(Array.from(expected.values));
  }, 180_000);
});
