// The records of a chunk of whole CSV records (a large file read in
// pieces). A chunk without a quote is split by hand: csv-parse reads it
// the same, cell by cell, at several times the cost of the file's own read
// (bench/demo-stream). A chunk with a quote goes to csv-parse whole.
import { parse as parseSync } from 'csv-parse/browser/esm/sync';

// (A byte-order mark can only open the file's first chunk.)
export function parseChunk(chunk: string, delimiter: string): string[][] {
  const text = chunk.charCodeAt(0) === 0xfeff ? chunk.slice(1) : chunk;
  if (text.includes('"')) return parseSync(text, { relax_column_count: true, skip_empty_lines: true, delimiter });
  const rows: string[][] = [];
  for (const line of text.split('\n')) {
    const record = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (record !== '') rows.push(record.split(delimiter));
  }
  return rows;
}
