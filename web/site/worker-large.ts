// The demo worker's large files, never held whole: a large CSV streamed
// through a sketch (on several cores when it can be split), a Parquet file
// counted into buckets a row group at a time, and either one counted by
// group.
import { parquetRead, type FileMetaData } from 'hyparquet';

import type { DpQuantiles, QuantileStream } from '../../dist/browser.js';
import { parseChunk } from './csv-chunk.js';
import type { ReleaseSettings } from './protocol.js';
import type { SketchPart, SketchReply } from './sketch-worker.js';
import { fileBuffer, loaded, MAX_DEMO_GROUPS, NUMBER } from './worker-data.js';
import { DEMO_SELECTION_DELTA, groupedResult, optionsOf, postResult } from './worker-results.js';
import { currentSession, post } from './worker-session.js';

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

// A large CSV's cells in the columns `names`, a record at a time after the
// header (trimmed; one array, reused), to `take`.
async function forEachCsvCells(file: File, label: string, names: string[], take: (cells: string[]) => void): Promise<void> {
  let columns: number[] | undefined;
  const cells = names.map(() => '');
  await forEachRecords(file, label, (text) => {
    for (const row of parseChunk(text, loaded.delimiter)) {
      if (columns === undefined) {
        columns = names.map((name) => {
          const at = row.indexOf(name);
          if (at < 0) throw new Error(`no column named ${name}`);
          return at;
        });
        continue;
      }
      for (let c = 0; c < columns.length; c++) cells[c] = (row[columns[c]] ?? '').trim();
      take(cells);
    }
  });
}

// A Parquet file a row group at a time: `read` decodes rows [start, end),
// and the progress bar moves after each.
async function forEachRowGroup(
  metadata: FileMetaData,
  label: string,
  read: (rowStart: number, rowEnd: number) => Promise<void>,
): Promise<void> {
  const total = Number(metadata.num_rows);
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    await read(rowStart, rowEnd);
    rowStart = rowEnd;
    post({ type: 'progress', done: rowStart, total, label });
  }
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
  const header = parseChunk(head.slice(0, head.indexOf('\n')), loaded.delimiter)[0] ?? [];
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
            delimiter: loaded.delimiter,
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
export async function streamRelease(dpq: DpQuantiles, file: File, settings: ReleaseSettings): Promise<void> {
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
    await forEachCsvCells(file, 'reading', [settings.column], ([cell]) => {
      if (!NUMBER.test(cell)) return; // not a number: left out, as listed
      batch[filled++] = Number(cell);
      if (filled === batch.length) {
        stream.push(batch);
        filled = 0;
      }
    });
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

// below[i]: the records in buckets before i (below[buckets]: all of them).
function countsBelow(counts: Float64Array): Float64Array {
  const below = new Float64Array(counts.length + 1);
  for (let i = 0; i < counts.length; i++) below[i + 1] = below[i] + counts[i];
  return below;
}

// The bucket holding the record of rank floor(q n) (the owner's true
// quantile, to the bucket), by a binary search of the cumulative counts.
function bucketOfQuantile(below: Float64Array, q: number): number {
  const n = below[below.length - 1];
  const rank = Math.min(Math.floor(q * n), n - 1);
  let low = 0;
  let high = below.length - 2; // the last bucket
  while (low < high) {
    const mid = (low + high) >> 1;
    if (below[mid + 1] > rank) high = mid;
    else low = mid + 1;
  }
  return low;
}

// A Parquet file: one row group's column at a time is decoded and counted
// into buckets over [lower, upper] (clamped, as a database's GROUP BY would);
// only the counts reach the library. Memory: the counts and one row group.
export async function countedRelease(file: File, metadata: FileMetaData, settings: ReleaseSettings): Promise<void> {
  const start = performance.now();
  const buckets = bucketsFor(settings);
  const { lower, upper } = settings;
  const width = (upper - lower) / buckets;
  const counts = new Float64Array(buckets);
  let values = 0;
  await forEachRowGroup(metadata, 'counting', (rowStart, rowEnd) =>
    parquetRead({
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
    }),
  );
  const options = optionsOf({ ...settings, step: undefined });
  const result = (await currentSession()).releaseFromCounts(counts, options as never);
  // The data owner's view from the counts: true quantiles to the bucket, rank
  // errors counting a bucket's records as tied with a value in it, the CDF.
  const below = countsBelow(counts);
  const n = below[buckets];
  const bucketOf = (v: number) => Math.min(Math.max(Math.floor((v - lower) / width + 1e-9), 0), buckets - 1);
  const truthOf = (q: number) => lower + bucketOfQuantile(below, q) * width;
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
  await forEachCsvCells(file, 'counting by group', [settings.column, keyed.groupBy], ([cell, key]) => {
    if (key !== '' && NUMBER.test(cell)) keyed.add(key, Number(cell)); // else left out, as listed
  });
}

// A Parquet file by group: one row group's two columns at a time.
async function countParquetByKey(file: File, metadata: FileMetaData, settings: ReleaseSettings, keyed: KeyedCounts): Promise<void> {
  await forEachRowGroup(metadata, 'counting by group', (rowStart, rowEnd) =>
    parquetRead({
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
    }),
  );
}

// A large CSV or a Parquet file by group: counts per (key, bucket), then
// releaseByGroupFromCounts with private keys (a file's groups are not
// public). The owner's true values per group, to the bucket.
export async function groupedCountedRelease(settings: ReleaseSettings, groupBy: string): Promise<void> {
  const start = performance.now();
  const buckets = bucketsFor(settings);
  const width = (settings.upper - settings.lower) / buckets;
  const keyed = new KeyedCounts(groupBy, buckets, settings.lower, width);
  if (loaded.parquet !== undefined) await countParquetByKey(loaded.parquet.file, loaded.parquet.metadata, settings, keyed);
  else if (loaded.largeFile !== undefined) await countCsvByKey(loaded.largeFile, settings, keyed);
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
  // Each key's cumulative counts, made once for its quantiles.
  const belowByKey = new Map<string, Float64Array>();
  const truthOf = (key: string, q: number) => {
    const counts = keyed.byKey.get(key);
    if (counts === undefined) return Number.NaN;
    const below = belowByKey.get(key) ?? countsBelow(counts);
    belowByKey.set(key, below);
    return below[buckets] === 0 ? Number.NaN : settings.lower + bucketOfQuantile(below, q) * width;
  };
  post({
    type: 'result',
    result: {
      ...groupedResult(made, settings, performance.now() - start, truthOf),
      counted: { values: keyed.values, buckets, width },
    },
  });
}
