// Types of the Emscripten module built from wasm/bindings.cc (see
// CMakeLists.txt). Hand-written: Emscripten 3.1.6 does not emit them.

export interface WasmReleaseResult {
  code: number;
  codeName: string;
  message: string;
  method: string;
  privacyKind: string;
  epsilon: number;
  delta: number;
  rho: number;
  neighbouring: string;
  levels: number;
  mechanismEpsilon: number;
  resolution: number;
  /** add-remove-user releases: the k each person was bounded to; else 0. */
  maxContributions: number;
  /** Joint methods: the public cap on the records read; else 0. */
  recordCap: number;
  /** With confidence: out holds values, lows, highs (3 m doubles). */
  hasIntervals: boolean;
  intervalEpsilon: number;
  intervalRho: number;
  /** Population intervals (interval: 'population'). */
  intervalPopulation: boolean;
  /** The intervals hold all at once (simultaneous: true). */
  intervalSimultaneous: boolean;
  /** How they were drawn: 'brackets' or 'tree' ('' without intervals). */
  intervalMethod: string;
  /** AQ's first look: its share of the method's budget (0: none). */
  lookShare: number;
  /** The span its histogram found (NaN: none). */
  lookLow: number;
  lookHigh: number;
  lookSeenLow: number;
  lookSeenHigh: number;
  /** The default's step look: its share of the budget (0: it did not run). */
  stepLookShare: number;
  /** The step it found (NaN: none). */
  stepLookStep: number;
}

export interface WasmReleaseSpec {
  method: string;
  /** A session to check and charge (see WasmSession). */
  session?: WasmSession;
  lower: number;
  upper: number;
  epsilon?: number;
  rho?: number;
  seed?: number;
  options?: Record<string, number | string>;
  /** Heap address of one uint32 person id per record (per-person releases). */
  users?: number;
  maxContributions?: number;
  confidence?: number;
  intervalShare?: number;
  /** 'sample' (default) or 'population'. */
  interval?: string;
  simultaneous?: boolean;
  /** Bucketed release: values become bucket lower edges (docs/scale.md). */
  buckets?: number;
}

/**
 * What a release block cannot hold (web/src/block.ts): a method the module
 * does not list (the core names the error), method options, the interval
 * kind and a session. Passed as undefined when there is none of them.
 */
export interface WasmReleaseExtra {
  method: string;
  options?: Record<string, number | string>;
  interval?: string;
  session?: WasmSession;
}

export interface WasmSanitizeSpec {
  session?: WasmSession;
  lower: number;
  upper: number;
  epsilon?: number;
  rho?: number;
  size?: number;
  step?: number;
  seed?: number;
  users?: number;
  maxContributions?: number;
}

export interface WasmBoundsSpec {
  session?: WasmSession;
  epsilon?: number;
  rho?: number;
  seed?: number;
  /** Heap address of one uint32 person id per value (per-person bounds). */
  users?: number;
  maxContributions?: number;
}

export interface WasmStreamSpec {
  lower: number;
  upper: number;
  alpha: number;
  bins?: number;
}

export interface WasmStreamReleaseSpec {
  session?: WasmSession;
  method: string;
  epsilon?: number;
  rho?: number;
  seed?: number;
  options?: Record<string, number>;
}

/** An embind object: JavaScript must call delete() once. */
export interface WasmStream {
  status(): WasmReleaseResult;
  push(dataAddress: number, count: number): WasmReleaseResult;
  merge(other: WasmStream): WasmReleaseResult;
  count(): number;
  memoryBytes(): number;
  release(
    quantilesAddress: number,
    quantileCount: number,
    outAddress: number,
    spec: WasmStreamReleaseSpec,
  ): WasmReleaseResult;
  serialize(): Uint8Array;
  delete(): void;
}

/** A privacy budget as the core reports it. */
export interface WasmBudget {
  epsilon?: number;
  delta?: number;
  rho?: number;
}

export interface WasmSessionSpec {
  epsilon?: number;
  delta?: number;
  rho?: number;
  neighbouring: string;
}

/** An embind object: JavaScript must call delete() once. */
export interface WasmSession {
  status(): WasmReleaseResult;
  spent(): WasmBudget;
  remaining(): WasmBudget;
  total(): WasmBudget;
  releases(): number;
  neighbouring(): string;
  /** The ledger's charges, in order. */
  charges(): WasmCharge[];
  /** Charges a saved entry again (restoring a ledger). */
  replay(charge: WasmCharge): WasmReleaseResult;
  delete(): void;
}

export interface WasmCharge {
  kind: 'pure' | 'approx' | 'zcdp';
  epsilon?: number;
  delta?: number;
  rho?: number;
  neighbouring: string;
  maxContributions?: number;
}

/** A grouped release's extra: Release's, the groups, and the report back. */
export interface WasmGroupExtra extends WasmReleaseExtra {
  groups: { keys: number; private: boolean; delta?: number; selectionShare?: number; maxGroups?: number; count: boolean; countShare?: number };
  report?: {
    selectionEpsilon: number;
    selectionRho: number;
    selectionThreshold: number;
    maxGroups: number;
    countEpsilon: number;
    countRho: number;
    countShare: number;
    countOf: 'rows' | 'people';
  };
}

export interface DpqWasmModule {
  HEAPF64: Float64Array;
  HEAP8: Int8Array;
  _malloc(bytes: number): number;
  _free(address: number): void;
  /** As release, from counts (the buffer is overwritten). */
  releaseFromCounts(
    countsAddress: number,
    bucketCount: number,
    quantilesAddress: number,
    quantileCount: number,
    outAddress: number,
    blockAddress: number,
    extra: WasmReleaseExtra | undefined,
  ): number;
  /**
   * A grouped release (core/groups.h): values and codes (uint32 at
   * codesAddress, in a buffer of 8 bytes a row) overwritten; out holds
   * keys x m values, then with confidence keys x m lows and highs, then a
   * flag a key, four first-look spans a key and a noisy count a key. The
   * selection's and the counts' details come back in extra.report.
   */
  releaseByGroup(
    valuesAddress: number,
    codesAddress: number,
    count: number,
    quantilesAddress: number,
    quantileCount: number,
    outAddress: number,
    blockAddress: number,
    extra: WasmGroupExtra,
  ): number;
  /** The same from (key code uint32, bucket, count) rows. */
  releaseByGroupFromCounts(
    keysAddress: number,
    bucketsAddress: number,
    countsAddress: number,
    rows: number,
    bucketCount: number,
    quantilesAddress: number,
    quantileCount: number,
    outAddress: number,
    blockAddress: number,
    extra: WasmGroupExtra,
  ): number;
  /**
   * The spec in the block at blockAddress (web/src/block.ts), the report
   * written back into it; returns the status code (0: released).
   */
  release(
    dataAddress: number,
    count: number,
    quantilesAddress: number,
    quantileCount: number,
    outAddress: number,
    blockAddress: number,
    extra: WasmReleaseExtra | undefined,
  ): number;
  /** JSON: the release block's slot names and the names its indices stand for. */
  releaseLayout(): string;
  /** The last failed release's code, name and message. */
  lastReleaseError(): WasmReleaseResult;
  sanitize(
    dataAddress: number,
    count: number,
    outAddress: number,
    spec: WasmSanitizeSpec,
  ): WasmReleaseResult;
  sanitizeSize(spec: WasmSanitizeSpec): number;
  /** out: lower, upper, threshold. */
  bounds(dataAddress: number, count: number, outAddress: number, spec: WasmBoundsSpec): WasmReleaseResult;
  methods(): string;
  createStream(spec: WasmStreamSpec): WasmStream;
  loadStream(bytesAddress: number, size: number): WasmStream;
  createSession(spec: WasmSessionSpec): WasmSession;
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
}

export interface DpqModuleOverrides {
  /** Fills the array with cryptographically secure random bytes. */
  dpqFillRandom: (bytes: Uint8Array) => void;
}

declare function createDpqModule(
  overrides: DpqModuleOverrides,
): Promise<DpqWasmModule>;
export default createDpqModule;
