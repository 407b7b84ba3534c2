import type {
  DpqWasmModule,
  WasmReleaseSpec,
} from './generated/dpq_module.mjs';
import { DpQuantilesError, type DpQuantilesErrorCode } from './errors.js';

/** Release methods. Later versions add more; each states its guarantee. */
export type QuantileMethod = 'aq';

/** Options of one release. Exactly one of `epsilon` and `rho`. */
export interface QuantilesOptions {
  /** Public lower bound. Values below it are clamped to it. */
  lower: number;
  /** Public upper bound. Values above it are clamped to it. */
  upper: number;
  /** Quantiles to release, each strictly inside (0, 1), in any order. */
  quantiles: ArrayLike<number>;
  /** Pure epsilon-DP budget for the whole release. */
  epsilon?: number;
  /** rho-zCDP budget for the whole release. */
  rho?: number;
  /** The mechanism; `'aq'` (ApproximateQuantiles) by default. */
  method?: QuantileMethod;
  /**
   * Makes the release reproducible. FOR TESTS ONLY: a seeded release is not
   * private, since anyone who knows or guesses the seed can remove the noise.
   * A non-negative safe integer.
   */
  seed?: number;
}

/** What a release spent, for the caller's privacy accounting. */
export type PrivacySpent =
  | { kind: 'pure'; epsilon: number }
  | { kind: 'zcdp'; rho: number };

/** A release with its privacy accounting. */
export interface QuantilesRelease {
  /** One private value per requested quantile, in the order requested. */
  values: Float64Array;
  method: QuantileMethod;
  /** The budget this release spent (all of the budget given). */
  privacy: PrivacySpent;
  /** AQ: recursion levels the budget was split over. */
  levels: number;
  /** AQ: epsilon of each level's exponential mechanisms. */
  epsilonPerLevel: number;
}

/** The loaded library. Create it with `loadDpQuantiles()`. */
export interface DpQuantiles {
  /**
   * Releases one differentially private value per requested quantile, in the
   * order requested: inside [lower, upper], non-decreasing along increasing
   * quantiles. Neighbouring datasets differ by one added or removed value.
   * Throws `DpQuantilesError` on invalid input.
   */
  quantiles(
    data: Float64Array | ArrayLike<number>,
    options: QuantilesOptions,
  ): Float64Array;
  /** Like `quantiles`, and also reports the privacy spent. */
  release(
    data: Float64Array | ArrayLike<number>,
    options: QuantilesOptions,
  ): QuantilesRelease;
  /** The method names this build supports. */
  readonly methods: readonly QuantileMethod[];
  /** Current size of the WebAssembly heap in bytes (diagnostics). */
  heapBytes(): number;
}

const KNOWN_KEYS = new Set([
  'lower',
  'upper',
  'quantiles',
  'epsilon',
  'rho',
  'method',
  'seed',
]);
// Values above 2^28 doubles (2 GiB) cannot fit the 32-bit WASM heap.
const MAX_VALUES = 2 ** 28;

function fail(code: DpQuantilesErrorCode, message: string): never {
  throw new DpQuantilesError(code, message);
}

function checkNumber(name: string, value: unknown, optional: boolean): void {
  if (value === undefined && optional) return;
  if (typeof value !== 'number') {
    fail(
      'INVALID_ARGUMENT',
      `${name} must be a number, got ${value === null ? 'null' : typeof value}`,
    );
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
      fail(
        'INVALID_ARGUMENT',
        `${name}[${i}] is ${values[i] === null ? 'null' : `a ${typeof values[i]}`}; every element must be a number`,
      );
    }
  }
  return values as number[];
}

function buildSpec(options: QuantilesOptions): WasmReleaseSpec {
  if (typeof options !== 'object' || options === null) {
    fail('INVALID_ARGUMENT', 'options must be an object');
  }
  checkNumber('lower', options.lower, false);
  checkNumber('upper', options.upper, false);
  checkNumber('epsilon', options.epsilon, true);
  checkNumber('rho', options.rho, true);
  const method = options.method ?? 'aq';
  if (typeof method !== 'string') {
    fail('INVALID_ARGUMENT', `method must be a string, got ${typeof method}`);
  }
  if (options.seed !== undefined) {
    if (!Number.isSafeInteger(options.seed) || options.seed < 0) {
      fail('INVALID_ARGUMENT', 'seed must be a non-negative safe integer');
    }
  }
  // Keys we do not know go to the core as method options, which rejects the
  // ones the method does not take: nothing is silently ignored.
  const extra: Record<string, number> = {};
  for (const [key, value] of Object.entries(options)) {
    if (KNOWN_KEYS.has(key) || value === undefined) continue;
    if (typeof value !== 'number') {
      fail('INVALID_OPTION', `option '${key}' must be a number, got ${typeof value}`);
    }
    extra[key] = value;
  }
  return {
    method,
    lower: options.lower,
    upper: options.upper,
    epsilon: options.epsilon,
    rho: options.rho,
    seed: options.seed,
    options: extra,
  };
}

// Allocates `count` doubles on the WASM heap, or throws TOO_LARGE.
function allocate(module: DpqWasmModule, count: number, what: string): number {
  const address = module._malloc(Math.max(1, count) * 8);
  if (address === 0) {
    fail('TOO_LARGE', `cannot allocate ${count} values for ${what} in the WebAssembly heap`);
  }
  return address;
}

/** Wraps a loaded Emscripten module. Internal: use `loadDpQuantiles()`. */
export function wrapModule(module: DpqWasmModule): DpQuantiles {
  const methods = module.methods().split(',') as QuantileMethod[];

  function release(
    data: Float64Array | ArrayLike<number>,
    options: QuantilesOptions,
  ): QuantilesRelease {
    const values = checkNumbers('data', data);
    const spec = buildSpec(options);
    const quantiles = checkNumbers('quantiles', options.quantiles);
    if (values.length > MAX_VALUES) {
      fail('TOO_LARGE', `${values.length} values; at most ${MAX_VALUES} fit the WebAssembly heap`);
    }
    let dataAddress = 0;
    let quantilesAddress = 0;
    let outAddress = 0;
    try {
      dataAddress = allocate(module, values.length, 'the data');
      quantilesAddress = allocate(module, quantiles.length, 'the quantiles');
      outAddress = allocate(module, quantiles.length, 'the result');
      // Views are taken after every allocation: a heap growth detaches old ones.
      module.HEAPF64.set(values, dataAddress / 8);
      module.HEAPF64.set(quantiles, quantilesAddress / 8);
      const result = module.release(
        dataAddress,
        values.length,
        quantilesAddress,
        quantiles.length,
        outAddress,
        spec,
      );
      if (result.code !== 0) {
        fail(result.codeName as DpQuantilesErrorCode, result.message);
      }
      const start = outAddress / 8;
      return {
        values: module.HEAPF64.slice(start, start + quantiles.length),
        method: result.method as QuantileMethod,
        privacy:
          result.privacyKind === 'pure'
            ? { kind: 'pure', epsilon: result.epsilon }
            : { kind: 'zcdp', rho: result.rho },
        levels: result.levels,
        epsilonPerLevel: result.epsilonPerLevel,
      };
    } finally {
      if (outAddress !== 0) module._free(outAddress);
      if (quantilesAddress !== 0) module._free(quantilesAddress);
      if (dataAddress !== 0) module._free(dataAddress);
    }
  }

  return {
    quantiles: (data, options) => release(data, options).values,
    release,
    methods,
    heapBytes: () => module.HEAP8.length,
  };
}
