#!/usr/bin/env node
// Private quantiles of one column of a CSV too large to hold in memory: the
// file is read in chunks, each chunk goes into a bounded-memory stream (a GK
// sketch), and only private quantiles come out.
//
//   node examples/stream-large-csv.mjs FILE --column NAME --lower L --upper U
//        [--alpha 1e-4] [--epsilon 1] [--method hist-gk|exp-gk]
//        [--quantiles 0.1,0.5,0.9] [--compare-full]
//   node examples/stream-large-csv.mjs --generate 10000000 big.csv
//
// Run `npm run build:package` first. The second form writes a synthetic CSV
// (a value column drawn from a log-normal) to try the first on.
// --compare-full also holds every value (when they fit) and releases them with
// the full-space baseline DPExpFull of Alabi et al. (our 'appindexp': one
// exponential mechanism per quantile), side by side with the stream.
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { once } from 'node:events';
import { parseArgs } from 'node:util';

import { parse } from 'csv-parse';

import { loadDpQuantiles } from '../dist/node.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    column: { type: 'string', default: 'value' },
    lower: { type: 'string', default: '0' },
    upper: { type: 'string', default: '1000' },
    alpha: { type: 'string', default: '1e-4' },
    epsilon: { type: 'string', default: '1' },
    method: { type: 'string', default: 'hist-gk' },
    quantiles: { type: 'string', default: '0.1,0.25,0.5,0.75,0.9,0.99' },
    generate: { type: 'string' },
    'compare-full': { type: 'boolean', default: false },
  },
});

if (args.generate !== undefined) {
  const rows = Number(args.generate);
  const out = createWriteStream(positionals[0] ?? 'big.csv');
  out.write('id,value\n');
  let state = 12345;
  const uniform = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state + 0.5) / 4294967296;
  };
  for (let i = 0; i < rows; i++) {
    const normal = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
    if (!out.write(`${i},${Math.exp(4 + normal).toFixed(3)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  console.error(`wrote ${rows} rows to ${positionals[0] ?? 'big.csv'}`);
  process.exit(0);
}

// A usage or data problem prints one line, not a stack trace.
function fail(message) {
  console.error(`stream-large-csv: ${message}`);
  process.exit(1);
}

const file = positionals[0];
if (file === undefined) {
  fail('usage: node examples/stream-large-csv.mjs FILE --column NAME --lower L --upper U');
}
const total = statSync(file).size;
const dpq = await loadDpQuantiles();
const stream = dpq.createStream({
  lower: Number(args.lower),
  upper: Number(args.upper),
  alpha: Number(args.alpha),
});
const BATCH = 1 << 16;
const batch = new Float64Array(BATCH);
const everything = args['compare-full'] ? [] : undefined; // full-space baseline
let filled = 0;
let skipped = 0; // rows whose cell is empty or not a number
let firstSkipped = 0;
let column = -1;
let lastReport = 0;
const started = Date.now();
const input = createReadStream(file);
const parser = input.pipe(parse({ info: true, skip_empty_lines: true }));

for await (const { record, info } of parser) {
  if (column < 0) {
    column = record.indexOf(args.column);
    if (column < 0) fail(`no column named '${args.column}' in the header: ${record.join(', ')}`);
    continue;
  }
  // Empty cells (a missing value) and text are skipped and counted, as the
  // CLI and the demo do; the count is for the data owner, not private.
  const cell = record[column] ?? '';
  const value = Number(cell);
  if (cell.trim() === '' || !Number.isFinite(value)) {
    if (skipped++ === 0) firstSkipped = info.lines;
    continue;
  }
  batch[filled++] = value;
  everything?.push(value);
  if (filled === BATCH) {
    stream.push(batch);
    filled = 0;
    if (Date.now() - lastReport > 500) {
      lastReport = Date.now();
      const percent = ((100 * input.bytesRead) / total).toFixed(1);
      process.stderr.write(
        `\r${percent}% read, ${stream.count.toLocaleString('en')} values, sketch ${(stream.memoryBytes / 1024).toFixed(0)} KiB   `,
      );
    }
  }
}
stream.push(batch.subarray(0, filled));
process.stderr.write(`\r100% read, ${stream.count.toLocaleString('en')} values, sketch ${(stream.memoryBytes / 1024).toFixed(0)} KiB\n`);
if (skipped > 0) {
  process.stderr.write(
    `skipped ${skipped.toLocaleString('en')} rows whose '${args.column}' is empty or not a number ` +
      `(first at line ${firstSkipped}); this note is for the data owner only\n`,
  );
}

const quantiles = args.quantiles.split(',').map(Number);
const release = stream.release({ quantiles, epsilon: Number(args.epsilon), method: args.method });
let full;
if (everything !== undefined) {
  const values = Float64Array.from(everything);
  const start = Date.now();
  const baseline = dpq.release(values, {
    lower: Number(args.lower), upper: Number(args.upper), quantiles, epsilon: Number(args.epsilon), method: 'appindexp',
  });
  full = {
    method: 'DPExpFull (appindexp)',
    bytes: values.byteLength,
    seconds: (Date.now() - start) / 1000,
    quantiles: quantiles.map((q, i) => ({ q, value: baseline.values[i] })),
  };
}
console.log(
  JSON.stringify(
    {
      file,
      column: args.column,
      method: release.method,
      privacy: release.privacy,
      neighbouring: release.neighbouring,
      seconds: (Date.now() - started) / 1000,
      sketchBytes: stream.memoryBytes,
      quantiles: quantiles.map((q, i) => ({ q, value: release.values[i] })),
      fullSpace: full,
    },
    null,
    2,
  ),
);
stream.dispose();
