// WASM speed through the package, next to the native core and the sorts.
// Prints a Markdown table; asserts nothing. Usage:
//   node bench/wasm-bench.mjs NATIVE_JSON WASM_SORT_JSON
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

import { loadDpQuantiles } from '../dist/node.js';

const [nativeJson, wasmSortJson] = process.argv.slice(2);
const native = JSON.parse(readFileSync(nativeJson, 'utf8'));
const wasmSortMs = JSON.parse(readFileSync(wasmSortJson, 'utf8')).sortMs;

function nativeMs(name) {
  const entry = native.benchmarks.find((b) => b.name === name || b.name.startsWith(`${name}/min_time`));
  return entry === undefined ? NaN : entry.real_time; // reported in ms
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const n = 1_000_000;
const data = new Float64Array(n);
let state = 1;
for (let i = 0; i < n; i++) {
  state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
  data[i] = (state / 4294967296) * 100;
}

const loadStart = performance.now();
const dpq = await loadDpQuantiles();
const loadMs = performance.now() - loadStart;

const jsSortMs = median(
  Array.from({ length: 7 }, () => {
    const copy = Float64Array.from(data);
    const start = performance.now();
    copy.sort();
    return performance.now() - start;
  }),
);

const rows = [];
const nativeSortMs = nativeMs('BM_SortOnly/1000000');
for (const m of [1, 10, 100, 1000]) {
  const quantiles = Array.from({ length: m }, (_, i) => (i + 1) / (m + 1));
  dpq.quantiles(data, { lower: 0, upper: 100, quantiles, epsilon: 1 }); // warm-up
  const wasmMs = median(
    Array.from({ length: 7 }, () => {
      const start = performance.now();
      dpq.quantiles(data, { lower: 0, upper: 100, quantiles, epsilon: 1 });
      return performance.now() - start;
    }),
  );
  const nativeAqMs = nativeMs(`BM_AqRelease/1000000/${m}`);
  rows.push({ m, nativeAqMs, wasmMs });
}

const f = (x) => x.toFixed(1);
console.log(`n = ${n}, epsilon = 1, uniform quantiles; median of 7 runs (ms)\n`);
console.log('| m | AQ native | AQ WASM (package, end to end) | WASM / native | AQ native / native sort | AQ WASM / WASM sort |');
console.log('|---:|---:|---:|---:|---:|---:|');
for (const { m, nativeAqMs, wasmMs } of rows) {
  console.log(
    `| ${m} | ${f(nativeAqMs)} | ${f(wasmMs)} | ${(wasmMs / nativeAqMs).toFixed(2)} | ${(nativeAqMs / nativeSortMs).toFixed(2)} | ${(wasmMs / wasmSortMs).toFixed(2)} |`,
  );
}
console.log(
  `\nsort alone: native std::sort ${f(nativeSortMs)} ms, WASM std::sort ${f(wasmSortMs)} ms, ` +
    `JavaScript Float64Array sort ${f(jsSortMs)} ms`,
);
// Every method at the AQ paper's sizes (Section 4.4), natively and in WASM.
const methods = ['aq', 'jointexp', 'inverse-sensitivity', 'hs-jointexp', 'appindexp', 'aggtree', 'tree-cdf'];
console.log('\nEvery method, epsilon = 1, uniform quantiles (ms; WASM through the package, median of 3):\n');
console.log('| method | n | m | native | WASM | native / AQ native |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const size of [1000, 100_000]) {
  const values = data.subarray(0, size);
  for (const m of [10, 120]) {
    const quantiles = Array.from({ length: m }, (_, i) => (i + 1) / (m + 1));
    const aqNative = nativeMs(`BM_Method/aq/${size}/${m}`);
    for (const method of methods) {
      const wasm = median(
        Array.from({ length: 3 }, () => {
          const start = performance.now();
          dpq.quantiles(values, { lower: 0, upper: 100, quantiles, epsilon: 1, method });
          return performance.now() - start;
        }),
      );
      const nat = nativeMs(`BM_Method/${method.replace('-', '_')}/${size}/${m}`);
      console.log(`| ${method} | ${size} | ${m} | ${nat.toFixed(2)} | ${wasm.toFixed(2)} | ${(nat / aqNative).toPrecision(2)} |`);
    }
  }
}

// Stream pushes through the package: values per second.
console.log('\nStream pushes, 2^22 values in chunks of 2^16 (values per second, median of 3):\n');
console.log('| alpha | native | WASM (package) | native / WASM |');
console.log('|---:|---:|---:|---:|');
const pushData = data.subarray(0, 1 << 22);
for (const inverse of [1000, 10000]) {
  const seconds = median(
    Array.from({ length: 3 }, () => {
      const stream = dpq.createStream({ lower: 0, upper: 100, alpha: 1 / inverse });
      const start = performance.now();
      for (let at = 0; at < pushData.length; at += 1 << 16) stream.push(pushData.subarray(at, at + (1 << 16)));
      const elapsed = (performance.now() - start) / 1000;
      stream.dispose();
      return elapsed;
    }),
  );
  const entry = native.benchmarks.find((b) => b.name === `BM_GkInsert/${inverse}`);
  const nativeRate = entry === undefined ? NaN : entry.items_per_second;
  const wasmRate = pushData.length / seconds;
  console.log(`| 1e-${Math.log10(inverse)} | ${(nativeRate / 1e6).toFixed(1)} M/s | ${(wasmRate / 1e6).toFixed(1)} M/s | ${(nativeRate / wasmRate).toFixed(2)} |`);
}

const moduleBytes = readFileSync(new URL('../dist/generated/dpq_module.mjs', import.meta.url)).length;
console.log(`module: ${(moduleBytes / 1024).toFixed(0)} KiB (one file, WASM inlined); load + instantiate ${f(loadMs)} ms`);
