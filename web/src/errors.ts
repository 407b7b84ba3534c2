/**
 * Stable error codes. All but the last come from the C++ core (core/status.h);
 * `INVALID_ARGUMENT` is raised in TypeScript for values of the wrong
 * JavaScript type.
 */
export type DpQuantilesErrorCode =
  | 'NON_FINITE_VALUE'
  | 'INVALID_BOUNDS'
  | 'INVALID_PRIVACY'
  | 'INVALID_QUANTILES'
  | 'UNKNOWN_METHOD'
  | 'INVALID_OPTION'
  | 'TOO_LARGE'
  | 'INVALID_STATE'
  | 'CORRUPT_DATA'
  | 'ENTROPY_UNAVAILABLE'
  | 'BUDGET_EXCEEDED'
  | 'NOT_ENOUGH_DATA'
  | 'INVALID_COUNTS'
  | 'INVALID_ARGUMENT';

/** Thrown for every invalid input; the instance that threw keeps working. */
export class DpQuantilesError extends Error {
  /** Stable, machine-readable code, e.g. `'INVALID_BOUNDS'`. */
  readonly code: DpQuantilesErrorCode;

  constructor(code: DpQuantilesErrorCode, message: string) {
    super(message);
    this.name = 'DpQuantilesError';
    this.code = code;
  }
}
