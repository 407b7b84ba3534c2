// Reproduces the papers' accuracy comparisons with the package itself (the
// WASM build), and writes CSV and one SVG chart per setting to
// docs/experiments/.
//
//  1. Kaplan, Schnapp and Stemmer, Section 4.3: 1,000 points sampled per
//     trial, m = 1..120 evenly spaced quantiles, epsilon = 1 and rho = 1/2,
//     every method. Errors, averaged over quantiles: the rank error counting
//     ties (distance from floor(q n) to the ranks [#{x < v}, #{x <= v}] the
//     release v stands for) and the value error |v - true| / (upper - lower).
//     Data: Uniform(-5, 5) and N(0, 5) (10,000 points each) and the papers'
//     real columns in ../shared/data when present, in [-100, 100] as in the
//     paper (Goodreads pages: [0, 10000], which [-100, 100] would clamp);
//     columns with atoms in natural bounds: Adult hours and capital gain,
//     Seattle precipitation and wind, movie ratings (vega-datasets).
//     Atom columns also run AQ, AggTree and the default ('auto') with the
//     data's public resolution as `step`.
//  2. Lalanne et al., Figure 3: Mixed(p, delta) distributions, m = 8,
//     epsilon = 1, sup-norm error against the population quantiles as n grows.
//
// Writes reference.md (the AQ authors' published-code numbers beside ours)
// and best-methods.md (the best method per dataset, m and budget).
//
// Usage: node experiments/run.mjs [--trials N] [--runs N] [--out DIR]
//                                 [--datasets name,name] [--skip-mixed]
// Seeds make the tables reproducible; seeded releases are not private, which
// is fine for an experiment on public or synthetic data.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

import * as vega from 'vega';
import * as vegaLite from 'vega-lite';

import { loadDpQuantiles } from '../dist/node.js';
import { rankError, tieOf } from '../dist/truth.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    trials: { type: 'string', default: '20' },
    runs: { type: 'string', default: '50' },
    out: { type: 'string', default: join(root, 'docs/experiments') },
    datasets: { type: 'string' },
    'skip-mixed': { type: 'boolean', default: false },
  },
});
const TRIALS = Number(args.trials);
const RUNS = Number(args.runs);
mkdirSync(args.out, { recursive: true });

const dpq = await loadDpQuantiles();
const METHODS = ['aq', 'jointexp', 'inverse-sensitivity', 'hs-jointexp', 'appindexp', 'aggtree', 'tree-cdf'];
const M_VALUES = [1, 2, 3, 5, 8, 10, 12, 20, 30, 45, 50, 60, 90, 120];
// mulberry32: a small seeded generator for sampling data (not for privacy).
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normal(random) {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

function readColumn(file) {
  const lines = readFileSync(file, 'utf8').trim().split('\n').slice(1);
  return Float64Array.from(lines.map(Number));
}

// A numeric column of a vega-datasets file; rows without a number dropped.
function vegaColumn(file, column) {
  const path = join(root, 'node_modules/vega-datasets/data', file);
  if (file.endsWith('.json')) {
    const rows = JSON.parse(readFileSync(path, 'utf8'));
    return Float64Array.from(rows.map((r) => r[column]).filter((x) => typeof x === 'number'));
  }
  const [header, ...lines] = readFileSync(path, 'utf8').trim().split('\n');
  const at = header.split(',').indexOf(column);
  return Float64Array.from(lines.map((l) => Number(l.split(',')[at])).filter(Number.isFinite));
}

// name, label, values, bounds, and for columns with atoms the data's public
// resolution (a `step` AQ also runs with).
function datasets() {
  const random = generator(1);
  const list = [
    { name: 'uniform', label: 'Uniform(-5, 5)', values: Float64Array.from({ length: 10000 }, () => -5 + 10 * random()) },
    { name: 'gaussian', label: 'N(0, 5)', values: Float64Array.from({ length: 10000 }, () => 5 * normal(random)) },
  ];
  const shared = join(root, '..', 'shared', 'data');
  const real = [
    ['adult_age', 'Adult age', 'adult_age.csv'],
    ['adult_hours', 'Adult hours per week', 'adult_hours_per_week.csv'],
    ['goodreads_rating', 'Goodreads rating', 'goodreads_average_rating.csv'],
    ['goodreads_pages', 'Goodreads pages', 'goodreads_num_pages.csv', [0, 10000]],
    ['adult_hours_atoms', 'Adult hours per week (47% at 40)', 'adult_hours_per_week.csv', [0, 100], 1],
    ['adult_capital_gain', 'Adult capital gain (92% at 0)', 'adult_capital_gain.csv', [0, 100000], 1],
  ];
  for (const [name, label, file, bounds, step] of real) {
    const path = join(shared, file);
    if (existsSync(path)) list.push({ name, label, values: readColumn(path), bounds, step });
    else console.log(`(skipping ${label}: ${path} not found)`);
  }
  list.push(
    { name: 'seattle_precipitation', label: 'Seattle precipitation (57% at 0)', values: vegaColumn('seattle-weather.csv', 'precipitation'), bounds: [0, 60], step: 0.1 },
    { name: 'seattle_wind', label: 'Seattle wind', values: vegaColumn('seattle-weather.csv', 'wind'), bounds: [0, 20], step: 0.1 },
    { name: 'imdb_rating', label: 'IMDB rating', values: vegaColumn('movies.json', 'IMDB Rating'), bounds: [0, 10], step: 0.1 },
    { name: 'rotten_tomatoes', label: 'Rotten Tomatoes rating', values: vegaColumn('movies.json', 'Rotten Tomatoes Rating'), bounds: [0, 100], step: 1 },
  );
  const only = args.datasets?.split(',');
  return only === undefined ? list : list.filter((d) => only.includes(d.name));
}

// Partial Fisher-Yates: `count` values sampled without replacement (all of
// them, shuffled, when there are fewer).
function sample(values, count, random) {
  const copy = Float64Array.from(values);
  const take = Math.min(count, copy.length);
  for (let i = 0; i < take; i++) {
    const j = i + Math.floor(random() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, take);
}

// Mean rank error counting ties, and mean value error relative to the
// range, over the quantiles. `sorted` holds the clamped data; a value within
// `tie` of a release (half its grid step) is equal to it.
function errors(sorted, quantiles, released, lower, upper, tie) {
  let rank = 0;
  let value = 0;
  const n = sorted.length;
  quantiles.forEach((q, i) => {
    const target = Math.floor(q * n);
    const v = released[i];
    rank += rankError(sorted, q, v, tie);
    value += Math.abs(v - sorted[Math.min(target, n - 1)]) / (upper - lower);
  });
  return { rank: rank / quantiles.length, value: value / quantiles.length };
}

function toCsv(rows) {
  const keys = Object.keys(rows[0]);
  return `${keys.join(',')}\n${rows.map((r) => keys.map((k) => r[k]).join(',')).join('\n')}\n`;
}

async function chart(spec, file) {
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  writeFileSync(file, await view.toSVG());
}

// 1. AQ paper, Section 4.3.
for (const dataset of datasets()) {
  const [lower, upper] = dataset.bounds ?? [-100, 100];
  const variants = METHODS.map((method) => ({ label: method, options: { method } }));
  if (dataset.step !== undefined) {
    variants.push(
      { label: `aq step ${dataset.step}`, options: { method: 'aq', step: dataset.step } },
      { label: `aggtree step ${dataset.step}`, options: { method: 'aggtree', step: dataset.step } },
      // The default ('auto'), as a user with this column's resolution gets it.
      { label: `default step ${dataset.step}`, options: { step: dataset.step } },
    );
  }
  const rows = [];
  const started = Date.now();
  for (const budget of [{ epsilon: 1 }, { rho: 0.5 }]) {
    const budgetLabel = 'epsilon' in budget ? 'epsilon = 1' : 'rho = 1/2';
    for (const m of M_VALUES) {
      const quantiles = Array.from({ length: m }, (_, i) => (i + 1) / (m + 1));
      const totals = variants.map(() => ({ rank: 0, value: 0 }));
      const random = generator(1000 + m);
      for (let trial = 0; trial < TRIALS; trial++) {
        const points = sample(dataset.values, 1000, random);
        const sorted = Float64Array.from(points, (x) => Math.min(Math.max(x, lower), upper)).sort();
        variants.forEach((variant, v) => {
          const release = dpq.release(points, {
            lower, upper, quantiles, seed: trial * 7919 + m, ...budget, ...variant.options,
          });
          // Ties to the release grid's resolution (half a step; the trees,
          // whose values are interpolated, have none).
          const tie = tieOf(release.resolution, lower, upper);
          const e = errors(sorted, quantiles, release.values, lower, upper, tie);
          totals[v].rank += e.rank / TRIALS;
          totals[v].value += e.value / TRIALS;
        });
      }
      variants.forEach((variant, v) => {
        rows.push({
          dataset: dataset.name, budget: budgetLabel, method: variant.label, m,
          mean_rank_error: totals[v].rank.toFixed(3), mean_value_error: totals[v].value.toExponential(3),
        });
      });
    }
  }
  writeFileSync(join(args.out, `aq-section-4.3-${dataset.name}.csv`), toCsv(rows));
  await chart(
    {
      title: `${dataset.label}: 1,000 points, bounds [${lower}, ${upper}], ${TRIALS} trials`,
      data: { values: rows.map((r) => ({ ...r, mean_rank_error: Math.max(Number(r.mean_rank_error), 0.01) })) },
      facet: { column: { field: 'budget', title: null } },
      spec: {
        width: 300,
        height: 220,
        mark: { type: 'line', point: true },
        encoding: {
          x: { field: 'm', type: 'quantitative', title: 'number of quantiles m' },
          y: { field: 'mean_rank_error', type: 'quantitative', scale: { type: 'log' }, title: 'mean rank error per quantile (ties counted)' },
          color: { field: 'method', type: 'nominal' },
        },
      },
    },
    join(args.out, `aq-section-4.3-${dataset.name}.svg`),
  );
  console.log(`${dataset.label}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

// 2. Lalanne et al., Figure 3: Mixed(p, delta), m = 8, epsilon = 1.
if (!args['skip-mixed']) {
const MIXED = [
  [0, 0],
  [0.1, 0.05],
  [0.2, 0.1],
  [0.5, 0.25],
];
function mixedSample(n, p, delta, random) {
  return Float64Array.from({ length: n }, () => {
    if (random() < p) return 0.5;
    const v = random() * (0.5 - delta);
    return random() < 0.5 ? v : 1 - v;
  });
}
function mixedQuantile(q, p, delta) {
  // F^-1: the lower uniform part holds (1 - p) / 2 of the mass on [0, 1/2 - delta].
  const side = (1 - p) / 2;
  if (q < side) return (q / side) * (0.5 - delta);
  if (q <= side + p) return 0.5;
  return 0.5 + delta + ((q - side - p) / side) * (0.5 - delta);
}
const quantiles8 = Array.from({ length: 8 }, (_, i) => (i + 1) / 9);
const variants = [
  { label: 'JointExp', options: { method: 'jointexp' } },
  { label: 'inverse sensitivity', options: { method: 'inverse-sensitivity' } },
  { label: 'HSJointExp uniform', options: { method: 'hs-jointexp', jitter: 'uniform' } },
  { label: 'HSJointExp gaussian', options: { method: 'hs-jointexp', jitter: 'gaussian' } },
  { label: 'AQ', options: { method: 'aq' } },
];
const mixedRows = [];
for (const [p, delta] of MIXED) {
  for (const n of [100, 300, 1000, 3000, 10000]) {
    const random = generator(n + Math.round(1000 * p));
    const totals = variants.map(() => 0);
    for (let run = 0; run < RUNS; run++) {
      const points = mixedSample(n, p, delta, random);
      variants.forEach((variant, v) => {
        const released = dpq.quantiles(points, {
          lower: 0, upper: 1, quantiles: quantiles8, epsilon: 1, seed: run * 31 + n, ...variant.options,
        });
        let sup = 0;
        quantiles8.forEach((q, i) => {
          sup = Math.max(sup, Math.abs(released[i] - mixedQuantile(q, p, delta)));
        });
        totals[v] += sup / RUNS;
      });
    }
    variants.forEach((variant, v) => {
      mixedRows.push({ distribution: `Mixed(p=${p} delta=${delta})`, n, method: variant.label, mean_sup_error: totals[v].toExponential(3) });
    });
  }
}
writeFileSync(join(args.out, 'lalanne-figure-3-mixed.csv'), toCsv(mixedRows));
await chart(
  {
    title: `Mixed(p, delta), m = 8, epsilon = 1, ${RUNS} runs`,
    data: { values: mixedRows.map((r) => ({ ...r, mean_sup_error: Math.max(Number(r.mean_sup_error), 1e-9) })) },
    facet: { column: { field: 'distribution', title: null } },
    spec: {
      width: 200,
      height: 200,
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'n', type: 'quantitative', scale: { type: 'log' } },
        y: { field: 'mean_sup_error', type: 'quantitative', scale: { type: 'log' }, title: 'mean sup-norm error' },
        color: { field: 'method', type: 'nominal' },
      },
    },
  },
  join(args.out, 'lalanne-figure-3-mixed.svg'),
);
}

// The summary, from every CSV in the output folder (runs may be partial).
function readCsv(file) {
  const [header, ...lines] = readFileSync(file, 'utf8').trim().split('\n');
  const keys = header.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((v, i) => [keys[i], v])));
}
const summary = [];
const sections = readdirSync(args.out)
  .filter((f) => f.startsWith('aq-section-4.3-') && f.endsWith('.csv'))
  .sort()
  .map((file) => readCsv(join(args.out, file)));
for (const rows of sections) {
  for (const budget of ['epsilon = 1', 'rho = 1/2']) {
    for (const m of ['8', '120']) {
      const at = rows.filter((r) => r.budget === budget && r.m === m);
      const ranked = [...at].sort((a, b) => Number(a.mean_rank_error) - Number(b.mean_rank_error));
      summary.push(`${rows[0].dataset}, ${budget}, m = ${m}: ${ranked.map((r) => `${r.method} ${Number(r.mean_rank_error).toFixed(1)}`).join(', ')}`);
    }
  }
}
const mixedFile = join(args.out, 'lalanne-figure-3-mixed.csv');
if (existsSync(mixedFile)) {
  const rows = readCsv(mixedFile);
  for (const distribution of [...new Set(rows.map((r) => r.distribution))]) {
    const at = rows.filter((r) => r.distribution === distribution && r.n === '10000');
    summary.push(`${distribution}, n = 10000: ${at.map((r) => `${r.method} ${r.mean_sup_error}`).join(', ')}`);
  }
}
writeFileSync(join(args.out, 'summary.txt'), `${summary.join('\n')}\n`);
console.log(summary.join('\n'));

// The AQ authors' published code, same setting (1,000-point samples,
// epsilon = 1, add/remove neighbours, 20 trials, m = 10 / 50 / 120), as
// measured for issue 8 (mean misclassified points), beside ours.
const REFERENCE = {
  uniform: [5.7, 11.8, 15.5],
  goodreads_pages: [6.5, 11.6, 13.6],
};
const reference = [
  '# AQ against its authors\' code',
  '',
  'Mean rank error per quantile (ties counted), 1,000-point samples, epsilon = 1, add/remove neighbours.',
  `Reference: the authors' Python AQ in the same setting (20 trials). Ours: \`npm run experiments\` (${TRIALS} trials).`,
  '',
  '| dataset | m | authors\' AQ | our AQ | ratio |',
  '| --- | ---: | ---: | ---: | ---: |',
];
for (const rows of sections) {
  const name = rows[0].dataset;
  if (!(name in REFERENCE)) continue;
  [10, 50, 120].forEach((m, i) => {
    const ours = rows.find((r) => r.budget === 'epsilon = 1' && r.m === String(m) && r.method === 'aq');
    if (ours === undefined) return;
    const theirs = REFERENCE[name][i];
    reference.push(`| ${name} | ${m} | ${theirs} | ${Number(ours.mean_rank_error).toFixed(1)} | ${(Number(ours.mean_rank_error) / theirs).toFixed(2)} |`);
  });
}
writeFileSync(join(args.out, 'reference.md'), `${reference.join('\n')}\n`);

// The best method per dataset, m and budget, and how far the default is
// from it in both errors. The default is what a user gets without a method:
// with the column's step where it has one ('auto', which picks AQ or
// AggTree), else AQ. Every variant competes, with or without a step.
const best = [
  '# Best method per dataset and m',
  '',
  `From \`npm run experiments\` (${TRIALS} trials of 1,000-point samples). Each cell: the variant with the smallest mean rank error (ties counted; every method, with the column's step where it has one), then the default's rank error and value error as multiples of the best variant's in each (1.00 = the default is best). The default is what a user gets without naming a method: on columns with a step, \`default step\` ('auto': AggTree on the step grid when m >= max(5, points / 24) with epsilon, points <= 128 and m >= 40 with rho, else AQ); on the others, AQ.`,
  '',
];
for (const budget of ['epsilon = 1', 'rho = 1/2']) {
  best.push(`## ${budget}`, '', `| dataset | ${M_VALUES.filter((m) => m >= 10).map((m) => `m = ${m}`).join(' | ')} |`);
  best.push(`| --- | ${M_VALUES.filter((m) => m >= 10).map(() => '---').join(' | ')} |`);
  for (const rows of sections) {
    const cells = M_VALUES.filter((m) => m >= 10).map((m) => {
      const at = rows.filter((r) => r.budget === budget && r.m === String(m));
      if (at.length === 0) return '';
      const byRank = [...at].sort((a, b) => Number(a.mean_rank_error) - Number(b.mean_rank_error))[0];
      const bestValue = Math.min(...at.map((r) => Number(r.mean_value_error)));
      const fallback = at.find((r) => r.method === 'aq');
      const chosen = at.find((r) => r.method.startsWith('default')) ?? fallback;
      const ratio = (x, y) => (y === 0 ? (x === 0 ? 1 : Infinity) : x / y);
      return `${byRank.method}; default ${ratio(Number(chosen.mean_rank_error), Number(byRank.mean_rank_error)).toFixed(2)} / ${ratio(Number(chosen.mean_value_error), bestValue).toFixed(2)}`;
    });
    best.push(`| ${rows[0].dataset} | ${cells.join(' | ')} |`);
  }
  best.push('');
}
writeFileSync(join(args.out, 'best-methods.md'), `${best.join('\n')}\n`);
