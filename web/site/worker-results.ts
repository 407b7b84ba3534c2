// What the demo worker's releases send the page: the options a release
// takes from the page's settings, and the results with the owner's view.
import type { GroupedRelease, GroupKeyOrTuple, QuantilesOptions } from '../../dist/browser.js';
import type { ReleaseResult, ReleaseSettings } from './protocol.js';
import { post, sessionState } from './worker-session.js';

// The tree CDF keeps its own grid and takes no step.
const STEPLESS = new Set(['tree-cdf']);

export function optionsOf(settings: ReleaseSettings, quantiles: number[] = settings.quantiles, method = settings.method): QuantilesOptions {
  return {
    lower: settings.lower,
    upper: settings.upper,
    quantiles,
    method,
    ...settings.budget,
    ...(settings.step === undefined || STEPLESS.has(method) ? {} : { step: settings.step }),
    ...(settings.confidence === undefined
      ? {}
      : { confidence: settings.confidence, interval: settings.interval, simultaneous: settings.simultaneous === true }),
  } as QuantilesOptions;
}

// Posts a release with what only the page's owner may see added.
export function postResult(
  release: {
    values: Float64Array;
    method: string;
    privacy: object;
    neighbouring: string;
    maxContributions?: number;
    stepLook?: { share: number; step: number | null };
    firstLook?: { share: number; found?: [number, number]; seen?: [number, number] };
    intervals?: {
      low: Float64Array;
      high: Float64Array;
      confidence: number;
      kind: 'sample' | 'population';
      simultaneous: boolean;
      privacy: object;
    };
  },
  extra: Pick<ReleaseResult, 'milliseconds' | 'truth' | 'streamed' | 'counted'>,
): void {
  post({
    type: 'result',
    result: {
      values: Array.from(release.values),
      method: release.method,
      privacy: release.privacy as ReleaseResult['privacy'],
      neighbouring: release.neighbouring,
      ...(release.maxContributions === undefined ? {} : { maxContributions: release.maxContributions }),
      ...(release.stepLook === undefined ? {} : { stepLook: release.stepLook }),
      ...(release.firstLook === undefined ? {} : { firstLook: release.firstLook }),
      ...(release.intervals === undefined
        ? {}
        : {
            intervals: {
              low: Array.from(release.intervals.low),
              high: Array.from(release.intervals.high),
              confidence: release.intervals.confidence,
              kind: release.intervals.kind,
              simultaneous: release.intervals.simultaneous,
              privacy: release.intervals.privacy as Record<string, number | string>,
            },
          }),
      ...extra,
      session: sessionState(),
    },
  });
}

// A grouped release as the page shows it: each group's values (and
// intervals), the owner's true values (`truthOf`), and its look.
export function groupedResult<K extends GroupKeyOrTuple>(
  made: GroupedRelease<K>,
  settings: ReleaseSettings,
  milliseconds: number,
  truthOf: (key: string, q: number) => number,
): ReleaseResult {
  return {
    values: [],
    method: made.method,
    privacy: made.privacy as ReleaseResult['privacy'],
    neighbouring: made.neighbouring,
    ...(made.maxContributions === undefined ? {} : { maxContributions: made.maxContributions }),
    ...(made.stepLook === undefined ? {} : { stepLook: made.stepLook }),
    ...(made.intervals === undefined
      ? {}
      : {
          intervals: {
            low: [],
            high: [],
            confidence: made.intervals.confidence,
            kind: made.intervals.kind,
            simultaneous: made.intervals.simultaneous,
            privacy: made.intervals.privacy as Record<string, number | string>,
          },
        }),
    milliseconds,
    keys: made.keys,
    groups: made.groups.map((group) => ({
      key: String(group.key),
      values: Array.from(group.values),
      ...(group.intervals === undefined ? {} : { low: Array.from(group.intervals.low), high: Array.from(group.intervals.high) }),
      truth: settings.quantiles.map((q) => truthOf(String(group.key), q)),
      // Each group took a first look when the release reports its share.
      ...(made.firstLook === undefined ? {} : { look: group.firstLook?.found === undefined ? {} : { found: group.firstLook.found } }),
    })),
    session: sessionState(),
  };
}

// Private keys in the demo: a group of one row appears with probability at
// most 10^-7 (a tenth of the session's delta).
export const DEMO_SELECTION_DELTA = 1e-7;
