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
//  3. Many quantiles of much data: n = 10^6 from Uniform(-5, 5) and N(0, 5)
//     in [-100, 100], m = 500 and 1,000, epsilon = 1 and rho = 1/2: the
//     default, AggTree and the tree CDF (the joint methods and AppIndExp do
//     not scale to that m), rank, value and worst value errors.
//  4. Confidence intervals, coverage against width: n = 10^4 from N(50, 10)
//     in [0, 100], epsilon = 1, 90%, the median to 19 quantiles, each and
//     simultaneous; which construction the plan picked.
//  5. Tails: n = 1,000 sampled per trial, epsilon = 1, every column in its
//     public bounds ([-100, 100] where it has none), no step: the share of
//     releases with any value more than 10% of the range from the data's
//     own quantile, for one quantile (p1, p99), [p1, p99], [p50, p90, p95,
//     p99], [p5, p25, p50, p75, p95] and 120 quantiles; and the mean value
//     error of p1, p5, p95 and p99 released together. The default (AQ with
//     its first look), AQ without it (the default until 0.7), AggTree, and
//     the naive baseline: private bounds at 20% of epsilon in a session,
//     then the default inside them.
//  6. The AQ paper's setting, closely: Uniform(-5, 5) in [-100, 100], n =
//     1,000, epsilon = 1, m = 1, 10, 50, 120, 2,000 trials, the default
//     against AQ without its first look (and without the step look: the
//     default when issue 40 was filed), paired (same samples and seeds), with
//     the standard error of the default's mean minus 1.1 times AQ's.
//
//  7. Small n (issue 56): n = 50, 100 and 300, epsilon = 1: columns
//     concentrated in a tenth of their bounds or less (Uniform(-5, 5) and
//     N(0, 2) in [-100, 100], penguins' body mass by species in [0, 10] kg
//     with step 0.025), spread over them (Uniform(-90, 90), Adult age in
//     [0, 120]) and with atoms at both bounds (whole numbers in [0, 100],
//     half at 0 and a sixth at 100); medians, quartiles, deciles, [p5, p95],
//     p95 and p99 alone (m = 10 and 50 for the atoms); the default, AQ
//     without its first look, JointExp and AppIndExp: the share of
//     releases with a value more than 10% of the range from the data's own
//     quantile ("far") and the mean rank error, ties counted.
// Writes reference.md (the AQ authors' published-code numbers beside ours)
// and best-methods.md (the best method per dataset, m and budget).
//
// Usage: node experiments/run.mjs [--trials N] [--runs N] [--out DIR]
//                                 [--datasets name,name] [--skip-mixed]
//                                 [--skip-large] [--large-trials N]
//                                 [--skip-intervals] [--skip-tails]
//                                 [--skip-paper] (section 1)
//                                 [--tails-trials N]
//                                 [--skip-setting] [--setting-trials N]
//                                 [--skip-small] [--small-trials N]
// Seeds make the tables reproducible; seeded releases are not private, which
// is fine for an experiment on public or synthetic data.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';

import * as vega from 'vega';
import * as vegaLite from 'vega-lite';

import { loadDpQuantiles } from '../dist/node.js';
import { rankError, tieOf } from '../dist/truth.js';
import { BUDGETS, M_VALUES, datasets, generator, root, spreadDatasets } from './section.mjs';

const { values: args } = parseArgs({
  options: {
    trials: { type: 'string', default: '50' },
    runs: { type: 'string', default: '50' },
    out: { type: 'string', default: join(root, 'docs/experiments') },
    datasets: { type: 'string' },
    'skip-mixed': { type: 'boolean', default: false },
    'skip-large': { type: 'boolean', default: false },
    'large-trials': { type: 'string', default: '10' },
    'skip-intervals': { type: 'boolean', default: false },
    'skip-tails': { type: 'boolean', default: false },
    'skip-paper': { type: 'boolean', default: false },
    'tails-trials': { type: 'string', default: '500' },
    'skip-setting': { type: 'boolean', default: false },
    'setting-trials': { type: 'string', default: '2000' },
    'skip-small': { type: 'boolean', default: false },
    'small-trials': { type: 'string', default: '300' },
  },
});
const TRIALS = Number(args.trials);
const RUNS = Number(args.runs);
mkdirSync(args.out, { recursive: true });

const dpq = await loadDpQuantiles();

function toCsv(rows) {
  const keys = Object.keys(rows[0]);
  return `${keys.join(',')}\n${rows.map((r) => keys.map((k) => r[k]).join(',')).join('\n')}\n`;
}

async function chart(spec, file) {
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  writeFileSync(file, await view.toSVG());
}

// 1. AQ paper, Section 4.3. One task per dataset and budget, spread over
// worker threads (one per core, at most 4); every trial's seed is fixed, so
// the numbers do not depend on which thread ran what.
const list = args['skip-paper'] ? [] : datasets(args.datasets?.split(','), console.log);
const tasks = list.flatMap((_, dataset) => BUDGETS.map((__, budget) => ({ dataset, budget })));
const results = list.map(() => BUDGETS.map(() => []));
const threads = Math.max(1, Math.min(tasks.length, availableParallelism(), 4));
await new Promise((resolve, reject) => {
  let next = 0;
  let done = 0;
  if (tasks.length === 0) resolve();
  for (let w = 0; w < threads; w++) {
    const worker = new Worker(new URL('./section-worker.mjs', import.meta.url), {
      workerData: { only: args.datasets?.split(','), trials: TRIALS },
    });
    const give = () => {
      if (next < tasks.length) worker.postMessage(tasks[next++]);
      else worker.terminate();
    };
    worker.on('message', ({ dataset, budget, rows, seconds }) => {
      results[dataset][budget] = rows;
      console.log(`${list[dataset].label}, ${BUDGETS[budget].label}: ${seconds.toFixed(0)} s`);
      if (++done === tasks.length) resolve();
      give();
    });
    worker.on('error', reject);
    give();
  }
});
for (const [d, dataset] of list.entries()) {
  const [lower, upper] = dataset.bounds ?? [-100, 100];
  const rows = results[d].flat();
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

// 3. Many quantiles of much data.
if (!args['skip-large']) {
  const LARGE_TRIALS = Number(args['large-trials']);
  const n = 1_000_000;
  const [lower, upper] = [-100, 100];
  const normal = (random) => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const sources = [
    ['uniform', (random) => -5 + 10 * random()],
    ['gaussian', (random) => 5 * normal(random)],
  ];
  const methods = ['aq', 'aggtree', 'tree-cdf'];
  const largeRows = [];
  for (const [name, draw] of sources) {
    for (const { label, budget } of BUDGETS) {
      for (const m of [500, 1000]) {
        const quantiles = Array.from({ length: m }, (_, i) => (i + 1) / (m + 1));
        const per = methods.map(() => ({ rank: [], value: [], worst: [] }));
        const started = Date.now();
        for (let trial = 0; trial < LARGE_TRIALS; trial++) {
          const random = generator(7919 * trial + m + name.length);
          const data = Float64Array.from({ length: n }, () => draw(random));
          const sorted = Float64Array.from(data).map((x) => Math.min(Math.max(x, lower), upper)).sort();
          methods.forEach((method, k) => {
            const release = dpq.release(data, { lower, upper, quantiles, ...budget, method, seed: trial * 131 + m });
            const tie = tieOf(release.resolution, lower, upper);
            let rank = 0;
            let value = 0;
            let worst = 0;
            quantiles.forEach((q, i) => {
              const v = release.values[i];
              const error = Math.abs(v - sorted[Math.min(Math.floor(q * n), n - 1)]) / (upper - lower);
              rank += rankError(sorted, q, v, tie) / m;
              value += error / m;
              worst = Math.max(worst, error);
            });
            per[k].rank.push(rank);
            per[k].value.push(value);
            per[k].worst.push(worst);
          });
        }
        const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
        const se = (xs) => Math.sqrt(xs.reduce((a, b) => a + (b - mean(xs)) ** 2, 0) / Math.max(1, xs.length - 1) / xs.length);
        methods.forEach((method, k) => {
          largeRows.push({
            dataset: name, budget: label, method, m, n,
            mean_rank_error: mean(per[k].rank).toFixed(2), rank_error_se: se(per[k].rank).toFixed(2),
            mean_value_error: mean(per[k].value).toExponential(3), mean_worst_value_error: mean(per[k].worst).toExponential(3),
          });
        });
        console.log(`large m: ${name}, ${label}, m = ${m}: ${Math.round((Date.now() - started) / 1000)} s`);
      }
    }
  }
  writeFileSync(join(args.out, 'large-m.csv'), toCsv(largeRows));
}

// 4. Confidence intervals: coverage against width.
if (!args['skip-intervals']) {
  const n = 10_000;
  const sets = [
    ['median', [0.5]],
    ['quartiles', [0.25, 0.5, 0.75]],
    ['deciles', Array.from({ length: 9 }, (_, i) => (i + 1) / 10)],
    ['ventiles', Array.from({ length: 19 }, (_, i) => (i + 1) / 20)],
  ];
  const intervalRows = [];
  for (const [name, quantiles] of sets) {
    for (const simultaneous of [false, true]) {
      const random = generator(4242 + quantiles.length);
      let width = 0;
      let together = 0;
      const covered = quantiles.map(() => 0);
      const methods = new Set();
      for (let trial = 0; trial < TRIALS; trial++) {
        const data = Float64Array.from({ length: n }, () => 50 + 10 * Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random()));
        const sorted = Float64Array.from(data).sort();
        const release = dpq.release(data, {
          lower: 0, upper: 100, quantiles, epsilon: 1, confidence: 0.9, simultaneous, seed: trial * 17 + quantiles.length,
        });
        const { low, high, method } = release.intervals;
        methods.add(method);
        let all = true;
        quantiles.forEach((q, i) => {
          const x = sorted[Math.min(Math.floor(q * n), n - 1)];
          const inside = low[i] <= x && x <= high[i];
          covered[i] += inside ? 1 : 0;
          all &&= inside;
          width += (high[i] - low[i]) / quantiles.length / TRIALS;
        });
        together += all ? 1 : 0;
      }
      intervalRows.push({
        quantiles: name, m: quantiles.length, simultaneous, method: [...methods].join('+'),
        mean_width: width.toFixed(2), least_coverage: (Math.min(...covered) / TRIALS).toFixed(3),
        coverage_together: (together / TRIALS).toFixed(3),
      });
    }
  }
  writeFileSync(join(args.out, 'intervals.csv'), toCsv(intervalRows));
  console.log('intervals:', intervalRows.map((r) => `${r.quantiles}${r.simultaneous ? ' (all at once)' : ''} ${r.method} width ${r.mean_width}`).join('; '));
}

// 5. Tails: what analysts ask, value errors a person sees.
if (!args['skip-tails']) {
  const TAIL_TRIALS = Number(args['tails-trials']);
  const n = 1000;
  const requests = [
    ['p1', [0.01]],
    ['p99', [0.99]],
    ['p1 p99', [0.01, 0.99]],
    ['p50 p90 p95 p99', [0.5, 0.9, 0.95, 0.99]],
    ['p5 p25 p50 p75 p95', [0.05, 0.25, 0.5, 0.75, 0.95]],
    ['120 quantiles', Array.from({ length: 120 }, (_, i) => (i + 1) / 121)],
    ['p1 p5 p95 p99', [0.01, 0.05, 0.95, 0.99]],
  ];
  const variants = [
    ['default', (data, options) => dpq.release(data, options).values],
    ['aq without a first look', (data, options) => dpq.release(data, { ...options, method: 'aq', look: 0 }).values],
    ['aggtree', (data, options) => dpq.release(data, { ...options, method: 'aggtree' }).values],
    [
      'private bounds (20%), then the default',
      (data, options) => {
        const session = dpq.session({ epsilon: options.epsilon });
        try {
          // Seeded too, so that the tables reproduce (it drew secure noise).
          const { lower, upper } = session.bounds(data, { epsilon: 0.2 * options.epsilon, seed: options.seed });
          return session.release(data, { ...options, lower, upper, epsilon: 0.8 * options.epsilon }).values;
        } catch (error) {
          // Too few values for the bounds' budget: nothing to release.
          if (error.code === 'NOT_ENOUGH_DATA') return null;
          throw error;
        } finally {
          session.dispose?.();
        }
      },
    ],
  ];
  const tailRows = [];
  const started = Date.now();
  const only = args.datasets?.split(',');
  for (const dataset of [...datasets(only), ...spreadDatasets(only)]) {
    const [lower, upper] = dataset.bounds ?? [-100, 100];
    const range = upper - lower;
    for (const [request, quantiles] of requests) {
      const far = variants.map(() => 0);
      const refused = variants.map(() => 0);
      const errors = variants.map(() => quantiles.map(() => 0));
      const random = generator(9001 + quantiles.length + dataset.name.length);
      for (let trial = 0; trial < TAIL_TRIALS; trial++) {
        const data = Float64Array.from({ length: n }, () => dataset.values[Math.floor(random() * dataset.values.length)]);
        const sorted = Float64Array.from(data).map((x) => Math.min(Math.max(x, lower), upper)).sort();
        const truth = quantiles.map((q) => sorted[Math.min(Math.floor(q * n), n - 1)]);
        variants.forEach(([, run], v) => {
          const values = run(data, { lower, upper, quantiles, epsilon: 1, seed: trial * 7 + 3 });
          if (values === null) {
            refused[v]++;
            far[v]++;
            return;
          }
          let worst = 0;
          quantiles.forEach((q, i) => {
            const error = Math.abs(values[i] - truth[i]) / range;
            errors[v][i] += error / TAIL_TRIALS;
            worst = Math.max(worst, error);
          });
          if (worst > 0.1) far[v]++;
        });
      }
      variants.forEach(([label], v) => {
        tailRows.push({
          dataset: dataset.name, request, method: label, trials: TAIL_TRIALS,
          far_share: (far[v] / TAIL_TRIALS).toFixed(3), refused: refused[v],
          ...(request === 'p1 p5 p95 p99'
            ? Object.fromEntries(['p1', 'p5', 'p95', 'p99'].map((name, i) => [`${name}_value_error`, errors[v][i].toExponential(2)]))
            : {}),
        });
      });
    }
    console.log(`tails: ${dataset.name}: ${Math.round((Date.now() - started) / 1000)} s`);
  }
  const keys = ['dataset', 'request', 'method', 'trials', 'far_share', 'refused', 'p1_value_error', 'p5_value_error', 'p95_value_error', 'p99_value_error'];
  writeFileSync(join(args.out, 'tails.csv'), toCsv(tailRows.map((r) => Object.fromEntries(keys.map((k) => [k, r[k] ?? ''])))));
  const names = variants.map(([label]) => label);
  const table = [
    '# Tails',
    '',
    `From \`npm run experiments\` (${TAIL_TRIALS} seeded releases per cell of 1,000-point samples, epsilon = 1, each column in its public bounds, [-100, 100] where it has none, no step; uniform_wide and gaussian_wide are Uniform(-70, 70) and N(0, 25), spread over much of [-100, 100]). Share of releases with any value more than 10% of the range from the data's own quantile (a refusal counts as such a release), per request; then the mean value error of p1, p5, p95 and p99 released together, in units of the range.`,
    '',
    `Methods: ${names.map((label, i) => `(${i + 1}) ${label}`).join(', ')}.`,
    '',
    `| dataset | request | ${names.map((_, i) => `(${i + 1})`).join(' | ')} |`,
    `| --- | --- | ${names.map(() => '---:').join(' | ')} |`,
  ];
  for (const dataset of [...new Set(tailRows.map((r) => r.dataset))]) {
    for (const [request] of requests.slice(0, -1)) {
      const at = names.map((label) => tailRows.find((r) => r.dataset === dataset && r.request === request && r.method === label));
      table.push(`| ${dataset} | ${request} | ${at.map((r) => `${(100 * Number(r.far_share)).toFixed(1)}%`).join(' | ')} |`);
    }
  }
  table.push('', '## Value error of p1, p5, p95, p99 (released together)', '', `| dataset | method | p1 | p5 | p95 | p99 |`, '| --- | --- | ---: | ---: | ---: | ---: |');
  for (const r of tailRows.filter((row) => row.request === 'p1 p5 p95 p99')) {
    table.push(`| ${r.dataset} | ${r.method} | ${r.p1_value_error} | ${r.p5_value_error} | ${r.p95_value_error} | ${r.p99_value_error} |`);
  }
  writeFileSync(join(args.out, 'tails.md'), `${table.join('\n')}\n`);
}

// 6. The AQ paper's setting, paired: what the looks cost in rank error
// where the data needs none of them (issue 40's target: within 1.1x).
if (!args['skip-setting']) {
  const SETTING_TRIALS = Number(args['setting-trials']);
  const goals = { 1: 1.66, 10: 5.69, 50: 10.85, 120: 12.56 };
  const random = generator(4040);
  const lines = [
    "# The AQ paper's setting, paired",
    '',
    `From \`npm run experiments\` (${SETTING_TRIALS} trials): Uniform(-5, 5) samples of 1,000 in the public bounds [-100, 100], epsilon = 1, m evenly spaced quantiles; mean rank error per quantile, ties counted. The default (its step look at 2.5% of the budget, then AQ with its first look at 5%, or 10% for one or two quantiles with one in the outer 5%) against \`method: 'aq', look: 0\` (AQ alone: bit for bit the default when issue 40 was filed, commit 5f3c208, on 1,000 of 1,000 seeded releases in this setting) on the same samples and seeds. "Excess" is the default's mean minus 1.1 times AQ's, with its standard error over the paired trials: negative means within 1.1x. Issue 40's goal: within 1.1x of the default's error when it was filed (1.66, 5.69, 10.85, 12.56).`,
    '',
    '| m | default | AQ without looks | ratio | excess over 1.1x (se) | 1.1x the goal |',
    '| ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const m of [1, 10, 50, 120]) {
    const quantiles = Array.from({ length: m }, (_, i) => (i + 1) / (m + 1));
    const errors = [[], []];
    for (let trial = 0; trial < SETTING_TRIALS; trial++) {
      const data = Float64Array.from({ length: 1000 }, () => -5 + 10 * random());
      const sorted = Float64Array.from(data).sort();
      [{}, { method: 'aq', look: 0 }].forEach((variant, v) => {
        const release = dpq.release(data, { lower: -100, upper: 100, quantiles, epsilon: 1, seed: 1000 * m + trial + 1, ...variant });
        const tie = tieOf(release.resolution, -100, 100);
        let error = 0;
        quantiles.forEach((q, i) => {
          error += rankError(sorted, q, release.values[i], tie) / m;
        });
        errors[v].push(error);
      });
    }
    const mean = (list) => list.reduce((a, b) => a + b, 0) / list.length;
    const excess = errors[0].map((e, i) => e - 1.1 * errors[1][i]);
    const center = mean(excess);
    const se = Math.sqrt(excess.reduce((a, e) => a + (e - center) ** 2, 0) / (excess.length - 1) / excess.length);
    lines.push(
      `| ${m} | ${mean(errors[0]).toFixed(2)} | ${mean(errors[1]).toFixed(2)} | ${(mean(errors[0]) / mean(errors[1])).toFixed(3)} | ${center.toFixed(2)} (${se.toFixed(2)}) | ${(1.1 * goals[m]).toFixed(2)} |`,
    );
  }
  writeFileSync(join(args.out, 'aq-paper-setting.md'), `${lines.join('\n')}\n`);
  console.log(`setting: ${SETTING_TRIALS} trials done`);
}

// 7. Small n: where the first look's fixed share finds nothing (issue 56).
if (!args['skip-small']) {
  const SMALL_TRIALS = Number(args['small-trials']);
  const random = generator(5656);
  const uniform = (a, b) => () => a + (b - a) * random();
  const gauss = (mean, sd) => () => mean + sd * Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const penguins = JSON.parse(readFileSync(join(root, 'node_modules/vega-datasets/data/penguins.json'), 'utf8'));
  const adultFile = join(root, '../shared/data/adult_age.csv');
  const adult = existsSync(adultFile)
    ? readFileSync(adultFile, 'utf8').split('\n').slice(1).filter((l) => l !== '').map(Number)
    : undefined;
  const fromList = (list) => () => list[Math.floor(random() * list.length)];
  const atoms = () => {
    const u = random();
    return u < 0.5 ? 0 : u < 0.5 + 1 / 6 ? 100 : 1 + Math.floor(random() * 99);
  };
  // [name, kind, draw, [lower, upper], step, sizes]
  const columns = [
    ['uniform(-5, 5)', 'concentrated', uniform(-5, 5), [-100, 100], undefined, [50, 100, 300]],
    ['normal(0, 2)', 'concentrated', gauss(0, 2), [-100, 100], undefined, [50, 100, 300]],
    ['uniform(-90, 90)', 'spread', uniform(-90, 90), [-100, 100], undefined, [50, 100, 300]],
    ...(adult === undefined ? [] : [['adult age', 'spread', fromList(adult), [0, 120], undefined, [50, 100, 300]]]),
    ['atoms at both bounds', 'atoms', atoms, [0, 100], undefined, [50, 100, 300]],
    ...['Adelie', 'Chinstrap', 'Gentoo'].map((species) => {
      const masses = penguins.filter((p) => p.Species === species && p['Body Mass (g)'] !== null).map((p) => p['Body Mass (g)'] / 1000);
      // The species' own rows, all of them: the demo's grouped release.
      return [`penguins ${species}`, 'concentrated', masses, [0, 10], 0.025, [masses.length]];
    }),
  ];
  const spaced = (m) => Array.from({ length: m }, (_, i) => (i + 1) / (m + 1));
  const requests = [
    ['median', [0.5]],
    ['quartiles', [0.25, 0.5, 0.75]],
    ['deciles', spaced(9)],
    ['p5 p95', [0.05, 0.95]],
    ['p95', [0.95]],
    ['p99', [0.99]],
  ];
  const atomRequests = [['quartiles', [0.25, 0.5, 0.75]], ['deciles', spaced(9)], ['m = 10', spaced(10)], ['m = 50', spaced(50)]];
  const variants = [
    ['default', {}],
    ['aq, look 0', { method: 'aq', look: 0 }],
    ['jointexp', { method: 'jointexp' }],
    ['appindexp', { method: 'appindexp' }],
  ];
  const rows = [];
  for (const [name, kind, draw, [lower, upper], step, sizes] of columns) {
    for (const n of sizes) {
      for (const [request, quantiles] of kind === 'atoms' ? atomRequests : requests) {
        const far = variants.map(() => 0);
        const rank = variants.map(() => 0);
        for (let trial = 0; trial < SMALL_TRIALS; trial++) {
          const data = Array.isArray(draw) ? Float64Array.from(draw) : Float64Array.from({ length: n }, draw);
          const sorted = Float64Array.from(data, (x) => Math.min(Math.max(x, lower), upper)).sort();
          const truth = quantiles.map((q) => sorted[Math.min(Math.floor(q * n), n - 1)]);
          variants.forEach(([, variant], v) => {
            const options = { lower, upper, quantiles, epsilon: 1, seed: 77 * trial + v + 1, ...(step === undefined ? {} : { step }), ...variant };
            const release = dpq.release(data, options);
            const tie = tieOf(release.resolution, lower, upper);
            let worst = 0;
            quantiles.forEach((q, i) => {
              worst = Math.max(worst, Math.abs(release.values[i] - truth[i]) / (upper - lower));
              rank[v] += rankError(sorted, q, release.values[i], tie) / quantiles.length / SMALL_TRIALS;
            });
            if (worst > 0.1) far[v]++;
          });
        }
        rows.push({ column: name, kind, n, request, ...Object.fromEntries(variants.flatMap(([label], v) => [[`${label} far`, far[v] / SMALL_TRIALS], [`${label} rank`, rank[v]]])) });
      }
    }
    console.log(`small n: ${name} done`);
  }
  writeFileSync(join(args.out, 'small-n.csv'), toCsv(rows));
  const names = variants.map(([label]) => label);
  const lines = [
    '# Small n',
    '',
    `From \`npm run experiments\` (${SMALL_TRIALS} seeded releases a cell, epsilon = 1, no step but the penguins' 0.025 kg): the share of releases with a value more than 10% of the range from the data's own quantile ("far"), then the mean rank error (ties counted), for ${names.map((label, i) => `(${i + 1}) ${label}`).join(', ')}. Concentrated columns lie in a tenth of their bounds or less; spread ones over most of them; the atoms column holds half its values at 0 and a sixth at 100. The penguins are each species' own rows (the demo's grouped release). See [aq.md](../algorithms/aq.md#error-and-cost) for what the first look can and cannot do at these sizes.`,
    '',
    `| column | n | request | far ${names.map((_, i) => `(${i + 1})`).join(' ')} | rank ${names.map((_, i) => `(${i + 1})`).join(' ')} |`,
    '| --- | ---: | --- | --- | --- |',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.column} | ${r.n} | ${r.request} | ${names.map((label) => `${(100 * r[`${label} far`]).toFixed(0)}%`).join(' ')} | ${names.map((label) => r[`${label} rank`].toFixed(2)).join(' ')} |`,
    );
  }
  writeFileSync(join(args.out, 'small-n.md'), `${lines.join('\n')}\n`);
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
// AggTree), else without one (the step look first). Every variant competes, with or without a step. A
// ratio above 1.10 is a measured miss when the default's mean error exceeds
// 1.1x the best's by more than two standard errors of that difference
// (paired by trial); otherwise it is within this many trials' noise.
const best = [
  '# Best method per dataset and m',
  '',
  `From \`npm run experiments\` (${TRIALS} trials of 1,000-point samples). Each cell: the variant with the smallest mean rank error (ties counted; every method, with the column's step where it has one), then the default's rank error and value error as multiples of the best variant's in each (1.00 = the default is best). The default is what a user gets without naming a method: on columns with a step, \`default step\` ('auto': AggTree on the step grid when m >= max(5, points / 24) with epsilon, or on at most 256 points m >= 4 or m >= 2 all in the outer 5%, points <= 128 and m >= 40 with rho, else AQ); on the others, \`default\` (the step look at 2.5% of the budget, then as with the step it found, or AQ: docs/algorithms/step-look.md).`,
  '',
  'A ratio above 1.10 in **bold** is a measured miss: the default\'s mean error exceeds 1.1 times the best variant\'s by more than two standard errors of that difference (paired by trial: same sample, same seed). A ratio above 1.10 in *italics* is within the noise of this many trials.',
  '',
];
const misses = [];
for (const budget of ['epsilon = 1', 'rho = 1/2']) {
  best.push(`## ${budget}`, '', `| dataset | ${M_VALUES.filter((m) => m >= 10).map((m) => `m = ${m}`).join(' | ')} |`);
  best.push(`| --- | ${M_VALUES.filter((m) => m >= 10).map(() => '---').join(' | ')} |`);
  for (const rows of sections) {
    const cells = M_VALUES.filter((m) => m >= 10).map((m) => {
      const at = rows.filter((r) => r.budget === budget && r.m === String(m));
      if (at.length === 0) return '';
      const chosen = at.find((r) => r.method.startsWith('default step')) ?? at.find((r) => r.method === 'default');
      const shown = ['rank', 'value'].map((error) => {
        const mean = (r) => Number(r[`mean_${error}_error`]);
        const top = [...at].sort((x, y) => mean(x) - mean(y))[0];
        const ratio = mean(top) === 0 ? (mean(chosen) === 0 ? 1 : Infinity) : mean(chosen) / mean(top);
        const text = ratio.toFixed(2);
        if (ratio <= 1.1) return { text, top };
        const se = Number(top[`default_excess_${error}_se`] ?? 0);
        if (mean(chosen) - 1.1 * mean(top) > 2 * se) {
          misses.push(`${budget}, ${rows[0].dataset}, m = ${m}: ${error} ${text} (best ${top.method})`);
          return { text: `**${text}**`, top };
        }
        return { text: `*${text}*`, top };
      });
      return `${shown[0].top.method}; default ${shown[0].text} / ${shown[1].text}`;
    });
    best.push(`| ${rows[0].dataset} | ${cells.join(' | ')} |`);
  }
  best.push('');
}
best.push('## Measured misses', '', ...(misses.length === 0 ? ['None.'] : misses.map((line) => `- ${line}`)), '');
writeFileSync(join(args.out, 'best-methods.md'), `${best.join('\n')}\n`);

// Issue 40's third target: the default without a step, on every column,
// against AQ (rank, every m) and against the better of the two trees
// (value, m >= 50), all on the release grid. A miss is a mean above the
// reference's by more than two standard errors of the difference (the two
// means' standard errors, unpaired: conservative).
const bare = [
  '# The default without a step',
  '',
  `From \`npm run experiments\` (${TRIALS} trials of 1,000-point samples, as section 1). Each cell: the default without a step (\`default\`: the step look, then as with the step it found, or AQ or the small tree) as a multiple of AQ's mean rank error (\`aq\` at its defaults), then, for m >= 50, as a multiple of the mean value error of the better tree (\`aggtree\` or \`tree-cdf\`, at their defaults). None of them is given a step: this is what a user who does not know the column's resolution gets. **Bold**: the default's mean exceeds the reference's by more than two standard errors of the difference.`,
  '',
];
const bareMisses = [];
for (const budget of ['epsilon = 1', 'rho = 1/2']) {
  bare.push(`## ${budget}`, '', `| dataset | ${M_VALUES.map((m) => `m = ${m}`).join(' | ')} |`, `| --- | ${M_VALUES.map(() => '---').join(' | ')} |`);
  for (const rows of sections) {
    const cells = M_VALUES.map((m) => {
      const at = (method) => rows.find((r) => r.budget === budget && r.m === String(m) && r.method === method);
      const own = at('default');
      if (own === undefined) return '';
      const compare = (reference, error) => {
        const a = Number(own[`mean_${error}_error`]);
        const b = Number(reference[`mean_${error}_error`]);
        const se = Math.hypot(Number(own[`${error}_error_se`]), Number(reference[`${error}_error_se`]));
        const ratio = b === 0 ? (a === 0 ? 1 : Infinity) : a / b;
        const text = ratio.toFixed(2);
        if (a - b > 2 * se) {
          bareMisses.push(`${budget}, ${rows[0].dataset}, m = ${m}: ${error} ${text} (against ${reference.method})`);
          return `**${text}**`;
        }
        return text;
      };
      const parts = [compare(at('aq'), 'rank')];
      if (m >= 50) {
        const trees = ['aggtree', 'tree-cdf'].map(at).filter((r) => r !== undefined);
        const tree = trees.sort((x, y) => Number(x.mean_value_error) - Number(y.mean_value_error))[0];
        parts.push(compare(tree, 'value'));
      }
      return parts.join(' / ');
    });
    bare.push(`| ${rows[0].dataset} | ${cells.join(' | ')} |`);
  }
  bare.push('');
}
bare.push('## Measured misses', '', ...(bareMisses.length === 0 ? ['None.'] : bareMisses.map((line) => `- ${line}`)), '');
writeFileSync(join(args.out, 'without-step.md'), `${bare.join('\n')}\n`);
