// Section 1 of the experiments (AQ paper, Section 4.3): the datasets, and
// one dataset's rows under one budget. Shared by run.mjs and its worker
// threads; no global state, so a worker computes exactly what the main
// thread would.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { rankError, tieOf } from '../dist/truth.js';

export const root = fileURLToPath(new URL('..', import.meta.url));
export const METHODS = ['aq', 'jointexp', 'inverse-sensitivity', 'hs-jointexp', 'appindexp', 'aggtree', 'tree-cdf'];
export const M_VALUES = [1, 2, 3, 5, 8, 10, 12, 20, 30, 45, 50, 60, 90, 120];
// mulberry32: a small seeded generator for sampling data (not for privacy).
export function generator(seed) {
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
export function datasets(only, log = () => {}) {
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
    else log(`(skipping ${label}: ${path} not found)`);
  }
  list.push(
    { name: 'seattle_precipitation', label: 'Seattle precipitation (57% at 0)', values: vegaColumn('seattle-weather.csv', 'precipitation'), bounds: [0, 60], step: 0.1 },
    { name: 'seattle_wind', label: 'Seattle wind', values: vegaColumn('seattle-weather.csv', 'wind'), bounds: [0, 20], step: 0.1 },
    { name: 'imdb_rating', label: 'IMDB rating', values: vegaColumn('movies.json', 'IMDB Rating'), bounds: [0, 10], step: 0.1 },
    { name: 'rotten_tomatoes', label: 'Rotten Tomatoes rating', values: vegaColumn('movies.json', 'Rotten Tomatoes Rating'), bounds: [0, 100], step: 1 },
  );
  return only === undefined ? list : list.filter((d) => only.includes(d.name));
}

// Synthetic columns spread over much of their bounds ([-100, 100]), for the
// tails section: the scope is data spanning 5-70% of the range, and
// the columns above sit near its low end or have a step.
export function spreadDatasets(only) {
  const random = generator(2);
  const list = [
    { name: 'uniform_wide', label: 'Uniform(-70, 70)', values: Float64Array.from({ length: 10000 }, () => -70 + 140 * random()) },
    { name: 'gaussian_wide', label: 'N(0, 25)', values: Float64Array.from({ length: 10000 }, () => 25 * normal(random)) },
  ];
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

export const BUDGETS = [
  { label: 'epsilon = 1', budget: { epsilon: 1 } },
  { label: 'rho = 1/2', budget: { rho: 0.5 } },
];

// Every method at its defaults, and the default without a step (which
// looks for the data's step first: docs/algorithms/step-look.md); columns
// with a step also run AQ, AggTree and the default with it.
export function variantsOf(dataset) {
  const variants = METHODS.map((method) => ({ label: method, options: { method } }));
  variants.push({ label: 'default', options: {} });
  if (dataset.step !== undefined) {
    variants.push(
      { label: `aq step ${dataset.step}`, options: { method: 'aq', step: dataset.step } },
      { label: `aggtree step ${dataset.step}`, options: { method: 'aggtree', step: dataset.step } },
      // The default ('auto'), as a user with this column's resolution gets it.
      { label: `default step ${dataset.step}`, options: { step: dataset.step } },
    );
  }
  return variants;
}

// The default: what a user gets without naming a method ('auto' with the
// column's step where it has one, which picks AQ or AggTree; else the step
// look, then as with the step it found, or AQ).
export function defaultLabel(dataset) {
  return dataset.step === undefined ? 'default' : `default step ${dataset.step}`;
}

// Standard error of the mean of `values`.
function standardError(values) {
  const count = values.length;
  if (count < 2) return 0;
  const mean = values.reduce((a, b) => a + b, 0) / count;
  const squares = values.reduce((a, b) => a + (b - mean) ** 2, 0);
  return Math.sqrt(squares / (count - 1) / count);
}

// Formats a value error.
const exp = (x) => x.toExponential(3);

// One dataset under one budget: each variant's mean errors over `trials`
// samples of 1,000 points, the standard errors of those means, and the
// standard error of the mean of (default's error - 1.1 x this variant's),
// paired by trial (the same sample and seed), which says whether the
// default's miss of "within 1.1x of the best" is measured or noise.
export function sectionRows(dpq, dataset, { label: budgetLabel, budget }, trials) {
  const [lower, upper] = dataset.bounds ?? [-100, 100];
  const variants = variantsOf(dataset);
  const chosen = variants.findIndex((v) => v.label === defaultLabel(dataset));
  const rows = [];
  for (const m of M_VALUES) {
    const quantiles = Array.from({ length: m }, (_, i) => (i + 1) / (m + 1));
    const rank = variants.map(() => []);
    const value = variants.map(() => []);
    const random = generator(1000 + m);
    for (let trial = 0; trial < trials; trial++) {
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
        rank[v].push(e.rank);
        value[v].push(e.value);
      });
    }
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const excess = (xs, v) => xs[chosen].map((d, t) => d - 1.1 * xs[v][t]);
    variants.forEach((variant, v) => {
      rows.push({
        dataset: dataset.name, budget: budgetLabel, method: variant.label, m,
        mean_rank_error: mean(rank[v]).toFixed(3),
        mean_value_error: exp(mean(value[v])),
        rank_error_se: standardError(rank[v]).toFixed(3),
        value_error_se: exp(standardError(value[v])),
        default_excess_rank_se: standardError(excess(rank, v)).toFixed(3),
        default_excess_value_se: exp(standardError(excess(value, v))),
      });
    });
  }
  return rows;
}
