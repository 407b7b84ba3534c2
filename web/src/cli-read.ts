// The CLI's CSV reading: one column's numbers (and the person's and the
// groups' cells) from a stream, with what the data owner is told.
import { parse as parseCsv } from 'csv-parse/sync';

import { COMMA_DECIMAL, NUMBER, UsageError } from './cli-usage.js';

export interface Column {
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
export function delimiterOf(text: string, given: string | undefined): string {
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

// One CSV record (a header, or a line with quotes and the lines its
// quotes span), every cell, trimmed: csv-parse's reading of it.
export function quotedRecord(text: string, delimiter: string, line: number): string[] {
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
export function extraColumnIndex(record: string[], name: string, header: boolean, what: string): number {
  const at = header ? record.indexOf(name) : -1;
  if (at >= 0) return at;
  if (!/^\d+$/.test(name)) {
    const names = header ? record.map((c) => `'${c}'`).join(', ') : '';
    throw new UsageError(`no ${what} column named '${name}'${header ? `; the columns are ${names}` : ' (and --no-header is set)'}`);
  }
  return Number(name);
}

// Numbers of one column, read as a stream: only the column's values are
// kept (8 bytes each), never the file's text or its rows, with a progress
// line on a terminal.
export async function readColumn(
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
      if (rows++ === 0) {
        if (header) index = record.indexOf(column);
        if (index < 0) {
          if (!/^\d+$/.test(column)) {
            const names = header ? record.map((c) => `'${c}'`).join(', ') : '';
            throw new UsageError(
              `no column named '${column}'${header ? `; the columns are ${names}` : ' (and --no-header is set)'}` +
                (delimiter === ',' && record.length === 1 ? '; a file with another delimiter needs --delimiter' : ''),
            );
          }
          index = Number(column);
          name = header ? (record[index] ?? column) : column;
        }
        if (userColumn !== undefined) userIndex = extraColumnIndex(record, userColumn, header, 'user');
        if (groupColumns !== undefined) groupIndexes = groupColumns.map((group) => extraColumnIndex(record, group, header, 'group-by'));
        if (header) return;
      }
      if (index >= record.length) {
        throw new UsageError(
          `line ${line}: has no column ${index}: it has ${record.length} column${record.length === 1 ? '' : 's'} ` +
            `(0 to ${record.length - 1})` +
            (delimiter === ',' && record.length === 1 ? '; a file with another delimiter needs --delimiter' : ''),
        );
      }
      if (userIndex >= record.length) {
        throw new UsageError(`line ${line}: has no user column ${userIndex}`);
      }
      for (const groupIndex of groupIndexes) {
        if (groupIndex >= record.length) throw new UsageError(`line ${line}: has no group-by column ${groupIndex}`);
      }
      const cell = decimalComma ? record[index].replace(',', '.') : record[index];
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
      users?.push(record[userIndex]);
      if (groups !== undefined) for (let c = 0; c < groups.length; c++) groups[c].push(record[groupIndexes[c]]);
      if (progress && count % 100_000 === 0) process.stderr.write(`\rread ${count.toLocaleString('en')} values`);
    };
    // The cells asked for, by index, once the first record named them.
    let wanted: boolean[] | undefined;
    const reused: string[] = [];
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
      // One array for every line: onRecord keeps cells, never the array.
      const record = reused;
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
