// The WebAssembly calls: one object per loaded module (wrapModule), whose
// methods copy the data into the heap once, call the core and copy the
// results out. Types in types.ts, validation in validate.ts.
import type {
  DpqWasmModule,
  WasmBoundsSpec,
  WasmBudget,
  WasmCharge,
  WasmSession,
} from './generated/dpq_module.mjs';
import type { DpQuantilesErrorCode } from './errors.js';
import { releaseBlock } from './block.js';
import { groupedReleases } from './grouped.js';
import { toRelease } from './release-form.js';
import { releaseInSession, wrapStream } from './stream.js';
import type {
  SavedCharge,
  SavedSession,
  QuantileMethod,
  PerPersonOptions,
  QuantilesOptions,
  CountsOptions,
  CountsData,
  GroupCountsData,
  GroupCountsOptions,
  GroupTupleCountsData,
  GroupKey,
  GroupOptions,
  GroupColumn,
  GroupKeyOrTuple,
  NumericData,
  SanitizeOptions,
  BoundsOptions,
  BoundsRelease,
  QuantilesRelease,
  SessionBudget,
  SessionOptions,
  PrivacySession,
  DpQuantiles,
  StreamOptions,
  QuantileStream,
} from './types.js';
import {
  MAX_VALUES,
  buildBoundsSpec,
  buildSanitizeSpec,
  buildSpec,
  checkCounts,
  checkNumber,
  checkNumbers,
  checkObject,
  fail,
  personIndices,
  privacyOf,
  unknownOption,
} from './validate.js';

// A session's embind handle, for restoreSession's replay.
const liveHandle = Symbol('dp-quantiles live session handle');

// Sessions not disposed are freed when collected (a safety net).
const sessions =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<WasmSession>((handle) => handle.delete())
    : undefined;

/** Wraps a loaded Emscripten module. Internal: use `loadDpQuantiles()`. */
export function wrapModule(module: DpqWasmModule): DpQuantiles {
  // Frozen: the type says readonly, and so does the runtime.
  const methods = Object.freeze(module.methods().split(',') as QuantileMethod[]);
  const block = releaseBlock(module, methods);

  // Runs `call` with heap copies of `inputs` and room for `outputs` doubles;
  // frees everything, also when `call` throws. Views are taken after every
  // allocation: a heap growth detaches old ones.
  function withHeap<T>(
    inputs: ArrayLike<number>[],
    outputs: number,
    call: (addresses: number[], out: number) => T,
  ): T {
    const addresses: number[] = [];
    try {
      for (const input of [...inputs.map((a) => a.length), outputs]) {
        const address = module._malloc(Math.max(1, input) * 8);
        if (address === 0) {
          // Never the count: n is private (docs/refusals.md).
          fail('TOO_LARGE', 'the input does not fit the WebAssembly heap (a release takes about 16 bytes a value: some 1.3·10^8 values per call, fewer while streams hold memory); use a stream, or counts');
        }
        addresses.push(address);
      }
      inputs.forEach((input, i) => module.HEAPF64.set(input, addresses[i] / 8));
      return call(addresses.slice(0, inputs.length), addresses[inputs.length]);
    } finally {
      for (const address of addresses) module._free(address);
    }
  }

  // Runs `call` with the person ids (if any) copied into the heap, their
  // address set as spec.users; frees them after.
  function withUsers<T>(users: Uint32Array | undefined, spec: { users?: number }, call: () => T): T {
    if (users === undefined) return call();
    const at = module._malloc(Math.max(1, users.length) * 4);
    if (at === 0) fail('TOO_LARGE', 'the person ids do not fit the WebAssembly heap');
    try {
      module.HEAPU32.set(users, at / 4);
      spec.users = at;
      return call();
    } finally {
      module._free(at);
    }
  }

  function checkSize(values: ArrayLike<number>): void {
    if (values.length > MAX_VALUES) {
      fail('TOO_LARGE', `more than ${MAX_VALUES} values (2^28) do not fit the WebAssembly heap; use a stream, or counts`);
    }
  }

  const { releaseByGroup, releaseByGroupFromCounts } = groupedReleases({ module, block, withHeap, withUsers, checkSize });

  function release(
    data: Float64Array | ArrayLike<number>,
    options: QuantilesOptions,
    session?: WasmSession,
  ): QuantilesRelease {
    const values = checkNumbers('data', data);
    const spec = buildSpec(options);
    if (session !== undefined) spec.session = session;
    const quantiles = checkNumbers('quantiles', options.quantiles);
    checkSize(values);
    const users = personIndices((options as PerPersonOptions).users, values.length);
    const m = quantiles.length;
    const withIntervals = spec.confidence !== undefined;
    const outputs = withIntervals ? 3 * m : m;
    return withUsers(users, spec, () =>
      withHeap([values, quantiles], outputs + block.size, ([dataAt, quantilesAt], out) => {
        const blockAt = out + 8 * outputs;
        const extra = block.write(module.HEAPF64, blockAt / 8, spec);
        module.release(dataAt, values.length, quantilesAt, m, out, blockAt, extra);
        return readRelease(out, m, spec.confidence, blockAt);
      }),
    );
  }

  // A release's values at `out` (m doubles), then with `confidence` the
  // intervals' lows and highs (m each), as the bindings write them, and its
  // report in the block at `blockAt`.
  function readRelease(out: number, m: number, confidence: number | undefined, blockAt: number): QuantilesRelease {
    const heap = module.HEAPF64;
    const result = block.read(heap, blockAt / 8);
    const at = out / 8;
    const intervals =
      confidence === undefined ? undefined : { low: heap.slice(at + m, at + 2 * m), high: heap.slice(at + 2 * m, at + 3 * m), confidence };
    return toRelease(result, heap.slice(at, at + m), intervals);
  }

  function releaseFromCounts(counts: CountsData, options: CountsOptions, session?: WasmSession): QuantilesRelease {
    const buckets = checkCounts(counts);
    checkObject(options);
    for (const key of ['users', 'maxContributions', 'buckets', 'step']) {
      if ((options as Record<string, unknown>)[key] !== undefined) {
        fail(
          'INVALID_OPTION',
          key === 'users' || key === 'maxContributions'
            ? `${key} does not apply to counts: they do not say whose rows they are`
            : `${key} does not apply to counts: the buckets are the grid (counts.length of them over [lower, upper])`,
        );
      }
    }
    const spec = buildSpec(options);
    if (session !== undefined) spec.session = session;
    const quantiles = checkNumbers('quantiles', options.quantiles);
    if (buckets.length > MAX_VALUES) fail('TOO_LARGE', `${buckets.length} buckets; at most ${MAX_VALUES} fit the WebAssembly heap`);
    const m = quantiles.length;
    const withIntervals = spec.confidence !== undefined;
    const outputs = withIntervals ? 3 * m : m;
    return withHeap([buckets, quantiles], outputs + block.size, ([countsAt, quantilesAt], out) => {
      const blockAt = out + 8 * outputs;
      const extra = block.write(module.HEAPF64, blockAt / 8, spec);
      module.releaseFromCounts(countsAt, buckets.length, quantilesAt, m, out, blockAt, extra);
      return readRelease(out, m, spec.confidence, blockAt);
    });
  }

  function sanitize(
    data: Float64Array | ArrayLike<number>,
    options: SanitizeOptions,
    session?: WasmSession,
  ): Float64Array {
    const values = checkNumbers('data', data);
    const spec = { ...buildSanitizeSpec(options), ...(session === undefined ? {} : { session }) };
    checkSize(values);
    const size = Math.max(0, module.sanitizeSize(spec));
    const users = personIndices((options as PerPersonOptions).users, values.length);
    return withUsers(users, spec, () =>
      withHeap([values], size, ([dataAt], out) => {
        const result = module.sanitize(dataAt, values.length, out, spec);
        return toRelease(result, module.HEAPF64.slice(out / 8, out / 8 + size)).values;
      }),
    );
  }

  function bounds(data: Float64Array | ArrayLike<number>, options: BoundsOptions, session?: WasmSession): BoundsRelease {
    const values = checkNumbers('data', data);
    const spec: WasmBoundsSpec = { ...buildBoundsSpec(options), ...(session === undefined ? {} : { session }) };
    checkSize(values);
    const users = personIndices(options.users, values.length);
    return withUsers(users, spec, () =>
      withHeap([values], 3, ([dataAt], out) => {
        const result = module.bounds(dataAt, values.length, out, spec);
        if (result.code !== 0) fail(result.codeName as DpQuantilesErrorCode, result.message);
        const [lower, upper, threshold] = module.HEAPF64.slice(out / 8, out / 8 + 3);
        return {
          lower,
          upper,
          threshold,
          privacy: privacyOf(result),
          neighbouring: result.neighbouring as BoundsRelease['neighbouring'],
          ...(result.maxContributions > 0 ? { maxContributions: result.maxContributions } : {}),
        };
      }),
    );
  }

  function createStream(options: StreamOptions): QuantileStream {
    checkObject(options);
    checkNumber('lower', options.lower, false);
    checkNumber('upper', options.upper, false);
    checkNumber('alpha', options.alpha, false);
    checkNumber('bins', options.bins, true);
    for (const key of Object.keys(options)) {
      if (!['lower', 'upper', 'alpha', 'bins'].includes(key)) {
        fail('INVALID_OPTION', `option '${key}' does not apply to streams`);
      }
    }
    return wrapStream(module, module.createStream(options), checkNumbers, checkNumber);
  }

  function loadStream(bytes: Uint8Array): QuantileStream {
    if (!(bytes instanceof Uint8Array)) fail('INVALID_ARGUMENT', 'bytes must be a Uint8Array');
    const at = module._malloc(Math.max(1, bytes.length));
    if (at === 0) fail('TOO_LARGE', 'cannot allocate the bytes in the WebAssembly heap');
    try {
      module.HEAPU8.set(bytes, at);
      return wrapStream(module, module.loadStream(at, bytes.length), checkNumbers, checkNumber);
    } finally {
      module._free(at);
    }
  }

  function session(options: SessionOptions): PrivacySession {
    checkObject(options);
    checkNumber('epsilon', options.epsilon, true);
    checkNumber('delta', options.delta, true);
    checkNumber('rho', options.rho, true);
    for (const key of Object.keys(options)) {
      if (!['epsilon', 'delta', 'rho', 'neighbouring'].includes(key)) unknownOption(key, ['epsilon', 'delta', 'rho', 'neighbouring']);
    }
    if ((options.epsilon === undefined) === (options.rho === undefined)) {
      fail('INVALID_PRIVACY', 'a session takes exactly one of epsilon and rho');
    }
    if (options.delta !== undefined && options.rho !== undefined) {
      fail('INVALID_PRIVACY', 'delta goes with epsilon, not rho');
    }
    const neighbouring = options.neighbouring ?? 'add-remove';
    if (neighbouring !== 'add-remove' && neighbouring !== 'replace-one' && neighbouring !== 'add-remove-user') {
      fail(
        'INVALID_OPTION',
        `neighbouring must be 'add-remove', 'replace-one' or 'add-remove-user', got ${JSON.stringify(neighbouring)}`,
      );
    }
    const handle = module.createSession({ epsilon: options.epsilon, delta: options.delta, rho: options.rho, neighbouring });
    const status = handle.status();
    if (status.code !== 0) {
      handle.delete();
      fail(status.codeName as DpQuantilesErrorCode, status.message);
    }
    let disposed = false;
    const token = {};
    sessions?.register(token, handle, token);
    const live = (): WasmSession => {
      if (disposed) fail('INVALID_STATE', 'this session was disposed');
      return handle;
    };
    const budget = (b: WasmBudget): SessionBudget =>
      (b.rho !== undefined ? { rho: b.rho } : b.delta !== undefined ? { epsilon: b.epsilon!, delta: b.delta } : { epsilon: b.epsilon! });
    const made: Omit<PrivacySession, typeof Symbol.dispose> = {
      quantiles: (data, releaseOptions) => release(data, releaseOptions, live()).values,
      release: (data, releaseOptions) => release(data, releaseOptions, live()),
      quantilesFromCounts: (counts, countsOptions) => releaseFromCounts(counts, countsOptions, live()).values,
      releaseFromCounts: (counts, countsOptions) => releaseFromCounts(counts, countsOptions, live()),
      // (One implementation for the overloads: the keys come back as given.)
      releaseByGroup: ((data: NumericData, groups: ArrayLike<GroupKey> | readonly GroupColumn[], groupOptions: GroupOptions<GroupKeyOrTuple>) =>
        releaseByGroup(data, groups, groupOptions, live())) as PrivacySession['releaseByGroup'],
      releaseByGroupFromCounts: ((counts: GroupCountsData | GroupTupleCountsData, groupOptions: GroupCountsOptions<GroupKeyOrTuple>) =>
        releaseByGroupFromCounts(counts, groupOptions, live())) as PrivacySession['releaseByGroupFromCounts'],
      sanitize: (data, sanitizeOptions) => sanitize(data, sanitizeOptions, live()),
      bounds: (data, boundsOptions) => bounds(data, boundsOptions, live()),
      releaseStream(stream, streamOptions) {
        const inSession = releaseInSession.get(stream);
        if (inSession === undefined) fail('INVALID_ARGUMENT', 'stream must come from createStream or loadStream');
        return inSession(streamOptions, live());
      },
      get total() {
        return budget(live().total());
      },
      get spent() {
        return budget(live().spent());
      },
      get remaining() {
        return budget(live().remaining());
      },
      get releases() {
        return live().releases();
      },
      get neighbouring() {
        return live().neighbouring() as PrivacySession['neighbouring'];
      },
      save(): SavedSession {
        const h = live();
        return {
          format: 'dp-quantiles-ledger',
          version: 1,
          total: budget(h.total()),
          neighbouring: h.neighbouring() as SavedSession['neighbouring'],
          charges: h.charges().map((c) => ({ ...c }) as SavedCharge),
          spent: budget(h.spent()),
        };
      },
      dispose() {
        if (disposed) return;
        disposed = true;
        sessions?.unregister(token);
        handle.delete();
      },
    };
    const disposeSymbol = (Symbol as { dispose?: symbol }).dispose;
    if (disposeSymbol !== undefined) {
      Object.defineProperty(made, disposeSymbol, { value: () => made.dispose() });
    }
    // For restoreSession only (not enumerable, not in the public type).
    Object.defineProperty(made, liveHandle, { value: live });
    return made as PrivacySession;
  }

  // Resumes a saved ledger: a session of its total and relation, its
  // charges replayed in order, its spent checked against theirs. Anything
  // that does not parse or add up is CORRUPT_DATA.
  function restoreSession(saved: SavedSession): PrivacySession {
    const corrupt = (why: string): never => fail('CORRUPT_DATA', `this is not a session ledger dp-quantiles saved: ${why}`);
    if (typeof saved !== 'object' || saved === null) corrupt('not an object');
    if (saved.format !== 'dp-quantiles-ledger' || saved.version !== 1) corrupt('no format dp-quantiles-ledger, version 1');
    const budgetOf = (b: unknown, what: string): SessionBudget => {
      if (typeof b !== 'object' || b === null) return corrupt(`${what} is not a budget`);
      const entries = Object.entries(b as Record<string, unknown>);
      if (entries.some(([key, value]) => !['epsilon', 'delta', 'rho'].includes(key) || typeof value !== 'number')) {
        corrupt(`${what} holds something other than epsilon, delta and rho numbers`);
      }
      return b as SessionBudget;
    };
    const total = budgetOf(saved.total, 'total');
    const spent = budgetOf(saved.spent, 'spent');
    if (!Array.isArray(saved.charges)) corrupt('charges is not a list');
    let restored: PrivacySession;
    try {
      restored = session({ ...total, neighbouring: saved.neighbouring } as SessionOptions);
    } catch (error) {
      return corrupt(`its total or relation is not valid (${(error as Error).message})`);
    }
    const handle = (restored as unknown as { [liveHandle]: () => WasmSession })[liveHandle]();
    saved.charges.forEach((charge: unknown, i: number) => {
      const c = charge as SavedCharge;
      // Exactly the amounts of its kind, each a positive finite number
      // (delta below 1), and k >= 1 exactly when per person: a charge of
      // -0.5 once replayed as 0, giving budget back.
      const amount = (x: unknown): boolean => typeof x === 'number' && Number.isFinite(x) && x > 0;
      // (A zCDP charge with delta: private keys under rho.)
      const amounts = { pure: ['epsilon'], approx: ['epsilon', 'delta'], zcdp: 'delta' in (c ?? {}) ? ['rho', 'delta'] : ['rho'] }[c?.kind as string];
      const perPerson = c?.neighbouring === 'add-remove-user';
      const keys = ['kind', 'neighbouring', ...(amounts ?? []), ...(perPerson ? ['maxContributions'] : [])];
      const valid =
        typeof c === 'object' &&
        c !== null &&
        amounts !== undefined &&
        ['add-remove', 'replace-one', 'add-remove-user'].includes(c.neighbouring) &&
        Object.keys(c).every((key) => keys.includes(key)) &&
        amounts.every((key) => amount((c as unknown as Record<string, unknown>)[key])) &&
        (c.delta === undefined || (c.delta as number) < 1) &&
        (perPerson ? Number.isSafeInteger(c.maxContributions) && (c.maxContributions as number) >= 1 : c.maxContributions === undefined);
      if (!valid) {
        restored.dispose();
        corrupt(`charges[${i}] is not a charge`);
      }
      const result = handle.replay(c as WasmCharge);
      if (result.code !== 0) {
        restored.dispose();
        corrupt(`charges[${i}] does not fit what the ledger's total leaves (${result.message})`);
      }
    });
    const now = restored.spent;
    const same = (['epsilon', 'delta', 'rho'] as const).every(
      (key) => (now as Record<string, number | undefined>)[key] === (spent as Record<string, number | undefined>)[key],
    );
    if (!same) {
      restored.dispose();
      corrupt(`its spent ${JSON.stringify(spent)} is not what its charges spend (${JSON.stringify(now)})`);
    }
    return restored;
  }

  return {
    quantiles: (data, options) => release(data, options).values,
    release: (data, options) => release(data, options),
    quantilesFromCounts: (counts, options) => releaseFromCounts(counts, options).values,
    releaseFromCounts: (counts, options) => releaseFromCounts(counts, options),
    releaseByGroup: ((data: NumericData, groups: ArrayLike<GroupKey> | readonly GroupColumn[], options: GroupOptions<GroupKeyOrTuple>) =>
      releaseByGroup(data, groups, options)) as DpQuantiles['releaseByGroup'],
    releaseByGroupFromCounts: ((counts: GroupCountsData | GroupTupleCountsData, options: GroupCountsOptions<GroupKeyOrTuple>) =>
      releaseByGroupFromCounts(counts, options)) as DpQuantiles['releaseByGroupFromCounts'],
    sanitize: (data, options) => sanitize(data, options),
    bounds: (data, options) => bounds(data, options),
    createStream,
    loadStream,
    session,
    restoreSession,
    methods,
    heapBytes: () => module.HEAP8.length,
  };
}
