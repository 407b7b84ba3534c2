// The CLI's output: releases as JSON, the data owner's true values and
// notes (stderr).
// The data owner's notes on public keys (they count rows, so stderr, never
// the release): the listed keys no row holds, and the rows no listed key
// holds, which a typo, another capitalisation or a stray space explains.
import { keyId } from './cli-groups.js';
import type { GroupedRelease, GroupKeyOrTuple, PrivacySession, QuantilesRelease } from './node.js';
import { rankError, tieOf } from './truth.js';

export function noteUnmatchedKeys(groups: readonly string[], keys: readonly string[] | undefined): void {
  // (Keys and rows as ids: a tuple's cells in JSON.)
  if (keys === undefined) return;
  const listed = new Set(keys);
  const held = new Set<string>();
  let unlisted = 0;
  for (const group of groups) {
    if (listed.has(group)) held.add(group);
    else unlisted++;
  }
  const empty = keys.filter((key) => !held.has(key));
  if (empty.length > 0) {
    process.stderr.write(
      `dp-quantiles: ${empty.length} of the --keys hold no rows: ${empty.map((key) => JSON.stringify(key)).join(', ')} (each is released as noise inside the bounds; this note is for the data owner only)\n`,
    );
  }
  if (unlisted > 0) {
    process.stderr.write(
      `dp-quantiles: ${unlisted} row${unlisted === 1 ? '' : 's'} hold no listed key and were left out (this note is for the data owner only)\n`,
    );
  }
}

// A grouped release as JSON: its accounting, and per group the values (and
// intervals), with the owner's true values when asked.
export function groupedEntry(
  release: GroupedRelease<GroupKeyOrTuple>,
  quantiles: number[],
  truth?: { values: Float64Array; groups: string[]; bounds: { lower: number; upper: number } },
): Record<string, unknown> {
  const byGroup = new Map<string, number[]>();
  if (truth !== undefined) {
    truth.groups.forEach((key, i) => {
      const list = byGroup.get(key) ?? [];
      list.push(Math.min(Math.max(truth.values[i], truth.bounds.lower), truth.bounds.upper));
      byGroup.set(key, list);
    });
  }
  return {
    method: release.method,
    privacy: release.privacy,
    neighbouring: release.neighbouring,
    keys: release.keys,
    ...(release.selection === undefined ? {} : { selection: release.selection }),
    ...(release.maxGroups === undefined ? {} : { maxGroups: release.maxGroups }),
    ...(release.maxContributions === undefined ? {} : { maxContributions: release.maxContributions }),
    ...(release.stepLook === undefined ? {} : { stepLook: release.stepLook }),
    ...(release.firstLook === undefined ? {} : { firstLook: release.firstLook }),
    ...(release.count === undefined ? {} : { count: release.count }),
    groups: release.groups.map((group) => {
      const sorted = truth === undefined ? undefined : Float64Array.from(byGroup.get(keyId(group.key)) ?? []).sort();
      // A group with no rows has no true quantiles: the owner's view says
      // so instead of a true value of null and a rank error of 0.
      const rows =
        sorted === undefined || sorted.length === 0
          ? quantiles.map((q, i) => ({ q, value: group.values[i] }))
          : withTruth(sorted, quantiles, { values: group.values, resolution: release.resolution }, truth!.bounds);
      const empty = sorted !== undefined && sorted.length === 0 ? { rows: 0, note: 'this group holds no rows: its values are noise alone (owner note)' } : {};
      const intervals = group.intervals;
      if (intervals !== undefined) {
        rows.forEach((row, i) => {
          (row as Record<string, unknown>).interval = [intervals.low[i], intervals.high[i]];
        });
      }
      return {
        key: group.key,
        ...(group.count === undefined ? {} : { count: group.count }),
        ...empty,
        ...(group.firstLook === undefined ? {} : { firstLook: group.firstLook }),
        quantiles: rows,
      };
    }),
    ...(release.intervals === undefined ? {} : { intervals: release.intervals }),
  };
}

// One release as JSON: its accounting, and per quantile the value (with its
// interval when asked), or `rows` when the owner's truth goes along.
export function releaseEntry(
  release: QuantilesRelease,
  quantiles: number[],
  rows: Record<string, unknown>[] = quantiles.map((q, i) => ({ q, value: release.values[i] })),
): Record<string, unknown> {
  const intervals = release.intervals;
  if (intervals !== undefined) {
    rows.forEach((row, i) => {
      row.interval = [intervals.low[i], intervals.high[i]];
    });
  }
  return {
    method: release.method,
    privacy: release.privacy,
    neighbouring: release.neighbouring,
    ...(release.maxContributions === undefined ? {} : { maxContributions: release.maxContributions }),
    ...(release.stepLook === undefined ? {} : { stepLook: release.stepLook }),
    ...(release.firstLook === undefined ? {} : { firstLook: release.firstLook }),
    quantiles: rows,
    ...(intervals === undefined
      ? {}
      : {
          intervals: {
            confidence: intervals.confidence,
            kind: intervals.kind,
            simultaneous: intervals.simultaneous,
            method: intervals.method,
            privacy: intervals.privacy,
          },
        }),
  };
}

// Prints `output` with the releases: one alone inline, several (or any in
// a session) as a list, and the session's accounting.
export function printReleases(output: Record<string, unknown>, releases: Record<string, unknown>[], session: PrivacySession | undefined): void {
  if (releases.length === 1 && session === undefined) {
    Object.assign(output, releases[0]);
  } else {
    output.releases = releases;
  }
  if (session !== undefined) {
    output.session = { total: session.total, spent: session.spent, remaining: session.remaining, releases: session.releases };
  }
  process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
}

// Each private value with the true quantile and its rank error (ties
// counted: values within half a grid step stand for the release's rank).
export function withTruth(
  sorted: Float64Array,
  quantiles: number[],
  release: { values: Float64Array; resolution: number },
  bounds: { lower: number; upper: number },
): Record<string, unknown>[] {
  const n = sorted.length;
  const tie = tieOf(release.resolution, bounds.lower, bounds.upper);
  return quantiles.map((q, i) => ({
    q,
    value: release.values[i],
    true: n === 0 ? null : sorted[Math.min(Math.floor(q * n), n - 1)],
    rankError: rankError(sorted, q, release.values[i], tie),
  }));
}
