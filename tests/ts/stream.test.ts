// The streaming API on the real WASM module.
import { beforeAll, describe, expect, it, vi } from 'vitest';

import { loadDpQuantiles, type DpQuantiles } from '../../dist/node.js';

import { errorCode as code, lcgData } from './helpers.js';

let dpq: DpQuantiles;
beforeAll(async () => {
  dpq = await loadDpQuantiles();
});



describe('streams', () => {
  it('summarise many chunks in bounded memory and release with both methods', () => {
    const stream = dpq.createStream({ lower: 0, upper: 100, alpha: 1e-3 });
    let memory = 0;
    for (let i = 0; i < 20; i++) {
      stream.push(lcgData(50_000, i + 1));
      memory = Math.max(memory, stream.memoryBytes);
    }
    stream.push([1, 2, 3]);
    expect(stream.count).toBe(1_000_003);
    expect(memory).toBeLessThan(200_000); // vs 8 MB for the values themselves
    const hist = stream.release({ quantiles: [0.9, 0.1, 0.5], epsilon: 1, method: 'hist-gk' });
    expect(hist.neighbouring).toBe('add-remove');
    expect(hist.values[0]).toBeCloseTo(90, 0);
    expect(hist.values[1]).toBeCloseTo(10, 0);
    expect(hist.values[2]).toBeCloseTo(50, 0);
    // The default is DPHistGK; DPExpGK by name.
    expect(stream.release({ quantiles: [0.5], epsilon: 1, seed: 3 }).method).toBe('hist-gk');
    const exp = stream.release({ quantiles: [0.9, 0.1, 0.5], epsilon: 1, method: 'exp-gk' });
    expect(exp.method).toBe('exp-gk');
    expect(exp.neighbouring).toBe('replace-one');
    expect(exp.values[1]).toBeLessThanOrEqual(exp.values[2]);
    expect(exp.values[2]).toBeLessThanOrEqual(exp.values[0]);
    expect(stream.release({ quantiles: [0.5], rho: 0.5, method: 'hist-gk', bins: 64 }).privacy).toEqual({ kind: 'zcdp', rho: 0.5 });
    stream.dispose();
  });

  it('merge: shards sketched apart, one serialized, answer like one stream', () => {
    const shards = Array.from({ length: 4 }, () => dpq.createStream({ lower: 0, upper: 100, alpha: 1e-3 }));
    const all: number[] = [];
    for (let i = 0; i < 40; i++) {
      const chunk = lcgData(10_000, i + 7).map((x) => (i % 4 === 0 ? x / 2 : x));
      shards[i % 4].push(chunk);
      all.push(...chunk);
    }
    // A shard that travelled as bytes (a worker or another machine).
    const travelled = dpq.loadStream(shards[3].serialize());
    shards[3].dispose();
    const merged = shards[0];
    merged.merge(shards[1]);
    shards[2].merge(travelled);
    merged.merge(shards[2]);
    expect(merged.count).toBe(400_000);
    expect(shards[1].count).toBe(100_000); // unchanged
    // At a large epsilon exp-gk returns a value whose sketch rank interval
    // holds the target: at most 2 alpha n (800 ranks) from it. hist-gk is
    // within about a bin (0.1) of the truth.
    const sorted = Float64Array.from(all).sort();
    const quantiles = [0.05, 0.25, 0.5, 0.75, 0.95];
    const release = merged.release({ quantiles, epsilon: 1e4, method: 'exp-gk', seed: 1 });
    quantiles.forEach((q, i) => {
      const rank = sorted.findIndex((x) => x >= release.values[i]);
      expect(Math.abs(rank - q * all.length)).toBeLessThanOrEqual(800 + 2);
    });
    const hist = merged.release({ quantiles, epsilon: 10, method: 'hist-gk', seed: 1 });
    quantiles.forEach((q, i) => expect(Math.abs(hist.values[i] - sorted[Math.floor(q * all.length)])).toBeLessThan(0.5));
    // Only like with like.
    const other = dpq.createStream({ lower: 0, upper: 100, alpha: 1e-2 });
    expect(code(() => merged.merge(other))).toBe('INVALID_OPTION');
    expect(code(() => merged.merge(merged))).toBe('INVALID_ARGUMENT');
    expect(code(() => merged.merge({} as never))).toBe('INVALID_ARGUMENT');
    expect(code(() => merged.merge(shards[3]))).toBe('INVALID_STATE');
    for (const s of [merged, shards[1], shards[2], travelled, other]) s.dispose();
  });

  it('serialize and load round-trip: the same seed gives the same release', () => {
    const stream = dpq.createStream({ lower: -10, upper: 110, alpha: 0.01, bins: 256 });
    stream.push(lcgData(20_000, 3));
    const bytes = stream.serialize();
    const copy = dpq.loadStream(bytes);
    expect(copy.count).toBe(20_000);
    const options = { quantiles: [0.25, 0.75], epsilon: 1, seed: 9 } as const;
    expect(Array.from(copy.quantiles(options))).toEqual(Array.from(stream.quantiles(options)));
    expect(Array.from(copy.serialize())).toEqual(Array.from(bytes));
    stream.dispose();
    copy.dispose();
  });

  it('reject corrupt and truncated bytes with CORRUPT_DATA and keep working', () => {
    const stream = dpq.createStream({ lower: 0, upper: 1, alpha: 0.05 });
    stream.push(lcgData(1000, 4).map((x) => x / 100));
    const bytes = stream.serialize();
    stream.dispose();
    for (const length of [0, 5, 30, bytes.length - 1]) {
      expect(code(() => dpq.loadStream(bytes.slice(0, length)))).toBe('CORRUPT_DATA');
    }
    for (let i = 0; i < bytes.length; i += 7) {
      const bad = bytes.slice();
      bad[i] ^= 0x5a;
      expect(code(() => dpq.loadStream(bad))).toBe('CORRUPT_DATA');
    }
    // @ts-expect-error: not bytes
    expect(code(() => dpq.loadStream([1, 2, 3]))).toBe('INVALID_ARGUMENT');
    expect(dpq.quantiles([1, 2, 3], { lower: 0, upper: 4, quantiles: [0.5], epsilon: 1 })).toHaveLength(1);
  });

  it('take single values cheaply: one push at a time sketches as one chunk does', () => {
    const values = Float64Array.from({ length: 100_000 }, (_, i) => ((i * 7919) % 10_000) / 100);
    const single = dpq.createStream({ lower: 0, upper: 100, alpha: 1e-3 });
    const start = performance.now();
    for (const v of values) single.push([v]);
    const perPush = (performance.now() - start) / values.length;
    const whole = dpq.createStream({ lower: 0, upper: 100, alpha: 1e-3 });
    whole.push(values);
    expect(single.count).toBe(100_000);
    expect(single.serialize()).toEqual(whole.serialize());
    const options = { quantiles: [0.1, 0.5, 0.9], epsilon: 1, seed: 4 };
    expect(single.release(options).values).toEqual(whole.release(options).values);
    // About 0.4 microseconds a push here (was about 5): a figure for the
    // reader, not an assertion (no test times anything: npm run bench does).
    console.log(`one value a push: ${(1000 * perPush).toFixed(2)} us a push`);
    // A bad value is refused at its push, and nothing of it is added.
    expect(code(() => single.push([1, Number.NaN]))).toBe('NON_FINITE_VALUE');
    expect(single.count).toBe(100_000);
    // Merging reads what was gathered, on both sides.
    const other = dpq.createStream({ lower: 0, upper: 100, alpha: 1e-3 });
    other.push([5]);
    single.merge(other);
    expect(single.count).toBe(100_001);
    for (const s of [single, whole, other]) s.dispose();
  });

  it('print a release without a step as short decimals, not 61.15234375000001', () => {
    const stream = dpq.createStream({ lower: 0, upper: 100, alpha: 1e-3 });
    stream.push(Float64Array.from({ length: 20_000 }, (_, i) => ((i * 7919) % 10_000) / 100));
    for (const method of ['exp-gk', 'hist-gk'] as const) {
      for (let seed = 1; seed <= 5; seed++) {
        const { values } = stream.release({ quantiles: [0.1, 0.33, 0.61, 0.9], epsilon: 1, method, seed });
        // On the rows path's default grid over [0, 100] (10^-4): four
        // decimals at most, and still in order.
        for (const value of values) expect(String(value)).toMatch(/^\d{1,3}(\.\d{1,4})?$/);
        expect([...values].sort((a, b) => a - b)).toEqual([...values]);
      }
    }
    stream.dispose();
  });

  it('release on a public step as the decimals lower + k step, with either method', () => {
    const stream = dpq.createStream({ lower: -3, upper: 7, alpha: 1e-3 });
    // Values on a 0.01 grid: without a step the releases are interpolated.
    stream.push(Float64Array.from({ length: 30_000 }, (_, i) => Math.round(((i * 7919) % 1000) - 300) / 100));
    const quantiles = [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95];
    for (const method of ['exp-gk', 'hist-gk'] as const) {
      for (const [step, places] of [[0.1, 1], [0.01, 2], [0.25, 2]] as const) {
        for (let seed = 1; seed <= 5; seed++) {
          const { values } = stream.release({ quantiles, epsilon: 1, method, step, seed });
          for (const value of values) {
            // The double nearest the decimal: it prints with at most `places` decimals...
            expect(String(value)).toBe(String(Number(value.toFixed(places))));
            // ...and is on the grid -3 + k step.
            const k = Math.round((value + 3) / step);
            expect(Math.abs(value - (-3 + k * step))).toBeLessThan(1e-12);
            expect(value).toBeGreaterThanOrEqual(-3);
            expect(value).toBeLessThanOrEqual(7);
          }
          expect([...values]).toEqual([...values].sort((a, b) => a - b));
        }
      }
    }
    // A bad step is refused from public parameters, before any charge.
    const session = dpq.session({ epsilon: 1, neighbouring: 'replace-one' });
    expect(code(() => session.releaseStream(stream, { quantiles: [0.5], epsilon: 0.5, step: -1 }))).toBe('INVALID_OPTION');
    expect(code(() => session.releaseStream(stream, { quantiles: [0.5], epsilon: 0.5, step: 1e-20 }))).toBe('INVALID_OPTION');
    expect(session.spent).toEqual({ epsilon: 0 });
    expect(session.releases).toBe(0);
    stream.dispose();
  });

  it('turn bad input into typed errors', () => {
    expect(code(() => dpq.createStream({ lower: 0, upper: 1, alpha: 0 }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.createStream({ lower: 0, upper: 1, alpha: 0.7 }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.createStream({ lower: 2, upper: 1, alpha: 0.1 }))).toBe('INVALID_BOUNDS');
    expect(code(() => dpq.createStream({ lower: 0, upper: 1, alpha: 0.1, bins: 0 }))).toBe('INVALID_OPTION');
    // @ts-expect-error: an option streams do not take
    expect(code(() => dpq.createStream({ lower: 0, upper: 1, alpha: 0.1, epsilon: 1 }))).toBe('INVALID_OPTION');
    const stream = dpq.createStream({ lower: 0, upper: 1, alpha: 0.1 });
    stream.push([0.5, 0.25]);
    expect(code(() => stream.push([0.1, Number.NaN]))).toBe('NON_FINITE_VALUE');
    expect(stream.count).toBe(2);
    // @ts-expect-error: not numbers
    expect(code(() => stream.push(['a']))).toBe('INVALID_ARGUMENT');
    // @ts-expect-error: not a stream method
    expect(code(() => stream.quantiles({ quantiles: [0.5], epsilon: 1, method: 'aq' }))).toBe('UNKNOWN_METHOD');
    expect(code(() => stream.quantiles({ quantiles: [0.5], epsilon: 1, method: 'hist-gk', bins: 3 }))).toBe('INVALID_OPTION');
    expect(code(() => stream.quantiles({ quantiles: [0.5], epsilon: 1, method: 'exp-gk', bins: 4 }))).toBe('INVALID_OPTION');
    expect(code(() => stream.quantiles({ quantiles: [1.5], epsilon: 1 }))).toBe('INVALID_QUANTILES');
    // @ts-expect-error: the types require exactly one budget, as the runtime does
    expect(code(() => stream.quantiles({ quantiles: [0.5] }))).toBe('INVALID_PRIVACY');
    stream.dispose();
    stream.dispose(); // idempotent
    expect(code(() => stream.push([1]))).toBe('INVALID_STATE');
    expect(code(() => stream.count)).toBe('INVALID_STATE');
    expect(code(() => stream.quantiles({ quantiles: [0.5], epsilon: 1 }))).toBe('INVALID_STATE');
  });

  it('supports Symbol.dispose where the runtime has it, and frees its memory', () => {
    const dispose = (Symbol as { dispose?: symbol }).dispose;
    const stream = dpq.createStream({ lower: 0, upper: 1, alpha: 0.1 });
    if (dispose !== undefined) {
      (stream as unknown as Record<symbol, () => void>)[dispose]();
      expect(code(() => stream.count)).toBe('INVALID_STATE');
    } else {
      stream.dispose();
    }
    const warm = dpq.createStream({ lower: 0, upper: 100, alpha: 1e-3 });
    warm.push(lcgData(100_000, 5));
    warm.dispose();
    const before = dpq.heapBytes();
    for (let i = 0; i < 100; i++) {
      const s = dpq.createStream({ lower: 0, upper: 100, alpha: 1e-3 });
      s.push(lcgData(100_000, i));
      s.quantiles({ quantiles: [0.5], epsilon: 1, method: 'hist-gk' });
      s.dispose();
    }
    expect(dpq.heapBytes()).toBe(before);
  });
});

describe('forgotten streams', () => {
  it('warn once, in the console, when more than 1,000 are alive', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const streams = Array.from({ length: 1001 }, () => dpq.createStream({ lower: 0, upper: 1, alpha: 0.1 }));
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0][0])).toMatch(/1001 streams are alive\. Call dispose\(\)/);
      streams.push(...Array.from({ length: 10 }, () => dpq.createStream({ lower: 0, upper: 1, alpha: 0.1 })));
      expect(warn).toHaveBeenCalledTimes(1);
      for (const stream of streams) stream.dispose();
    } finally {
      warn.mockRestore();
    }
  });
});

describe('a full WebAssembly heap', () => {
  it('refuses an alpha whose sketch could not fit, and keeps working', () => {
    expect(code(() => dpq.createStream({ lower: 0, upper: 1, alpha: 1e-9 }))).toBe('TOO_LARGE');
    const stream = dpq.createStream({ lower: 0, upper: 1, alpha: 1e-5 });
    stream.push([0.5]);
    expect(stream.count).toBe(1);
    stream.dispose();
  });

  it('gives TOO_LARGE instead of aborting when undisposed streams fill it, and recovers', async () => {
    // A fresh instance: its heap grows to the 2 GiB maximum here. Each
    // stream with alpha 2e-5 reserves a 200 KB batch on its first push.
    const full = await loadDpQuantiles();
    const kept = full.createStream({ lower: 0, upper: 1, alpha: 1e-3 });
    kept.push(lcgData(1000, 3).map((x) => x / 100));
    const streams = [];
    let refused = '';
    let refusedPush: ReturnType<typeof full.createStream> | undefined;
    for (let i = 0; i < 100_000 && refused === ''; i++) {
      let stream: ReturnType<typeof full.createStream> | undefined;
      try {
        stream = full.createStream({ lower: 0, upper: 1, alpha: 2e-5 });
        streams.push(stream);
        // (More than a small push: small ones are gathered in JavaScript
        // and reach the heap later.)
        stream.push(lcgData(300, i + 1).map((x) => x / 100));
      } catch (error) {
        refused = (error as { code: string }).code;
        refusedPush = stream;
      }
    }
    expect(refused).toBe('TOO_LARGE');
    // A refused push changed nothing; that stream still works later.
    if (refusedPush !== undefined) expect(refusedPush.count).toBe(0);
    // Freeing memory brings everything back, and the first stream kept its data.
    for (const stream of streams.splice(0, 2000)) {
      if (stream !== refusedPush) stream.dispose();
    }
    if (refusedPush !== undefined) {
      refusedPush.push([0.5]);
      expect(refusedPush.count).toBe(1);
    }
    kept.push([0.25, 0.75]);
    expect(kept.count).toBe(1002);
    const released = kept.release({ quantiles: [0.5], epsilon: 1, method: 'hist-gk' });
    expect(released.values[0]).toBeGreaterThan(0.2);
    expect(released.values[0]).toBeLessThan(0.8);
    expect(full.quantiles([1, 2, 3], { lower: 0, upper: 4, quantiles: [0.5], epsilon: 1 })).toHaveLength(1);
    for (const stream of streams) stream.dispose();
    refusedPush?.dispose();
    kept.dispose();
  }, 120_000);
});
