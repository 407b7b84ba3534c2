// Validation of what JavaScript callers pass, before anything reaches the
// WebAssembly module: JavaScript types only (is it an array of numbers?),
// and the specs the bindings read. Everything about values (bounds, budgets,
// quantiles) is the core's to check, so native and WASM callers get the
// same answers.
import type {
  WasmBoundsSpec,
  WasmReleaseResult,
  WasmReleaseSpec,
  WasmSanitizeSpec,
} from './generated/dpq_module.mjs';
import { DpQuantilesError, type DpQuantilesErrorCode } from './errors.js';
import type { PrivacySpent } from './types.js';

export const COMMON_KEYS = new Set([
  'lower',
  'upper',
  'quantiles',
  'epsilon',
  'rho',
  'method',
  'seed',
  'users',
  'maxContributions',
  'confidence',
  'intervalShare',
  'interval',
  'simultaneous',
  'buckets',
]);
// Every method's own options (the core says which method takes which).
export const METHOD_KEYS = new Set(['step', 'look', 'delta', 'jitter', 'scale', 'branching', 'height', 'aggregation', 'cells', 'budget', 'maxRecords']);

/** Edit distance, for "did you mean" hints on mistyped option names. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}

/** "unknown option 'quantile' (did you mean 'quantiles'?)" */
export function unknownOption(key: string, known: Iterable<string>): never {
  let best = '';
  let distance = 3;
  for (const name of known) {
    const d = editDistance(key.toLowerCase(), name.toLowerCase());
    if (d < distance) {
      best = name;
      distance = d;
    }
  }
  fail('INVALID_OPTION', `unknown option '${key}'${best === '' ? '' : ` (did you mean '${best}'?)`}`);
}

/** "a number", "an object", "undefined", "null": a value's kind for messages. */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  // A number that is not a finite one says which it is.
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}
// Values above 2^28 doubles (2 GiB) cannot fit the 32-bit WASM heap.
export const MAX_VALUES = 2 ** 28;

export function fail(code: DpQuantilesErrorCode, message: string): never {
  throw new DpQuantilesError(code, message);
}

export function checkNumber(name: string, value: unknown, optional: boolean): void {
  if (value === undefined && optional) return;
  if (typeof value !== 'number') {
    fail('INVALID_ARGUMENT', `${name} must be a number, got ${value === null ? 'null' : typeof value}`);
  }
}

export function checkObject(options: unknown): asserts options is Record<string, unknown> {
  if (typeof options !== 'object' || options === null) {
    fail('INVALID_ARGUMENT', 'options must be an object');
  }
}

export function checkSeed(seed: unknown): void {
  if (seed !== undefined && (!Number.isSafeInteger(seed) || (seed as number) < 0)) {
    fail('INVALID_ARGUMENT', 'seed must be a non-negative safe integer');
  }
}

export function isNumericTypedArray(value: unknown): value is ArrayLike<number> {
  return (
    ArrayBuffer.isView(value) &&
    !(value instanceof DataView) &&
    !(value instanceof BigInt64Array) &&
    !(value instanceof BigUint64Array)
  );
}

// JavaScript type checks only; value checks (finite, bounds, ranges) are the
// core's, so native and WASM callers get the same answers.
export function checkNumbers(name: string, values: unknown): ArrayLike<number> {
  if (isNumericTypedArray(values)) return values;
  if (!Array.isArray(values)) {
    fail('INVALID_ARGUMENT', `${name} must be an array or typed array of numbers`);
  }
  for (let i = 0; i < values.length; i++) {
    if (typeof values[i] !== 'number') {
      fail('INVALID_ARGUMENT', `${name}[${i}] is ${kindOf(values[i])}; every element must be a number`);
    }
  }
  return values as number[];
}

export function checkBudget(options: Record<string, unknown>): void {
  checkNumber('lower', options.lower, false);
  checkNumber('upper', options.upper, false);
  checkNumber('epsilon', options.epsilon, true);
  checkNumber('rho', options.rho, true);
  checkSeed(options.seed);
}

export function buildSpec(options: unknown): WasmReleaseSpec {
  checkObject(options);
  checkBudget(options);
  const method = options.method ?? 'auto';
  if (typeof method !== 'string') {
    fail('INVALID_ARGUMENT', `method must be a string, got ${typeof method}`);
  }
  // Method options go to the core, which rejects the ones the method does
  // not take: nothing is silently ignored.
  const extra: Record<string, number | string> = {};
  for (const [key, value] of Object.entries(options)) {
    if (COMMON_KEYS.has(key) || value === undefined) continue;
    if (!METHOD_KEYS.has(key)) unknownOption(key, [...COMMON_KEYS, ...METHOD_KEYS]);
    if (typeof value !== 'number' && typeof value !== 'string') {
      fail('INVALID_OPTION', `option '${key}' must be a number or a string, got ${kindOf(value)}`);
    }
    extra[key] = value;
  }
  checkNumber('maxContributions', options.maxContributions, true);
  checkNumber('confidence', options.confidence, true);
  checkNumber('intervalShare', options.intervalShare, true);
  checkNumber('buckets', options.buckets, true);
  if (options.interval !== undefined && typeof options.interval !== 'string') {
    fail('INVALID_OPTION', `interval must be 'sample' or 'population', got ${kindOf(options.interval)}`);
  }
  if (options.simultaneous !== undefined && typeof options.simultaneous !== 'boolean') {
    fail('INVALID_OPTION', `simultaneous must be true or false, got ${kindOf(options.simultaneous)}`);
  }
  return {
    method,
    lower: options.lower as number,
    upper: options.upper as number,
    epsilon: options.epsilon as number | undefined,
    rho: options.rho as number | undefined,
    seed: options.seed as number | undefined,
    options: extra,
    maxContributions: options.maxContributions as number | undefined,
    confidence: options.confidence as number | undefined,
    intervalShare: options.intervalShare as number | undefined,
    interval: options.interval as string | undefined,
    simultaneous: options.simultaneous as boolean | undefined,
    buckets: options.buckets as number | undefined,
  };
}

/** Counts as doubles for the core; bigints must be safe integers. */
export function checkCounts(counts: unknown, name = 'counts'): Float64Array {
  if (typeof counts !== 'object' || counts === null || typeof (counts as ArrayLike<unknown>).length !== 'number') {
    fail('INVALID_ARGUMENT', `${name} must be an array (or typed array) of numbers or bigints, one per bucket`);
  }
  const list = counts as ArrayLike<unknown>;
  if (list instanceof Float64Array) return list;
  const out = new Float64Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (typeof c === 'number') {
      out[i] = c;
    } else if (typeof c === 'bigint') {
      if (c < 0n || c > BigInt(Number.MAX_SAFE_INTEGER)) {
        fail('INVALID_COUNTS', `${name}[${i}] is not a whole number from 0 to 2^53 - 1`);
      }
      out[i] = Number(c);
    } else {
      fail('INVALID_ARGUMENT', `${name}[${i}] is ${kindOf(c)}; every one must be a number or a bigint`);
    }
  }
  return out;
}

/**
 * Person ids as dense uint32 indices (equal ids, by SameValueZero, share
 * one); undefined without `users`. Only the grouping reaches the core.
 */
export function personIndices(users: unknown, count: number): Uint32Array | undefined {
  if (users === undefined) return undefined;
  if (typeof users !== 'object' || users === null || typeof (users as ArrayLike<unknown>).length !== 'number') {
    fail('INVALID_ARGUMENT', 'users must be an array (or typed array) of numbers or strings, one per value');
  }
  const list = users as ArrayLike<unknown>;
  if (list.length !== count) {
    fail('INVALID_ARGUMENT', 'users and data differ in length; give one person per value');
  }
  const index = new Map<unknown, number>();
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    const id = list[i];
    if (typeof id !== 'string' && !(typeof id === 'number' && Number.isFinite(id))) {
      fail('INVALID_ARGUMENT', `users[${i}] is ${kindOf(id)}; every person id must be a string or a finite number`);
    }
    let at = index.get(id);
    if (at === undefined) {
      at = index.size;
      index.set(id, at);
    }
    out[i] = at;
  }
  return out;
}

export function buildSanitizeSpec(options: unknown): WasmSanitizeSpec {
  checkObject(options);
  checkBudget(options);
  checkNumber('size', options.size, true);
  checkNumber('step', options.step, true);
  checkNumber('maxContributions', options.maxContributions, true);
  for (const key of Object.keys(options)) {
    if (!['lower', 'upper', 'epsilon', 'rho', 'size', 'step', 'seed', 'users', 'maxContributions'].includes(key)) {
      fail('INVALID_OPTION', `option '${key}' does not apply to sanitize`);
    }
  }
  const { users: _users, ...spec } = options;
  return spec as unknown as WasmSanitizeSpec;
}

export function buildBoundsSpec(options: unknown): WasmBoundsSpec {
  checkObject(options);
  checkNumber('epsilon', options.epsilon, true);
  checkNumber('rho', options.rho, true);
  checkSeed(options.seed);
  checkNumber('maxContributions', options.maxContributions, true);
  const keys = ['epsilon', 'rho', 'seed', 'users', 'maxContributions'];
  for (const key of Object.keys(options)) {
    if (!keys.includes(key)) unknownOption(key, keys);
  }
  return {
    epsilon: options.epsilon as number | undefined,
    rho: options.rho as number | undefined,
    seed: options.seed as number | undefined,
    maxContributions: options.maxContributions as number | undefined,
  };
}

/** What a release spent, from its result. */
export function privacyOf(result: { privacyKind: string; epsilon: number; delta: number; rho: number }): PrivacySpent {
  if (result.privacyKind === 'none') return { kind: 'none', reason: 'seeded' };
  if (result.privacyKind === 'pure') return { kind: 'pure', epsilon: result.epsilon };
  if (result.privacyKind === 'approx') return { kind: 'approx', epsilon: result.epsilon, delta: result.delta };
  return result.delta > 0 ? { kind: 'zcdp', rho: result.rho, delta: result.delta } : { kind: 'zcdp', rho: result.rho };
}

/** Throws the core's error for a failed call. */
export function check(result: WasmReleaseResult): void {
  if (result.code !== 0) fail(result.codeName as DpQuantilesErrorCode, result.message);
}
