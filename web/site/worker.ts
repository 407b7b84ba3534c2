// The demo's worker: loads the WebAssembly module, holds the data, runs every
// release. The page never sees the data, only results. Here: the requests
// and the releases of data held in memory; loading (worker-data.ts), large
// files (worker-large.ts), results (worker-results.ts) and the session
// (worker-session.ts) are their own rooms.
import { DpQuantilesError } from '../../dist/browser.js';
import type { GroupOptions, QuantilesOptions } from '../../dist/browser.js';
import { rankError, tieOf } from '../../dist/truth.js';
import type { CompareRow, ReleaseSettings, Request } from './protocol.js';
import { loadBuiltin, loaded, loadFile } from './worker-data.js';
import { countedRelease, groupedCountedRelease, streamRelease } from './worker-large.js';
import { DEMO_SELECTION_DELTA, groupedResult, optionsOf, postResult } from './worker-results.js';
import { currentSession, newSession, post, ready, sessionState, takeNewestLedger } from './worker-session.js';

// AggTree takes a step of at most 2^21 grid points; in a comparison, a
// finer one would stop every method, so AggTree keeps its own leaves there.
const MAX_TREE_POINTS = 2 ** 21;

// The values of the rows that have both a number and a person, with the
// person of each: what a per-person release reads. Rows without a person
// are left out.
function valuesWithPeople(settings: ReleaseSettings): { values: Float64Array; users: string[] } {
  const person = settings.person;
  const numbers = loaded.aligned.get(settings.column);
  const names = person === undefined ? undefined : loaded.people.get(person.column);
  if (numbers === undefined || names === undefined) throw new Error('pick a column and a person column first');
  const values: number[] = [];
  const users: string[] = [];
  numbers.forEach((x, r) => {
    const name = names[r];
    if (Number.isFinite(x) && name !== null && name !== undefined) {
      values.push(x);
      users.push(name);
    }
  });
  return { values: Float64Array.from(values), users };
}

// A release by group: the rows with a number and a group; the dataset's
// documented keys when it has them, else private keys (a noisy count
// chooses the groups shown). The owner's true values per group.
async function groupedRelease(settings: ReleaseSettings, groupBy: string): Promise<void> {
  const numbers = loaded.aligned.get(settings.column);
  const cells = loaded.groupColumns.get(groupBy);
  if (numbers === undefined || cells === undefined) throw new Error('pick a column and a column to group by first');
  const perPerson = settings.person === undefined ? undefined : loaded.people.get(settings.person.column);
  const values: number[] = [];
  const groups: string[] = [];
  const users: string[] = [];
  numbers.forEach((x, r) => {
    const key = cells[r];
    const user = perPerson?.[r];
    if (!Number.isFinite(x) || key === null || key === undefined) return;
    if (perPerson !== undefined && (user === null || user === undefined)) return;
    values.push(x);
    groups.push(key);
    if (user !== null && user !== undefined) users.push(user);
  });
  const keys = loaded.publicKeys.get(groupBy);
  const options = {
    ...optionsOf(settings),
    ...(keys === undefined ? { delta: DEMO_SELECTION_DELTA } : { keys }),
    ...(settings.person === undefined
      ? {}
      : { users, maxContributions: settings.person.maxContributions, maxGroups: 1 }),
  } as GroupOptions;
  const start = performance.now();
  const made = (await currentSession()).releaseByGroup(values, groups, options);
  const milliseconds = performance.now() - start;
  const byKey = new Map<string, number[]>();
  groups.forEach((key, i) => {
    const list = byKey.get(key) ?? [];
    list.push(Math.min(Math.max(values[i], settings.lower), settings.upper));
    byKey.set(key, list);
  });
  post({
    type: 'result',
    result: groupedResult(made, settings, milliseconds, (key, q) => {
      const sorted = Float64Array.from(byKey.get(key) ?? []).sort();
      const n = sorted.length;
      return n === 0 ? NaN : sorted[Math.min(Math.floor(q * n), n - 1)];
    }),
  });
}

async function release(settings: ReleaseSettings): Promise<void> {
  const dpq = await ready;
  if (settings.groupBy !== undefined && (loaded.largeFile !== undefined || loaded.parquet !== undefined)) {
    return groupedCountedRelease(settings, settings.groupBy);
  }
  if (loaded.largeFile !== undefined) return streamRelease(dpq, loaded.largeFile, settings);
  if (loaded.parquet !== undefined) return countedRelease(loaded.parquet.file, loaded.parquet.metadata, settings);
  if (settings.groupBy !== undefined) return groupedRelease(settings, settings.groupBy);
  const all = loaded.columns.get(settings.column);
  if (all === undefined) throw new Error('pick a column first');
  // Per person: only rows that name a person, each with their person.
  const perPerson = settings.person === undefined ? undefined : valuesWithPeople(settings);
  const data = perPerson?.values ?? all;
  const start = performance.now();
  const result = (await currentSession()).release(data, {
    ...optionsOf(settings),
    ...(perPerson === undefined ? {} : { users: perPerson.users, maxContributions: settings.person?.maxContributions }),
  } as QuantilesOptions);
  const milliseconds = performance.now() - start;
  // The data owner's view: exact order statistics and the empirical CDF of
  // the data as it is, not clamped (clamped, a release with every value at
  // a bound showed rank error 0), and how much of it the bounds cut off.
  const sorted = Float64Array.from(data).sort();
  const n = sorted.length;
  let outside = 0;
  for (const x of sorted) if (x < settings.lower || x > settings.upper) outside++;
  const step = Math.max(1, Math.floor(n / 400));
  const xs: number[] = [];
  const ys: number[] = [];
  for (let i = 0; i < n; i += step) {
    xs.push(sorted[i]);
    ys.push((i + 1) / n);
  }
  if (n > 0) {
    xs.push(sorted[n - 1]);
    ys.push(1);
  }
  postResult(result, {
    milliseconds,
    truth: {
      values: settings.quantiles.map((q) => (n === 0 ? NaN : sorted[Math.min(Math.floor(q * n), n - 1)])),
      rankErrors: settings.quantiles.map((q, i) => rankError(sorted, q, result.values[i], tieOf(result.resolution, settings.lower, settings.upper))),
      cdf: [xs, ys],
      outside: n === 0 ? 0 : outside / n,
    },
  });
}

async function compare(settings: ReleaseSettings, trials: number, counts: number[], methods: string[]): Promise<void> {
  const dpq = await ready;
  const data = loaded.columns.get(settings.column);
  if (data === undefined || loaded.largeFile !== undefined || loaded.parquet !== undefined) {
    throw new Error('comparison needs a dataset held in memory (not a streamed or counted file)');
  }
  const sorted = Float64Array.from(data, (x) => Math.min(Math.max(x, settings.lower), settings.upper)).sort();
  const rows: CompareRow[] = [];
  const total = methods.length * counts.length;
  let done = 0;
  for (const method of methods) {
    for (const m of counts) {
      const quantiles = Array.from({ length: m }, (_, i) => (i + 1) / (m + 1));
      let error = 0;
      for (let t = 0; t < trials; t++) {
        const fine = settings.step !== undefined && (settings.upper - settings.lower) / settings.step >= MAX_TREE_POINTS - 1;
        const step = method === 'aggtree' && fine ? undefined : settings.step;
        const result = dpq.release(data, optionsOf({ ...settings, step, confidence: undefined }, quantiles, method));
        const tie = tieOf(result.resolution, settings.lower, settings.upper);
        error += quantiles.reduce((sum, q, i) => sum + rankError(sorted, q, result.values[i], tie), 0) / m / trials;
      }
      rows.push({ method, m, meanRankError: error });
      post({ type: 'progress', done: ++done, total, label: `${method}, m = ${m}` });
    }
  }
  post({ type: 'compared', rows });
}

// Private bounds for a column, spent from the dataset's session.
async function estimateBounds(
  column: string,
  budget: { epsilon: number } | { rho: number },
  person?: { column: string; maxContributions: number },
): Promise<void> {
  if (loaded.largeFile !== undefined || loaded.parquet !== undefined) {
    throw new Error('private bounds need the column in memory; this file is streamed or counted');
  }
  const data = loaded.columns.get(column);
  if (data === undefined) throw new Error('pick a column first');
  try {
    // Per person: the rows that name a person, each person bounded to k.
    const perPerson =
      person === undefined ? undefined : valuesWithPeople({ column, person } as ReleaseSettings);
    const b =
      perPerson === undefined
        ? (await currentSession()).bounds(data, budget)
        : (await currentSession()).bounds(perPerson.values, {
            ...budget,
            users: perPerson.users,
            maxContributions: person?.maxContributions,
          });
    post({
      type: 'bounds',
      lower: b.lower,
      upper: b.upper,
      privacy: b.privacy as Record<string, number | string>,
      neighbouring: b.neighbouring,
      session: sessionState(),
    });
  } catch (error) {
    // NOT_ENOUGH_DATA spent the budget too: the page shows the session.
    if (error instanceof DpQuantilesError && error.code === 'NOT_ENOUGH_DATA') {
      post({ type: 'error', code: error.code, message: error.message, session: sessionState() });
      return;
    }
    throw error;
  }
}

self.onmessage = async (event: MessageEvent<Request>) => {
  const request = event.data;
  try {
    if (request.type === 'builtin') await loadBuiltin(request.id, request.ledger);
    else if (request.type === 'file') await loadFile(request.file, request.ledger);
    else if (request.type === 'new-budget') newSession();
    else if (request.type === 'release') {
      takeNewestLedger(request.ledger);
      await release(request.settings);
    } else if (request.type === 'bounds') {
      takeNewestLedger(request.ledger);
      await estimateBounds(request.column, request.budget, request.person);
    }
    else await compare(request.settings, request.trials, request.counts, request.methods);
  } catch (error) {
    if (error instanceof DpQuantilesError) post({ type: 'error', code: error.code, message: error.message });
    else post({ type: 'error', code: 'DEMO', message: error instanceof Error ? error.message : String(error) });
  }
};
