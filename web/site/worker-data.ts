// The demo worker's data: what was loaded (a built-in dataset, a CSV held in
// memory, a large CSV to stream, or a Parquet file to count) and how a file
// is read. Loading starts the dataset's privacy session.
import { parse as parseSync } from 'csv-parse/browser/esm/sync';
import { parquetMetadataAsync, type AsyncBuffer, type FileMetaData } from 'hyparquet';

import type { SavedSession } from '../../dist/browser.js';
import datasets from './generated/datasets.json';
import type { ColumnInfo } from './protocol.js';
import { newSession, post } from './worker-session.js';

/** A column groups when it holds at most this many distinct values. */
export const MAX_DEMO_GROUPS = 50;

/** The loaded dataset. Each load replaces every field. */
export const loaded = {
  columns: new Map<string, Float64Array>(),
  // Row-aligned copies for per-person releases: each numeric column with NaN
  // where a row has no number, and the columns that can name a person.
  aligned: new Map<string, Float64Array>(),
  people: new Map<string, (string | null)[]>(),
  // Row-aligned columns to group by, and the public keys of those that have
  // documented ones (built-in datasets); other groups are private keys.
  groupColumns: new Map<string, (string | null)[]>(),
  publicKeys: new Map<string, string[]>(),
  // A large CSV, streamed at each release.
  largeFile: undefined as File | undefined,
  // A Parquet file and its footer: counted per bucket at each release.
  parquet: undefined as { file: File; metadata: FileMetaData } | undefined,
  // The delimiter of the file being read (parseCsv sets it).
  delimiter: ',',
};

/** Files above this size are streamed through a bounded-memory sketch. */
export const LARGE_FILE_BYTES = 16 * 1024 * 1024;

export const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

// A number written with a decimal comma (3,5): read as 3.5 in a file whose
// delimiter is not the comma (unambiguous there), as the CLI's
// --decimal-comma does.
const COMMA_DECIMAL = /^[+-]?\d+,\d+$/;

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
export function cellNumber(text: string): number {
  const cell = text.trim();
  if (NUMBER.test(cell)) return Number(cell);
  if (loaded.delimiter !== ',' && COMMA_DECIMAL.test(cell)) return Number(cell.replace(',', '.'));
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

export async function loadBuiltin(id: string, ledger?: SavedSession): Promise<void> {
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
  loaded.columns = new Map();
  loaded.aligned = new Map();
  loaded.people = new Map(Object.entries(dataset.people ?? {}));
  loaded.groupColumns = new Map(Object.entries(dataset.groups ?? {}));
  loaded.publicKeys = new Map(Object.entries(dataset.keys ?? {}));
  loaded.largeFile = undefined;
  loaded.parquet = undefined;
  newSession(ledger);
  const infos: ColumnInfo[] = [];
  let rows = 0;
  for (const [name, cells] of Object.entries(dataset.columns)) {
    const values = cells.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
    loaded.columns.set(name, Float64Array.from(values));
    loaded.aligned.set(name, Float64Array.from(cells, (x) => (typeof x === 'number' ? x : Number.NaN)));
    infos.push({ name, numbers: values.length, others: cells.length - values.length });
    rows = cells.length;
  }
  post({
    type: 'columns',
    columns: infos,
    rows,
    large: false,
    name: dataset.label,
    people: [...loaded.people.keys()],
    groups: [...loaded.groupColumns.keys()],
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
export function parseCsv(text: string, name: string): string[][] {
  if (looksBinary(text)) {
    throw new Error(`${name} is not a CSV file: it holds binary data (an image, a spreadsheet or an archive?). Export it as CSV first.`);
  }
  // Semicolons and tabs too (spreadsheets in many locales write them).
  loaded.delimiter = delimiterOf(text.replace(/^\uFEFF/, ''));
  try {
    return parseSync(text, { relax_column_count: true, skip_empty_lines: true, bom: true, delimiter: loaded.delimiter });
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new Error(`${name} could not be read as CSV (${detail}). Is it a comma-separated text file?`);
  }
}

// A File as hyparquet reads it: byte ranges on demand, never the whole file.
export function fileBuffer(file: File): AsyncBuffer {
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
  loaded.parquet = { file, metadata };
  // Columns to group by: text, true/false and whole numbers (codes). Only
  // the footer is read now; a column with more than MAX_DEMO_GROUPS
  // distinct values is refused when it is used.
  const groupable = metadata.schema
    .slice(1)
    .filter((e) => e.num_children === undefined && e.type !== undefined && PARQUET_GROUPS.has(e.type))
    .map((e) => e.name);
  post({ type: 'columns', columns: infos, rows: Number(metadata.num_rows), large: false, counted: true, name: file.name, people: [], groups: groupable });
}

export async function loadFile(file: File, ledger?: SavedSession): Promise<void> {
  loaded.columns = new Map();
  loaded.aligned = new Map();
  loaded.people = new Map();
  loaded.groupColumns = new Map();
  loaded.publicKeys = new Map();
  loaded.largeFile = undefined;
  loaded.parquet = undefined;
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
    loaded.largeFile = file;
    // Columns to group by: few distinct values in the first rows (a column
    // with more over the whole file is refused when it is used).
    const groupable = [...fewValued(personColumns(rows[0], rows.slice(1))).keys()];
    post({ type: 'columns', columns: infos, rows: -1, large: true, name: file.name, people: [], groups: groupable });
    return;
  }
  const rows = parseCsv(await file.text(), file.name);
  if (rows.length < 2) throw new Error(`${file.name} has no data rows`);
  const { infos, data, rowAligned } = summarise(rows[0], rows.slice(1));
  loaded.columns = data;
  loaded.aligned = rowAligned;
  loaded.people = personColumns(rows[0], rows.slice(1));
  loaded.groupColumns = fewValued(loaded.people);
  post({
    type: 'columns',
    columns: infos,
    rows: rows.length - 1,
    large: false,
    name: file.name,
    people: [...loaded.people.keys()],
    groups: [...loaded.groupColumns.keys()],
  });
}
