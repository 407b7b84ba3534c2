// The CLI's --group-by options: columns, public keys (CSV lists) or
// private ones, per person.
import { parse as parseCsv } from 'csv-parse/sync';

import type { GroupKeyOptions, GroupKeyOrTuple } from './node.js';
import { UsageError, parseNumberOption } from './cli-usage.js';

// --keys (and --group-by) as one CSV record: commas separate keys, and a
// key holding a comma (or a quote) is quoted as in the file ('"Zürich,
// CH",東京'). Spaces around a key are dropped, as around a list's commas.
export function parseList(text: string, flag: string): string[] {
  let records: string[][];
  try {
    records = parseCsv(text, { trim: true, relax_column_count: true }) as string[][];
  } catch (error) {
    throw new UsageError(`${flag} is not a comma-separated list (quote a name holding a comma, as in CSV): ${(error as Error).message}`);
  }
  if (records.length !== 1) throw new UsageError(`${flag} takes one line of comma-separated names`);
  return records[0];
}

// --group-by's options: public --keys or private groups (--delta), and
// per person --max-groups; undefined without --group-by. Checked before the
// file is read.
// A key's id for the owner's views: the key, or a tuple's cells as JSON.
export function keyId(key: GroupKeyOrTuple): string {
  return Array.isArray(key) ? JSON.stringify(key) : String(key);
}

// No rows, in the shape of --group-by's columns: for the checks before the
// file is read.
export function emptyGroups(text: string | undefined): string[] | string[][] {
  const columns = groupColumnsOf(text) ?? [];
  return columns.length > 1 ? columns.map(() => []) : [];
}

// --group-by's columns: one CSV line of names (or indexes).
export function groupColumnsOf(text: string | undefined): string[] | undefined {
  return text === undefined ? undefined : parseList(text, '--group-by');
}

export function groupOptionsOf(args: {
  'group-by'?: string;
  keys?: string[];
  delta?: string;
  'max-groups'?: string;
  'user-column'?: string;
  'group-sizes'?: boolean;
}): GroupKeyOptions | undefined {
  if (args['group-by'] === undefined) {
    for (const flag of ['keys', 'delta', 'max-groups'] as const) {
      if (args[flag] !== undefined) throw new UsageError(`--${flag} goes with --group-by`);
    }
    if (args['group-sizes'] === true) throw new UsageError('--group-sizes goes with --group-by');
    return undefined;
  }
  const columns = groupColumnsOf(args['group-by']) as string[];
  const lists = args.keys?.map((text) => parseList(text, '--keys'));
  if (lists !== undefined && lists.length !== columns.length) {
    throw new UsageError(
      `--group-by names ${columns.length} column${columns.length === 1 ? '' : 's'}: give one --keys list for each (the groups are every combination), or --delta`,
    );
  }
  // Several columns: every combination of their keys, in order.
  const keys =
    lists === undefined
      ? undefined
      : lists.length === 1
        ? lists[0]
        : lists.reduce<string[][]>((tuples, list) => tuples.flatMap((tuple) => list.map((key) => [...tuple, key])), [[]]);
  const delta = parseNumberOption('delta', args.delta);
  const maxGroups = parseNumberOption('max-groups', args['max-groups']);
  if (keys !== undefined && delta !== undefined) {
    throw new UsageError('give --keys (the public groups) or --delta (private groups), not both');
  }
  if (keys === undefined && delta === undefined) {
    throw new UsageError('--group-by needs --keys K1,K2,... (the public groups) or --delta D (private groups, chosen by a noisy count)');
  }
  if ((maxGroups === undefined) !== (args['user-column'] === undefined)) {
    throw new UsageError('per person, --group-by takes --max-groups with --user-column (the most groups a person counts in)');
  }
  return {
    ...(keys === undefined ? { delta } : { keys }),
    ...(maxGroups === undefined ? {} : { maxGroups }),
    ...(args['group-sizes'] === true ? { count: true } : {}),
  };
}
