// The demo's worker: loads the WebAssembly module, holds the data, runs every
// release. The page never sees the data, only results.
import { parse as parseSync } from 'csv-parse/browser/esm/sync';
import { parquetMetadataAsync, parquetRead, type AsyncBuffer, type FileMetaData } from 'hyparquet';

import { DpQuantilesError, loadDpQuantiles } from '../../dist/browser.js';
import type {
  DpQuantiles,
  GroupedRelease,
  GroupKeyOrTuple,
  GroupOptions,
  PrivacySession,
  QuantileStream,
  QuantilesOptions,
  SavedSession,
} from '../../dist/browser.js';
import { rankError, tieOf } from '../../dist/truth.js';
import datasets from './generated/datasets.json';
import type { ColumnInfo, CompareRow, ReleaseResult, ReleaseSettings, Reply, Request } from './protocol.js';
import type { SketchPart, SketchReply } from './sketch-worker.js';

/** Files above this size are streamed through a bounded-memory sketch. */
export const LARGE_FILE_BYTES = 16 * 1024 * 1024;

const ready: Promise<DpQuantiles> = loadDpQuantiles();
let columns = new Map<string, Float64Array>();
// Row-aligned copies for per-person releases: each numeric column with NaN
// where a row has no number, and the columns that can name a person.
let aligned = new Map<string, Float64Array>();
let people = new Map<string, (string | null)[]>();
// Row-aligned columns to group by, and the public keys of those that have
// documented ones (built-in datasets); other groups are private keys.
let groupColumns = new Map<string, (string | null)[]>();
let publicKeys = new Map<string, string[]>();
// A column groups when it holds at most this many distinct values.
const MAX_DEMO_GROUPS = 50;

/**
 * One privacy session per loaded dataset: every release on it spends from
 * this total, and loading data starts a new one. (epsilon, delta) so that
 * epsilon and rho releases both fit (docs/sessions.md). The comparison's
 * runs are for the owner's eyes and are not charged.
 */
const SESSION_TOTAL = { epsilon: 10, delta: 1e-6 } as const;
let session: PrivacySession | undefined;
// The dataset's saved ledger, resumed at its first release.
let savedLedger: SavedSession | undefined;

function newSession(ledger?: SavedSession): void {
  session?.dispose();
  session = undefined;
  savedLedger = ledger;
}

async function currentSession(): Promise<PrivacySession> {
  if (session === undefined) {
    const dpq = await ready;
    // A damaged ledger (CORRUPT_DATA) cannot be trusted to say what was
    // spent: the page is told by the error, and nothing is released.
    session = savedLedger === undefined ? dpq.session(SESSION_TOTAL) : dpq.restoreSession(savedLedger);
    savedLedger = undefined;
  }
  return session;
}

// A release's newest saved ledger: when it is not what this worker's
// session holds (another tab spent from it since), the session restarts from
// it, so two tabs add up their charges instead of each writing its own over
// the other's (the page takes a lock around read, release and write).
function takeNewestLedger(ledger: SavedSession | undefined): void {
  if (ledger === undefined) return;
  const held = session === undefined ? savedLedger : session.save();
  if (held === undefined || JSON.stringify(held) !== JSON.stringify(ledger)) newSession(ledger);
}

// What the session has spent, for the page, with the ledger it keeps.
function sessionState(): ReleaseResult['session'] {
  if (session === undefined) return undefined;
  const plain = (budget: object) =>
    Object.fromEntries(Object.entries(budget).filter((entry): entry is [string, number] => typeof entry[1] === 'number'));
  return { spent: plain(session.spent), total: plain(session.total), releases: session.releases, ledger: session.save() };
}
let largeFile: File | undefined;
// A Parquet file and its footer: counted per bucket at each release.
let parquet: { file: File; metadata: FileMetaData } | undefined;

function post(reply: Reply): void {
  (self as unknown as Worker).postMessage(reply);
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
// A number written with a decimal comma (3,5): read as 3.5 in a file whose
// delimiter is not the comma (unambiguous there), as the CLI's
// --decimal-comma does.
const COMMA_DECIMAL = /^[+-]?\d+,\d+$/;
// The delimiter of the file being read (parseCsv sets it).
let delimiter = ',';

// The delimiter from the header line, as the CLI guesses it: ',' unless the
// line has none and has ';' or tabs.
function delimiterOf(text: string): string {
  const line = text.slice(0, text.search(/\r?\n|$/));
  if (line.includes(',')) return ',';
  if (line.includes(';')) return ';';
  if (line.includes('\t')) return '\t';
  return ',';
}

// A cell as a number, or NaN.
function cellNumber(text: string): number {
  const cell = text.trim();
  if (NUMBER.test(cell)) return Number(cell);
  if (delimiter !== ',' && COMMA_DECIMAL.test(cell)) return Number(cell.replace(',', '.'));
  return Number.NaN;
}

// Numeric columns of parsed rows; a column is listed when most of its cells
// are numbers, and the rest are counted.
function summarise(
  header: string[],
  rows: string[][],
): { infos: ColumnInfo[]; data: Map<string, Float64Array>; rowAligned: Map<string, Float64Array> } {
  const infos: ColumnInfo[] = [];
  const data = new Map<string, Float64Array>();
  const rowAligned = new Map<string, Float64Array>();
  header.forEach((name, c) => {
    const values: number[] = [];
    const byRow = new Float64Array(rows.length).fill(Number.NaN);
    let others = 0;
    rows.forEach((row, r) => {
      const x = cellNumber(row[c] ?? '');
      if (Number.isFinite(x)) {
        values.push(x);
        byRow[r] = x;
      } else {
        others++;
      }
    });
    if (values.length > others) {
      infos.push({ name, numbers: values.length, others });
      data.set(name, Float64Array.from(values));
      rowAligned.set(name, byRow);
    }
  });
  return { infos, data, rowAligned };
}

// The columns of a file that hold few distinct values: groups.
function fewValued(candidates: Map<string, (string | null)[]>): Map<string, (string | null)[]> {
  const out = new Map<string, (string | null)[]>();
  for (const [name, cells] of candidates) {
    const distinct = new Set(cells.filter((c) => c !== null));
    if (distinct.size >= 2 && distinct.size <= MAX_DEMO_GROUPS) out.set(name, cells);
  }
  return out;
}

// Every column of a file can name a person (an id, an e-mail, a name).
function personColumns(header: string[], rows: string[][]): Map<string, (string | null)[]> {
  const out = new Map<string, (string | null)[]>();
  header.forEach((name, c) => {
    out.set(
      name,
      rows.map((row) => {
        const cell = (row[c] ?? '').trim();
        return cell === '' ? null : cell;
      }),
    );
  });
  return out;
}

async function loadBuiltin(id: string, ledger?: SavedSession): Promise<void> {
  const dataset = (
    datasets as unknown as {
      id: string;
      label: string;
      columns: Record<string, (number | null)[]>;
      people?: Record<string, (string | null)[]>;
      groups?: Record<string, (string | null)[]>;
      keys?: Record<string, string[]>;
      groupBy?: string;
    }[]
  ).find((d) => d.id === id);
  if (dataset === undefined) throw new Error(`no dataset ${id}`);
  columns = new Map();
  aligned = new Map();
  people = new Map(Object.entries(dataset.people ?? {}));
  groupColumns = new Map(Object.entries(dataset.groups ?? {}));
  publicKeys = new Map(Object.entries(dataset.keys ?? {}));
  largeFile = undefined;
  parquet = undefined;
  newSession(ledger);
  const infos: ColumnInfo[] = [];
  let rows = 0;
  for (const [name, cells] of Object.entries(dataset.columns)) {
    const values = cells.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
    columns.set(name, Float64Array.from(values));
    aligned.set(name, Float64Array.from(cells, (x) => (typeof x === 'number' ? x : Number.NaN)));
    infos.push({ name, numbers: values.length, others: cells.length - values.length });
    rows = cells.length;
  }
  post({
    type: 'columns',
    columns: infos,
    rows,
    large: false,
    name: dataset.label,
    people: [...people.keys()],
    groups: [...groupColumns.keys()],
    ...(dataset.groupBy === undefined ? {} : { groupBy: dataset.groupBy }),
  });
}

// Images, spreadsheets and other binary files: NUL characters or many bytes
// that are not UTF-8 near the start.
function looksBinary(head: string): boolean {
  const sample = head.slice(0, 8192);
  return sample.includes('\u0000') || (sample.match(/\uFFFD/g)?.length ?? 0) > 8;
}

// csv-parse's own messages ("Invalid Opening Quote: ...") name a parser
// state, not the user's problem.
function parseCsv(text: string, name: string): string[][] {
  if (looksBinary(text)) {
    throw new Error(`${name} is not a CSV file: it holds binary data (an image, a spreadsheet or an archive?). Export it as CSV first.`);
  }
  // Semicolons and tabs too (spreadsheets in many locales write them).
  delimiter = delimiterOf(text.replace(/^\uFEFF/, ''));
  try {
    return parseSync(text, { relax_column_count: true, skip_empty_lines: true, bom: true, delimiter });
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new Error(`${name} could not be read as CSV (${detail}). Is it a comma-separated text file?`);
  }
}

// A File as hyparquet reads it: byte ranges on demand, never the whole file.
function fileBuffer(file: File): AsyncBuffer {
  return { byteLength: file.size, slice: (start, end) => file.slice(start, end).arrayBuffer() };
}

const PARQUET_NUMBERS = new Set(['DOUBLE', 'FLOAT', 'INT32', 'INT64']);
const PARQUET_GROUPS = new Set(['BYTE_ARRAY', 'BOOLEAN', 'INT32', 'INT64']);

// Parquet: only the footer is read now, to list the numeric columns.
async function loadParquet(file: File): Promise<void> {
  let metadata: FileMetaData;
  try {
    metadata = await parquetMetadataAsync(fileBuffer(file));
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new Error(`${file.name} could not be read as Parquet (${detail}).`);
  }
  // Top-level leaf columns of a number type (no nested columns).
  const infos: ColumnInfo[] = metadata.schema
    .slice(1)
    .filter((e) => e.num_children === undefined && e.type !== undefined && PARQUET_NUMBERS.has(e.type))
    .map((e) => ({ name: e.name, numbers: Number(metadata.num_rows), others: 0 }));
  if (infos.length === 0) throw new Error(`${file.name} has no numeric column`);
  parquet = { file, metadata };
  // Columns to group by: text, true/false and whole numbers (codes). Only
  // the footer is read now; a column with more than MAX_DEMO_GROUPS
  // distinct values is refused when it is used.
  const groupable = metadata.schema
    .slice(1)
    .filter((e) => e.num_children === undefined && e.type !== undefined && PARQUET_GROUPS.has(e.type))
    .map((e) => e.name);
  post({ type: 'columns', columns: infos, rows: Number(metadata.num_rows), large: false, counted: true, name: file.name, people: [], groups: groupable });
}

async function loadFile(file: File, ledger?: SavedSession): Promise<void> {
  columns = new Map();
  aligned = new Map();
  people = new Map();
  groupColumns = new Map();
  publicKeys = new Map();
  largeFile = undefined;
  parquet = undefined;
  newSession(ledger);
  const magic = new Uint8Array(await file.slice(0, 4).arrayBuffer());
  if (String.fromCharCode(...magic) === 'PAR1') return loadParquet(file);
  if (file.size > LARGE_FILE_BYTES) {
    // Only the first rows, to list the columns; the whole file is streamed at
    // release time.
    const head = await file.slice(0, 256 * 1024).text();
    const lines = head.split(/\r?\n/).slice(0, -1).join('\n');
    const rows = parseCsv(lines, file.name);
    if (rows.length < 2) throw new Error(`${file.name} has no data rows`);
    const { infos } = summarise(rows[0], rows.slice(1));
    largeFile = file;
    // Columns to group by: few distinct values in the first rows (a column
    // with more over the whole file is refused when it is used).
    const groupable = [...fewValued(personColumns(rows[0], rows.slice(1))).keys()];
    post({ type: 'columns', columns: infos, rows: -1, large: true, name: file.name, people: [], groups: groupable });
    return;
  }
  const rows = parseCsv(await file.text(), file.name);
  if (rows.length < 2) throw new Error(`${file.name} has no data rows`);
  const { infos, data, rowAligned } = summarise(rows[0], rows.slice(1));
  columns = data;
  aligned = rowAligned;
  people = personColumns(rows[0], rows.slice(1));
  groupColumns = fewValued(people);
  post({
    type: 'columns',
    columns: infos,
    rows: rows.length - 1,
    large: false,
    name: file.name,
    people: [...people.keys()],
    groups: [...groupColumns.keys()],
  });
}

// The tree CDF keeps its own grid and takes no step.
const STEPLESS = new Set(['tree-cdf']);
// AggTree takes a step of at most 2^21 grid points; in a comparison, a
// finer one would stop every method, so AggTree keeps its own leaves there.
const MAX_TREE_POINTS = 2 ** 21;

function optionsOf(settings: ReleaseSettings, quantiles: number[] = settings.quantiles, method = settings.method): QuantilesOptions {
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

// The values of the rows that have both a number and a person, with the
// person of each: what a per-person release reads. Rows without a person
// are left out.
function valuesWithPeople(settings: ReleaseSettings): { values: Float64Array; users: string[] } {
  const person = settings.person;
  const numbers = aligned.get(settings.column);
  const names = person === undefined ? undefined : people.get(person.column);
  if (numbers === undefined || names === undefined) throw new Error('pick a column and a person column first');
  const values: number[] = [];
  const users: string[] = [];
  numbers.forEach((x, r) => {
    const name = names[r];
    if (Number.isFinite(x) && name !== null && name !== undefined) {
      values.push(x);
      users.push(name);
    }
  });
  return { values: Float64Array.from(values), users };
}

// Posts a release with what only the page's owner may see added.
function postResult(
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

// A release by group: the rows with a number and a group; the dataset's
// documented keys when it has them, else private keys (a noisy count
// chooses the groups shown). The owner's true values per group.
async function groupedRelease(settings: ReleaseSettings, groupBy: string): Promise<void> {
  const numbers = aligned.get(settings.column);
  const cells = groupColumns.get(groupBy);
  if (numbers === undefined || cells === undefined) throw new Error('pick a column and a column to group by first');
  const perPerson = settings.person === undefined ? undefined : people.get(settings.person.column);
  const values: number[] = [];
  const groups: string[] = [];
  const users: string[] = [];
  numbers.forEach((x, r) => {
    const key = cells[r];
    const user = perPerson?.[r];
    if (!Number.isFinite(x) || key === null || key === undefined) return;
    if (perPerson !== undefined && (user === null || user === undefined)) return;
    values.push(x);
    groups.push(key);
    if (user !== null && user !== undefined) users.push(user);
  });
  const keys = publicKeys.get(groupBy);
  const options = {
    ...optionsOf(settings),
    ...(keys === undefined ? { delta: DEMO_SELECTION_DELTA } : { keys }),
    ...(settings.person === undefined
      ? {}
      : { users, maxContributions: settings.person.maxContributions, maxGroups: 1 }),
  } as GroupOptions;
  const start = performance.now();
  const made = (await currentSession()).releaseByGroup(values, groups, options);
  const milliseconds = performance.now() - start;
  const byKey = new Map<string, number[]>();
  groups.forEach((key, i) => {
    const list = byKey.get(key) ?? [];
    list.push(Math.min(Math.max(values[i], settings.lower), settings.upper));
    byKey.set(key, list);
  });
  post({
    type: 'result',
    result: groupedResult(made, settings, milliseconds, (key, q) => {
      const sorted = Float64Array.from(byKey.get(key) ?? []).sort();
      const n = sorted.length;
      return n === 0 ? NaN : sorted[Math.min(Math.floor(q * n), n - 1)];
    }),
  });
}

// A grouped release as the page shows it: each group's values (and
// intervals), the owner's true values (`truthOf`), and its look.
function groupedResult<K extends GroupKeyOrTuple>(
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
const DEMO_SELECTION_DELTA = 1e-7;

async function release(settings: ReleaseSettings): Promise<void> {
  const dpq = await ready;
  if (settings.groupBy !== undefined && (largeFile !== undefined || parquet !== undefined)) {
    return groupedCountedRelease(settings, settings.groupBy);
  }
  if (largeFile !== undefined) return streamRelease(dpq, largeFile, settings);
  if (parquet !== undefined) return countedRelease(parquet.file, parquet.metadata, settings);
  if (settings.groupBy !== undefined) return groupedRelease(settings, settings.groupBy);
  const all = columns.get(settings.column);
  if (all === undefined) throw new Error('pick a column first');
  // Per person: only rows that name a person, each with their person.
  const perPerson = settings.person === undefined ? undefined : valuesWithPeople(settings);
  const data = perPerson?.values ?? all;
  const start = performance.now();
  const result = (await currentSession()).release(data, {
    ...optionsOf(settings),
    ...(perPerson === undefined ? {} : { users: perPerson.users, maxContributions: settings.person?.maxContributions }),
  } as QuantilesOptions);
  const milliseconds = performance.now() - start;
  // The data owner's view: exact order statistics and the empirical CDF of
  // the data as it is, not clamped (clamped, a release with every value at
  // a bound showed rank error 0), and how much of it the bounds cut off.
  const sorted = Float64Array.from(data).sort();
  const n = sorted.length;
  let outside = 0;
  for (const x of sorted) if (x < settings.lower || x > settings.upper) outside++;
  const step = Math.max(1, Math.floor(n / 400));
  const xs: number[] = [];
  const ys: number[] = [];
  for (let i = 0; i < n; i += step) {
    xs.push(sorted[i]);
    ys.push((i + 1) / n);
  }
  if (n > 0) {
    xs.push(sorted[n - 1]);
    ys.push(1);
  }
  postResult(result, {
    milliseconds,
    truth: {
      values: settings.quantiles.map((q) => (n === 0 ? NaN : sorted[Math.min(Math.floor(q * n), n - 1)])),
      rankErrors: settings.quantiles.map((q, i) => rankError(sorted, q, result.values[i], tieOf(result.resolution, settings.lower, settings.upper))),
      cdf: [xs, ys],
      outside: n === 0 ? 0 : outside / n,
    },
  });
}

// The end of the last complete record in `text`: its last newline outside
// quotes (a doubled quote "" toggles twice, so it counts right), or -1.
function lastRecordEnd(text: string): number {
  let inQuotes = false;
  let end = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) inQuotes = !inQuotes;
    else if (c === 10 && !inQuotes) end = i;
  }
  return end;
}

// A large file's complete records, a decoded chunk at a time (the last
// partial record carried to the next), to `take`, with a progress bar.
async function forEachRecords(file: File, label: string, take: (text: string) => void): Promise<void> {
  let bytes = 0;
  let lastReport = 0;
  let carry = '';
  const reader = file.stream().pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    const text = carry + value;
    const end = lastRecordEnd(text);
    if (end < 0) {
      carry = text;
    } else {
      take(text.slice(0, end));
      carry = text.slice(end + 1);
    }
    if (performance.now() - lastReport > 100) {
      lastReport = performance.now();
      post({ type: 'progress', done: Math.min(bytes, file.size), total: file.size, label });
    }
  }
  if (carry.trim() !== '') take(carry);
}

/** Most sketch workers a large file is split among. */
export const MAX_SKETCH_WORKERS = 4;

// The first record start at or after `at`: just past the next newline.
async function recordStart(file: File, at: number): Promise<number> {
  for (let from = at - 1; from < file.size; from += 1 << 16) {
    const bytes = new Uint8Array(await file.slice(from, from + (1 << 16)).arrayBuffer());
    const newline = bytes.indexOf(10);
    if (newline >= 0) return from + newline + 1;
  }
  return file.size;
}

// A large file on several cores: byte ranges of whole records, one sketch
// worker each, then their sketches merged. Only when no quote appears in the
// file's first 256 KB: a quoted field may hold a newline, and then a byte
// offset cannot tell where a record starts. Returns undefined to fall back.
async function parallelStream(dpq: DpQuantiles, file: File, settings: ReleaseSettings) {
  const cores = typeof navigator === 'undefined' ? 1 : (navigator.hardwareConcurrency ?? 1);
  const workers = Math.max(1, Math.min(settings.workers ?? cores, MAX_SKETCH_WORKERS));
  if (workers < 2) return undefined;
  const head = await file.slice(0, 256 * 1024).text();
  if (head.includes('"')) return undefined;
  const header: string[] = parseSync(head.slice(0, head.indexOf('\n')), { relax_column_count: true })[0] ?? [];
  const column = header.indexOf(settings.column);
  if (column < 0) throw new Error(`no column named ${settings.column}`);
  const bounds = [head.indexOf('\n') + 1];
  for (let k = 1; k < workers; k++) bounds.push(Math.max(bounds[k - 1], await recordStart(file, Math.floor((k * file.size) / workers))));
  bounds.push(file.size);
  let done = 0;
  const sketches = await Promise.all(
    bounds.slice(0, -1).map(
      (start, k) =>
        new Promise<{ bytes: Uint8Array; values: number }>((resolve, reject) => {
          const worker = new Worker(new URL('./sketch-worker.ts', import.meta.url), { type: 'module' });
          worker.onmessage = (event: MessageEvent<SketchReply>) => {
            const reply = event.data;
            if (reply.type === 'progress') {
              done += reply.bytes;
              post({ type: 'progress', done: Math.min(done, file.size), total: file.size, label: `reading on ${workers} cores` });
              return;
            }
            worker.terminate();
            if (reply.type === 'sketch') resolve(reply);
            else reject(new Error(reply.message));
          };
          worker.onerror = (event) => {
            worker.terminate();
            reject(new Error(event.message));
          };
          const part: SketchPart = {
            file,
            start,
            end: bounds[k + 1],
            column,
            lower: settings.lower,
            upper: settings.upper,
            alpha: settings.alpha ?? 1e-4,
          };
          worker.postMessage(part);
        }),
    ),
  );
  const [first, ...rest] = sketches.map((sketch) => dpq.loadStream(sketch.bytes));
  for (const other of rest) {
    first.merge(other);
    other.dispose();
  }
  return { stream: first, workers };
}

// A large file: File.stream() decoded in chunks; each chunk's complete records
// go through the CSV parser and into a GK sketch. Memory stays constant:
// one chunk, one batch and the sketch. On several cores, parallelStream.
async function streamRelease(dpq: DpQuantiles, file: File, settings: ReleaseSettings): Promise<void> {
  const start = performance.now();
  const parallel = await parallelStream(dpq, file, settings);
  if (parallel !== undefined) {
    try {
      post({ type: 'progress', done: file.size, total: file.size, label: 'reading' });
      return await releaseSketch(parallel.stream, settings, start, parallel.workers);
    } finally {
      parallel.stream.dispose();
    }
  }
  const stream = dpq.createStream({ lower: settings.lower, upper: settings.upper, alpha: settings.alpha ?? 1e-4 });
  try {
    const batch = new Float64Array(1 << 16);
    let filled = 0;
    let column = -1;
    const take = (text: string) => {
      const rows: string[][] = parseSync(text, { relax_column_count: true, skip_empty_lines: true });
      for (const row of rows) {
        if (column < 0) {
          column = row.indexOf(settings.column);
          if (column < 0) throw new Error(`no column named ${settings.column}`);
          continue;
        }
        const cell = (row[column] ?? '').trim();
        if (!NUMBER.test(cell)) continue; // not a number: left out, as listed
        batch[filled++] = Number(cell);
        if (filled === batch.length) {
          stream.push(batch);
          filled = 0;
        }
      }
    };
    await forEachRecords(file, 'reading', take);
    stream.push(batch.subarray(0, filled));
    post({ type: 'progress', done: file.size, total: file.size, label: 'reading' });
    await releaseSketch(stream, settings, start, 1);
  } finally {
    stream.dispose();
  }
}

// The private release of a finished sketch, from the dataset's session.
async function releaseSketch(stream: QuantileStream, settings: ReleaseSettings, start: number, workers: number): Promise<void> {
  const method = settings.method === 'exp-gk' ? 'exp-gk' : 'hist-gk';
  const result = (await currentSession()).releaseStream(stream, {
    quantiles: settings.quantiles,
    method,
    ...settings.budget,
  });
  postResult(result, {
    milliseconds: performance.now() - start,
    streamed: { values: stream.count, sketchBytes: stream.memoryBytes, workers },
  });
}

/** Buckets for a counted release without a step: at most this many. */
export const MAX_DEFAULT_BUCKETS = 1 << 16;

// The buckets of a counted release: the step's (it must divide the range),
// else the finest power of ten giving at most MAX_DEFAULT_BUCKETS that
// divides the range, else MAX_DEFAULT_BUCKETS equal buckets.
function bucketsFor(settings: ReleaseSettings): number {
  const range = settings.upper - settings.lower;
  const whole = (x: number) => Math.abs(x - Math.round(x)) <= 1e-9 * Math.max(1, x);
  if (settings.step !== undefined) {
    const b = range / settings.step;
    if (!whole(b) || Math.round(b) < 1) {
      throw new Error(`for a Parquet file the step must divide upper − lower (${range}) into whole buckets`);
    }
    return Math.round(b);
  }
  const width = 10 ** Math.ceil(Math.log10(range / MAX_DEFAULT_BUCKETS));
  const b = range / width;
  return whole(b) && Math.round(b) <= MAX_DEFAULT_BUCKETS ? Math.max(1, Math.round(b)) : MAX_DEFAULT_BUCKETS;
}

// A Parquet file: one row group's column at a time is decoded and counted
// into buckets over [lower, upper] (clamped, as a database's GROUP BY would);
// only the counts reach the library. Memory: the counts and one row group.
async function countedRelease(file: File, metadata: FileMetaData, settings: ReleaseSettings): Promise<void> {
  const start = performance.now();
  const buckets = bucketsFor(settings);
  const { lower, upper } = settings;
  const width = (upper - lower) / buckets;
  const counts = new Float64Array(buckets);
  const total = Number(metadata.num_rows);
  let values = 0;
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    await parquetRead({
      file: fileBuffer(file),
      metadata,
      columns: [settings.column],
      rowStart,
      rowEnd,
      onChunk(chunk) {
        const data = chunk.columnData as ArrayLike<number | bigint | null>;
        for (let i = 0; i < data.length; i++) {
          const cell = data[i];
          if (cell === null || cell === undefined) continue;
          const x = Number(cell);
          if (Number.isNaN(x)) continue; // not a number: left out
          counts[Math.min(Math.max(Math.floor((x - lower) / width), 0), buckets - 1)]++;
          values++;
        }
      },
    });
    rowStart = rowEnd;
    post({ type: 'progress', done: rowStart, total, label: 'counting' });
  }
  const options = optionsOf({ ...settings, step: undefined });
  const result = (await currentSession()).releaseFromCounts(counts, options as never);
  // The data owner's view from the counts: true quantiles to the bucket, rank
  // errors counting a bucket's records as tied with a value in it, the CDF.
  const below = new Float64Array(buckets + 1);
  for (let i = 0; i < buckets; i++) below[i + 1] = below[i] + counts[i];
  const n = below[buckets];
  const bucketOf = (v: number) => Math.min(Math.max(Math.floor((v - lower) / width + 1e-9), 0), buckets - 1);
  const truthOf = (q: number) => {
    const rank = Math.min(Math.floor(q * n), n - 1);
    let i = 0;
    while (below[i + 1] <= rank) i++;
    return lower + i * width;
  };
  const xs: number[] = [];
  const ys: number[] = [];
  const every = Math.max(1, Math.floor(buckets / 400));
  for (let i = 0; i < buckets; i += every) {
    if (n > 0 && counts[i] > 0) {
      xs.push(lower + i * width);
      ys.push(below[i + 1] / n);
    }
  }
  postResult(result, {
    milliseconds: performance.now() - start,
    counted: { values, buckets, width },
    truth: {
      values: settings.quantiles.map((q) => (n === 0 ? NaN : truthOf(q))),
      rankErrors: settings.quantiles.map((q, i) => {
        const target = Math.floor(q * n);
        const b = bucketOf(result.values[i]);
        return Math.max(below[b] - target, 0, target - below[b + 1]);
      }),
      cdf: [xs, ys],
    },
  });
}

// Per key, the values' counts in `buckets` equal buckets over [lower,
// upper] (clamped, as a GROUP BY key, bucket would count them): the rows of
// a large CSV or a Parquet file never held, only these counts.
class KeyedCounts {
  readonly byKey = new Map<string, Float64Array>();
  values = 0;
  constructor(
    readonly groupBy: string,
    readonly buckets: number,
    readonly lower: number,
    readonly width: number,
  ) {}
  add(key: string, x: number): void {
    let counts = this.byKey.get(key);
    if (counts === undefined) {
      if (this.byKey.size >= MAX_DEMO_GROUPS) {
        throw new Error(`${this.groupBy} holds more than ${MAX_DEMO_GROUPS} distinct values: too many groups for the demo`);
      }
      counts = new Float64Array(this.buckets);
      this.byKey.set(key, counts);
    }
    counts[Math.min(Math.max(Math.floor((x - this.lower) / this.width), 0), this.buckets - 1)]++;
    this.values++;
  }
}

// A large CSV by group, in one pass of File.stream(): each record's number
// and key counted (KeyedCounts).
async function countCsvByKey(file: File, settings: ReleaseSettings, keyed: KeyedCounts): Promise<void> {
  let column = -1;
  let group = -1;
  const take = (text: string) => {
    const rows: string[][] = parseSync(text, { relax_column_count: true, skip_empty_lines: true, delimiter });
    for (const row of rows) {
      if (column < 0) {
        column = row.indexOf(settings.column);
        group = row.indexOf(keyed.groupBy);
        if (column < 0) throw new Error(`no column named ${settings.column}`);
        if (group < 0) throw new Error(`no column named ${keyed.groupBy}`);
        continue;
      }
      const cell = (row[column] ?? '').trim();
      const key = (row[group] ?? '').trim();
      if (key === '' || !NUMBER.test(cell)) continue; // left out, as listed
      keyed.add(key, Number(cell));
    }
  };
  await forEachRecords(file, 'counting by group', take);
}

// A Parquet file by group: one row group's two columns at a time.
async function countParquetByKey(file: File, metadata: FileMetaData, settings: ReleaseSettings, keyed: KeyedCounts): Promise<void> {
  const total = Number(metadata.num_rows);
  let rowStart = 0;
  for (const rowGroup of metadata.row_groups) {
    const rowEnd = rowStart + Number(rowGroup.num_rows);
    await parquetRead({
      file: fileBuffer(file),
      metadata,
      columns: [settings.column, keyed.groupBy],
      rowStart,
      rowEnd,
      onComplete(rows) {
        for (const [cell, key] of rows as unknown[][]) {
          if (cell === null || cell === undefined || key === null || key === undefined) continue;
          const x = Number(cell);
          if (Number.isNaN(x)) continue;
          keyed.add(String(key), x);
        }
      },
    });
    rowStart = rowEnd;
    post({ type: 'progress', done: rowStart, total, label: 'counting by group' });
  }
}

// A large CSV or a Parquet file by group: counts per (key, bucket), then
// releaseByGroupFromCounts with private keys (a file's groups are not
// public). The owner's true values per group, to the bucket.
async function groupedCountedRelease(settings: ReleaseSettings, groupBy: string): Promise<void> {
  const start = performance.now();
  const buckets = bucketsFor(settings);
  const width = (settings.upper - settings.lower) / buckets;
  const keyed = new KeyedCounts(groupBy, buckets, settings.lower, width);
  if (parquet !== undefined) await countParquetByKey(parquet.file, parquet.metadata, settings, keyed);
  else if (largeFile !== undefined) await countCsvByKey(largeFile, settings, keyed);
  const keys: string[] = [];
  const bucketColumn: number[] = [];
  const countColumn: number[] = [];
  for (const [key, counts] of keyed.byKey) {
    counts.forEach((c, b) => {
      if (c === 0) return;
      keys.push(key);
      bucketColumn.push(b);
      countColumn.push(c);
    });
  }
  // A streamed file's methods are the sketches'; its groups are counted, so
  // they take the default (and the interval's counts, as any counted release).
  const method = settings.method === 'hist-gk' || settings.method === 'exp-gk' ? 'auto' : settings.method;
  const options = { ...optionsOf({ ...settings, step: undefined }, settings.quantiles, method), buckets, delta: DEMO_SELECTION_DELTA };
  const made = (await currentSession()).releaseByGroupFromCounts({ keys, buckets: bucketColumn, counts: countColumn }, options as never);
  const truthOf = (counts: Float64Array | undefined, q: number) => {
    if (counts === undefined) return Number.NaN;
    const n = counts.reduce((a, b) => a + b, 0);
    const rank = Math.min(Math.floor(q * n), n - 1);
    let below = 0;
    for (let b = 0; b < buckets; b++) {
      below += counts[b];
      if (below > rank) return settings.lower + b * width;
    }
    return Number.NaN;
  };
  post({
    type: 'result',
    result: {
      ...groupedResult(made, settings, performance.now() - start, (key, q) => truthOf(keyed.byKey.get(key), q)),
      counted: { values: keyed.values, buckets, width },
    },
  });
}

async function compare(settings: ReleaseSettings, trials: number, counts: number[], methods: string[]): Promise<void> {
  const dpq = await ready;
  const data = columns.get(settings.column);
  if (data === undefined || largeFile !== undefined || parquet !== undefined) {
    throw new Error('comparison needs a dataset held in memory (not a streamed or counted file)');
  }
  const sorted = Float64Array.from(data, (x) => Math.min(Math.max(x, settings.lower), settings.upper)).sort();
  const rows: CompareRow[] = [];
  const total = methods.length * counts.length;
  let done = 0;
  for (const method of methods) {
    for (const m of counts) {
      const quantiles = Array.from({ length: m }, (_, i) => (i + 1) / (m + 1));
      let error = 0;
      for (let t = 0; t < trials; t++) {
        const fine = settings.step !== undefined && (settings.upper - settings.lower) / settings.step >= MAX_TREE_POINTS - 1;
        const step = method === 'aggtree' && fine ? undefined : settings.step;
        const result = dpq.release(data, optionsOf({ ...settings, step, confidence: undefined }, quantiles, method));
        const tie = tieOf(result.resolution, settings.lower, settings.upper);
        error += quantiles.reduce((sum, q, i) => sum + rankError(sorted, q, result.values[i], tie), 0) / m / trials;
      }
      rows.push({ method, m, meanRankError: error });
      post({ type: 'progress', done: ++done, total, label: `${method}, m = ${m}` });
    }
  }
  post({ type: 'compared', rows });
}

// Private bounds for a column, spent from the dataset's session.
async function estimateBounds(
  column: string,
  budget: { epsilon: number } | { rho: number },
  person?: { column: string; maxContributions: number },
): Promise<void> {
  if (largeFile !== undefined || parquet !== undefined) {
    throw new Error('private bounds need the column in memory; this file is streamed or counted');
  }
  const data = columns.get(column);
  if (data === undefined) throw new Error('pick a column first');
  try {
    // Per person: the rows that name a person, each person bounded to k.
    const perPerson =
      person === undefined ? undefined : valuesWithPeople({ column, person } as ReleaseSettings);
    const b =
      perPerson === undefined
        ? (await currentSession()).bounds(data, budget)
        : (await currentSession()).bounds(perPerson.values, {
            ...budget,
            users: perPerson.users,
            maxContributions: person?.maxContributions,
          });
    post({
      type: 'bounds',
      lower: b.lower,
      upper: b.upper,
      privacy: b.privacy as Record<string, number | string>,
      neighbouring: b.neighbouring,
      session: sessionState(),
    });
  } catch (error) {
    // NOT_ENOUGH_DATA spent the budget too: the page shows the session.
    if (error instanceof DpQuantilesError && error.code === 'NOT_ENOUGH_DATA') {
      post({ type: 'error', code: error.code, message: error.message, session: sessionState() });
      return;
    }
    throw error;
  }
}

self.onmessage = async (event: MessageEvent<Request>) => {
  const request = event.data;
  try {
    if (request.type === 'builtin') await loadBuiltin(request.id, request.ledger);
    else if (request.type === 'file') await loadFile(request.file, request.ledger);
    else if (request.type === 'new-budget') newSession();
    else if (request.type === 'release') {
      takeNewestLedger(request.ledger);
      await release(request.settings);
    } else if (request.type === 'bounds') {
      takeNewestLedger(request.ledger);
      await estimateBounds(request.column, request.budget, request.person);
    }
    else await compare(request.settings, request.trials, request.counts, request.methods);
  } catch (error) {
    if (error instanceof DpQuantilesError) post({ type: 'error', code: error.code, message: error.message });
    else post({ type: 'error', code: 'DEMO', message: error instanceof Error ? error.message : String(error) });
  }
};
