/// <reference lib="esnext.disposable" preserve="true" />
import type { DpqWasmModule, WasmReleaseResult, WasmSession, WasmStream } from './generated/dpq_module.mjs';
import { DpQuantilesError, type DpQuantilesErrorCode } from './errors.js';
import { privacyOf, type Budget, type NumericData, type PrivacySpent } from './api.js';

/** Options of `createStream`. */
export interface StreamOptions {
  /** Public lower bound; values below it are clamped to it. */
  lower: number;
  /** Public upper bound; values above it are clamped to it. */
  upper: number;
  /**
   * Rank accuracy of the sketch: every rank within alpha * n. Memory grows
   * like (1 / alpha) log(alpha n). In (0, 0.5].
   */
  alpha: number;
  /** Finest histogram bins kept for `'hist-gk'`; default 1024. */
  bins?: number;
}

/** Options of one stream release. Exactly one of `epsilon` and `rho`. */
export type StreamQuantilesOptions = StreamQuantilesShape & Budget;
/** Options of a stream release besides the budget. */
export interface StreamQuantilesShape {
  quantiles: NumericData;
  /** `'exp-gk'` (DPExpGK, the default) or `'hist-gk'` (DPHistGK). */
  method?: 'exp-gk' | 'hist-gk';
  /** hist-gk: bins, dividing the stream's bins; default the stream's. */
  bins?: number;
  /** Reproducible, NOT private: tests only. */
  seed?: number;
}

/** A stream release with its privacy accounting. */
export interface StreamRelease {
  values: Float64Array;
  method: 'exp-gk' | 'hist-gk';
  privacy: PrivacySpent;
  /** exp-gk: `'replace-one'` (n public); hist-gk: `'add-remove'`. */
  neighbouring: 'add-remove' | 'replace-one';
}

/**
 * Values summarised in bounded memory by a Greenwald-Khanna sketch; only
 * private releases come out. The stream and `serialize()`'s bytes are raw
 * data: keep them with the data owner, like the data itself.
 */
export interface QuantileStream {
  /** Adds values; a chunk with a non-finite value adds nothing and throws. */
  push(chunk: NumericData): void;
  /**
   * Adds everything `other` summarises: afterwards this stream answers for
   * both streams' values with the same `alpha` (rank error alpha n at the
   * merged n), and releases keep their guarantees. For sketches built in
   * parallel, by Web Workers over parts of a file or by shards that sent
   * their `serialize()` bytes (`dpq.loadStream`). `other` is unchanged.
   * INVALID_OPTION unless both have the same lower, upper, alpha and bins.
   */
  merge(other: QuantileStream): void;
  /** Values added so far (the data owner's view: not private). */
  readonly count: number;
  /** Bytes of WebAssembly memory the sketch holds. */
  readonly memoryBytes: number;
  /** One private value per quantile, in the order requested. */
  quantiles(options: StreamQuantilesOptions): Float64Array;
  /** Like `quantiles`, with the privacy spent. */
  release(options: StreamQuantilesOptions): StreamRelease;
  /** The sketch as bytes, for `dpq.loadStream` (raw data: keep it private). */
  serialize(): Uint8Array;
  /** Frees the sketch; later calls throw INVALID_STATE. Idempotent. */
  dispose(): void;
  /**
   * The same as `dispose()`, for `using s = dpq.createStream(...)`. Present
   * where the runtime defines Symbol.dispose (Node 20 and later; older
   * runtimes need a polyfill of Symbol.dispose before this module loads).
   */
  [Symbol.dispose](): void;
}

function fail(code: DpQuantilesErrorCode, message: string): never {
  throw new DpQuantilesError(code, message);
}

function check(result: WasmReleaseResult): void {
  if (result.code !== 0) fail(result.codeName as DpQuantilesErrorCode, result.message);
}

// Streams not disposed are freed when collected, so a forgotten dispose()
// does not leak WebAssembly memory forever. Collection comes late, if at all
// (60,000 forgotten streams once took the heap to 515 MB), so this is a
// safety net, not a memory plan: past LIVE_STREAMS_WARNING live streams, one
// console warning says so.
let liveStreams = 0;
let warned = false;
const LIVE_STREAMS_WARNING = 1000;
const registry =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<WasmStream>((handle) => {
        liveStreams--;
        handle.delete();
      })
    : undefined;


/** Internal: each stream's live embind handle, for merging. */
const handleOf = new WeakMap<object, () => WasmStream>();

/** Internal: each stream's release with a session to spend from. */
export const releaseInSession = new WeakMap<object, (options: StreamQuantilesOptions, session: WasmSession) => StreamRelease>();

/** Internal: wraps an embind stream handle. */
export function wrapStream(
  module: DpqWasmModule,
  handle: WasmStream,
  copyNumbers: (name: string, values: unknown) => ArrayLike<number>,
  checkNumber: (name: string, value: unknown, optional: boolean) => void,
): QuantileStream {
  const status = handle.status();
  if (status.code !== 0) {
    handle.delete();
    check(status);
  }
  let disposed = false;
  const token = {};
  registry?.register(token, handle, token);
  if (++liveStreams > LIVE_STREAMS_WARNING && !warned) {
    warned = true;
    console.warn(
      `dp-quantiles: ${liveStreams} streams are alive. Call dispose() (or use 'using') when done: ` +
        'undisposed streams are freed only when garbage-collected, late or never, and hold WebAssembly memory until then.',
    );
  }

  function live(): WasmStream {
    if (disposed) fail('INVALID_STATE', 'this stream was disposed');
    return handle;
  }

  function withBuffer<T>(values: ArrayLike<number>, extra: number, call: (at: number, out: number) => T): T {
    const at = module._malloc(Math.max(1, values.length) * 8);
    const out = module._malloc(Math.max(1, extra) * 8);
    try {
      if (at === 0 || out === 0) fail('TOO_LARGE', 'this chunk does not fit the WebAssembly heap; push smaller chunks');
      module.HEAPF64.set(values, at / 8);
      return call(at, out);
    } finally {
      if (at !== 0) module._free(at);
      if (out !== 0) module._free(out);
    }
  }

  function release(options: StreamQuantilesOptions, session?: WasmSession): StreamRelease {
    const stream = live();
    if (typeof options !== 'object' || options === null) fail('INVALID_ARGUMENT', 'options must be an object');
    const quantiles = copyNumbers('quantiles', options.quantiles);
    checkNumber('epsilon', options.epsilon, true);
    checkNumber('rho', options.rho, true);
    checkNumber('bins', options.bins, true);
    if (options.seed !== undefined && (!Number.isSafeInteger(options.seed) || options.seed < 0)) {
      fail('INVALID_ARGUMENT', 'seed must be a non-negative safe integer');
    }
    const method = options.method ?? 'exp-gk';
    if (typeof method !== 'string') fail('INVALID_ARGUMENT', 'method must be a string');
    for (const key of Object.keys(options)) {
      if (!['quantiles', 'epsilon', 'rho', 'method', 'bins', 'seed'].includes(key)) {
        fail('INVALID_OPTION', `option '${key}' does not apply to stream releases`);
      }
    }
    const methodOptions: Record<string, number> = {};
    if (options.bins !== undefined) methodOptions.bins = options.bins;
    const spec = {
      method,
      epsilon: options.epsilon,
      rho: options.rho,
      seed: options.seed,
      options: methodOptions,
      ...(session === undefined ? {} : { session }),
    };
    return withBuffer(quantiles, quantiles.length, (at, out) => {
      const result = stream.release(at, quantiles.length, out, spec);
      check(result);
      const privacy = privacyOf(result);
      return {
        values: module.HEAPF64.slice(out / 8, out / 8 + quantiles.length),
        method: result.method as StreamRelease['method'],
        privacy,
        neighbouring: result.neighbouring as StreamRelease['neighbouring'],
      };
    });
  }

  const stream: Omit<QuantileStream, typeof Symbol.dispose> = {
    push(chunk) {
      const target = live();
      const values = copyNumbers('chunk', chunk);
      withBuffer(values, 0, (at) => check(target.push(at, values.length)));
    },
    merge(other) {
      const target = live();
      const source = typeof other === 'object' && other !== null ? handleOf.get(other) : undefined;
      if (source === undefined) fail('INVALID_ARGUMENT', 'merge takes a stream from createStream or loadStream');
      if (source() === target) fail('INVALID_ARGUMENT', 'a stream cannot be merged into itself');
      check(target.merge(source()));
    },
    get count() {
      return live().count();
    },
    get memoryBytes() {
      return live().memoryBytes();
    },
    quantiles: (options) => release(options).values,
    release: (options) => release(options),
    serialize: () => live().serialize(),
    dispose() {
      if (disposed) return;
      disposed = true;
      liveStreams--;
      registry?.unregister(token);
      handle.delete();
    },
  };
  releaseInSession.set(stream, release);
  handleOf.set(stream, live);
  // `using s = dpq.createStream(...)` where the runtime has Symbol.dispose.
  const disposeSymbol = (Symbol as { dispose?: symbol }).dispose;
  if (disposeSymbol !== undefined) {
    Object.defineProperty(stream, disposeSymbol, { value: () => stream.dispose() });
  }
  return stream as QuantileStream;
}
