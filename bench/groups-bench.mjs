// Grouped releases against the work anyone grouping 10^6 values does:
// each case is timed pair by pair against a Float64Array sort of the same
// values in this process (sort, case, case, sort, ...; the ratio is the
// median of the pairs' ratios), with DuckDB's GROUP BY quantiles (one
// thread) and a plain JavaScript scatter-by-key, sort each group, pick
// nine as anchors. Prints tables with the targets of issue 58; asserts
// nothing. Usage: node bench/groups-bench.mjs
import { performance } from 'node:perf_hooks';

import { DuckDBInstance } from '@duckdb/node-api';

import { loadDpQuantiles } from '../dist/node.js';

const n = 1_000_000;
const values = new Float64Array(n);
let state = 1;
for (let i = 0; i < n; i++) {
  state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
  values[i] = (state / 4294967296) * 100;
}
const deciles = Array.from({ length: 9 }, (_, i) => (i + 1) / 10);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const codesFor = (groups) => Int32Array.from({ length: n }, (_, i) => (i * 7919) % groups);

const sort = () => Float64Array.from(values).sort();
const clock = async (run) => {
  const start = performance.now();
  await run();
  return performance.now() - start;
};
// [case ms, sort ms, ratio]: medians over `pairs` pairs after untimed calls.
async function againstSort(run, pairs = 8) {
  for (let i = 0; i < 3; i++) await run();
  const runs = [];
  const sorts = [];
  for (let i = 0; i < pairs; i++) {
    if (i % 2 === 0) {
      sorts.push(await clock(sort));
      runs.push(await clock(run));
    } else {
      runs.push(await clock(run));
      sorts.push(await clock(sort));
    }
  }
  return [median(runs), median(sorts), median(runs.map((r, i) => r / sorts[i]))];
}

// The plain limit: scatter the values by key (counting sort of the codes),
// sort each group's values, pick the nine order statistics.
function plainGroupedDeciles(codes, groups) {
  const starts = new Int32Array(groups + 1);
  for (let i = 0; i < n; i++) starts[codes[i] + 1]++;
  for (let g = 0; g < groups; g++) starts[g + 1] += starts[g];
  const next = starts.slice(0, groups);
  const scattered = new Float64Array(n);
  for (let i = 0; i < n; i++) scattered[next[codes[i]]++] = values[i];
  const out = new Float64Array(groups * deciles.length);
  for (let g = 0; g < groups; g++) {
    const part = scattered.subarray(starts[g], starts[g + 1]).sort();
    deciles.forEach((q, j) => (out[g * deciles.length + j] = part[Math.min(Math.floor(q * part.length), part.length - 1)]));
  }
  return out;
}

const dpq = await loadDpQuantiles();
const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
const duck = await instance.connect();
await duck.run('CREATE TABLE t (g1000 INTEGER, g10000 INTEGER, v DOUBLE)');
{
  const appender = await duck.createAppender('t');
  for (let i = 0; i < n; i++) {
    appender.appendInteger(i * 7919 % 1000);
    appender.appendInteger(i * 7919 % 10000);
    appender.appendDouble(values[i]);
    appender.endRow();
  }
  appender.closeSync();
}
const list = `[${deciles.join(', ')}]`;

const f = (x) => (x < 10 ? x.toFixed(2) : x.toFixed(1));
const rows = [];
for (const [groups, strings, goal] of [
  [1000, false, 0.4],
  [1000, true, 0.6],
  [10000, false, 1.0],
]) {
  const codes = codesFor(groups);
  const keyed = strings ? Array.from(codes, (c) => `key-${c}`) : codes;
  const keys = strings ? Array.from({ length: groups }, (_, g) => `key-${g}`) : Array.from({ length: groups }, (_, g) => g);
  const options = { lower: 0, upper: 100, quantiles: deciles, epsilon: 1, keys };
  const label = `${groups.toLocaleString('en-US')} groups${groups === 10000 ? ' of 100' : ''}, ${strings ? 'string keys' : 'integer codes'}`;
  rows.push([label, 'dp-quantiles releaseByGroup (default)', ...(await againstSort(() => dpq.releaseByGroup(values, keyed, options))), `<= ${goal}`]);
  if (strings) {
    // As labels just parsed from a file arrive: strings V8 has not hashed
    // yet (one fresh array a call; the row above reuses one array).
    const fresh = Array.from({ length: 11 }, () => Array.from(codes, (c) => `key-${c}`));
    rows.push([label, 'the same, fresh label strings each call', ...(await againstSort(() => dpq.releaseByGroup(values, fresh.pop(), options))), '']);
    continue;
  }
  rows.push([label, 'plain JS: scatter, sort each group, pick nine', ...(await againstSort(() => plainGroupedDeciles(codes, groups))), '']);
  for (const fn of ['quantile_cont', 'quantile_disc']) {
    const sql = `SELECT g${groups}, ${fn}(v, ${list}) FROM t GROUP BY g${groups}`;
    rows.push([label, `DuckDB ${fn} GROUP BY, one thread`, ...(await againstSort(() => duck.runAndReadAll(sql), 6)), '']);
  }
}
console.log('\nGroups: 10^6 rows, nine deciles, public keys (ms; ratio to a Float64Array sort of the 10^6 values, pair by pair):\n');
console.log('| rows in | what | ms | sort ms | ratio | target |');
console.log('|---|---|---:|---:|---:|---|');
for (const [label, what, ms, sortMs, ratio, goal] of rows) {
  console.log(`| ${label} | ${what} | ${f(ms)} | ${f(sortMs)} | ${ratio.toFixed(2)} | ${goal} |`);
}

// Where the time goes (no targets): one quantile a group prices everything
// but eight draws a group; without AQ's first look as well (method 'aq',
// look 0), what is left is the grouping, each group's sort, the step look
// and one exactly sampled draw (docs/benchmarks.md reads them).
console.log('\nGroups, where the time goes: ratio to the sort, integer codes (no targets):\n');
console.log('| groups | nine deciles | nine deciles, no first look | the median | the median, no first look |');
console.log('|---:|---:|---:|---:|---:|');
for (const groups of [1000, 10000]) {
  const codes = codesFor(groups);
  const base = { lower: 0, upper: 100, epsilon: 1, keys: Array.from({ length: groups }, (_, g) => g) };
  const cells = [];
  for (const quantiles of [deciles, [0.5]]) {
    for (const extra of [{}, { method: 'aq', look: 0 }]) {
      cells.push((await againstSort(() => dpq.releaseByGroup(values, codes, { ...base, quantiles, ...extra })))[2]);
    }
  }
  console.log(`| ${groups.toLocaleString('en-US')} | ${cells.map((c) => c.toFixed(2)).join(' | ')} |`);
}
duck.closeSync();
