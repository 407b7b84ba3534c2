/// <reference lib="esnext.disposable" preserve="true" />
// The package's public types: what users write and what releases return.
// No code: validation lives in validate.ts, the WebAssembly calls in api.ts
// and stream.ts.

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
      /** rho-zCDP budget for the whole release. */
      rho: number;
      epsilon?: undefined;
    }
  | {
      /** Pure epsilon-DP budget for the whole release. */
      epsilon: number;
      rho?: undefined;
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
   * With `confidence`: all the intervals of the release hold at once with
   * probability at least `confidence` (each is then a little wider), instead
   * of each on its own. Default false.
   */
  simultaneous?: boolean;
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
 * The default (`method` left out, or `'auto'`): picks `'aq'` or `'aggtree'`.
 * With a `step` (or `buckets`, counts too) from public parameters only:
 * AggTree on the grid when it has P <= 2^21 points and there are
 * m >= max(5, P / 24) distinct quantiles with `epsilon` (for P <= 256 also
 * m >= 4, or m >= 2 all in the outer 5% such as [0.01, 0.99]; P <= 128 and
 * m >= 40 with `rho`); AQ otherwise. Without a step it first spends 2.5% of
 * the budget on a private guess at the data's step (the step look,
 * docs/algorithms/step-look.md: a noisy count of the values on 0.001, 0.01,
 * 0.1, 1, 10, ... within the bounds), then releases as that step would with
 * the rest, or with AQ on the default grid when it found none (AggTree with
 * 16 x 16 leaves instead, under `epsilon`, where the values are continuous
 * and AQ's first look shows them spread over a quarter of the range or
 * more, and there are 40 or more quantiles, or one in the outer 2% whose
 * place the look could not pin down); the release reports it as
 * `stepLook`. The release's `method` says which ran. Measured
 * in docs/experiments: a tree over few grid points counts atoms exactly and
 * its error does not grow with m; AQ is far better for few quantiles, on
 * fine grids and under zCDP. A grouped release looks once over every
 * group's values, and every group releases on the step that look found.
 */
export interface AutoOptions extends BaseQuantilesOptions {
  /** Only `method: 'appindexp'` takes `delta` (with `epsilon`). */
  delta?: undefined;
  method?: 'auto';
  /** Public output resolution, as for `aq`. */
  step?: number;
}
/** ApproximateQuantiles: many quantiles, error growing with log m. */
export interface AqOptions extends BaseQuantilesOptions {
  /** Only `method: 'appindexp'` takes `delta` (with `epsilon`). */
  delta?: undefined;
  method?: 'aq';
  /**
   * Public output resolution: released values are `lower + k * step` (the
   * last grid point is `upper`). With integer data and `step: 1` every value
   * is an integer and an atom (say half the values at 40) is released as
   * exactly 40. Default: the finest grid doubles resolve over the bounds.
   */
  step?: number;
  /**
   * The first look's share of the budget (docs/algorithms/aq.md), from 0
   * (none: the paper's order of draws) to 0.5; default 0.1 for one or two
   * quantiles with one in the outer 5% (p1, p99), else 0.05. It comes out
   * of the release's budget, and the release reports it as `firstLook`.
   */
  look?: number;
}
/** JointExp: one exponential mechanism over all m-tuples. */
export interface JointExpOptions extends BaseQuantilesOptions {
  /** Only `method: 'appindexp'` takes `delta` (with `epsilon`). */
  delta?: undefined;
  method: 'jointexp';
  /** Public output resolution, as for `aq`. */
  step?: number;
  /**
   * The most values the mechanism reads, public (default: 2^20, or less
   * where its tables and certified rounding allow less for these
   * quantiles, grid and budget; up to that limit when given; the release
   * reports it as `recordCap`). Data with more values is read through a
   * uniformly random subset of this many: never refused, since a refusal
   * would tell whether the data has more (docs/refusals.md), and the work of
   * a release does not grow past it.
   */
  maxRecords?: number;
}
/** Inverse sensitivity: JointExp's cousin; replace-one neighbours, n public. */
export interface InverseSensitivityOptions extends BaseQuantilesOptions {
  /** Only `method: 'appindexp'` takes `delta` (with `epsilon`). */
  delta?: undefined;
  method: 'inverse-sensitivity';
  /** Public output resolution, as for `aq`. */
  step?: number;
  /**
   * The most values the mechanism reads, public (default: 2^20, or less
   * where its tables and certified rounding allow less for these
   * quantiles, grid and budget; up to that limit when given; the release
   * reports it as `recordCap`). Data with more values is read through a
   * uniformly random subset of this many: never refused, since a refusal
   * would tell whether the data has more (docs/refusals.md), and the work of
   * a release does not grow past it.
   */
  maxRecords?: number;
}
/** HSJointExp: JointExp on jittered data, for data with atoms. */
export interface HsJointExpOptions extends BaseQuantilesOptions {
  /** Only `method: 'appindexp'` takes `delta` (with `epsilon`). */
  delta?: undefined;
  method: 'hs-jointexp';
  /** Jitter distribution; `'uniform'` by default. */
  jitter?: 'uniform' | 'gaussian';
  /** Jitter standard deviation, public; default 2^-20 (upper - lower). */
  scale?: number;
  /** Public output resolution, as for `aq`. */
  step?: number;
  /**
   * The most values the mechanism reads, public (default: 2^20, or less
   * where its tables and certified rounding allow less for these
   * quantiles, grid and budget; up to that limit when given; the release
   * reports it as `recordCap`). Data with more values is read through a
   * uniformly random subset of this many: never refused, since a refusal
   * would tell whether the data has more (docs/refusals.md), and the work of
   * a release does not grow past it.
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
  /** Only `method: 'appindexp'` takes `delta` (with `epsilon`). */
  delta?: undefined;
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
  /** Only `method: 'appindexp'` takes `delta` (with `epsilon`). */
  delta?: undefined;
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
  | (AqOptions & PerPersonOptions)
  | (JointExpOptions & PerPersonOptions)
  | InverseSensitivityOptions
  | (HsJointExpOptions & PerPersonOptions)
  | (AppIndExpOptions & PerPersonOptions)
  | (AggTreeOptions & PerPersonOptions)
  | (TreeCdfOptions & PerPersonOptions)
  // Last: a type error about options without a method then names what the
  // default needs (a budget), not the last method's options.
  | (AutoOptions & PerPersonOptions)
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

/** A group's key: a string or a finite number. */
export type GroupKey = string | number;
/** A group's key over several key columns: one key a column (`['Bachelors', 'F']`). */
export type GroupTuple = readonly GroupKey[];
/** A group's key, of one key column or several. */
export type GroupKeyOrTuple = GroupKey | GroupTuple;
/** One key column: an array of keys, or a numeric typed array (codes), one a row. */
export type GroupColumn = readonly GroupKey[] | Exclude<NumericData, readonly number[]>;

/**
 * The groups of a grouped release (docs/groups.md): public `keys`, or
 * private keys chosen by a noisy count (give `delta` instead), and per
 * person `maxGroups` with `users` and `maxContributions`.
 */
export interface GroupKeyOptions {
  /**
   * The public keys, in the order of the results: every one is released,
   * also one no row holds (as empty data is: noise inside the bounds). Rows
   * whose key is not listed are left out. Public knowledge, never read off
   * the data (the list of departments, of countries). Without `keys`, the
   * keys are private: a key appears only if a noisy count of its rows (or
   * people) clears a threshold, which needs `delta` (with `epsilon`: (ε,
   * δ)-DP; with `rho`: δ-approximate ρ-zCDP). With several key columns
   * (`groups: [education, sex]`), each key is a tuple of one key a column
   * (`['Bachelors', 'F']`).
   */
  keys?: readonly GroupKeyOrTuple[];
  /**
   * Private keys: a key held by one row (or person) appears with
   * probability at most `delta`; a key with a few hundred rows always does.
   */
  delta?: number;
  /** Private keys: the part of `epsilon` (or `rho`) spent choosing keys; default 0.1. */
  selectionShare?: number;
  /**
   * Per person (with `users` and `maxContributions`): the most groups a
   * person counts in; a person in more has that many chosen at random. The
   * guarantee is then for adding or removing one person with all their rows.
   */
  maxGroups?: number;
  /**
   * Each group's size beside its quantiles (`group.count`): a noisy count
   * of its rows (of its people, per person with `users`), in the same
   * release and the same accounting. Public keys: from `countShare` of the
   * budget (default 0.1: 87% of counts within ±20 at ε = 1, ±30 for 95%;
   * the quantiles run on the rest). Private keys: the selection's own noisy
   * count, at no further cost (at least the threshold, by selection).
   */
  count?: boolean;
  /** With `count` and public keys: the counts' share of the budget, in (0, 1). */
  countShare?: number;
}

/**
 * The shapes the groups' options take: public `keys` (then `delta` and
 * `selectionShare` do not apply), or private keys with `delta`.
 */
export type GroupKeyChoice<K extends GroupKeyOrTuple = GroupKey> =
  | { keys: readonly K[]; delta?: undefined; selectionShare?: undefined; count?: boolean; countShare?: number }
  | { keys?: undefined; delta: number; selectionShare?: number; count?: boolean; countShare?: undefined };

/** Per person across groups: `users`, `maxContributions` and `maxGroups` together, or none. */
export type GroupPersonChoice =
  | { users?: undefined; maxContributions?: undefined; maxGroups?: undefined }
  | { users: ArrayLike<number | string>; maxContributions: number; maxGroups: number };

// A release's method options without the ones groups decide: not
// `inverse-sensitivity` (it protects a replaced row with each group's size
// public, and replacing a row can move it to another group:
// docs/groups.md); `delta` is the private keys' but for appindexp with
// public keys, where it stays appindexp's.
type GroupMethodOptions<O, K extends GroupKeyOrTuple, Person extends string> = O extends { method: 'inverse-sensitivity' }
  ? never
  : O extends { method: 'appindexp' }
    ? (Omit<O, 'delta' | Person> & GroupKeyChoice<K>) | (Omit<O, 'delta' | Person> & { keys: readonly K[]; delta: number; selectionShare?: undefined; count?: boolean; countShare?: number })
    : Omit<O, 'delta' | Person> & GroupKeyChoice<K>;

/**
 * Options of `releaseByGroup`: a release's, applied to every group, and the
 * groups' ({@link GroupKeyOptions}): public `keys`, or private keys with
 * `delta`; per person `users`, `maxContributions` and `maxGroups` together.
 * (`delta` with public keys is appindexp's own, as in a release.) Not
 * `inverse-sensitivity` (docs/groups.md).
 */
export type GroupOptions<K extends GroupKeyOrTuple = GroupKey> = (QuantilesOptions extends infer O
  ? GroupMethodOptions<O, K, 'users' | 'maxContributions'>
  : never) &
  GroupPersonChoice;

/**
 * A GROUP BY's three columns (docs/scale.md): `counts[i]` rows of key
 * `keys[i]` in bucket `buckets[i]` of `options.buckets` equal-width buckets
 * over [lower, upper], in any order; typed arrays or arrays, as DuckDB's
 * Arrow columns give them (bigints too).
 */
export interface GroupCountsData<K extends GroupKey = GroupKey> {
  keys: ArrayLike<K | bigint>;
  buckets: ArrayLike<number | bigint>;
  counts: ArrayLike<number | bigint>;
}

/** A GROUP BY's columns with several key columns (`GROUP BY dept, site, bucket`). */
export interface GroupTupleCountsData {
  /** The key columns, one key a row in each. */
  keys: readonly (GroupColumn | BigInt64Array | BigUint64Array | readonly (GroupKey | bigint)[])[];
  buckets: ArrayLike<number | bigint>;
  counts: ArrayLike<number | bigint>;
}

/**
 * Options of `releaseByGroupFromCounts`: `buckets` is required (the grid).
 * Per person, the query bounds each person (docs/scale.md) and says how:
 * `maxGroups` keys a person counts in and `maxContributions` rows in each,
 * both or neither.
 */
export type GroupCountsOptions<K extends GroupKeyOrTuple = GroupKey> = (CountsOptions extends infer O
  ? GroupMethodOptions<O, K, never>
  : never) & {
  buckets: number;
} & (
    | { maxGroups?: undefined; maxContributions?: undefined }
    | {
        maxGroups: number;
        /** With `maxGroups`: the most rows the query kept of a person in a key. */
        maxContributions: number;
      }
  );

/** One group of a grouped release. */
export interface GroupRelease<K extends GroupKeyOrTuple = GroupKey> {
  /** The key, as given (bigint keys from SQL come back as numbers). */
  key: K;
  /** One private value per requested quantile, in the order requested. */
  values: Float64Array;
  /** With `count`: the group's noisy count of rows (people, per person); may be below 0 for an empty group. */
  count?: number;
  /** With `confidence`: each group's intervals, as a release's. */
  intervals?: { low: Float64Array; high: Float64Array };
  /**
   * AQ's first look at this group's rows (public): `found`, the span of the
   * bins past five noise scales, and `seen`, past two (each absent when no
   * bin passed), as a release's `firstLook`.
   */
  firstLook?: { found?: [number, number]; seen?: [number, number] };
}

/** One row of a grouped release's tidy form (`rows()`): a group and a quantile. */
export interface GroupRow<K extends GroupKeyOrTuple = GroupKey> {
  key: K;
  /** The quantile requested, in (0, 1). */
  quantile: number;
  /** Its private value. */
  value: number;
  /** With `confidence`: the interval's ends. */
  low?: number;
  high?: number;
  /** With `count`: the group's noisy count. */
  count?: number;
}

/**
 * A release as `JSON.stringify` writes it (`toJSON`): its typed arrays as
 * arrays of numbers, its functions left out.
 */
export type ReleaseJson<T> = T extends Float64Array
  ? number[]
  : T extends readonly (infer U)[]
    ? ReleaseJson<U>[]
    : T extends object
      ? { [P in keyof T as T[P] extends (...args: never[]) => unknown ? never : P]: ReleaseJson<T[P]> }
      : T;

/** A grouped release and its privacy accounting. */
export interface GroupedRelease<K extends GroupKeyOrTuple = GroupKey> extends Omit<QuantilesRelease, 'values' | 'intervals' | 'toJSON'> {
  /** Public keys: every key, in their order. Private: the keys selected, sorted. */
  groups: GroupRelease<K>[];
  /** Whether the keys were public or selected privately. */
  keys: 'public' | 'private';
  /** Private keys: what choosing them spent (part of `privacy`) and the noisy count each cleared. */
  selection?: { privacy: PrivacySpent; threshold: number };
  /** Per person: the most groups a person counted in. */
  maxGroups?: number;
  /** With `confidence`: what the intervals hold and spent (the groups carry the bounds). */
  intervals?: Omit<ConfidenceIntervals, 'low' | 'high'>;
  /** AQ's first look: its share of each group's budget (each group's span is on the group). */
  firstLook?: { share: number };
  /**
   * With `count`: what the groups' counts count, and what they spent (public
   * keys: `share` of the budget, part of `privacy`) or that they are the
   * selection's noisy counts (private keys).
   */
  count?: { of: 'rows' | 'people'; share?: number; privacy?: PrivacySpent; from?: 'selection' };
  /**
   * The tidy form: one row a group and quantile (`{ key, quantile, value,
   * low?, high? }`), groups in the release's order, for a chart, a
   * DataFrame or a table in SQL (docs/groups.md).
   */
  rows(): GroupRow<K>[];
  /** Plain JSON: `values` and intervals as arrays of numbers. */
  toJSON(): ReleaseJson<Omit<GroupedRelease<K>, 'rows' | 'toJSON'>>;
}

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
  /** δ-approximate ρ-zCDP: a grouped release's private keys under `rho` (docs/groups.md). */
  | { kind: 'zcdp'; rho: number; delta: number }
  | { kind: 'none'; reason: 'seeded' };

/** The privacy a WASM result reports. Internal. */

/** Confidence intervals of a release (see `confidence`). */
export interface ConfidenceIntervals {
  low: Float64Array;
  high: Float64Array;
  confidence: number;
  /** What they hold: the sample's quantiles or the population's. */
  kind: 'sample' | 'population';
  /** True when they hold all at once (`simultaneous`), not each on its own. */
  simultaneous: boolean;
  /**
   * How they were drawn (docs/algorithms/intervals.md): `'brackets'`, two
   * exponential mechanisms per quantile (narrowest for one or two
   * quantiles), or `'tree'`, one noisy tree of counts shared by every
   * quantile (narrowest for many). Chosen from public parameters.
   */
  method: 'brackets' | 'tree';
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
  /**
   * The levels the budget was split over: AQ's recursion levels, AggTree's
   * levels of counts below the root (0 otherwise).
   */
  levels: number;
  /**
   * Epsilon each exponential mechanism ran with (0 for `tree-cdf`). AQ under
   * `epsilon`: its root's, the smallest (nodes over subtrees a level short
   * of the rest get more; docs/algorithms/aq.md). AggTree under `epsilon`:
   * each level's counts' (0 under `rho`).
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
  /**
   * AQ's first look (docs/algorithms/aq.md): before the quantiles, a noisy
   * histogram of 16 bins spent `share` of the method's budget (out of the
   * release's `privacy`, not on top of it) and told the release where the
   * values lie, so that tail quantiles stay near them under loose bounds.
   * `found` is the span of the bins whose noisy count passed five times the
   * noise's scale (values surely there), when any did: past it the bins
   * weigh less the farther they lie. `seen` is the span of those past two
   * scales: where most of the values lie. On values spread over much of
   * the bounds (a few tens of values a bin) `found` may hold only part of
   * them and `seen` nearly all. The option `look` sets the share (0 turns
   * it off).
   */
  firstLook?: { share: number; found?: [number, number]; seen?: [number, number] };
  /**
   * The default's step look (docs/algorithms/step-look.md), when it ran (no
   * `method`, `step` or `buckets` given, bounds on a decimal lattice): it
   * spent `share` of the budget (out of `privacy`) on a noisy count of the
   * values on each candidate step, and found `step` (the values were then
   * released on that step's grid, as if it had been given), or none
   * (`step: null`: AQ on the default grid).
   */
  stepLook?: { share: number; step: number | null };
  /** Plain JSON: `values` and intervals as arrays of numbers. */
  toJSON(): ReleaseJson<Omit<QuantilesRelease, 'toJSON'>>;
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
/** One charge of a saved ledger: what a release spent, as given. */
export interface SavedCharge {
  kind: 'pure' | 'approx' | 'zcdp';
  epsilon?: number;
  delta?: number;
  rho?: number;
  /** The release's own relation (a session may hold several, docs/sessions.md). */
  neighbouring: 'add-remove' | 'replace-one' | 'add-remove-user';
  /** Per-person releases: the k each person was bounded to. */
  maxContributions?: number;
}

/** `session.save()`'s ledger. Numbers are the decimals written (JSON keeps them exactly). */
export interface SavedSession {
  format: 'dp-quantiles-ledger';
  version: 1;
  total: SessionBudget;
  neighbouring: 'add-remove' | 'replace-one' | 'add-remove-user';
  charges: SavedCharge[];
  /** What the charges spend together, for a check on restore. */
  spent: SessionBudget;
}

/**
 * Grouped releases, on the library (one release's budget) and on a session
 * (charged once). Overloads: public keys typed as given, private keys as the
 * rows hold them; one key column, or several (tuples of keys).
 */
export interface GroupedReleases {
  /**
   * Quantiles by group (docs/groups.md): `groups[i]` is the key of
   * `data[i]` (or `groups` is an array of key columns, a row's key the
   * tuple of its cells); every option of `release` applies to each group.
   * The groups hold disjoint rows, so the release spends its budget once
   * (parallel composition), however many groups there are. With public
   * `keys`, one result per key in their order; without, private keys
   * (needs `delta`).
   */
  releaseByGroup<K extends GroupKey>(data: NumericData, groups: ArrayLike<GroupKey>, options: GroupOptions<K> & { keys: readonly K[] }): GroupedRelease<K>;
  releaseByGroup<K extends GroupKey>(data: NumericData, groups: ArrayLike<K>, options: GroupOptions<K> & { keys?: undefined }): GroupedRelease<K>;
  releaseByGroup<K extends GroupTuple>(data: NumericData, groups: readonly GroupColumn[], options: GroupOptions<K> & { keys: readonly K[] }): GroupedRelease<K>;
  releaseByGroup(data: NumericData, groups: readonly GroupColumn[], options: GroupOptions<GroupKey[]> & { keys?: undefined }): GroupedRelease<GroupKey[]>;
  releaseByGroup(data: NumericData, groups: ArrayLike<GroupKey> | readonly GroupColumn[], options: GroupOptions<GroupKeyOrTuple>): GroupedRelease<GroupKeyOrTuple>;
  /**
   * The same from a GROUP BY's (key, bucket, count) rows, bit for bit what
   * `releaseByGroup(rows, keys, { ...options })` gives on the rows with the
   * same `buckets` and seed.
   */
  releaseByGroupFromCounts<K extends GroupKey>(counts: GroupCountsData<K>, options: GroupCountsOptions<K>): GroupedRelease<K>;
  releaseByGroupFromCounts<K extends GroupTuple>(counts: GroupTupleCountsData, options: GroupCountsOptions<K>): GroupedRelease<K>;
}

export interface PrivacySession extends GroupedReleases {
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
  /**
   * The ledger as a plain, JSON-serialisable object: the total, the relation
   * and every charge with its kind, in order (`dpq.restoreSession` resumes
   * it). The data owner's record of what has been published: keep it with
   * the data, and do not delete it to "start over" — that gives no privacy
   * back.
   */
  save(): SavedSession;
  /** Frees the session's WebAssembly memory; later calls throw INVALID_STATE. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/** The loaded library. Create it with `loadDpQuantiles()`. */
export interface DpQuantiles extends GroupedReleases {
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
  /**
   * A session resumed from `session.save()`'s ledger: the same total,
   * relation and charges, so the same `spent`, and it refuses what no longer
   * fits. Throws `CORRUPT_DATA` for a ledger that is damaged or does not add
   * up (a charge that does not fit its total, `spent` that its charges do
   * not give). Deleting a ledger does not give back any privacy: what was
   * released stays released.
   */
  restoreSession(saved: SavedSession): PrivacySession;
  /** The method names this build supports. */
  readonly methods: readonly QuantileMethod[];
  /** Current size of the WebAssembly heap in bytes (diagnostics). */
  heapBytes(): number;
}

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
  /**
   * `'hist-gk'` (DPHistGK, the default: add/remove one value, and far more
   * accurate) or `'exp-gk'` (DPExpGK: replace-one with n public).
   */
  method?: 'exp-gk' | 'hist-gk';
  /** hist-gk: bins, dividing the stream's bins; default the stream's. */
  bins?: number;
  /**
   * Public output resolution: each value is released as its nearest
   * `lower + k * step`, the double nearest that decimal (so step 0.1 gives
   * 2.9, not 2.9000000000000004). Post-processing: it costs no privacy.
   */
  step?: number;
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
  /**
   * Adds values; a chunk with a non-finite value adds nothing and throws.
   * Any chunk size works: up to 256 values are gathered in JavaScript and
   * sent 4,096 at a time (one value costs well under a microsecond), and
   * larger chunks (64 Ki values is a good size) go straight to the sketch.
   */
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
