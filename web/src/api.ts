// The WebAssembly calls: one object per loaded module (wrapModule), whose
// methods copy the data into the heap once, call the core and copy the
// results out. Types in types.ts, validation in validate.ts.
import type {
  DpqWasmModule,
  WasmGroupExtra,
  WasmBoundsSpec,
  WasmBudget,
  WasmCharge,
  WasmReleaseResult,
  WasmSession,
} from './generated/dpq_module.mjs';
import type { DpQuantilesErrorCode } from './errors.js';
import { releaseBlock } from './block.js';
import { checkGroups, checkPublicKeys, keyColumn, privateGroupCodes, publicGroupCodes, type GroupColumns } from './groups.js';
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
  GroupedRelease,
  GroupKey,
  GroupOptions,
  GroupRelease,
  GroupRow,
  GroupColumn,
  GroupKeyOrTuple,
  NumericData,
  SanitizeOptions,
  BoundsOptions,
  BoundsRelease,
  PrivacySpent,
  ConfidenceIntervals,
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
  kindOf,
  personIndices,
  privacyOf,
  unknownOption,
} from './validate.js';

// Float64Arrays as arrays of numbers, throughout: what JSON.stringify gives
// for a release (a Float64Array alone would be {"0": 34, "1": 55}).
function plain(value: unknown): unknown {
  if (value instanceof Float64Array) return Array.from(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, plain(inner)]));
  }
  return value;
}

function releaseToJSON(this: object): unknown {
  return plain(this);
}

// One function for every release, not enumerable: the releases stay plain
// data (equal when their values are), and JSON.stringify finds it.
function withJson<T extends object>(release: T): T {
  Object.defineProperty(release, 'toJSON', { value: releaseToJSON, enumerable: false, configurable: true });
  return release;
}

function toRelease(
  result: WasmReleaseResult,
  values: Float64Array,
  intervals?: { low: Float64Array; high: Float64Array; confidence: number },
): QuantilesRelease {
  return withJson(releaseFields(result, values, intervals)) as QuantilesRelease;
}

function releaseFields(
  result: WasmReleaseResult,
  values: Float64Array,
  intervals?: { low: Float64Array; high: Float64Array; confidence: number },
): Omit<QuantilesRelease, 'toJSON'> {
  const kind: ConfidenceIntervals['kind'] = result.intervalPopulation ? 'population' : 'sample';
  if (result.code !== 0) fail(result.codeName as DpQuantilesErrorCode, result.message);
  const privacy = privacyOf(result);
  const intervalPrivacy: PrivacySpent =
    privacy.kind === 'none'
      ? privacy
      : privacy.kind === 'zcdp'
        ? { kind: 'zcdp', rho: result.intervalRho }
        : { kind: 'pure', epsilon: result.intervalEpsilon };
  return {
    values,
    method: result.method as QuantileMethod,
    privacy,
    neighbouring: result.neighbouring as QuantilesRelease['neighbouring'],
    levels: result.levels,
    mechanismEpsilon: result.mechanismEpsilon,
    resolution: result.resolution,
    ...(result.maxContributions > 0 ? { maxContributions: result.maxContributions } : {}),
    ...(result.recordCap > 0 ? { recordCap: result.recordCap } : {}),
    ...(result.stepLookShare > 0
      ? { stepLook: { share: result.stepLookShare, step: Number.isNaN(result.stepLookStep) ? null : result.stepLookStep } }
      : {}),
    ...(result.lookShare > 0
      ? {
          firstLook: {
            share: result.lookShare,
            ...(Number.isNaN(result.lookLow) ? {} : { found: [result.lookLow, result.lookHigh] as [number, number] }),
            ...(Number.isNaN(result.lookSeenLow) ? {} : { seen: [result.lookSeenLow, result.lookSeenHigh] as [number, number] }),
          },
        }
      : {}),
    ...(result.hasIntervals && intervals !== undefined
      ? {
          intervals: {
            ...intervals,
            kind,
            simultaneous: result.intervalSimultaneous,
            method: result.intervalMethod as ConfidenceIntervals['method'],
            privacy: intervalPrivacy,
          },
        }
      : {}),
  };
}

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

  // The options of a grouped release: the groups' (keys, delta for private
  // keys, selectionShare, maxGroups) apart, the rest a release's spec.
  function groupOptions(options: unknown, arity: number): {
    spec: ReturnType<typeof buildSpec>;
    publicKeys: (GroupKey | GroupKey[])[] | undefined;
    groups: WasmGroupExtra['groups'];
  } {
    checkObject(options);
    const { keys, selectionShare, maxGroups, count, countShare, ...rest } = options as Record<string, unknown>;
    checkNumber('selectionShare', selectionShare, true);
    checkNumber('maxGroups', maxGroups, true);
    checkNumber('countShare', countShare, true);
    if (count !== undefined && typeof count !== 'boolean') {
      fail('INVALID_ARGUMENT', `count must be true or false, got ${kindOf(count)}`);
    }
    const publicKeys = keys === undefined ? undefined : checkPublicKeys(keys, arity);
    // Without public keys, delta is the selection's; with them, only
    // appindexp's own.
    if (publicKeys !== undefined && rest.delta !== undefined && rest.method !== 'appindexp') {
      fail(
        'INVALID_OPTION',
        'delta is for private keys (leave keys out to have keys chosen by a noisy count); with public keys no key needs it: leave delta out',
      );
    }
    let delta: unknown;
    if (publicKeys === undefined) {
      delta = rest.delta;
      delete rest.delta;
      checkNumber('delta', delta, true);
    }
    const spec = buildSpec(rest);
    return {
      spec,
      publicKeys,
      groups: {
        keys: publicKeys?.length ?? 0,
        private: publicKeys === undefined,
        ...(delta === undefined ? {} : { delta: delta as number }),
        ...(selectionShare === undefined ? {} : { selectionShare: selectionShare as number }),
        ...(maxGroups === undefined ? {} : { maxGroups: maxGroups as number }),
        count: count === true,
        ...(countShare === undefined ? {} : { countShare: countShare as number }),
      },
    };
  }

  // A grouped release's results at `out` (keys x m values, then with
  // confidence keys x m lows and highs, then a flag a key, then each key's
  // first-look span, two a key), as the bindings
  // write them, with its report in the block and in extra.report.
  function readGrouped(
    out: number,
    keys: readonly (GroupKey | GroupKey[])[],
    quantiles: ArrayLike<number>,
    confidence: number | undefined,
    blockAt: number,
    extra: WasmGroupExtra,
  ): GroupedRelease<GroupKeyOrTuple> {
    const m = quantiles.length;
    const heap = module.HEAPF64;
    const result = block.read(heap, blockAt / 8);
    const base = releaseFields(result, new Float64Array(0), confidence === undefined ? undefined : { low: new Float64Array(0), high: new Float64Array(0), confidence });
    const at = out / 8;
    const width = keys.length * m;
    const flags = at + (confidence === undefined ? 1 : 3) * width;
    const looks = flags + keys.length;
    const counts = looks + 4 * keys.length;
    const counted = extra.groups.count;
    const groups: GroupRelease<GroupKeyOrTuple>[] = [];
    keys.forEach((key, k) => {
      if (heap[flags + k] !== 1) return;
      const from = at + k * m;
      const low = heap[looks + 4 * k];
      const seenLow = heap[looks + 4 * k + 2];
      groups.push({
        key,
        values: heap.slice(from, from + m),
        ...(counted ? { count: heap[counts + k] } : {}),
        ...(confidence === undefined
          ? {}
          : { intervals: { low: heap.slice(from + width, from + width + m), high: heap.slice(from + 2 * width, from + 2 * width + m) } }),
        ...(Number.isNaN(low) && Number.isNaN(seenLow)
          ? {}
          : {
              firstLook: {
                ...(Number.isNaN(low) ? {} : { found: [low, heap[looks + 4 * k + 1]] as [number, number] }),
                ...(Number.isNaN(seenLow) ? {} : { seen: [seenLow, heap[looks + 4 * k + 3]] as [number, number] }),
              },
            }),
      });
    });
    const { values: _values, intervals, firstLook, ...rest } = base;
    void _values;
    const report = extra.report;
    const privateKeys = extra.groups.private;
    const grouped: Omit<GroupedRelease<GroupKeyOrTuple>, 'toJSON' | 'rows'> = {
      ...rest,
      groups,
      keys: privateKeys ? 'private' : 'public',
      ...(privateKeys && report !== undefined && rest.privacy.kind !== 'none'
        ? {
            selection: {
              privacy:
                rest.privacy.kind === 'zcdp'
                  ? { kind: 'zcdp', rho: report.selectionRho, delta: extra.groups.delta as number }
                  : { kind: 'approx', epsilon: report.selectionEpsilon, delta: extra.groups.delta as number },
              threshold: report.selectionThreshold,
            },
          }
        : {}),
      ...(report !== undefined && report.maxGroups > 0 ? { maxGroups: report.maxGroups } : {}),
      ...(counted && report !== undefined
        ? {
            count: {
              of: report.countOf,
              ...(privateKeys
                ? { from: 'selection' as const }
                : {
                    share: report.countShare,
                    privacy:
                      rest.privacy.kind === 'none'
                        ? rest.privacy
                        : rest.privacy.kind === 'zcdp'
                          ? { kind: 'zcdp' as const, rho: report.countRho }
                          : { kind: 'pure' as const, epsilon: report.countEpsilon },
                  }),
            },
          }
        : {}),
      ...(firstLook === undefined ? {} : { firstLook: { share: firstLook.share } }),
      ...(intervals === undefined ? {} : { intervals: (({ low: _l, high: _h, ...meta }) => meta)(intervals) }),
    };
    // The tidy form: one row a group and quantile, in the groups' order and
    // the quantiles' as requested.
    const asked = Array.from(quantiles);
    const rows = (): GroupRow<GroupKeyOrTuple>[] =>
      groups.flatMap((group) =>
        asked.map((quantile, j) => ({
          key: group.key,
          quantile,
          value: group.values[j],
          ...(group.count === undefined ? {} : { count: group.count }),
          ...(group.intervals === undefined ? {} : { low: group.intervals.low[j], high: group.intervals.high[j] }),
        })),
      );
    Object.defineProperty(grouped, 'rows', { value: rows, enumerable: false, configurable: true });
    return withJson(grouped) as GroupedRelease<GroupKeyOrTuple>;
  }

  function releaseByGroup<K extends GroupKeyOrTuple>(
    data: Float64Array | ArrayLike<number>,
    groupsOfRows: ArrayLike<GroupKey> | readonly GroupColumn[],
    options: GroupOptions<K>,
    session?: WasmSession,
  ): GroupedRelease<K> {
    const values = checkNumbers('data', data);
    checkSize(values);
    const list = checkGroups(groupsOfRows, values.length);
    const { spec, publicKeys, groups } = groupOptions(options, list.tuple ? list.columns.length : 0);
    if (session !== undefined) spec.session = session;
    const quantiles = checkNumbers('quantiles', (options as { quantiles: unknown }).quantiles);
    // Public keys' codes are written straight into the heap, below.
    let codes: Uint32Array | undefined;
    let keys: (GroupKey | GroupKey[])[];
    if (publicKeys !== undefined) {
      keys = publicKeys;
    } else {
      ({ codes, keys } = privateGroupCodes(list));
      groups.keys = keys.length;
    }
    const users = personIndices((options as PerPersonOptions).users, values.length);
    const m = quantiles.length;
    const outputs = (spec.confidence !== undefined ? 3 : 1) * keys.length * m + 6 * keys.length;
    // After the outputs and the block, the codes' buffer: 8 bytes a row
    // (the codes in its first half; the core writes the runs' counts there).
    const codesFrom = outputs + block.size;
    // The keys come back as given (K): they are the caller's own.
    return withUsers(users, spec, (): GroupedRelease<K> =>
      withHeap([values, quantiles], codesFrom + Math.max(1, values.length), ([valuesAt, quantilesAt], out) => {
        const blockAt = out + 8 * outputs;
        const codesAt = out + 8 * codesFrom;
        if (codes === undefined) {
          publicGroupCodes(list, keys, 'groups', module.HEAPU32.subarray(codesAt / 4, codesAt / 4 + values.length));
        } else {
          module.HEAPU32.set(codes, codesAt / 4);
        }
        block.write(module.HEAPF64, blockAt / 8, spec);
        const extra: WasmGroupExtra = { method: spec.method, options: spec.options, interval: spec.interval, session: spec.session, groups };
        module.releaseByGroup(valuesAt, codesAt, values.length, quantilesAt, m, out, blockAt, extra);
        return readGrouped(out, keys, quantiles, spec.confidence, blockAt, extra) as unknown as GroupedRelease<K>;
      }),
    );
  }

  function releaseByGroupFromCounts<K extends GroupKeyOrTuple>(
    counts: GroupCountsData | GroupTupleCountsData,
    options: GroupCountsOptions<K>,
    session?: WasmSession,
  ): GroupedRelease<K> {
    if (typeof counts !== 'object' || counts === null) {
      fail('INVALID_ARGUMENT', 'counts must be { keys, buckets, counts }: the three columns of a GROUP BY');
    }
    checkObject(options);
    for (const key of ['users', 'step']) {
      if ((options as Record<string, unknown>)[key] !== undefined) {
        fail(
          'INVALID_OPTION',
          key === 'step'
            ? 'step does not apply to counts: the buckets are the grid'
            : 'users does not apply to counts: they do not say whose rows they are; bound each person in the query and give maxGroups and maxContributions',
        );
      }
    }
    const bucketCount = (options as { buckets?: unknown }).buckets;
    if (typeof bucketCount !== 'number' || !Number.isSafeInteger(bucketCount) || bucketCount < 1 || bucketCount > MAX_VALUES) {
      fail('INVALID_OPTION', 'buckets must be the number of equal-width buckets the counts are over (a whole number >= 1)');
    }
    // One key column, or several (tuples of keys), as for rows.
    const keyColumns: GroupColumns =
      Array.isArray(counts.keys) && counts.keys.length > 0 && counts.keys.every((c) => typeof c === 'object' && c !== null)
        ? { columns: (counts.keys as unknown[]).map((column, c) => keyColumn(column, `keys[${c}]`)), tuple: true }
        : { columns: [keyColumn(counts.keys, 'keys')], tuple: false };
    const rows = keyColumns.columns[0].length;
    if (keyColumns.columns.some((column) => column.length !== rows)) {
      fail('INVALID_ARGUMENT', 'the key columns differ in length; give one key a row in each');
    }
    const buckets = checkCounts(counts.buckets, 'buckets');
    const tallies = checkCounts(counts.counts, 'counts');
    if (buckets.length !== rows || tallies.length !== rows) {
      fail('INVALID_ARGUMENT', 'keys, buckets and counts differ in length; give one of each a row');
    }
    const { spec, publicKeys, groups } = groupOptions(options, keyColumns.tuple ? keyColumns.columns.length : 0);
    if (session !== undefined) spec.session = session;
    const quantiles = checkNumbers('quantiles', options.quantiles);
    let codes: Uint32Array;
    let keys: (GroupKey | GroupKey[])[];
    if (publicKeys !== undefined) {
      keys = publicKeys;
      codes = publicGroupCodes(keyColumns, keys, 'keys');
    } else {
      ({ codes, keys } = privateGroupCodes(keyColumns, 'keys'));
      groups.keys = keys.length;
    }
    // The bucket count is the grid: not a release option here.
    const { buckets: _b, ...withoutBuckets } = spec;
    void _b;
    const m = quantiles.length;
    const outputs = (spec.confidence !== undefined ? 3 : 1) * keys.length * m + 6 * keys.length;
    const codesFrom = outputs + block.size;
    return withHeap([buckets, tallies, quantiles], codesFrom + Math.max(1, Math.ceil(rows / 2)), ([bucketsAt, countsAt, quantilesAt], out) => {
      const blockAt = out + 8 * outputs;
      const codesAt = out + 8 * codesFrom;
      module.HEAPU32.set(codes, codesAt / 4);
      block.write(module.HEAPF64, blockAt / 8, withoutBuckets);
      const extra: WasmGroupExtra = { method: spec.method, options: spec.options, interval: spec.interval, session: spec.session, groups };
      module.releaseByGroupFromCounts(codesAt, bucketsAt, countsAt, rows, bucketCount, quantilesAt, m, out, blockAt, extra);
      return readGrouped(out, keys, quantiles, spec.confidence, blockAt, extra) as unknown as GroupedRelease<K>;
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
