// The data owner's view of a release: how far each private value is from the
// true quantile, in ranks. NOT private (it reads the data); the CLI's
// --show-true, the demo's owner-only columns and the experiments share it.
// Internal to the repository: not part of the package's exports.

/** Records of ascending `sorted` that pass `below` (which must hold on a prefix). */
export function countBelow(sorted: ArrayLike<number>, below: (x: number) => boolean): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (below(sorted[mid])) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Half a step of a release's grid: values that close to a release count as
 * equal to it. The trees, whose values are interpolated, have no grid: a
 * negligible 1e-12 of the range.
 */
export function tieOf(resolution: number, lower: number, upper: number): number {
  return resolution > 0 ? resolution / 2 : 1e-12 * (upper - lower);
}

/**
 * Distance from the target rank floor(q n) to the ranks [#{x < v}, #{x <= v}]
 * a release v stands for (ties counted), in the clamped, sorted data.
 */
export function rankError(sorted: ArrayLike<number>, q: number, v: number, tie: number): number {
  const target = Math.floor(q * sorted.length);
  return Math.max(
    countBelow(sorted, (x) => x < v - tie) - target,
    0,
    target - countBelow(sorted, (x) => x <= v + tie),
  );
}
