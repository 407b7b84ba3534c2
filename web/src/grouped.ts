// Grouped releases (docs/groups.md): the groups' options, the keys as
// codes in the heap (groups.ts), the core's call, and the results read back
// with their tidy form. Built on the heap helpers of one loaded module
// (api.ts).
import type { DpqWasmModule, WasmGroupExtra, WasmSession } from './generated/dpq_module.mjs';
import type { releaseBlock } from './block.js';
import { checkGroups, checkPublicKeys, keyColumn, privateGroupCodes, publicGroupCodes, type GroupColumns } from './groups.js';
import { releaseFields, withJson } from './release-form.js';
import type {
  GroupColumn,
  GroupCountsData,
  GroupCountsOptions,
  GroupedRelease,
  GroupKey,
  GroupKeyOrTuple,
  GroupOptions,
  GroupRelease,
  GroupRow,
  GroupTupleCountsData,
  PerPersonOptions,
} from './types.js';
import { MAX_VALUES, buildSpec, checkCounts, checkNumber, checkNumbers, checkObject, fail, kindOf, personIndices } from './validate.js';

/** What a grouped release needs of its module (api.ts). */
export interface HeapKit {
  module: DpqWasmModule;
  block: ReturnType<typeof releaseBlock>;
  withHeap<T>(inputs: ArrayLike<number>[], outputs: number, call: (addresses: number[], out: number) => T): T;
  withUsers<T>(users: Uint32Array | undefined, spec: { users?: number }, call: () => T): T;
  checkSize(values: ArrayLike<number>): void;
}

export function groupedReleases(kit: HeapKit) {
  const { module, block, withHeap, withUsers, checkSize } = kit;

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
      // Fields set one by one, in the order the type lists them (spreads
      // of empty objects cost a copy each, per group).
      const group: GroupRelease<GroupKeyOrTuple> = { key, values: heap.slice(from, from + m) };
      if (counted) group.count = heap[counts + k];
      if (confidence !== undefined) {
        group.intervals = { low: heap.slice(from + width, from + width + m), high: heap.slice(from + 2 * width, from + 2 * width + m) };
      }
      if (!(Number.isNaN(low) && Number.isNaN(seenLow))) {
        const look: { found?: [number, number]; seen?: [number, number] } = {};
        if (!Number.isNaN(low)) look.found = [low, heap[looks + 4 * k + 1]];
        if (!Number.isNaN(seenLow)) look.seen = [seenLow, heap[looks + 4 * k + 3]];
        group.firstLook = look;
      }
      groups.push(group);
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

  return { releaseByGroup, releaseByGroupFromCounts };
}
