#!/usr/bin/env node
// Private quantiles of a Parquet column of any size: DuckDB counts the rows
// per bucket with one GROUP BY, and only those counts (one number per bucket,
// never a row) reach dp-quantiles, which adds the noise.
//
//   node examples/duckdb-counts.mjs FILE.parquet --column x --lower 0 --upper 100
//        [--buckets 10000] [--epsilon 1] [--quantiles 0.1,0.5,0.9] [--method aq]
//   node examples/duckdb-counts.mjs --generate 10000000 big.parquet
//
// Run `npm run build:package` first (and, outside this repository, `npm
// install @duckdb/node-api`). The second form writes a synthetic
// Parquet file (column x: a skewed spread over [0, 100) with an atom at 40)
// to try the first on. The same query works in any SQL engine
// (docs/scale.md gives it for Spark SQL and BigQuery).
import { parseArgs } from 'node:util';

import { DuckDBInstance } from '@duckdb/node-api';

import { loadDpQuantiles } from '../dist/node.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    column: { type: 'string', default: 'x' },
    lower: { type: 'string', default: '0' },
    upper: { type: 'string', default: '100' },
    buckets: { type: 'string', default: '10000' },
    epsilon: { type: 'string', default: '1' },
    method: { type: 'string', default: 'aq' },
    quantiles: { type: 'string', default: '0.1,0.25,0.5,0.75,0.9' },
    generate: { type: 'string' },
    // For tests only: a seeded release is NOT private.
    seed: { type: 'string' },
  },
});

// SQL string literal for a file path.
const literal = (text) => `'${text.replaceAll("'", "''")}'`;
// A column name as a quoted identifier.
const identifier = (text) => `"${text.replaceAll('"', '""')}"`;

const instance = await DuckDBInstance.create(':memory:');
const connection = await instance.connect();

if (args.generate !== undefined) {
  const rows = Number(args.generate);
  const file = positionals[0] ?? 'big.parquet';
  // Deterministic rows: a fifth at 40.00005, the rest spread over [0, 100),
  // a few below 0 and above 100 (clamped by the query below). Never on a
  // multiple of 0.01, so every engine buckets them alike.
  await connection.run(`
    COPY (
      SELECT CASE
        WHEN i % 5 = 0 THEN 40.00005
        WHEN i % 997 = 0 THEN -3.00005
        WHEN i % 991 = 0 THEN 123.00005
        ELSE floor(((i * 7919 + 13) % 1000003) * ((i * 7919 + 13) % 1000003) / 1000003) / 10000 + 0.00005
      END AS x
      FROM range(${rows}) t(i)
    ) TO ${literal(file)} (FORMAT parquet)`);
  console.error(`wrote ${rows} rows to ${file}`);
  process.exit(0);
}

const file = positionals[0];
if (file === undefined) {
  console.error('usage: node examples/duckdb-counts.mjs FILE.parquet --column x --lower 0 --upper 100');
  process.exit(2);
}
const lower = Number(args.lower);
const upper = Number(args.upper);
const buckets = Number(args.buckets);
const width = (upper - lower) / buckets;

// The whole job of the engine: bucket i holds lower + i w <= x < lower +
// (i + 1) w; values outside the bounds go to the end buckets, as clamping
// does; NULLs are left out.
const reader = await connection.runAndReadAll(`
  SELECT least(greatest(floor((${identifier(args.column)} - ${lower}) / ${width}), 0), ${buckets - 1})::BIGINT AS bucket,
         count(*) AS n
  FROM read_parquet(${literal(file)})
  WHERE ${identifier(args.column)} IS NOT NULL
  GROUP BY bucket`);
const counts = new Float64Array(buckets);
for (const [bucket, n] of reader.getRows()) counts[Number(bucket)] = Number(n);
connection.closeSync();

const dpq = await loadDpQuantiles();
const quantiles = args.quantiles.split(',').map(Number);
const release = dpq.releaseFromCounts(counts, {
  lower,
  upper,
  quantiles,
  epsilon: Number(args.epsilon),
  method: args.method,
  ...(args.seed === undefined ? {} : { seed: Number(args.seed) }),
});
console.log(
  JSON.stringify(
    {
      file,
      column: args.column,
      buckets,
      resolution: width,
      privacy: release.privacy,
      quantiles: quantiles.map((q, i) => ({ q, value: release.values[i] })),
    },
    null,
    2,
  ),
);
