#!/usr/bin/env -S node --max-semi-space-size=2 --max-old-space-size=128
// dp-quantiles: private quantiles of one CSV column, printed as JSON.
import {
  closeSync,
  createReadStream,
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { once } from 'node:events';
import { parseArgs, type ParseArgsConfig } from 'node:util';

import { parse as parseCsv } from 'csv-parse/sync';

import {
  DpQuantilesError,
  loadDpQuantiles,
  type CountsOptions,
  type DpQuantiles,
  type PrivacySession,
  type SavedSession,
  type QuantileMethod,
  type QuantilesRelease,
  type QuantilesOptions,
  type SessionOptions,
  type GroupedRelease,
  type GroupKeyOrTuple,
  type GroupKeyOptions,
  type GroupOptions,
} from './node.js';
import { rankError, tieOf } from './truth.js';
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

class UsageError extends Error {}

// A whole decimal number: no empty cells, hex or trailing text.
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
// A number written with a decimal comma (3,5), for the hint to --decimal-comma.
const COMMA_DECIMAL = /^[+-]?\d+,\d+$/;

function parseNumberOption(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  // 'Infinity' and '1e400' alike: both are not a finite number.
  const value = Number(text);
  if (!NUMBER.test(text.trim()) || !Number.isFinite(value)) {
    throw new UsageError(`--${name} must be a finite number, got '${text}'`);
  }
  return value;
}

interface Column {
  name: string;
  values: Float64Array;
  /** The person of each value, with --user-column. */
  users?: string[];
  /** The group of each value, with --group-by. */
  groups?: string[][];
  /** Rows whose cell is empty or not a number: skipped, as the demo does. */
  skipped: number;
  /** The line of the first skipped row, for the message. */
  firstSkippedLine: number;
  /** Skipped cells that would be numbers with a decimal comma (3,5). */
  commaDecimals: number;
}

// The delimiter: the one given, else ';' or a tab when the first line has
// no comma but has those (as spreadsheets in many locales write).
function delimiterOf(text: string, given: string | undefined): string {
  if (given !== undefined) {
    const delimiter = given === 'tab' ? '\t' : given;
    if (delimiter.length !== 1) throw new UsageError(`--delimiter takes one character or 'tab', got '${given}'`);
    return delimiter;
  }
  const first = text.slice(0, text.indexOf('\n') < 0 ? text.length : text.indexOf('\n'));
  if (first.includes(',')) return ',';
  if (first.includes(';')) return ';';
  if (first.includes('\t')) return '\t';
  return ',';
}

// Numbers of one column, read as a stream: only the column's values are
// kept (8 bytes each), never the file's text or its rows, with a progress
// line on a terminal.
// One CSV record (a header, or a line with quotes and the lines its
// quotes span), every cell, trimmed: csv-parse's reading of it.
function quotedRecord(text: string, delimiter: string, line: number): string[] {
  let records: string[][];
  try {
    records = parseCsv(text, { trim: true, delimiter, relax_column_count: true, relax_quotes: false }) as string[][];
  } catch (error) {
    const reason = (error as Error).message.replace(/^Invalid Record Length: /, '');
    throw new UsageError(`line ${line}: malformed CSV: ${reason}`);
  }
  return records[0] ?? [''];
}

// The index of an extra column (--user-column, --group-by) by name or
// 0-based index, from the first row.
function extraColumnIndex(record: string[], name: string, header: boolean, what: string): number {
  const at = header ? record.indexOf(name) : -1;
  if (at >= 0) return at;
  if (!/^\d+$/.test(name)) {
    const names = header ? record.map((c) => `'${c}'`).join(', ') : '';
    throw new UsageError(`no ${what} column named '${name}'${header ? `; the columns are ${names}` : ' (and --no-header is set)'}`);
  }
  return Number(name);
}

async function readColumn(
  input: NodeJS.ReadableStream,
  column: string,
  header: boolean,
  delimiterOption?: string,
  userColumn?: string,
  decimalComma = false,
  groupColumns?: string[],
): Promise<Column> {
  const chunks = input[Symbol.asyncIterator]();
  const first = await chunks.next();
  const head = first.done === true ? '' : String(first.value);
  const delimiter = delimiterOf(head.replace(/^\uFEFF/, ''), delimiterOption);
  if (decimalComma && delimiter === ',') {
    throw new UsageError("--decimal-comma needs another delimiter (--delimiter ';' or tab): a comma cannot be both");
  }
  // Lines are split here, and of an unquoted line only the cells asked for
  // are cut out (the column, the person's, the groups'): a general CSV
  // parser built every cell of every record as a string, 4-5 times the
  // time of reading the file. A line holding a quote is one CSV record (with
  // the lines after it while its quotes are open) for csv-parse, as before.

  let index = -1;
  let userIndex = -1;
  let groupIndexes: number[] = [];
  const users: string[] | undefined = userColumn === undefined ? undefined : [];
  const groups: string[][] | undefined = groupColumns === undefined ? undefined : groupColumns.map(() => []);
  let name = column;
  let values = new Float64Array(1024);
  let count = 0;
  let skipped = 0;
  let firstSkippedLine = 0;
  let commaDecimals = 0;
  let rows = 0;
  let lines = 0;
  const progress = process.stderr.isTTY === true;
  try {
    // Records are drained synchronously as they come ('readable'), not
    // through an async iterator: a promise and a microtask a record were a
    // fifth of reading 10^6 rows, and their garbage most of the rest.
    const onRecord = (record: string[]): void => {
      const line = ++lines;
      if (record.length === 1 && record[0] === '') return; // an empty line
      const row = { record };
      if (rows++ === 0) {
        if (header) index = row.record.indexOf(column);
        if (index < 0) {
          if (!/^\d+$/.test(column)) {
            const names = header ? row.record.map((c) => `'${c}'`).join(', ') : '';
            throw new UsageError(
              `no column named '${column}'${header ? `; the columns are ${names}` : ' (and --no-header is set)'}` +
                (delimiter === ',' && row.record.length === 1 ? '; a file with another delimiter needs --delimiter' : ''),
            );
          }
          index = Number(column);
          name = header ? (row.record[index] ?? column) : column;
        }
        if (userColumn !== undefined) userIndex = extraColumnIndex(row.record, userColumn, header, 'user');
        if (groupColumns !== undefined) groupIndexes = groupColumns.map((group) => extraColumnIndex(row.record, group, header, 'group-by'));
        if (header) return;
      }
      if (index >= row.record.length) {
        throw new UsageError(
          `line ${line}: has no column ${index}: it has ${row.record.length} column${row.record.length === 1 ? '' : 's'} ` +
            `(0 to ${row.record.length - 1})` +
            (delimiter === ',' && row.record.length === 1 ? '; a file with another delimiter needs --delimiter' : ''),
        );
      }
      if (userIndex >= row.record.length) {
        throw new UsageError(`line ${line}: has no user column ${userIndex}`);
      }
      for (const groupIndex of groupIndexes) {
        if (groupIndex >= row.record.length) throw new UsageError(`line ${line}: has no group-by column ${groupIndex}`);
      }
      const cell = decimalComma ? row.record[index].replace(',', '.') : row.record[index];
      if (!NUMBER.test(cell)) {
        if (skipped === 0) firstSkippedLine = line;
        skipped++;
        if (COMMA_DECIMAL.test(cell)) commaDecimals++;
        return;
      }
      if (count === values.length) {
        const grown = new Float64Array(values.length * 2);
        grown.set(values);
        values = grown;
      }
      values[count++] = Number(cell);
      users?.push(row.record[userIndex]);
      if (groups !== undefined) for (let c = 0; c < groups.length; c++) groups[c].push(row.record[groupIndexes[c]]);
      if (progress && count % 100_000 === 0) process.stderr.write(`\rread ${count.toLocaleString('en')} values`);
    };
    // The cells asked for, by index, once the first record named them.
    let wanted: boolean[] | undefined;
    let widest = -1;
    const takeLine = (line: string): void => {
      if (wanted === undefined) {
        onRecord(quotedRecord(line, delimiter, lines + 1));
        const indexes = [index, userIndex, ...groupIndexes].filter((i) => i >= 0);
        wanted = [];
        for (const i of indexes) wanted[i] = true;
        widest = Math.max(...indexes);
        return;
      }
      if (line.length === 0) {
        onRecord(['']);
        return;
      }
      // The cells up to the widest asked for; the record's length is the
      // line's field count when it has fewer (for the message), else enough.
      const record: string[] = [];
      let field = 0;
      let start = 0;
      for (;;) {
        const end = line.indexOf(delimiter, start);
        if (wanted[field] === true) record[field] = line.slice(start, end < 0 ? line.length : end).trim();
        field++;
        if (end < 0 || field > widest) break;
        start = end + 1;
      }
      record.length = field;
      onRecord(record);
    };
    let carry = '';
    let pending = ''; // a quoted record's lines while its quotes are open
    let quotes = 0;
    let bom = true;
    const take = (text: string, last: boolean): void => {
      let from = 0;
      for (;;) {
        const newline = text.indexOf('\n', from);
        if (newline < 0 && !last) break;
        let line = text.slice(from, newline < 0 ? text.length : newline);
        from = newline < 0 ? text.length : newline + 1;
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (bom) {
          bom = false;
          if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
        }
        if (pending !== '' || line.includes('"')) {
          pending += pending === '' ? line : `\n${line}`;
          for (let at = line.indexOf('"'); at >= 0; at = line.indexOf('"', at + 1)) quotes++;
          if (quotes % 2 === 0) {
            onRecord(quotedRecord(pending, delimiter, lines + 1));
            pending = '';
            quotes = 0;
          }
        } else if (!(last && newline < 0 && line === '')) {
          takeLine(line);
        }
        if (newline < 0) break;
      }
      carry = text.slice(from);
    };
    if (first.done !== true) take(String(first.value), false);
    for (;;) {
      const next = await chunks.next();
      if (next.done === true) break;
      take(carry + String(next.value), false);
    }
    take(carry, true);
    if (pending !== '') onRecord(quotedRecord(pending, delimiter, lines + 1));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const lines = (error as { lines?: number }).lines;
    const reason = (error as Error).message.replace(/^Invalid Record Length: /, '');
    throw new UsageError(lines !== undefined ? `line ${lines}: malformed CSV: ${reason}` : reason);
  } finally {
    if (progress && count >= 100_000) process.stderr.write('\r\x1b[K');
  }
  return { name, values: values.subarray(0, count), users, groups, skipped, firstSkippedLine, commaDecimals };
}

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

// The session of --budget and --session FILE: a saved ledger resumes (and
// must match --budget when both are given); else --budget starts one. With
// a FILE, the ledger is locked (FILE.lock) from here until close(), so
// concurrent runs cannot each spend from the same balance (the last write
// won: three runs of 0.3 from 0.1 spent 1.0 and saved 0.4). close() writes
// the ledger whenever its charges grew, whatever happened after them: a
// charged refusal (NOT_ENOUGH_DATA) or private bounds followed by a failed
// release are published answers too.
function openSession(
  dpq: DpQuantiles,
  args: { budget?: string; session?: string },
  neighbouring: 'add-remove' | 'add-remove-user',
): { session: PrivacySession | undefined; close: () => void } {
  const budget = args.budget === undefined ? undefined : parseBudget(args.budget);
  const file = args.session;
  if (file === undefined) {
    return { session: budget === undefined ? undefined : dpq.session({ ...budget, neighbouring } as SessionOptions), close: () => {} };
  }
  const unlock = lockLedger(file);
  let session: PrivacySession;
  try {
    if (existsSync(file)) {
      let saved: unknown;
      try {
        saved = JSON.parse(readFileSync(file, 'utf8'));
      } catch {
        throw new DpQuantilesError('CORRUPT_DATA', `${file} is not a session ledger (not JSON)`);
      }
      session = dpq.restoreSession(saved as SavedSession);
      if (budget !== undefined && JSON.stringify(session.total) !== JSON.stringify(budget)) {
        throw new UsageError(`--budget ${args.budget} is not the total of the ledger in ${file} (${JSON.stringify(session.total)}); leave --budget out to use it`);
      }
      if (session.neighbouring !== neighbouring) {
        throw new UsageError(`the ledger in ${file} protects '${session.neighbouring}'; these releases protect '${neighbouring}'`);
      }
    } else {
      if (budget === undefined) throw new UsageError(`--session ${file}: no ledger there yet; give --budget to start one`);
      session = dpq.session({ ...budget, neighbouring } as SessionOptions);
    }
  } catch (error) {
    unlock();
    throw error;
  }
  const charges = session.releases;
  const opened = session;
  return {
    session,
    close: () => {
      try {
        if (opened.releases > charges) {
          const temporary = `${file}.${process.pid}.tmp`;
          writeFileSync(temporary, `${JSON.stringify(opened.save(), null, 2)}\n`);
          renameSync(temporary, file);
        }
      } finally {
        unlock();
      }
    },
  };
}

// Takes FILE.lock (created exclusively, holding this process's id), waiting
// up to LOCK_WAIT_MS for another run to let go; returns its release, which
// also runs if the process exits or is interrupted first.
const LOCK_WAIT_MS = 30_000;
function lockLedger(file: string): () => void {
  const lock = `${file}.lock`;
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const start = Date.now();
  for (;;) {
    try {
      const fd = openSync(lock, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      if (Date.now() - start > LOCK_WAIT_MS) {
        let holder = '';
        try {
          holder = readFileSync(lock, 'utf8').trim();
        } catch {
          continue; // let go just now
        }
        throw new DpQuantilesError(
          'INVALID_STATE',
          `${file} is in use by another run (process ${holder || 'unknown'}, ${lock}); a ledger takes one writer at a time. ` +
            `If no run is using it, delete ${lock}`,
        );
      }
      Atomics.wait(sleeper, 0, 0, 50);
    }
  }
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    try {
      unlinkSync(lock);
    } catch {
      // gone already
    }
  };
  process.once('exit', release);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      release();
      process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
    });
  }
  return release;
}

// --keys (and --group-by) as one CSV record: commas separate keys, and a
// key holding a comma (or a quote) is quoted as in the file ('"Zürich,
// CH",東京'). Spaces around a key are dropped, as around a list's commas.
function parseList(text: string, flag: string): string[] {
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
function keyId(key: GroupKeyOrTuple): string {
  return Array.isArray(key) ? JSON.stringify(key) : String(key);
}

// No rows, in the shape of --group-by's columns: for the checks before the
// file is read.
function emptyGroups(text: string | undefined): string[] | string[][] {
  const columns = groupColumnsOf(text) ?? [];
  return columns.length > 1 ? columns.map(() => []) : [];
}

// --group-by's columns: one CSV line of names (or indexes).
function groupColumnsOf(text: string | undefined): string[] | undefined {
  return text === undefined ? undefined : parseList(text, '--group-by');
}

function groupOptionsOf(args: {
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

// The data owner's notes on public keys (they count rows, so stderr, never
// the release): the listed keys no row holds, and the rows no listed key
// holds, which a typo, another capitalisation or a stray space explains.
function noteUnmatchedKeys(groups: readonly string[], keys: readonly string[] | undefined): void {
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
function groupedEntry(
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
function releaseEntry(
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
function printReleases(output: Record<string, unknown>, releases: Record<string, unknown>[], session: PrivacySession | undefined): void {
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

// "epsilon=3", "rho=1" or "epsilon=3,delta=1e-6": a session's total.
function parseBudget(text: string, flag = 'budget'): SessionOptions {
  const parts: Record<string, number> = {};
  for (const part of text.split(',')) {
    const at = part.indexOf('=');
    const name = part.slice(0, at).trim();
    if (at <= 0 || !['epsilon', 'rho', 'delta'].includes(name)) {
      throw new UsageError(`--${flag} takes epsilon=E, rho=R or epsilon=E,delta=D, got '${text}'`);
    }
    parts[name] = parseNumberOption(flag, part.slice(at + 1)) as number;
  }
  return parts as unknown as SessionOptions;
}

// Each private value with the true quantile and its rank error (ties
// counted: values within half a grid step stand for the release's rank).
function withTruth(
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

// --counts: `bucket,count` lines (a GROUP BY's output) in, a release from
// the counts out. The counts are as sensitive as the rows: only the JSON this
// prints is private.
async function countsMain(
  args: {
    buckets?: string;
    lower?: string;
    upper?: string;
    epsilon?: string;
    rho?: string;
    quantiles: string[];
    method?: string;
    budget?: string;
    session?: string;
    confidence?: string;
    'interval-share'?: string;
    interval?: string;
    simultaneous?: boolean;
    seed?: string;
    column?: string;
    'user-column'?: string;
    step?: string;
    'estimate-bounds'?: string;
    'show-true'?: boolean;
  },
  file: string,
): Promise<void> {
  for (const flag of ['column', 'user-column', 'step', 'estimate-bounds'] as const) {
    if (args[flag] !== undefined) throw new UsageError(`--${flag} does not apply to --counts`);
  }
  if (args['show-true']) throw new UsageError('--show-true needs the rows, not counts');
  const buckets = parseNumberOption('buckets', args.buckets);
  if (buckets === undefined || !Number.isSafeInteger(buckets) || buckets < 1) {
    throw new UsageError('--counts needs --buckets B, the number of equal-width buckets (a whole number >= 1)');
  }
  if (args.lower === undefined || args.upper === undefined) {
    throw new UsageError('--lower and --upper are required: the public bounds the buckets divide');
  }
  const text = file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  const counts = new Float64Array(buckets);
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    const [bucketText, countText] = line.split(/[,;\t]/).map((cell) => cell.trim());
    if (i === 0 && !NUMBER.test(bucketText ?? '')) return; // a header
    const bucket = Number(bucketText);
    const count = Number(countText);
    if (!NUMBER.test(bucketText ?? '') || !Number.isInteger(bucket) || bucket < 0 || bucket >= buckets) {
      throw new UsageError(`line ${i + 1}: bucket '${bucketText}' is not a whole number from 0 to ${buckets - 1}`);
    }
    if (!NUMBER.test(countText ?? '')) throw new UsageError(`line ${i + 1}: count '${countText}' is not a number`);
    counts[bucket] += count;
  });
  const quantileSets = (args.quantiles.length > 0 ? args.quantiles : ['0.25,0.5,0.75']).map((set) =>
    set.split(',').map((q) => parseNumberOption('quantiles', q) as number),
  );
  const options = {
    lower: parseNumberOption('lower', args.lower) as number,
    upper: parseNumberOption('upper', args.upper) as number,
    epsilon: parseNumberOption('epsilon', args.epsilon),
    rho: parseNumberOption('rho', args.rho),
    method: (args.method ?? 'auto') as QuantileMethod | 'auto',
    seed: parseNumberOption('seed', args.seed),
    confidence: parseNumberOption('confidence', args.confidence),
    intervalShare: parseNumberOption('interval-share', args['interval-share']),
    interval: args.interval as 'sample' | 'population' | undefined,
    simultaneous: args.simultaneous,
  };
  const dpq = await loadDpQuantiles();
  const { session, close } = openSession(dpq, args, 'add-remove');
  try {
    const releases = quantileSets.map((quantiles) => {
      const releaseOptions = { ...options, quantiles } as CountsOptions;
      const release =
        session === undefined ? dpq.releaseFromCounts(counts, releaseOptions) : session.releaseFromCounts(counts, releaseOptions);
      return releaseEntry(release, quantiles);
    });
    printReleases(
      { counts: { buckets, resolution: (options.upper - options.lower) / buckets }, bounds: [options.lower, options.upper] },
      releases,
      session,
    );
  } finally {
    close();
  }
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
