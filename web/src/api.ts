import type {
  DpqWasmModule,
  WasmBudget,
  WasmReleaseResult,
  WasmReleaseSpec,
  WasmSanitizeSpec,
  WasmBoundsSpec,
  WasmSession,
} from './generated/dpq_module.mjs';
import { DpQuantilesError, type DpQuantilesErrorCode } from './errors.js';
import {
  releaseInSession,
  wrapStream,
  type QuantileStream,
  type StreamOptions,
  type StreamQuantilesOptions,
  type StreamRelease,
} from './stream.js';

/** Release methods; docs/algorithms/ has a page for each. */
export type QuantileMethod =
  | 'aq'
  | 'jointexp'
  | 'inverse-sensitivity'
  | 'hs-jointexp'
  | 'appindexp'
  | 'aggtree'
  | 'tree-cdf';

/** Numbers the package reads: an array of numbers or a numeric typed array. */
export type NumericData =
  | readonly number[]
  | Float64Array
  | Float32Array
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array;

/** A privacy budget: exactly one of `epsilon` and `rho`. */
export type Budget =
  | {
      /** Pure epsilon-DP budget for the whole release. */
      epsilon: number;
      rho?: undefined;
    }
  | {
      /** rho-zCDP budget for the whole release. */
      rho: number;
      epsilon?: undefined;
    };

/** Options every method takes, besides the budget. */
export interface BaseQuantilesOptions {
  /** Public lower bound. Values below it are clamped to it. */
  lower: number;
  /** Public upper bound. Values above it are clamped to it. */
  upper: number;
  /** Quantiles to release, each strictly inside (0, 1), in any order. */
  quantiles: NumericData;
  /**
   * Makes the release reproducible. FOR TESTS ONLY: a seeded release is not
   * private, since anyone who knows or guesses the seed can remove the noise.
   * A non-negative safe integer.
   */
  seed?: number;
  /**
   * Also bracket each true sample quantile (docs/algorithms/intervals.md):
   * with probability at least `confidence` (in (0, 1), e.g. 0.95) over the
   * noise, the interval holds the data's own quantile. The intervals spend
   * `intervalShare` of the budget (default 0.25); the values get the rest,
   * and the release reports both. With `maxContributions`, the data is the
   * values kept (at most k per person): the interval holds their quantile,
   * not that of all rows.
   */
  confidence?: number;
  /** The part of the budget the intervals spend, in (0, 1); default 0.25. */
  intervalShare?: number;
  /**
   * What the intervals are for: `'sample'` (default), the quantile of these
   * very values; or `'population'`, the quantile of the distribution they
   * are an independent random sample of, so the intervals also cover
   * sampling error. Population intervals are wider and spend a small part of
   * their share on a noisy count (the number of values is private). Not with
   * `maxContributions` above 1 (a person's values are not independent).
   */
  interval?: 'sample' | 'population';
  /**
   * Bucket the values first, as a database's GROUP BY would (docs/scale.md):
   * `buckets` equal-width buckets over [lower, upper], each value replaced by
   * its bucket's lower edge, and grid methods release bucket edges. Exactly
   * what `releaseFromCounts` releases from those buckets' counts, bit for
   * bit with the same seed. Not with `step` (the buckets are the grid).
   */
  buckets?: number;
}

/**
 * Protecting a person rather than a row (docs/algorithms/per-person.md):
 * give both. Each person keeps at most `maxContributions` of their values (a
 * uniformly random subset, from the secure source), and the mechanism runs
 * with the budget of that many values, so the guarantee is for adding or
 * removing one person with all their values (`neighbouring:
 * 'add-remove-user'`). Not for `inverse-sensitivity`.
 */
export interface PerPersonOptions {
  /** The person of each value: parallel to the data, numbers or strings. */
  users?: ArrayLike<number | string>;
  /** k >= 1: the most values any one person keeps. Public. */
  maxContributions?: number;
}

/**
 * The default (`method` left out, or `'auto'`): picks `'aq'` or `'aggtree'`
 * from public parameters only, never from the data. AggTree on the grid
 * when a `step` grid, or the `buckets`' (counts' too), has P <= 2^21 points
 * and there are m >= max(5, P / 24) distinct quantiles with `epsilon`
 * (P <= 128 and m >= 40 with `rho`); AQ otherwise. The release's `method` says which ran. Measured in
 * docs/experiments: a tree over few grid points counts atoms exactly and
 * its error does not grow with m; AQ is far better for few quantiles, on
 * fine grids and under zCDP.
 */
export interface AutoOptions extends BaseQuantilesOptions {
  method?: 'auto';
  /** Public output resolution, as for `aq`. */
  step?: number;
}
/** ApproximateQuantiles: many quantiles, error growing with log m. */
export interface AqOptions extends BaseQuantilesOptions {
  method?: 'aq';
  /**
   * Public output resolution: released values are `lower + k * step` (the
   * last grid point is `upper`). With integer data and `step: 1` every value
   * is an integer and an atom (say half the values at 40) is released as
   * exactly 40. Default: the finest grid doubles resolve over the bounds.
   */
  step?: number;
}
/** JointExp: one exponential mechanism over all m-tuples. */
export interface JointExpOptions extends BaseQuantilesOptions {
  method: 'jointexp';
  /** Public output resolution, as for `aq`. */
  step?: number;
  /**
   * The most values the mechanism reads, public (default: the largest its
   * tables and certified rounding allow for these quantiles, grid and
   * budget; the release reports it as `recordCap`). Data with more values is
   * read through a uniformly random subset of this many: never refused,
   * since a refusal would tell whether the data has more (docs/refusals.md).
   */
  maxRecords?: number;
}
/** Inverse sensitivity: JointExp's cousin; replace-one neighbours, n public. */
export interface InverseSensitivityOptions extends BaseQuantilesOptions {
  method: 'inverse-sensitivity';
  /** Public output resolution, as for `aq`. */
  step?: number;
  /**
   * The most values the mechanism reads, public (default: the largest its
   * tables and certified rounding allow for these quantiles, grid and
   * budget; the release reports it as `recordCap`). Data with more values is
   * read through a uniformly random subset of this many: never refused,
   * since a refusal would tell whether the data has more (docs/refusals.md).
   */
  maxRecords?: number;
}
/** HSJointExp: JointExp on jittered data, for data with atoms. */
export interface HsJointExpOptions extends BaseQuantilesOptions {
  method: 'hs-jointexp';
  /** Jitter distribution; `'uniform'` by default. */
  jitter?: 'uniform' | 'gaussian';
  /** Jitter standard deviation, public; default 2^-20 (upper - lower). */
  scale?: number;
  /** Public output resolution, as for `aq`. */
  step?: number;
  /**
   * The most values the mechanism reads, public (default: the largest its
   * tables and certified rounding allow for these quantiles, grid and
   * budget; the release reports it as `recordCap`). Data with more values is
   * read through a uniformly random subset of this many: never refused,
   * since a refusal would tell whether the data has more (docs/refusals.md).
   */
  maxRecords?: number;
}
/** AppIndExp: m independent exponential mechanisms. */
export interface AppIndExpOptions extends BaseQuantilesOptions {
  method: 'appindexp';
  /** With `epsilon`: (epsilon, delta)-DP by optimal composition. */
  delta?: number;
  /** Public output resolution, as for `aq`. */
  step?: number;
}
/** AggTree: a b-ary tree of noisy counts. */
export interface AggTreeOptions extends BaseQuantilesOptions {
  method: 'aggtree';
  /** Children per node, 2..1024; default 16. */
  branching?: number;
  /** Levels below the root, 1..24; default 4 (16^4 leaves). */
  height?: number;
  /**
   * `'honaker'` (default): consistent least-squares counts (the AQ paper's
   * AggTree). `'none'`: raw noisy counts, noise drawn only where the descent
   * looks (much faster).
   */
  aggregation?: 'honaker' | 'none';
  /**
   * Public output resolution, as for `aq`: one leaf per grid point (at most
   * 2^21), and the release is the point the descent ends in, so an atom is
   * released as itself. `branching` and `height` then default to the
   * smallest tree over the points (fewest levels with branching up to 16).
   */
  step?: number;
}
/** Binary-tree CDF made monotone by isotonic regression. */
export interface TreeCdfOptions extends BaseQuantilesOptions {
  method: 'tree-cdf';
  /** Equal cells of [lower, upper], a power of two up to 2^21; default 1024. */
  cells?: number;
  /** Budget across tree levels; `'uniform'` by default. */
  budget?: 'uniform' | 'min-variance';
}

/**
 * Options of one release; `method` selects the mechanism and its options,
 * and exactly one of `epsilon` and `rho` sets the budget.
 */
export type QuantilesOptions = (
  | (AutoOptions & PerPersonOptions)
  | (AqOptions & PerPersonOptions)
  | (JointExpOptions & PerPersonOptions)
  | InverseSensitivityOptions
  | (HsJointExpOptions & PerPersonOptions)
  | (AppIndExpOptions & PerPersonOptions)
  | (AggTreeOptions & PerPersonOptions)
  | (TreeCdfOptions & PerPersonOptions)
) &
  Budget;

/**
 * Options of `releaseFromCounts`: those of `release` except the ones that
 * need the rows (`users`, `maxContributions`) or set another grid (`step`,
 * `buckets`: the number of counts is the number of buckets).
 */
export type CountsOptions = QuantilesOptions extends infer O
  ? O extends unknown
    ? Omit<O, 'users' | 'maxContributions' | 'buckets' | 'step'>
    : never
  : never;

/**
 * Bucket counts: `counts[i]` rows in bucket i of `counts.length` equal-width
 * buckets over [lower, upper]. Numbers, or bigints as SQL engines return
 * counts; each a whole number >= 0.
 */
export type CountsData = ArrayLike<number | bigint>;

/** Options of `sanitize`. Exactly one of `epsilon` and `rho`. */
export type SanitizeOptions = SanitizeShape & PerPersonOptions & Budget;
/** Options of `sanitize` besides the budget. */
export interface SanitizeShape {
  lower: number;
  upper: number;
  /** Sample size, published with the sample; default 1000. */
  size?: number;
  /** Public output resolution, as for `aq`: sample values are lower + k step. */
  step?: number;
  /** Reproducible, NOT private: tests only. */
  seed?: number;
}

/** Options of `bounds`: exactly one of `epsilon` and `rho`. */
export interface BoundsOptions extends PerPersonOptions {
  epsilon?: number;
  rho?: number;
  /** Reproducible, NOT private: tests only. */
  seed?: number;
}

/**
 * Private bounds (docs/algorithms/bounds.md): a range holding most of the
 * data, from a noisy histogram on a signed powers-of-two scale. Use them as
 * `lower` and `upper` of a release; the budget they spent adds to it.
 */
export interface BoundsRelease {
  lower: number;
  upper: number;
  /** The noisy count a bin had to reach to count as occupied. */
  threshold: number;
  privacy: PrivacySpent;
  /** `'add-remove-user'` with `users` and `maxContributions`. */
  neighbouring: 'add-remove' | 'add-remove-user';
  /** Per-person bounds: the most values a person kept (k). */
  maxContributions?: number;
}

/**
 * What a release spent, for the caller's privacy accounting. A seeded
 * release (tests only) reports `{ kind: 'none', reason: 'seeded' }`: anyone
 * who knows the seed can remove its noise, so it protects nobody.
 */
export type PrivacySpent =
  | { kind: 'pure'; epsilon: number }
  | { kind: 'approx'; epsilon: number; delta: number }
  | { kind: 'zcdp'; rho: number }
  | { kind: 'none'; reason: 'seeded' };

/** The privacy a WASM result reports. Internal. */
export function privacyOf(result: { privacyKind: string; epsilon: number; delta: number; rho: number }): PrivacySpent {
  if (result.privacyKind === 'none') return { kind: 'none', reason: 'seeded' };
  if (result.privacyKind === 'pure') return { kind: 'pure', epsilon: result.epsilon };
  if (result.privacyKind === 'approx') return { kind: 'approx', epsilon: result.epsilon, delta: result.delta };
  return { kind: 'zcdp', rho: result.rho };
}

/** Confidence intervals of a release (see `confidence`). */
export interface ConfidenceIntervals {
  low: Float64Array;
  high: Float64Array;
  confidence: number;
  /** What they hold: the sample's quantiles or the population's. */
  kind: 'sample' | 'population';
  /** What the intervals spent: part of the release's `privacy`. */
  privacy: PrivacySpent;
}

/** A release with its privacy accounting. */
export interface QuantilesRelease {
  /** One private value per requested quantile, in the order requested. */
  values: Float64Array;
  method: QuantileMethod | 'sanitize';
  /** The budget this release spent (all of the budget given). */
  privacy: PrivacySpent;
  /**
   * Who the guarantee protects: `'add-remove'` (one value added or removed),
   * `'replace-one'` (one value replaced; the number of values is public) or
   * `'add-remove-user'` (one person added or removed with all their values;
   * see `maxContributions`).
   */
  neighbouring: 'add-remove' | 'replace-one' | 'add-remove-user';
  /** Per-person releases: the most values a person kept (k). */
  maxContributions?: number;
  /**
   * With `confidence`: `[low[i], high[i]]` holds the true sample quantile of
   * `quantiles[i]` (or the population's, see `interval`) with probability at
   * least `confidence`, and holds
   * `values[i]`. `privacy` is the part of the release's budget they spent.
   */
  intervals?: ConfidenceIntervals;
  /** AQ: recursion levels the budget was split over (0 otherwise). */
  levels: number;
  /**
   * Epsilon each exponential mechanism ran with (0 for the tree methods).
   * AQ under `epsilon`: its root's, the smallest (nodes over subtrees a level
   * short of the rest get more; docs/algorithms/aq.md).
   */
  mechanismEpsilon: number;
  /**
   * The spacing of the public grid the values lie on: the `step`, the
   * buckets' width, or the default grid's power of ten (e.g. 0.001 for
   * bounds [-20, 120]); 0 for `tree-cdf`, and for `aggtree` without a step
   * or buckets, whose values are interpolated.
   */
  resolution: number;
  /**
   * The joint methods (`jointexp`, `hs-jointexp`, `inverse-sensitivity`):
   * the most values the mechanism read, from public parameters only; data
   * with more was read through a uniformly random subset of this many.
   */
  recordCap?: number;
}

/**
 * A session's total budget: pure `epsilon`, `epsilon` with `delta`, or
 * `rho` (zCDP). What releases spend is composed against it (see
 * docs/sessions.md).
 */
export type SessionBudget =
  | { epsilon: number; delta?: number; rho?: undefined }
  | { rho: number; epsilon?: undefined; delta?: undefined };

/** Options of `dpq.session`. */
export type SessionOptions = SessionBudget & {
  /**
   * Who the session's guarantee protects. `'add-remove'` (default): adding
   * or removing one record; replace-one methods (inverse sensitivity,
   * DPExpGK) are refused; per-person releases count once (twice with
   * `maxContributions: 1`). `'replace-one'`: replacing one record; every
   * per-record method fits, add-remove releases counting twice over.
   * `'add-remove-user'`: adding or removing one person; only per-person
   * releases (`users`, `maxContributions`) fit.
   */
  neighbouring?: 'add-remove' | 'replace-one' | 'add-remove-user';
};

/**
 * A privacy budget across releases. Each release checks that it fits before
 * reading any data (else `BUDGET_EXCEEDED`) and is charged when it succeeds;
 * a failed call spends nothing.
 */
export interface PrivacySession {
  quantiles(data: NumericData, options: QuantilesOptions): Float64Array;
  release(data: NumericData, options: QuantilesOptions): QuantilesRelease;
  quantilesFromCounts(counts: CountsData, options: CountsOptions): Float64Array;
  releaseFromCounts(counts: CountsData, options: CountsOptions): QuantilesRelease;
  sanitize(data: NumericData, options: SanitizeOptions): Float64Array;
  /** Private bounds, spent from this session. */
  bounds(data: NumericData, options: BoundsOptions): BoundsRelease;
  /** A stream's release, spent from this session. */
  releaseStream(stream: QuantileStream, options: StreamQuantilesOptions): StreamRelease;
  /** The total budget. */
  readonly total: SessionBudget;
  /** What the releases so far spend together: composed exactly as the decimals written (docs/sessions.md). */
  readonly spent: SessionBudget;
  /** Total minus spent, per part: a guide; whether a release fits is decided by composition. */
  readonly remaining: SessionBudget;
  /** Successful releases charged so far. */
  readonly releases: number;
  readonly neighbouring: 'add-remove' | 'replace-one' | 'add-remove-user';
  /** Frees the session's WebAssembly memory; later calls throw INVALID_STATE. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/** The loaded library. Create it with `loadDpQuantiles()`. */
export interface DpQuantiles {
  /**
   * Releases one differentially private value per requested quantile, in the
   * order requested: inside [lower, upper], non-decreasing along increasing
   * quantiles. Throws `DpQuantilesError` on invalid input.
   */
  quantiles(data: NumericData, options: QuantilesOptions): Float64Array;
  /** Like `quantiles`, and also reports the privacy spent. */
  release(data: NumericData, options: QuantilesOptions): QuantilesRelease;
  /**
   * The counts path (docs/scale.md): private quantiles from bucket counts
   * that any database computes with one GROUP BY, so no row has to reach
   * this library. `counts[i]` is the number of rows in bucket i of
   * `counts.length` equal-width buckets over [lower, upper] (rows below
   * lower counted in bucket 0, above upper in the last). Grid methods
   * release bucket lower edges. The same values, bit for bit, as
   * `release(rows, { ...options, buckets: counts.length })` with the same
   * seed; the same guarantees. The counts are as sensitive as the rows.
   * Throws `INVALID_COUNTS` for a count that is not a whole number >= 0.
   */
  releaseFromCounts(counts: CountsData, options: CountsOptions): QuantilesRelease;
  /** Like `releaseFromCounts`, the values only. */
  quantilesFromCounts(counts: CountsData, options: CountsOptions): Float64Array;
  /**
   * A private synthetic sample (sorted) whose empirical quantiles track the
   * data's: AQ at `size` evenly spaced quantiles (AQ paper, Corollary 3.6).
   */
  sanitize(data: NumericData, options: SanitizeOptions): Float64Array;
  /**
   * Private bounds for data whose range you do not know: `{ lower, upper }`
   * holding most of the data (ε-DP or ρ-zCDP, add/remove one value), never
   * read from the data's minimum or maximum. Throws `NOT_ENOUGH_DATA` when
   * too few values clear the noise for this budget.
   */
  bounds(data: NumericData, options: BoundsOptions): BoundsRelease;
  /**
   * A stream of values summarised in bounded memory (a Greenwald-Khanna
   * sketch), for data too large to hold; releases with DPExpGK or DPHistGK.
   */
  createStream(options: StreamOptions): QuantileStream;
  /** A stream from `QuantileStream.serialize()` bytes; CORRUPT_DATA if not. */
  loadStream(bytes: Uint8Array): QuantileStream;
  /**
   * A privacy session: releases made through it spend from one total
   * budget, and one that would overspend throws `BUDGET_EXCEEDED` before
   * touching the data.
   */
  session(options: SessionOptions): PrivacySession;
  /** The method names this build supports. */
  readonly methods: readonly QuantileMethod[];
  /** Current size of the WebAssembly heap in bytes (diagnostics). */
  heapBytes(): number;
}

const COMMON_KEYS = new Set([
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
  'buckets',
]);
// Every method's own options (the core says which method takes which).
const METHOD_KEYS = new Set(['step', 'delta', 'jitter', 'scale', 'branching', 'height', 'aggregation', 'cells', 'budget', 'maxRecords']);

/** Edit distance, for "did you mean" hints on mistyped option names. */
function editDistance(a: string, b: string): number {
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
function unknownOption(key: string, known: Iterable<string>): never {
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
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}
// Values above 2^28 doubles (2 GiB) cannot fit the 32-bit WASM heap.
const MAX_VALUES = 2 ** 28;

function fail(code: DpQuantilesErrorCode, message: string): never {
  throw new DpQuantilesError(code, message);
}

function checkNumber(name: string, value: unknown, optional: boolean): void {
  if (value === undefined && optional) return;
  if (typeof value !== 'number') {
    fail('INVALID_ARGUMENT', `${name} must be a number, got ${value === null ? 'null' : typeof value}`);
  }
}

function checkObject(options: unknown): asserts options is Record<string, unknown> {
  if (typeof options !== 'object' || options === null) {
    fail('INVALID_ARGUMENT', 'options must be an object');
  }
}

function checkSeed(seed: unknown): void {
  if (seed !== undefined && (!Number.isSafeInteger(seed) || (seed as number) < 0)) {
    fail('INVALID_ARGUMENT', 'seed must be a non-negative safe integer');
  }
}

function isNumericTypedArray(value: unknown): value is ArrayLike<number> {
  return (
    ArrayBuffer.isView(value) &&
    !(value instanceof DataView) &&
    !(value instanceof BigInt64Array) &&
    !(value instanceof BigUint64Array)
  );
}

// JavaScript type checks only; value checks (finite, bounds, ranges) are the
// core's, so native and WASM callers get the same answers.
function checkNumbers(name: string, values: unknown): ArrayLike<number> {
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

function checkBudget(options: Record<string, unknown>): void {
  checkNumber('lower', options.lower, false);
  checkNumber('upper', options.upper, false);
  checkNumber('epsilon', options.epsilon, true);
  checkNumber('rho', options.rho, true);
  checkSeed(options.seed);
}

function buildSpec(options: unknown): WasmReleaseSpec {
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
    buckets: options.buckets as number | undefined,
  };
}

/** Counts as doubles for the core; bigints must be safe integers. */
function checkCounts(counts: unknown): Float64Array {
  if (typeof counts !== 'object' || counts === null || typeof (counts as ArrayLike<unknown>).length !== 'number') {
    fail('INVALID_ARGUMENT', 'counts must be an array (or typed array) of numbers or bigints, one per bucket');
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
        fail('INVALID_COUNTS', `counts[${i}] must be a whole number from 0 to 2^53 - 1, got ${c}`);
      }
      out[i] = Number(c);
    } else {
      fail('INVALID_ARGUMENT', `counts[${i}] is ${kindOf(c)}; every count must be a number or a bigint`);
    }
  }
  return out;
}

/**
 * Person ids as dense uint32 indices (equal ids, by SameValueZero, share
 * one); undefined without `users`. Only the grouping reaches the core.
 */
function personIndices(users: unknown, count: number): Uint32Array | undefined {
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

function buildSanitizeSpec(options: unknown): WasmSanitizeSpec {
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

function buildBoundsSpec(options: unknown): WasmBoundsSpec {
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

function toRelease(
  result: WasmReleaseResult,
  values: Float64Array,
  intervals?: { low: Float64Array; high: Float64Array; confidence: number },
): QuantilesRelease {
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
    ...(result.hasIntervals && intervals !== undefined ? { intervals: { ...intervals, kind, privacy: intervalPrivacy } } : {}),
  };
}

// Sessions not disposed are freed when collected (a safety net).
const sessions =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<WasmSession>((handle) => handle.delete())
    : undefined;

/** Wraps a loaded Emscripten module. Internal: use `loadDpQuantiles()`. */
export function wrapModule(module: DpqWasmModule): DpQuantiles {
  // Frozen: the type says readonly, and so does the runtime.
  const methods = Object.freeze(module.methods().split(',') as QuantileMethod[]);

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
          fail('TOO_LARGE', 'the values do not fit the WebAssembly heap (at most 2^28 per call, less once other calls hold memory); use a stream, or counts');
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
    return withUsers(users, spec, () =>
      withHeap([values, quantiles], withIntervals ? 3 * m : m, ([dataAt, quantilesAt], out) => {
        const result = module.release(dataAt, values.length, quantilesAt, m, out, spec);
        return readRelease(result, out, m, spec.confidence);
      }),
    );
  }

  // A release's values at `out` (m doubles), then with `confidence` the
  // intervals' lows and highs (m each), as the bindings write them.
  function readRelease(result: WasmReleaseResult, out: number, m: number, confidence: number | undefined): QuantilesRelease {
    const at = out / 8;
    const intervals =
      confidence === undefined
        ? undefined
        : { low: module.HEAPF64.slice(at + m, at + 2 * m), high: module.HEAPF64.slice(at + 2 * m, at + 3 * m), confidence };
    return toRelease(result, module.HEAPF64.slice(at, at + m), intervals);
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
    return withHeap([buckets, quantiles], withIntervals ? 3 * m : m, ([countsAt, quantilesAt], out) => {
      const result = module.releaseFromCounts(countsAt, buckets.length, quantilesAt, m, out, spec);
      return readRelease(result, out, m, spec.confidence);
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
    return made as PrivacySession;
  }

  return {
    quantiles: (data, options) => release(data, options).values,
    release: (data, options) => release(data, options),
    quantilesFromCounts: (counts, options) => releaseFromCounts(counts, options).values,
    releaseFromCounts: (counts, options) => releaseFromCounts(counts, options),
    sanitize: (data, options) => sanitize(data, options),
    bounds: (data, options) => bounds(data, options),
    createStream,
    loadStream,
    session,
    methods,
    heapBytes: () => module.HEAP8.length,
  };
}
