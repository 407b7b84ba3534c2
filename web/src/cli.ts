#!/usr/bin/env -S node --max-semi-space-size=2 --max-old-space-size=128
// dp-quantiles: private quantiles of one CSV column, printed as JSON.
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { parseArgs, type ParseArgsConfig } from 'node:util';

import {
  DpQuantilesError,
  loadDpQuantiles,
  type DpQuantiles,
  type PrivacySession,
  type QuantileMethod,
  type QuantilesRelease,
  type QuantilesOptions,
  type SessionOptions,
  type GroupKeyOrTuple,
  type GroupKeyOptions,
  type GroupOptions,
} from './node.js';
import { countsMain } from './cli-counts.js';
import { emptyGroups, groupColumnsOf, groupOptionsOf, keyId } from './cli-groups.js';
import { openSession } from './cli-ledger.js';
import { groupedEntry, noteUnmatchedKeys, printReleases, releaseEntry, withTruth } from './cli-output.js';
import { readColumn } from './cli-read.js';
import { NUMBER, UsageError, parseBudget, parseNumberOption } from './cli-usage.js';
import { editDistance } from './validate.js';

const USAGE = `usage: dp-quantiles [FILE] --column NAME|INDEX
                    (--lower L --upper U | --estimate-bounds epsilon=E|rho=R)
                    (--epsilon E | --rho R) [--quantiles Q1,Q2,... ...]
                    [--budget epsilon=E|rho=R|epsilon=E,delta=D] [--session FILE]
                    [--method M] [--step S] [--delimiter D] [--option NAME=VALUE ...]
                    [--user-column NAME|INDEX --max-contributions K [--max-groups G]]
                    [--group-by NAME|INDEX (--keys K1,K2,... | --delta D) [--group-sizes]]
                    [--confidence C [--interval-share S] [--interval sample|population]
                     [--simultaneous]]
                    [--seed N]
                    [--no-header] [--decimal-comma] [--skip-non-numbers] [--show-true]
       dp-quantiles [FILE] --counts --buckets B --lower L --upper U
                    (--epsilon E | --rho R) [--quantiles ...] [--method M]
                    [--budget ...] [--session FILE] [--confidence C ...] [--seed N]

Reads CSV from FILE, or from standard input when FILE is absent or '-', and
prints the private quantiles of one column as JSON. With --counts, FILE holds
bucket counts a database computed instead of rows (docs/scale.md): a
bucket,count line per non-empty bucket (0-based bucket of B equal-width
buckets over [L, U]; a header line is skipped), and the release is made from
them.

  --column      column name (from the header) or 0-based index
  --lower/upper public bounds; values outside are clamped. Do not read them
                off the data: that leaks it.
  --estimate-bounds
                estimate the bounds privately instead, spending epsilon=E
                (or rho=R) more (from the --budget session if one is given);
                10-20% of the whole budget is a reasonable share
  --epsilon     pure epsilon-DP budget, or
  --rho         rho-zCDP budget
  --quantiles   comma-separated, each in (0, 1) (default 0.25,0.5,0.75);
                repeat it for several releases
  --budget      a session over the releases: epsilon=E, rho=R or
                epsilon=E,delta=D; a release that would overspend is
                refused (BUDGET_EXCEEDED) and nothing is printed
  --session     FILE keeps the session's ledger across runs: read when it
                exists (then --budget, if given, must match its total),
                started from --budget when not, and written back with each
                printed release's charge. Deleting it gives no privacy back
  --method      auto (default: aggtree on a coarse --step grid, or on
                --counts buckets, with many quantiles, else aq; the output
                says which ran), aq, jointexp, inverse-sensitivity,
                hs-jointexp, appindexp, aggtree or tree-cdf
  --step        public output resolution: values are lower + k * step
                (e.g. 1 for integer data, so an atom at 40 prints as 40)
  --confidence  also print an interval for each quantile that holds the
                data's own quantile with probability at least C (e.g. 0.95);
                the intervals spend --interval-share of the budget
                (default 0.25), the values the rest
  --interval    sample (default): the intervals hold this data's quantiles;
                population: the quantiles of the distribution the rows are
                an independent random sample of (wider: they also cover
                sampling error)
  --simultaneous
                all of a release's intervals hold at once with probability
                at least C, instead of each on its own (a little wider)
  --user-column the column naming the person of each row: with it the
                guarantee protects a person with all their rows, not one row
  --max-contributions
                K >= 1: each person keeps at most K rows (a random subset);
                required with --user-column
  --group-by    the column of each row's group: one release for every
                group, for the budget of one (docs/groups.md), printed as
                "groups"
  --keys        the public groups, comma-separated (quote a key holding a
                comma, as in CSV: '"Zürich, CH",Bern'): each is released,
                one no row holds too; rows of other groups are left out
                (stderr counts both, for the data owner)
  --group-sizes with --group-by: each group's noisy count of rows (people,
                per person) beside its quantiles: a tenth of the budget with
                --keys, the selection's own count with --delta
  --delta       without --keys: the groups are private, and a group appears
                only if a noisy count of its rows clears a threshold; a
                group of one row appears with probability at most D
  --max-groups  with --user-column and --group-by: a person counts in at
                most G groups (chosen at random), K rows in each
  --delimiter   the CSV delimiter: one character or 'tab' (default: ',' or,
                when the header line has no comma, ';' or a tab)
  --decimal-comma
                numbers written 3,5 (in a file delimited by ';' or tabs)
  --skip-non-numbers
                release even when most rows are not numbers (by default
                that is refused: a column of text or of decimal commas
                would release noise); a column with no number at all is
                always refused
  --option      a method option, repeatable: look=0.1 (aq's first look's
                share), delta=1e-6, branching=16, height=4, aggregation=none,
                cells=1024, budget=min-variance, jitter=gaussian, scale=0.01
  --seed        reproducible noise, NOT private: for tests only (the output
                says privacy kind "none")
  --no-header   the first row is data (cells that are empty or not numbers
                are skipped and counted on stderr)
  --version     print the version
  --show-true   also print the true quantiles and rank errors (ties
                counted: a value equal to the release stands for its rank):
                NOT private, for the data owner only`;

// node:util parseArgs reads '--lower -20' as two options; join a negative
// number to the option before it.
function joinNegativeNumbers(argv: string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const next = argv[i + 1];
    if (/^--[a-z]+$/.test(argv[i]) && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      joined.push(`${argv[i]}=${next}`);
      i++;
    } else {
      joined.push(argv[i]);
    }
  }
  return joined;
}

// The flags (node:util parseArgs).
const OPTIONS = {
  column: { type: 'string' },
  lower: { type: 'string' },
  upper: { type: 'string' },
  epsilon: { type: 'string' },
  rho: { type: 'string' },
  quantiles: { type: 'string', multiple: true, default: [] },
  budget: { type: 'string' },
  session: { type: 'string' },
  'estimate-bounds': { type: 'string' },
  method: { type: 'string', default: 'auto' },
  step: { type: 'string' },
  'user-column': { type: 'string' },
  'group-by': { type: 'string' },
  keys: { type: 'string', multiple: true },
  delta: { type: 'string' },
  'max-groups': { type: 'string' },
  'group-sizes': { type: 'boolean', default: false },
  confidence: { type: 'string' },
  'interval-share': { type: 'string' },
  interval: { type: 'string' },
  simultaneous: { type: 'boolean' },
  'max-contributions': { type: 'string' },
  delimiter: { type: 'string' },
  version: { type: 'boolean', default: false },
  option: { type: 'string', multiple: true, default: [] },
  seed: { type: 'string' },
  'no-header': { type: 'boolean', default: false },
  'decimal-comma': { type: 'boolean', default: false },
  'skip-non-numbers': { type: 'boolean', default: false },
  'show-true': { type: 'boolean', default: false },
  counts: { type: 'boolean', default: false },
  buckets: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} satisfies NonNullable<ParseArgsConfig['options']>;
const FLAGS = Object.keys(OPTIONS);

async function main(argv: string[]): Promise<void> {
  const { values: args, positionals } = parseArgs({
    args: joinNegativeNumbers(argv),
    allowPositionals: true,
    options: OPTIONS,
  });
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (args.version) {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    process.stdout.write(`${manifest.version}\n`);
    return;
  }
  if (positionals.length > 1) throw new UsageError('give at most one input file');
  if (args.counts) return countsMain(args, positionals[0] ?? '-');
  if (args.buckets !== undefined) throw new UsageError('--buckets goes with --counts');
  if (args.column === undefined) throw new UsageError('--column is required');
  const estimateBounds = args['estimate-bounds'];
  if (estimateBounds !== undefined && (args.lower !== undefined || args.upper !== undefined)) {
    throw new UsageError('give --lower and --upper, or --estimate-bounds, not both');
  }
  if (estimateBounds === undefined && (args.lower === undefined || args.upper === undefined)) {
    throw new UsageError('--lower and --upper are required (public bounds), or --estimate-bounds epsilon=E');
  }
  const boundsBudget = estimateBounds === undefined ? undefined : parseBudget(estimateBounds, 'estimate-bounds');
  if (boundsBudget !== undefined && 'delta' in boundsBudget) {
    throw new UsageError('--estimate-bounds takes epsilon=E or rho=R');
  }
  if ((args['user-column'] === undefined) !== (args['max-contributions'] === undefined)) {
    throw new UsageError('--user-column and --max-contributions go together');
  }
  const groupOptions = groupOptionsOf(args);
  const file = positionals[0] ?? '-';
  if (file !== '-' && existsSync(file) && statSync(file).isDirectory()) {
    throw new UsageError(`${file} is a directory; give a CSV file (or - for standard input)`);
  }
  // Every option is checked before the file is opened: parsed here, then
  // one dry release on no data per --quantiles set (no session, output
  // discarded: nothing is published), so a bad --epsilon is refused at once,
  // not after reading a million rows.
  const quantileSets = (args.quantiles.length > 0 ? args.quantiles : ['0.25,0.5,0.75']).map((set) =>
    set.split(',').map((q) => parseNumberOption('quantiles', q) as number),
  );
  const methodOptions: Record<string, number | string> = {};
  for (const option of args.option) {
    const at = option.indexOf('=');
    if (at <= 0) throw new UsageError(`--option takes NAME=VALUE, got '${option}'`);
    const value = option.slice(at + 1);
    methodOptions[option.slice(0, at)] = NUMBER.test(value) ? Number(value) : value;
  }
  const maxContributions = parseNumberOption('max-contributions', args['max-contributions']);
  const options = {
    ...methodOptions,
    lower: parseNumberOption('lower', args.lower) ?? Number.NaN,
    upper: parseNumberOption('upper', args.upper) ?? Number.NaN,
    epsilon: parseNumberOption('epsilon', args.epsilon),
    rho: parseNumberOption('rho', args.rho),
    method: args.method as QuantileMethod | 'auto',
    step: parseNumberOption('step', args.step),
    seed: parseNumberOption('seed', args.seed),
    confidence: parseNumberOption('confidence', args.confidence),
    intervalShare: parseNumberOption('interval-share', args['interval-share']),
    interval: args.interval as 'sample' | 'population' | undefined,
    simultaneous: args.simultaneous,
  } as QuantilesOptions & { lower: number; upper: number; seed?: number; maxContributions?: number };
  if (args['decimal-comma'] && args.delimiter === ',') {
    throw new UsageError("--decimal-comma needs another delimiter (--delimiter ';' or tab): a comma cannot be both");
  }
  const dpq = await loadDpQuantiles();
  for (const quantiles of quantileSets) {
    const bounds = boundsBudget === undefined ? {} : { lower: 0, upper: 1 };
    const perPerson = maxContributions === undefined ? {} : { users: [], maxContributions };
    const dry = { ...options, ...bounds, ...perPerson, quantiles, seed: 0 };
    if (groupOptions === undefined) dpq.release([], dry as QuantilesOptions);
    else dpq.releaseByGroup([], emptyGroups(args['group-by']), { ...dry, ...groupOptions } as GroupOptions);
  }
  // The ledger is read (and checked) before the data too, and the whole
  // run is tried on a copy of it: an overspend is refused before reading.
  const { session, close } = openSession(dpq, args, args['user-column'] === undefined ? 'add-remove' : 'add-remove-user');
  try {
    if (session !== undefined) {
      dryRunOnLedger(dpq, session, boundsBudget, (quantiles) => ({
        ...options,
        ...(boundsBudget === undefined ? {} : { lower: 0, upper: 1 }),
        ...(maxContributions === undefined ? {} : { users: [], maxContributions }),
        quantiles,
        seed: 0,
        ...groupOptions,
      }), quantileSets, maxContributions, groupOptions === undefined ? undefined : emptyGroups(args['group-by']));
    }
    await releaseColumn(dpq, { ...args, column: args.column }, file, options, quantileSets, boundsBudget, maxContributions, session, groupOptions);
  } finally {
    close();
  }
}

// A dry run of this invocation on a copy of the session's ledger, on no
// data (nothing is published): BUDGET_EXCEEDED, and anything else the
// options and the ledger alone decide, before the file is read.
function dryRunOnLedger(
  dpq: DpQuantiles,
  session: PrivacySession,
  boundsBudget: SessionOptions | undefined,
  dryOptions: (quantiles: number[]) => unknown,
  quantileSets: number[][],
  maxContributions: number | undefined,
  // Grouped: no rows in the shape of the group-by columns.
  grouped: string[] | string[][] | undefined,
): void {
  const copy = dpq.restoreSession(session.save());
  try {
    if (boundsBudget !== undefined) {
      try {
        const perPerson = maxContributions === undefined ? {} : { users: [], maxContributions };
        copy.bounds([], { ...boundsBudget, seed: 0, ...perPerson } as never);
      } catch (error) {
        // On no data the bounds are refused, and charged: as intended.
        if (!(error instanceof DpQuantilesError && error.code === 'NOT_ENOUGH_DATA')) throw error;
      }
    }
    for (const quantiles of quantileSets) {
      if (grouped !== undefined) copy.releaseByGroup([], grouped, dryOptions(quantiles) as GroupOptions);
      else copy.release([], dryOptions(quantiles) as QuantilesOptions);
    }
  } finally {
    copy.dispose();
  }
}

// Reads the column and releases from it (the rest of main, inside the
// ledger's lock).
async function releaseColumn(
  dpq: DpQuantiles,
  args: {
    column: string;
    delimiter?: string;
    session?: string;
    'user-column'?: string;
    'no-header': boolean;
    'decimal-comma': boolean;
    'skip-non-numbers': boolean;
    'show-true': boolean;
    'group-by'?: string;
  },
  file: string,
  options: QuantilesOptions & { lower: number; upper: number; seed?: number; maxContributions?: number },
  quantileSets: number[][],
  boundsBudget: SessionOptions | undefined,
  maxContributions: number | undefined,
  session: PrivacySession | undefined,
  groupOptions: GroupKeyOptions | undefined,
): Promise<void> {
  // (Only now: every option and the ledger are checked first.)
  if (file !== '-' && !existsSync(file)) throw new UsageError(`no file named '${file}'`);
  const input = file === '-' ? process.stdin.setEncoding('utf8') : createReadStream(file, { encoding: 'utf8' });
  const column = await readColumn(
    input,
    args.column,
    !args['no-header'],
    args.delimiter,
    args['user-column'],
    args['decimal-comma'],
    groupOptions === undefined ? undefined : groupColumnsOf(args['group-by']),
  );
  // The data owner's notes (they count rows): stderr, never the JSON output.
  const rows = column.values.length + column.skipped;
  if (column.values.length === 0 && column.skipped > 0) {
    throw new UsageError(
      `'${column.name}' has no numbers: none of its ${rows} row${rows === 1 ? '' : 's'} parsed as one` +
        (column.commaDecimals > 0 ? ` (${column.commaDecimals} look like decimal commas: try --decimal-comma with --delimiter ';')` : '') +
        '; this note is for the data owner only',
    );
  }
  if (column.skipped * 2 > rows && !args['skip-non-numbers']) {
    throw new UsageError(
      `most rows of '${column.name}' are not numbers: ${column.skipped} of ${rows} ` +
        `(first at line ${column.firstSkippedLine})` +
        (column.commaDecimals > 0 ? `; ${column.commaDecimals} look like decimal commas: try --decimal-comma` : '') +
        '; --skip-non-numbers releases from the others (this note is for the data owner only)',
    );
  }
  if (column.skipped > 0) {
    process.stderr.write(
      `dp-quantiles: skipped ${column.skipped} row${column.skipped === 1 ? '' : 's'} whose '${column.name}' is empty or not a number (first at line ${column.firstSkippedLine}); this note is for the data owner only\n`,
    );
  }
  if (rows === 0) {
    // An empty dataset still releases: refusing would say it is empty.
    process.stderr.write('dp-quantiles: no values: the release is noise alone (this note is for the data owner only)\n');
  }
  if (column.users !== undefined) Object.assign(options, { users: column.users, maxContributions });
  // (The process ends right after: the session's memory goes with it. Per
  // person, the session protects a person too.)
  // Private bounds first (they spend too), then the releases inside them.
  let boundsEntry: Record<string, unknown> | undefined;
  if (boundsBudget !== undefined) {
    const seed = options.seed === undefined ? {} : { seed: options.seed };
    // Per person, the bounds protect a person too.
    const perPerson = column.users === undefined ? {} : { users: column.users, maxContributions: options.maxContributions };
    const boundsOptions = { ...boundsBudget, ...seed, ...perPerson } as never;
    const estimated = session === undefined ? dpq.bounds(column.values, boundsOptions) : session.bounds(column.values, boundsOptions);
    options.lower = estimated.lower;
    options.upper = estimated.upper;
    boundsEntry = {
      lower: estimated.lower,
      upper: estimated.upper,
      privacy: estimated.privacy,
      threshold: estimated.threshold,
      neighbouring: estimated.neighbouring,
    };
  }
  // Bounds that miss the data turn it into noise around a bound: warn the
  // data owner (stderr; it describes the data, so it is not private).
  let clamped = 0;
  for (const x of column.values) if (x < options.lower || x > options.upper) clamped++;
  if (column.values.length > 0 && clamped * 2 > column.values.length) {
    process.stderr.write(
      `dp-quantiles: warning: ${Math.round((100 * clamped) / column.values.length)}% of the values lie outside [${options.lower}, ${options.upper}] and were clamped to it; choose bounds that cover the data (this note is for the data owner only)\n`,
    );
  }
  // The data owner's view: exact order statistics. Computing them spends no
  // budget, but printing them publishes the data's quantiles.
  const sorted = args['show-true']
    ? Float64Array.from(column.values)
        .map((x) => Math.min(Math.max(x, options.lower), options.upper))
        .sort()
    : undefined;

  const releases = quantileSets.map((quantiles) => {
    const releaseOptions = { ...options, quantiles } as QuantilesOptions;
    let release: QuantilesRelease;
    try {
      if (groupOptions !== undefined) {
        const grouped = { ...releaseOptions, ...groupOptions } as GroupOptions;
        const columns = column.groups as string[][];
        const groups = columns.length === 1 ? columns[0] : columns;
        // The rows' keys as the keys' ids (a tuple's cells joined), for the
        // owner's notes and true values.
        const ids = columns.length === 1 ? columns[0] : columns[0].map((_, i) => keyId(columns.map((c) => c[i])));
        if (quantiles === quantileSets[0]) noteUnmatchedKeys(ids, (groupOptions.keys as GroupKeyOrTuple[] | undefined)?.map(keyId));
        const made =
          session === undefined ? dpq.releaseByGroup(column.values, groups, grouped) : session.releaseByGroup(column.values, groups, grouped);
        return groupedEntry(made, quantiles, args['show-true'] ? { values: column.values, groups: ids, bounds: options } : undefined);
      }
      release = session === undefined ? dpq.release(column.values, releaseOptions) : session.release(column.values, releaseOptions);
    } catch (error) {
      // After private bounds, a refusal may be computed from them (a step
      // too fine for their range): say nothing derived from them. Their
      // budget stays spent (and saved, with --session).
      if (boundsEntry !== undefined && error instanceof DpQuantilesError && error.code !== 'BUDGET_EXCEEDED') {
        throw new DpQuantilesError(
          error.code,
          'the release does not fit the privately estimated bounds (a --step too fine for their range, say); ' +
            'they are private, so this message says no more. Their budget was spent' +
            (args.session === undefined ? '' : ` and is recorded in ${args.session}`),
        );
      }
      throw error;
    }
    return releaseEntry(
      release,
      quantiles,
      sorted === undefined ? undefined : withTruth(sorted, quantiles, release, options),
    );
  });
  const output: Record<string, unknown> = {
    column: column.name,
    ...(groupOptions === undefined ? {} : { groupBy: args['group-by'] }),
    bounds: [options.lower, options.upper],
  };
  if (boundsEntry !== undefined) output.estimatedBounds = boundsEntry;
  if (sorted !== undefined) output.warning = 'true values and rank errors are NOT private: for the data owner only';
  printReleases(output, releases, session);
}

// parseArgs' "Unknown option '--quantile'. To specify a positional ..." as
// one line with the nearest flag, as the API does for options.
function unknownFlagHint(error: Error): string {
  const unknown = /^Unknown option '--([^']+)'/.exec(error.message);
  if ((error as { code?: string }).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || unknown === null) return error.message;
  let best = '';
  let distance = 3;
  for (const flag of FLAGS) {
    const d = editDistance(unknown[1], flag);
    if (d < distance) {
      best = flag;
      distance = d;
    }
  }
  return `unknown option '--${unknown[1]}'${best === '' ? '' : ` (did you mean '--${best}'?)`}`;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof DpQuantilesError) {
    process.stderr.write(`dp-quantiles: ${error.code}: ${error.message}\n`);
  } else if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`dp-quantiles: ${unknownFlagHint(error as Error)}\nsee 'dp-quantiles --help'\n`);
  } else if ((error as { code?: string }).code === 'ENOENT') {
    process.stderr.write(`dp-quantiles: ${(error as Error).message}\n`);
  } else {
    throw error;
  }
  process.exitCode = 1;
});
