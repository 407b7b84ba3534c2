// A release as the package returns it: the core's report (the block) read
// into the public shape, and plain JSON for it (`toJSON`).
import type { WasmReleaseResult } from './generated/dpq_module.mjs';
import type { DpQuantilesErrorCode } from './errors.js';
import type { ConfidenceIntervals, PrivacySpent, QuantileMethod, QuantilesRelease } from './types.js';
import { fail, privacyOf } from './validate.js';

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
export function withJson<T extends object>(release: T): T {
  Object.defineProperty(release, 'toJSON', { value: releaseToJSON, enumerable: false, configurable: true });
  return release;
}

export function toRelease(
  result: WasmReleaseResult,
  values: Float64Array,
  intervals?: { low: Float64Array; high: Float64Array; confidence: number },
): QuantilesRelease {
  return withJson(releaseFields(result, values, intervals)) as QuantilesRelease;
}

export function releaseFields(
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
