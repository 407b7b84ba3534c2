// Keys of a grouped release to dense codes, once, in JavaScript (the core
// reads uint32 codes): the public keys' positions, or the keys the data
// holds, sorted, for private keys. JavaScript types only; the core checks
// the rest. No WebAssembly calls here.
import type { GroupKey } from './types.js';
import { fail, kindOf } from './validate.js';

/** The most groups a release holds (the core's kMaxGroups). */
export const MAX_GROUPS = 2 ** 24;

export interface GroupCodes {
  /** One code a row: a key's index, or keys.length for a row left out. */
  codes: Uint32Array;
  /** The keys, by code. */
  keys: GroupKey[];
}

function isKey(value: unknown): value is GroupKey {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

function badKey(name: string, i: number, value: unknown): never {
  fail('INVALID_ARGUMENT', `${name}[${i}] is ${kindOf(value)}; every key must be a string or a finite number`);
}

/** Numbers ascending, then strings by code unit: a function of the keys alone. */
function compareKeys(a: GroupKey, b: GroupKey): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function isColumn(value: unknown): value is ArrayLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as ArrayLike<unknown>).length === 'number';
}

/**
 * The rows' keys: one column (a key a row), or several (`[education, sex]`:
 * a row's key is the tuple of its cells). An array whose every element is
 * itself an array (or typed array) is columns: a key is never an array.
 */
export interface GroupColumns {
  columns: ArrayLike<unknown>[];
  tuple: boolean;
}

/** Checks `groups` (one key a row, or key columns) against the rows' count. */
export function checkGroups(groups: unknown, count: number, name = 'groups'): GroupColumns {
  if (!isColumn(groups)) {
    fail('INVALID_ARGUMENT', `${name} must be an array (or typed array) of keys, strings or numbers, one a row, or an array of such columns`);
  }
  const list = groups as ArrayLike<unknown>;
  if (Array.isArray(list) && list.length > 0 && list.every(isColumn)) {
    if (list.length > 16) fail('INVALID_ARGUMENT', `${name} has ${list.length} key columns; at most 16`);
    list.forEach((column, c) => {
      if ((column as ArrayLike<unknown>).length !== count) {
        fail('INVALID_ARGUMENT', `${name}[${c}] and the data differ in length; give one key a row in each key column`);
      }
    });
    return { columns: list as ArrayLike<unknown>[], tuple: true };
  }
  if (list.length !== count) fail('INVALID_ARGUMENT', `${name} and the data differ in length; give one key a row`);
  return { columns: [list], tuple: false };
}

// A key's identity across kinds: 1 and '1' differ.
function identity(key: unknown): string {
  return Array.isArray(key) ? key.map(identity).join('\u0000') : `${typeof key}:${String(key)}`;
}

/**
 * The public keys, checked: keys (tuples of `arity` keys, for several key
 * columns), no repeats, at most MAX_GROUPS.
 */
export function checkPublicKeys(keys: unknown, arity = 0): (GroupKey | GroupKey[])[] {
  if (!Array.isArray(keys) && !ArrayBuffer.isView(keys)) {
    fail('INVALID_OPTION', 'keys must be an array of strings or numbers: the public keys');
  }
  const list = Array.from(keys as ArrayLike<unknown>);
  if (list.length === 0) fail('INVALID_OPTION', 'keys is empty: give at least one public key, or leave keys out for private keys (with delta)');
  if (list.length > MAX_GROUPS) fail('TOO_LARGE', `more than 2^24 keys (${list.length})`);
  // Single keys by value (a Set tells 1 from '1' and takes 0 as -0, as the
  // identity strings do, without building one a key); tuples by identity.
  const seen = new Set<unknown>();
  list.forEach((key, i) => {
    if (arity > 0) {
      if (!Array.isArray(key) || key.length !== arity) {
        fail('INVALID_OPTION', `keys[${i}] is not a tuple of ${arity} keys: with ${arity} key columns, each public key is an array of one key a column`);
      }
      key.forEach((part: unknown, c: number) => {
        if (!isKey(part)) fail('INVALID_OPTION', `keys[${i}][${c}] is ${kindOf(part)}; every key must be a string or a finite number`);
      });
    } else if (!isKey(key)) {
      fail('INVALID_OPTION', `keys[${i}] is ${kindOf(key)}; every key must be a string or a finite number${Array.isArray(key) ? ' (tuples of keys go with several key columns)' : ''}`);
    }
    const id = arity > 0 ? identity(key) : key;
    if (seen.has(id)) fail('INVALID_OPTION', `keys[${i}] repeats the public key ${JSON.stringify(key)}`);
    seen.add(id);
  });
  return list as (GroupKey | GroupKey[])[];
}

// Whole numbers in a span small enough for a table: [min, max] of the
// keys, or undefined.
function integerSpan(keys: readonly GroupKey[]): { min: number; max: number } | undefined {
  let min = Infinity;
  let max = -Infinity;
  for (const key of keys) {
    if (typeof key !== 'number' || !Number.isInteger(key)) return undefined;
    min = Math.min(min, key);
    max = Math.max(max, key);
  }
  return keys.length > 0 && max - min < 2 ** 22 ? { min, max } : undefined;
}

// Typed arrays whose every element is a whole number: no per-row checks.
function isIntegerArray(list: ArrayLike<unknown>): list is Int32Array | Uint32Array | Int16Array | Uint16Array | Int8Array | Uint8Array | Uint8ClampedArray {
  return (
    list instanceof Int32Array ||
    list instanceof Uint32Array ||
    list instanceof Int16Array ||
    list instanceof Uint16Array ||
    list instanceof Int8Array ||
    list instanceof Uint8Array ||
    list instanceof Uint8ClampedArray
  );
}

/** 'number' or 'string': the kind of a key. */
function kindOfKey(key: unknown): 'number' | 'string' | undefined {
  return typeof key === 'number' ? 'number' : typeof key === 'string' ? 'string' : undefined;
}

/**
 * Public keys none of whose kinds the rows' keys have can match no row: the
 * column's type (a CSV read as text, numbers as codes), not its data, so a
 * typed error rather than a release of noise for every key. Called only
 * when no row matched (else some kind is shared).
 */
function checkKindsMeet(groups: ArrayLike<unknown>, keys: readonly GroupKey[], name: string): void {
  const keyKinds = new Set(keys.map(kindOfKey));
  let numbers = false;
  let strings = false;
  for (let i = 0; i < groups.length && !(numbers && strings); i++) {
    const kind = kindOfKey(groups[i]);
    if (kind === 'number') numbers = true;
    else if (kind === 'string') strings = true;
  }
  if ((numbers && keyKinds.has('number')) || (strings && keyKinds.has('string')) || (!numbers && !strings)) return;
  const rowKind = numbers ? 'numbers' : 'strings';
  const keyKind = keyKinds.has('number') ? 'numbers' : 'strings';
  const example = keys.slice(0, 2).map((k) => (typeof k === 'number' ? JSON.stringify(String(k)) : k)).join(', ');
  fail(
    'INVALID_OPTION',
    `keys are ${keyKind} but ${name} holds ${rowKind}, so no key can match a row (${keyKind === 'numbers' ? `a column read as text? give the keys as strings: ${example}` : 'give the keys as numbers, or the groups as strings'})`,
  );
}

/**
 * Codes for public keys: rows whose key is not listed get keys.length.
 * Written into `codes` when given (a view of the module's heap, saving a
 * copy), else into a new array.
 */
export function publicCodes(
  groups: ArrayLike<unknown>,
  keys: readonly GroupKey[],
  name = 'groups',
  codes: Uint32Array = new Uint32Array(groups.length),
): Uint32Array {
  codeRows(groups, keys, name, codes);
  if (groups.length > 0 && codes.every((code) => code >= keys.length)) checkKindsMeet(groups, keys, name);
  return codes;
}

function codeRows(groups: ArrayLike<unknown>, keys: readonly GroupKey[], name: string, codes: Uint32Array): Uint32Array {
  const n = groups.length;
  const left = keys.length;
  const span = integerSpan(keys);
  if (span !== undefined) {
    // Whole-number keys: a table, no hashing.
    const min = span.min;
    const width = span.max - min;
    const table = new Uint32Array(width + 1).fill(left);
    keys.forEach((key, code) => {
      table[(key as number) - min] = code;
    });
    if (isIntegerArray(groups)) {
      // Integer codes in a typed array (the common case): no per-row checks.
      if (min === 0 && width + 1 === left && keys.every((key, code) => key === code)) {
        // Keys 0 .. k - 1 in order: a row's code is its key. Copied as
        // uint32, a key above k - 1 stays above it, and a negative one wraps
        // to 2^31 or more: both past every code (left out), as below.
        codes.set(groups);
        return codes;
      }
      for (let i = 0; i < n; i++) {
        const at = groups[i] - min;
        codes[i] = at >= 0 && at <= width ? table[at] : left;
      }
      return codes;
    }
    for (let i = 0; i < n; i++) {
      const g = groups[i];
      if (typeof g === 'number') {
        const at = g - min;
        if (at >= 0 && at <= width && Number.isInteger(at)) {
          codes[i] = table[at];
          continue;
        }
        if (!Number.isFinite(g)) badKey(name, i, g);
      } else if (typeof g !== 'string') {
        badKey(name, i, g);
      }
      codes[i] = left;
    }
    return codes;
  }
  const index = new Map<unknown, number>();
  keys.forEach((key, code) => index.set(key, code));
  for (let i = 0; i < n; i++) {
    const g = groups[i];
    const code = index.get(g);
    if (code !== undefined) {
      codes[i] = code;
    } else {
      if (!isKey(g)) badKey(name, i, g);
      codes[i] = left;
    }
  }
  return codes;
}

/** Codes for private keys: the keys the rows hold, sorted. */
export function privateCodes(groups: ArrayLike<unknown>, name = 'groups'): GroupCodes {
  const n = groups.length;
  const index = new Map<unknown, number>();
  const firstCodes = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const g = groups[i];
    let code = index.get(g);
    if (code === undefined) {
      if (!isKey(g)) badKey(name, i, g);
      code = index.size;
      index.set(g, code);
    }
    firstCodes[i] = code;
  }
  if (index.size > MAX_GROUPS) fail('TOO_LARGE', 'more than 2^24 distinct keys');
  // Sorted by key, not by first appearance: the order of rows says nothing.
  const keys = [...index.keys()] as GroupKey[];
  keys.sort(compareKeys);
  const remap = new Uint32Array(keys.length);
  keys.forEach((key, code) => {
    remap[index.get(key) as number] = code;
  });
  for (let i = 0; i < n; i++) firstCodes[i] = remap[firstCodes[i]];
  return { codes: firstCodes, keys };
}

/**
 * Codes for public keys over key columns: rows whose key (or tuple) is
 * not listed get keys.length. Each column is coded against the keys'
 * values in that column (as one column is), then the tuple of column codes
 * against the keys.
 */
export function publicGroupCodes(
  groups: GroupColumns,
  keys: readonly (GroupKey | readonly GroupKey[])[],
  name = 'groups',
  codes: Uint32Array = new Uint32Array(groups.columns[0].length),
): Uint32Array {
  if (!groups.tuple) return publicCodes(groups.columns[0], keys as GroupKey[], name, codes);
  const tuples = keys as readonly (readonly GroupKey[])[];
  const d = groups.columns.length;
  const n = groups.columns[0].length;
  // Each column's distinct key values, in the keys' order.
  const dictionaries: GroupKey[][] = [];
  const places: Map<string, number>[] = [];
  for (let c = 0; c < d; c++) {
    const place = new Map<string, number>();
    const values: GroupKey[] = [];
    for (const tuple of tuples) {
      const id = identity(tuple[c]);
      if (!place.has(id)) {
        place.set(id, values.length);
        values.push(tuple[c]);
      }
    }
    dictionaries.push(values);
    places.push(place);
  }
  // The tuple's place in the product of the dictionaries, then its key.
  const strides: number[] = [];
  let product = 1;
  for (let c = d - 1; c >= 0; c--) {
    strides[c] = product;
    product *= dictionaries[c].length;
  }
  const left = keys.length;
  const placeOf = (tuple: readonly GroupKey[]): number =>
    tuple.reduce((at: number, part, c) => at + (places[c].get(identity(part)) as number) * strides[c], 0);
  const table = product <= 2 ** 24 ? new Uint32Array(product).fill(left) : undefined;
  tuples.forEach((tuple, code) => {
    if (table !== undefined) table[placeOf(tuple)] = code;
  });
  // Two integer code columns with whole-number keys (codes from SQL): each
  // cell's place straight from a table by value, no per-column codes.
  const [firstColumn, secondColumn] = groups.columns;
  const firstSpan = integerSpan(dictionaries[0]);
  const secondSpan = d === 2 ? integerSpan(dictionaries[1]) : undefined;
  if (table !== undefined && d === 2 && isIntegerArray(firstColumn) && isIntegerArray(secondColumn) && firstSpan && secondSpan) {
    const placeBy = (span: { min: number; max: number }, dictionary: GroupKey[]) => {
      const byValue = new Int32Array(span.max - span.min + 1).fill(-1);
      dictionary.forEach((key, at) => {
        byValue[(key as number) - span.min] = at;
      });
      return byValue;
    };
    const firstPlace = placeBy(firstSpan, dictionaries[0]);
    const secondPlace = placeBy(secondSpan, dictionaries[1]);
    const stride = strides[0];
    for (let i = 0; i < n; i++) {
      const a = firstColumn[i] - firstSpan.min;
      const b = secondColumn[i] - secondSpan.min;
      const x = a >= 0 && a < firstPlace.length ? firstPlace[a] : -1;
      const y = b >= 0 && b < secondPlace.length ? secondPlace[b] : -1;
      codes[i] = x >= 0 && y >= 0 ? table[x * stride + y] : left;
    }
    return codes;
  }
  const columnCodes = groups.columns.map((column, c) => publicCodes(column, dictionaries[c], `${name}[${c}]`));
  if (table !== undefined) {
    if (d === 2) {
      // The common breakdown (education x sex), without the inner loop.
      const [first, second] = columnCodes;
      const firstSize = dictionaries[0].length;
      const secondSize = dictionaries[1].length;
      const stride = strides[0];
      for (let i = 0; i < n; i++) {
        const x = first[i];
        const y = second[i];
        codes[i] = x < firstSize && y < secondSize ? table[x * stride + y] : left;
      }
      return codes;
    }
    for (let i = 0; i < n; i++) {
      let at = 0;
      let listed = true;
      for (let c = 0; c < d; c++) {
        const code = columnCodes[c][i];
        if (code >= dictionaries[c].length) {
          listed = false;
          break;
        }
        at += code * strides[c];
      }
      codes[i] = listed ? table[at] : left;
    }
    return codes;
  }
  const index = new Map<string, number>();
  tuples.forEach((tuple, code) => index.set(tuple.map((part, c) => places[c].get(identity(part))).join(','), code));
  for (let i = 0; i < n; i++) {
    const parts: number[] = [];
    for (let c = 0; c < d; c++) parts.push(columnCodes[c][i]);
    codes[i] = index.get(parts.join(',')) ?? left;
  }
  return codes;
}

/**
 * Codes for private keys over key columns: the tuples the rows hold,
 * sorted by their first column's key, then the second's (each as one
 * column's keys sort).
 */
export function privateGroupCodes(groups: GroupColumns, name = 'groups'): { codes: Uint32Array; keys: (GroupKey | GroupKey[])[] } {
  if (!groups.tuple) return privateCodes(groups.columns[0], name);
  const d = groups.columns.length;
  const n = groups.columns[0].length;
  const perColumn = groups.columns.map((column, c) => privateCodes(column, `${name}[${c}]`));
  const strides: number[] = [];
  let product = 1;
  for (let c = d - 1; c >= 0; c--) {
    strides[c] = product;
    product *= perColumn[c].keys.length;
  }
  // Mixed-radix places over sorted dictionaries sort as the tuples do.
  const places = new Float64Array(n);
  const exact = product <= Number.MAX_SAFE_INTEGER;
  const texts: string[] = exact ? [] : new Array<string>(n);
  for (let i = 0; i < n; i++) {
    if (exact) {
      let at = 0;
      for (let c = 0; c < d; c++) at += perColumn[c].codes[i] * strides[c];
      places[i] = at;
    } else {
      const parts: string[] = [];
      for (let c = 0; c < d; c++) parts.push(String(perColumn[c].codes[i]).padStart(8, '0'));
      texts[i] = parts.join(',');
    }
  }
  const distinct = exact ? [...new Set(places)].sort((a, b) => a - b) : [...new Set(texts)].sort();
  if (distinct.length > MAX_GROUPS) fail('TOO_LARGE', 'more than 2^24 distinct keys');
  const code = new Map<number | string, number>();
  distinct.forEach((place, k) => code.set(place, k));
  const codes = new Uint32Array(n);
  for (let i = 0; i < n; i++) codes[i] = code.get(exact ? places[i] : texts[i]) as number;
  const keys = distinct.map((place) => {
    const parts = exact ? null : String(place).split(',').map(Number);
    return perColumn.map((column, c) =>
      column.keys[parts === null ? Math.floor((place as number) / strides[c]) % column.keys.length : parts[c]],
    ) as GroupKey[];
  });
  return { codes, keys };
}

/** A key column from SQL: bigints become numbers when safe. */
export function keyColumn(keys: unknown, name: string): ArrayLike<unknown> {
  if (typeof keys !== 'object' || keys === null || typeof (keys as ArrayLike<unknown>).length !== 'number') {
    fail('INVALID_ARGUMENT', `${name} must be an array (or typed array) of keys`);
  }
  const list = keys as ArrayLike<unknown>;
  if (list instanceof BigInt64Array || list instanceof BigUint64Array || Array.from(list.length > 0 ? [list[0]] : []).some((k) => typeof k === 'bigint')) {
    return Array.from(list, (k, i) => {
      if (typeof k !== 'bigint') return k;
      if (k > BigInt(Number.MAX_SAFE_INTEGER) || k < -BigInt(Number.MAX_SAFE_INTEGER)) {
        fail('INVALID_ARGUMENT', `${name}[${i}] is a bigint beyond 2^53; give such keys as strings`);
      }
      return Number(k);
    });
  }
  return list;
}
