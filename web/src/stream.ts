/// <reference lib="esnext.disposable" preserve="true" />
// Streams through the WebAssembly module: a sketch in bounded memory, fed in
// chunks, releasing privately. Types in types.ts.
import type { DpqWasmModule, WasmSession, WasmStream } from './generated/dpq_module.mjs';
import type {
  StreamQuantilesOptions,
  StreamRelease,
  QuantileStream,
} from './types.js';
import { check, fail, privacyOf } from './validate.js';

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

/** Internal: each stream's flush of its gathered pushes (before a merge reads it). */
const flushOf = new WeakMap<object, () => void>();

// Small pushes are gathered here and reach the module PENDING_VALUES at a
// time (or before anything reads the sketch): one value pushed alone cost
// about 5 microseconds in copies and calls across the boundary.
const PENDING_VALUES = 4096;
// Pushes of at most this many values are gathered; larger ones go at once.
const SMALL_PUSH = 256;

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

  // The gathered small pushes (already checked finite), sent whole; the
  // buffer is made at the first small push (many streams may never have
  // one).
  let pending: Float64Array | undefined;
  let pendingCount = 0;
  function flush(): void {
    if (pendingCount === 0 || pending === undefined) return;
    const values = pending.subarray(0, pendingCount);
    pendingCount = 0;
    withBuffer(values, 0, (at) => check(handle.push(at, values.length)));
  }
  // The sketch as of every push so far.
  function current(): WasmStream {
    const target = live();
    flush();
    return target;
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
    const stream = current();
    if (typeof options !== 'object' || options === null) fail('INVALID_ARGUMENT', 'options must be an object');
    const quantiles = copyNumbers('quantiles', options.quantiles);
    checkNumber('epsilon', options.epsilon, true);
    checkNumber('rho', options.rho, true);
    checkNumber('bins', options.bins, true);
    checkNumber('step', options.step, true);
    if (options.seed !== undefined && (!Number.isSafeInteger(options.seed) || options.seed < 0)) {
      fail('INVALID_ARGUMENT', 'seed must be a non-negative safe integer');
    }
    const method = options.method ?? 'hist-gk';
    if (typeof method !== 'string') fail('INVALID_ARGUMENT', 'method must be a string');
    for (const key of Object.keys(options)) {
      if (!['quantiles', 'epsilon', 'rho', 'method', 'bins', 'step', 'seed'].includes(key)) {
        fail('INVALID_OPTION', `option '${key}' does not apply to stream releases`);
      }
    }
    const methodOptions: Record<string, number> = {};
    if (options.bins !== undefined) methodOptions.bins = options.bins;
    if (options.step !== undefined) methodOptions.step = options.step;
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
      if (values.length <= SMALL_PUSH) {
        // Checked now, as the module would (a bad chunk adds nothing).
        for (let i = 0; i < values.length; i++) {
          if (!Number.isFinite(values[i])) {
            fail(
              'NON_FINITE_VALUE',
              `value at index ${i} of the chunk is ${Number.isNaN(values[i]) ? 'NaN' : 'infinite'}; nothing of this chunk was added`,
            );
          }
        }
        if (pendingCount + values.length > PENDING_VALUES) flush();
        pending ??= new Float64Array(PENDING_VALUES);
        pending.set(values, pendingCount);
        pendingCount += values.length;
        return;
      }
      flush();
      withBuffer(values, 0, (at) => check(target.push(at, values.length)));
    },
    merge(other) {
      const target = current();
      flushOf.get(other as object)?.();
      const source = typeof other === 'object' && other !== null ? handleOf.get(other) : undefined;
      if (source === undefined) fail('INVALID_ARGUMENT', 'merge takes a stream from createStream or loadStream');
      if (source() === target) fail('INVALID_ARGUMENT', 'a stream cannot be merged into itself');
      check(target.merge(source()));
    },
    get count() {
      return live().count() + pendingCount;
    },
    get memoryBytes() {
      return current().memoryBytes();
    },
    quantiles: (options) => release(options).values,
    release: (options) => release(options),
    serialize: () => current().serialize(),
    dispose() {
      if (disposed) return;
      disposed = true;
      pendingCount = 0;
      liveStreams--;
      registry?.unregister(token);
      handle.delete();
    },
  };
  releaseInSession.set(stream, release);
  handleOf.set(stream, live);
  flushOf.set(stream, () => {
    if (!disposed) flush();
  });
  // `using s = dpq.createStream(...)` where the runtime has Symbol.dispose.
  const disposeSymbol = (Symbol as { dispose?: symbol }).dispose;
  if (disposeSymbol !== undefined) {
    Object.defineProperty(stream, disposeSymbol, { value: () => stream.dispose() });
  }
  return stream as QuantileStream;
}
