// The demo page: settings in, private results out. All data and computation
// live in the worker (worker.ts); cancelling replaces the worker.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

import datasetList from './generated/dataset-list.json';
import type { SavedSession } from '../../dist/browser.js';
import type { CompareRow, ReleaseResult, ReleaseSettings, Reply, Request } from './protocol.js';

const METHODS: [string, string][] = [
  ['auto', 'Automatic (default): AggTree on a coarse step grid with many quantiles, else ApproximateQuantiles; the result names the one that ran.'],
  ['aq', 'ApproximateQuantiles: the best all-rounder for many quantiles.'],
  ['jointexp', 'JointExp: one exponential mechanism over all quantiles; strong for a few, slow for many.'],
  ['inverse-sensitivity', 'Inverse sensitivity: like JointExp; protects a replaced row, with the row count public.'],
  ['hs-jointexp', 'HSJointExp: JointExp on jittered data, for columns with many repeated values.'],
  ['appindexp', 'AppIndExp: one independent mechanism per quantile (a baseline).'],
  ['aggtree', 'AggTree: a tree of noisy counts; cost independent of the number of quantiles.'],
  ['tree-cdf', 'Tree CDF: a monotone noisy CDF from a binary tree of counts.'],
];
const STREAM_METHODS: [string, string][] = [
  ['hist-gk', 'DPHistGK: noisy histogram from a bounded-memory sketch (large files).'],
  ['exp-gk', 'DPExpGK: exponential mechanism on the sketch; protects a replaced row, row count public.'],
];
// The joint methods stop being sensible past a few dozen quantiles (JointExp
// at 99 percentiles of 1,461 values: rank errors up to 175, against a few
// for AQ) and slow down with m^2: the menu offers them up to this many.
const JOINT_METHODS = new Set(['jointexp', 'inverse-sensitivity', 'hs-jointexp']);
const MOST_JOINT_QUANTILES = 20;
const COMPARE_COUNTS = [1, 2, 4, 8, 16, 32];
// A log axis has no 0: an exact release (rank error 0) is drawn here.
const ZERO_ERROR = 0.01;

// One notation on this page, the one its budget field uses: ε, ρ and δ. The
// library says epsilon, rho and delta (its options' names); its messages and
// privacy records are shown in the page's letters.
const GREEK: Record<string, string> = { epsilon: 'ε', rho: 'ρ', delta: 'δ' };
function greek(text: string): string {
  return text.replace(/\b(epsilon|rho|delta)\b/g, (name) => GREEK[name]);
}
// A privacy record or budget ({ kind, epsilon, delta } ...) as 'ε = 1, δ = 1e-6'
// (a zero δ left out; tiny amounts in exponent form).
function budgetText(budget: Record<string, number | string>): string {
  return Object.entries(budget)
    .filter(([key, value]) => key in GREEK && !(key === 'delta' && value === 0))
    .map(([key, value]) => {
      const amount = Number(value);
      // As the library's messages and JSON write numbers (JavaScript's
      // String): δ = 0.000001 here and there alike.
      return `${GREEK[key]} = ${String(Number(amount.toPrecision(4)))}`;
    })
    .join(', ');
}

/** Public facts about a built-in column: never read off its data. */
interface ColumnAbout {
  unit: string;
  lower: number;
  upper: number;
  step: number;
  why: string;
}
const datasets = datasetList as unknown as { id: string; label: string; about: Record<string, ColumnAbout> }[];

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const datasetSelect = $<HTMLSelectElement>('dataset');
const fileInput = $<HTMLInputElement>('file');
const drop = $<HTMLDivElement>('drop');
const columnSelect = $<HTMLSelectElement>('column');
const methodSelect = $<HTMLSelectElement>('method');
const personSelect = $<HTMLSelectElement>('person-column');
const groupSelect = $<HTMLSelectElement>('group-by');
groupSelect.onchange = () => clearResults();
personSelect.onchange = () => {
  $('k-row').hidden = personSelect.value === '';
  clearResults();
};
const preset = $<HTMLSelectElement>('preset');
const custom = $<HTMLInputElement>('custom');
const runButton = $<HTMLButtonElement>('run');
const cancelButton = $<HTMLButtonElement>('cancel');
const compareButton = $<HTMLButtonElement>('compare');
const progressBox = $<HTMLDivElement>('progress-box');
const progress = $<HTMLProgressElement>('progress');

let worker: Worker;
let source: Request = { type: 'builtin', id: datasets[0].id };
let large = false;
// ?workers=N on the page's address: sketch workers for large files (testing
// and comparing; by default one per core, at most four).
const SKETCH_WORKERS = ((n) => (Number.isInteger(n) && n >= 1 ? n : undefined))(
  Number(new URLSearchParams(location.search).get('workers') ?? Number.NaN),
);
// A Parquet file: counted per bucket at each release, never held.
let counted = false;
let onReply: (reply: Reply) => void = () => {};

function startWorker(): void {
  worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' });
  worker.onmessage = (event: MessageEvent<Reply>) => onReply(event.data);
  worker.postMessage(withLedger(source));
}

// Each dataset's session ledger lives in localStorage (workers have none),
// so the budget shown survives a reload: the page hands it to the worker
// with the data, and keeps the ledger each release sends back. Deleting a
// ledger gives no privacy back; "New budget" asks first.
function ledgerKey(request: Request): string | undefined {
  if (request.type === 'builtin') return `dp-quantiles-ledger:builtin:${request.id}`;
  if (request.type === 'file') {
    const { name, size, lastModified } = request.file;
    return `dp-quantiles-ledger:file:${name}:${size}:${lastModified}`;
  }
  return undefined;
}

function storedLedger(request: Request): SavedSession | undefined {
  const key = ledgerKey(request);
  const text = key === undefined ? null : localStorage.getItem(key);
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as SavedSession;
  } catch {
    return undefined;
  }
}

function withLedger(request: Request): Request {
  const ledger = storedLedger(request);
  return ledger === undefined || (request.type !== 'builtin' && request.type !== 'file') ? request : { ...request, ledger };
}

// Sends a release or bounds request with the dataset's newest ledger, under
// a lock on it shared by every tab of the page (the Web Locks API), held
// until the reply has been kept: read, release and write are one step, so
// two tabs cannot both spend from the same balance.
function sendSpending(
  request: Extract<Request, { type: 'release' } | { type: 'bounds' }>,
  label: string,
  done: (reply: Reply) => boolean,
): void {
  const key = ledgerKey(source);
  const step = () =>
    new Promise<void>((resolve) => {
      const ledger = storedLedger(source);
      send(
        ledger === undefined ? request : { ...request, ledger },
        label,
        (reply) => {
          const finished = done(reply);
          if (finished) resolve();
          return finished;
        },
        (message) => {
          markStale(`the last request failed (${message}).`);
          resolve();
        },
      );
    });
  if (key !== undefined && navigator.locks !== undefined) {
    // Busy from the click on: the lock may wait for another tab's release.
    setBusy(true, 'Waiting for another tab…');
    void navigator.locks.request(key, step);
  } else {
    void step();
  }
}

function keepLedger(session: ReleaseResult['session']): void {
  const key = ledgerKey(source);
  if (session !== undefined && key !== undefined) localStorage.setItem(key, JSON.stringify(session.ledger));
}

function setBusy(busy: boolean, label = 'Working…'): void {
  runButton.disabled = busy;
  $<HTMLButtonElement>('estimate-bounds').disabled = busy || large || counted;
  compareButton.disabled = busy || large || counted;
  cancelButton.disabled = !busy;
  progressBox.hidden = !busy;
  $('progress-label').textContent = label;
  progress.removeAttribute('value');
}

function showError(code: string, message: string): void {
  // Each error goes next to the field it is about.
  const target: Record<string, string> = {
    INVALID_BOUNDS: 'bounds-error',
    INVALID_PRIVACY: 'budget-error',
    INVALID_QUANTILES: 'quantiles-error',
    INVALID_OPTION: 'option-error',
    INVALID_ARGUMENT: 'bounds-error',
    NOT_ENOUGH_DATA: 'bounds-error',
  };
  $(target[code] ?? 'data-error').textContent = greek(message);
}

// Results on screen that no longer match the settings (the last request
// failed, or the data changed) are greyed and labelled, never left as if
// current.
function markStale(why: string | undefined): void {
  const stale = why !== undefined && !$('results').hidden;
  $('results-box').classList.toggle('stale-results', stale);
  $('stale').hidden = !stale;
  $('stale').textContent = stale ? `The results below are from an earlier release, not these settings: ${why}` : '';
  if (why !== undefined && !$('compare-figure').hidden) $('compare-figure').classList.add('stale-results');
}

function clearResults(): void {
  markStale(undefined);
  $('results').hidden = true;
  $('group-results').hidden = true;
  $('group-note').hidden = true;
  $('groups-figure').hidden = true;
  $('cdf-figure').hidden = true;
  $('compare-figure').hidden = true;
  $('compare-figure').classList.remove('stale-results');
  $('summary').textContent = '';
  $('summary-owner').hidden = true;
}

function clearSession(): void {
  $('new-budget').hidden = true;
  $('session-summary').hidden = true;
  $('session-summary').textContent = '';
}

function clearErrors(): void {
  for (const id of ['bounds-error', 'budget-error', 'quantiles-error', 'option-error', 'data-error']) {
    $(id).textContent = '';
  }
}

function fillMethods(): void {
  const list = large ? STREAM_METHODS : METHODS;
  methodSelect.replaceChildren(...list.map(([value]) => new Option(value, value)));
  limitMethods();
  $('alpha-row').hidden = !large;
  compareButton.disabled = large || counted;
  $('compare-note').textContent = large
    ? 'Comparison is off for this file: it is streamed (over 16 MB), and a comparison reruns every mechanism on data held in memory.'
    : counted
      ? 'Comparison is off for Parquet files: they are counted per bucket at each release, not held in memory.'
      : '';
  describeMethod();
}

// Past MOST_JOINT_QUANTILES, the joint methods are shown but not offered,
// and a selected one gives way to the default, saying why.
function limitMethods(): void {
  const many = quantiles().length > MOST_JOINT_QUANTILES;
  let moved = false;
  for (const option of methodSelect.options) {
    if (!JOINT_METHODS.has(option.value)) continue;
    option.disabled = many;
    option.textContent = many ? `${option.value} (up to ${MOST_JOINT_QUANTILES} quantiles)` : option.value;
    if (many && option.selected) moved = true;
  }
  if (moved) {
    methodSelect.value = 'auto';
    describeMethod();
    $('method-help').textContent =
      `The joint methods are for up to ${MOST_JOINT_QUANTILES} quantiles (with more their error grows far past AQ's and they slow down): ` +
      $('method-help').textContent;
  }
}

function describeMethod(): void {
  const entry = [...METHODS, ...STREAM_METHODS].find(([value]) => value === methodSelect.value);
  $('method-help').textContent = entry?.[1] ?? '';
}

function quantiles(): number[] {
  const choice = preset.value;
  if (choice === 'deciles') return Array.from({ length: 9 }, (_, i) => (i + 1) / 10);
  if (choice === 'percentiles') return Array.from({ length: 99 }, (_, i) => (i + 1) / 100);
  if (choice === 'custom') return custom.value.split(/[,\s]+/).filter(Boolean).map(Number);
  return choice.split(',').map(Number);
}

// Numbers as typed: an empty or malformed field becomes NaN, and the library's
// own error names the problem. A decimal comma ("0,5", as many locales write
// it) is read as a decimal point; a comma with a point too stays malformed.
function number(id: string): number {
  const text = $<HTMLInputElement>(id).value.trim();
  if (text === '') return Number.NaN;
  return Number(/^[+-]?\d*,\d+$/.test(text) ? text.replace(',', '.') : text);
}

// Budgets outside the usual range are allowed, with a word of warning.
function checkBudget(): void {
  const kind = (document.querySelector('input[name="budget"]:checked') as HTMLInputElement).value;
  const value = number('budget-value');
  let warning = '';
  if (Number.isFinite(value) && value > 0) {
    const [low, high] = kind === 'rho' ? [5e-5, 50] : [0.01, 10];
    if (value > high) warning = `${kind === 'rho' ? 'ρ' : 'ε'} = ${value} is very large: the guarantee protects almost nothing.`;
    else if (value < low) warning = `${kind === 'rho' ? 'ρ' : 'ε'} = ${value} is very small: expect results that are mostly noise.`;
  }
  $('budget-warning').textContent = warning;
}

// The bounds the hint under them describes (filled in or estimated), so the
// hint never outlives them: once the fields differ, it says so.
let described: { lower: string; upper: string; step: string; text: string } | undefined;

function describeBounds(text: string): void {
  const field = (id: string) => $<HTMLInputElement>(id).value.trim();
  described = text === '' ? undefined : { lower: field('lower'), upper: field('upper'), step: field('step'), text };
  $('bounds-help').textContent = text;
}

function boundsEdited(): void {
  if (described === undefined) return;
  const field = (id: string) => $<HTMLInputElement>(id).value.trim();
  const same = field('lower') === described.lower && field('upper') === described.upper && field('step') === described.step;
  $('bounds-help').textContent = same
    ? described.text
    : `Your own bounds: the ones described here were ${described.lower} to ${described.upper}` +
      (described.step === '' ? '' : `, step ${described.step}`) +
      ' (type them back to use them).';
}

// A built-in column's public bounds and step, with their reason.
function suggestBounds(): void {
  const current = source;
  const about = current.type === 'builtin' ? datasets.find((d) => d.id === current.id)?.about[columnSelect.value] : undefined;
  if (about === undefined) {
    // Your own file: nothing is known about it, so nothing is suggested, and
    // bounds typed or filled in for another file or column must not linger
    // (they made every private value sit at a bound, silently).
    const had = ['lower', 'upper', 'step'].some((id) => $<HTMLInputElement>(id).value.trim() !== '');
    for (const id of ['lower', 'upper', 'step']) $<HTMLInputElement>(id).value = '';
    describeBounds('');
    if (current.type === 'file' && had) {
      $('bounds-help').textContent = `New data (${columnSelect.value}): the bounds were cleared; type this column's public bounds.`;
    }
    return;
  }
  $<HTMLInputElement>('lower').value = String(about.lower);
  $<HTMLInputElement>('upper').value = String(about.upper);
  $<HTMLInputElement>('step').value = String(about.step);
  describeBounds(
    `Filled in for ${columnSelect.value} (${about.unit}): ${about.lower} to ${about.upper}, step ${about.step}. ` +
      `Public knowledge, not the data: ${about.why}.`,
  );
}

function settings(): ReleaseSettings {
  const kind = (document.querySelector('input[name="budget"]:checked') as HTMLInputElement).value;
  const value = number('budget-value');
  return {
    column: columnSelect.value,
    lower: number('lower'),
    upper: number('upper'),
    quantiles: quantiles(),
    budget: kind === 'rho' ? { rho: value } : { epsilon: value },
    method: methodSelect.value,
    step: $<HTMLInputElement>('step').value.trim() === '' ? undefined : number('step'),
    alpha: large ? number('alpha') : undefined,
    workers: SKETCH_WORKERS,
    confidence: $<HTMLInputElement>('intervals').checked && !large ? 0.95 : undefined,
    interval: $<HTMLSelectElement>('interval-kind').value as ReleaseSettings['interval'],
    simultaneous: $<HTMLInputElement>('simultaneous').checked,
    person:
      personSelect.value === '' || large
        ? undefined
        : { column: personSelect.value, maxContributions: number('max-contributions') },
    groupBy: groupSelect.value === '' ? undefined : groupSelect.value,
  };
}

function format(x: number): string {
  return Number.isFinite(x) ? x.toPrecision(6).replace(/\.?0+$/, '') : '—';
}

let cdfPlot: uPlot | undefined;
let comparePlot: uPlot | undefined;

// Spending is cumulative per dataset: two releases spend twice.
function showSession(session: ReleaseResult['session']): void {
  keepLedger(session);
  $('new-budget').hidden = session === undefined;
  $('session-summary').hidden = session === undefined;
  if (session !== undefined) {
    $('session-summary').textContent =
      `Spent on this dataset so far: ${budgetText(session.spent)} in ${session.releases} release${session.releases === 1 ? '' : 's'}, ` +
      `of a session total of ${budgetText(session.total)}. Every release adds to it, and the budget is kept across reloads of this page.`;
  }
}

// A release by group: the summary, a table of (group, quantile) rows, and
// the small multiples (one row a group on one shared axis).
// What the default's step look spent and found (public), for a summary.
function stepLookText(result: ReleaseResult, where: string): string {
  if (result.stepLook === undefined) return '';
  return (
    ` It first looked ${where}for the values' step with ${result.stepLook.share * 100}% of that: ` +
    (result.stepLook.step === null
      ? 'none found, so the finest grid.'
      : `found ${format(result.stepLook.step)}, so values are multiples of it.`)
  );
}

function showGroups(result: ReleaseResult, asked: ReleaseSettings): void {
  const groups = result.groups ?? [];
  const privacy = budgetText(result.privacy);
  $('summary').textContent =
    `${result.method}: ${asked.quantiles.length} quantile${asked.quantiles.length === 1 ? '' : 's'} for each of ` +
    `${groups.length} group${groups.length === 1 ? '' : 's'} of ${asked.groupBy} in ${result.milliseconds.toFixed(1)} ms, ` +
    `spending ${privacy} once for all of them (each group holds different rows)` +
    (result.keys === 'private' ? '; the groups shown were chosen by a noisy count of their rows.' : '.') +
    (result.maxContributions === undefined ? '' : ` Each person counted in one group, with at most ${result.maxContributions} value${result.maxContributions === 1 ? '' : 's'}.`) +
    stepLookText(result, 'over every group ');
  showSession(result.session);
  $('summary-owner').hidden = true;
  markStale(undefined);
  $('results').hidden = true;
  $('cdf-figure').hidden = true;
  cdfPlot?.destroy();
  cdfPlot = undefined;
  const intervals = groups.some((g) => g.low !== undefined);
  $('group-interval-header').hidden = !intervals;
  $<HTMLTableElement>('group-results').tBodies[0].replaceChildren(
    ...groups.flatMap((group) =>
      asked.quantiles.map((q, i) => {
        const row = document.createElement('tr');
        if (group.look !== undefined) row.dataset.look = group.look.found === undefined ? 'none' : 'found';
        const cells = [
          i === 0 ? group.key : '',
          format(q),
          format(group.values[i]),
          ...(intervals ? [group.low === undefined ? '—' : `${format(group.low[i])} to ${format((group.high as number[])[i])}`] : []),
          format(group.truth?.[i] ?? Number.NaN),
        ];
        cells.forEach((text, c) => {
          const cell = document.createElement(c === 0 ? 'th' : 'td');
          if (c === 0) cell.setAttribute('scope', 'row');
          if (c === cells.length - 1) cell.className = 'owner';
          cell.textContent = text;
          row.append(cell);
        });
        return row;
      }),
    ),
  );
  $('group-results').hidden = false;
  showUnplacedTails(groups, asked);
  drawGroups(groups, asked);
}

// Groups whose first look found no bin holding many of their values draw
// their tails almost as if the values could lie anywhere in the bounds:
// penguins by species in 0-10 kg, p95 and p99, ε = 1: a value off by over
// 1 kg in 84-91% of such groups' releases, 26-37% where the look found the
// values (docs/groups.md). Said where tails are asked; public results only.
const TAIL_QUANTILE = 0.1;
function showUnplacedTails(groups: NonNullable<ReleaseResult['groups']>, asked: ReleaseSettings): void {
  const note = $('group-note');
  const tails = asked.quantiles.filter((q) => q <= TAIL_QUANTILE || q >= 1 - TAIL_QUANTILE);
  const unplaced = groups.filter((g) => g.look !== undefined && g.look.found === undefined).map((g) => g.key);
  note.hidden = tails.length === 0 || unplaced.length === 0;
  const one = unplaced.length === 1;
  const named =
    tails.length <= 4
      ? tails.map((q) => format(q)).join(', ')
      : `the quantiles at or below ${format(TAIL_QUANTILE)} and at or above ${format(1 - TAIL_QUANTILE)}`;
  note.textContent = note.hidden
    ? ''
    : `Tails far from the data, likely, for ${unplaced.join(', ')}: ${one ? 'its' : 'each one\'s'} first look found ` +
      `no part of the bounds holding many of ${one ? 'its' : 'their'} values, so ${named} ` +
      `${tails.length === 1 ? 'is' : 'are'} drawn almost as if the values could lie anywhere between the bounds. ` +
      `Tails of small groups stay uncertain even where a look found the values; intervals show how much. ` +
      `Narrower bounds or a larger budget help.`;
}

// Round ticks over [low, high]: steps of 1, 2 or 5 times a power of ten,
// at most `most` of them (a chart's axis, public values only).
function niceTicks(low: number, high: number, most: number): number[] {
  const span = high - low;
  const power = 10 ** Math.floor(Math.log10(span / most));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => span / s <= most) ?? 10 * power;
  const ticks: number[] = [];
  for (let t = Math.ceil(low / step) * step; t <= high + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

// The unit of the column asked about: a built-in column's, else none.
function unitOf(column: string): string {
  const current = source;
  return current.type === 'builtin' ? (datasets.find((d) => d.id === current.id)?.about[column]?.unit ?? '') : '';
}

// The small multiples as SVG: a row per group, the private quantiles (dots
// joined by a line), their intervals (bars) and the owner's true values
// (open circles), on one x axis spanning every value drawn, with round
// ticks and the column's unit. Drawn at the width it is shown at (never
// scaled down: labels stay 12 px on a phone).
function drawGroups(groups: NonNullable<ReleaseResult['groups']>, asked: ReleaseSettings): void {
  const svgNs = 'http://www.w3.org/2000/svg';
  const figure = $('groups-figure');
  const chart = $('groups-chart');
  if (groups.length === 0) {
    figure.hidden = true;
    return;
  }
  figure.hidden = false; // (measured below)
  const all = groups.flatMap((g) => [...g.values, ...(g.low ?? []), ...(g.high ?? []), ...(g.truth ?? [])]).filter(Number.isFinite);
  let low = Math.min(...all);
  let high = Math.max(...all);
  if (!(high > low)) {
    low -= 1;
    high += 1;
  }
  const width = Math.max(280, Math.min(720, chart.clientWidth || figure.clientWidth || 720));
  const keyOf = (key: string | string[]) => (Array.isArray(key) ? key.join(' · ') : key);
  // Labels up to a third of the width, about 7 px a character at 12 px.
  const longest = Math.max(...groups.map((g) => keyOf(g.key).length));
  const label = Math.min(Math.round(width / 3), 12 + 7 * longest);
  const row = 28;
  const plotLeft = label + 8;
  const plotRight = width - 16;
  const height = groups.length * row + 44;
  const x = (v: number) => plotLeft + ((v - low) / (high - low)) * (plotRight - plotLeft);
  const svg = document.createElementNS(svgNs, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
  svg.setAttribute('role', 'img');
  const unit = unitOf(asked.column);
  svg.setAttribute(
    'aria-label',
    `Private quantiles ${asked.quantiles.map(format).join(', ')} of ${asked.column}${unit === '' ? '' : ` (${unit})`} by ${asked.groupBy}: ` +
      groups.map((g) => `${keyOf(g.key)} ${g.values.map(format).join(', ')}`).join('; '),
  );
  const add = (name: string, attributes: Record<string, string | number>, text?: string) => {
    const element = document.createElementNS(svgNs, name);
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
    if (text !== undefined) element.textContent = text;
    svg.append(element);
    return element;
  };
  groups.forEach((group, r) => {
    const y = r * row + row / 2;
    const name = keyOf(group.key);
    // A label too long for its space ends in an ellipsis; the table has it whole.
    const room = Math.max(3, Math.floor((label - 4) / 7));
    add('text', { x: label, y: y + 4, 'text-anchor': 'end', class: 'group-label' }, name.length > room ? `${name.slice(0, room - 1)}…` : name);
    const finite = group.values.filter(Number.isFinite);
    add('line', { x1: x(Math.min(...finite)), x2: x(Math.max(...finite)), y1: y, y2: y, class: 'group-span' });
    group.values.forEach((v, i) => {
      if (group.low !== undefined && group.high !== undefined) {
        add('line', { x1: x(group.low[i]), x2: x(group.high[i]), y1: y + 6, y2: y + 6, class: 'group-interval' });
      }
      add('circle', { cx: x(v), cy: y, r: 4, class: 'group-private' });
      const truth = group.truth?.[i];
      if (truth !== undefined && Number.isFinite(truth)) add('circle', { cx: x(truth), cy: y, r: 6, class: 'group-truth' });
    });
  });
  const axis = groups.length * row + 6;
  add('line', { x1: plotLeft, x2: plotRight, y1: axis, y2: axis, class: 'group-axis' });
  // Ticks a tick label apart (about 7 px a character, and a gap).
  const ticks = niceTicks(low, high, Math.max(2, Math.floor((plotRight - plotLeft) / 56)));
  for (const t of ticks) {
    add('line', { x1: x(t), x2: x(t), y1: axis, y2: axis + 4, class: 'group-axis' });
    add('text', { x: x(t), y: axis + 16, 'text-anchor': 'middle', class: 'group-tick' }, format(t));
  }
  add('text', { x: plotRight, y: axis + 32, 'text-anchor': 'end', class: 'group-tick' }, `${asked.column}${unit === '' ? '' : ` (${unit})`}`);
  chart.replaceChildren(svg);
}

function showResult(result: ReleaseResult, asked: ReleaseSettings): void {
  if (result.groups !== undefined) {
    showGroups(result, asked);
    return;
  }
  $('group-results').hidden = true;
  $('group-note').hidden = true;
  $('groups-figure').hidden = true;
  const privacy = budgetText(result.privacy);
  $('summary').textContent =
    `${result.method}: ${asked.quantiles.length} quantile${asked.quantiles.length === 1 ? '' : 's'} in ` +
    `${result.milliseconds.toFixed(1)} ms, spending ${privacy} ` +
    `(neighbouring: ${result.neighbouring}` +
    (result.maxContributions === undefined
      ? ').'
      : `: each person kept at most ${result.maxContributions} value${result.maxContributions === 1 ? '' : 's'}).`) +
    stepLookText(result, '') +
    (result.firstLook === undefined
      ? ''
      : ` Its first look, ${Math.round(result.firstLook.share * 100)}% of that, ` +
        // Where it saw most of them (past two noise scales): on values
        // spread over the bounds, the span past five (`found`) is a part.
        (result.firstLook.seen === undefined
          ? 'saw no clear place where the values lie.'
          : `saw the values between ${format(result.firstLook.seen[0])} and ${format(result.firstLook.seen[1])}.`)) +
    (result.intervals === undefined
      ? ''
      : ` The ${Math.round(result.intervals.confidence * 100)}% ` +
        `${result.intervals.kind === 'population' ? 'population ' : ''}intervals` +
        `${result.intervals.simultaneous ? ', holding all at once,' : ''} spent ` +
        budgetText(result.intervals.privacy) +
        ' of it.');
  showSession(result.session);
  // The row count is not private: it goes with the owner-only values.
  const outside = result.truth?.outside ?? 0;
  $('summary-owner').hidden = result.streamed === undefined && result.counted === undefined && outside <= 0.5;
  $('summary-owner').textContent = outside > 0.5
    ? `Owner only, not private: ${Math.round(outside * 100)}% of the values lie outside the bounds ` +
      `${format(asked.lower)} to ${format(asked.upper)} and were clamped to them, so the private values sit at a bound. ` +
      'Choose bounds that cover the data.'
    : result.streamed
    ? `Owner only, not private: streamed ${result.streamed.values.toLocaleString('en')} values through a ` +
      `${Math.round(result.streamed.sketchBytes / 1024)} KiB sketch` +
      (result.streamed.workers > 1 ? `, sketched on ${result.streamed.workers} cores and merged.` : '.')
    : result.counted
      ? `Owner only, not private: counted ${result.counted.values.toLocaleString('en')} values into ` +
        `${result.counted.buckets.toLocaleString('en')} buckets of width ${format(result.counted.width)}; ` +
        'only the counts reached the library, and values are bucket lower edges. True values are to the bucket.'
      : '';
  markStale(undefined);
  $('interval-header').hidden = result.intervals === undefined;
  $('interval-header').textContent =
    `Private 95% interval${result.intervals?.simultaneous ? 's, all at once' : ''}` +
    (result.intervals?.kind === 'population' ? ' (population)' : '');
  const body = $<HTMLTableElement>('results').tBodies[0];
  body.replaceChildren(
    ...asked.quantiles.map((q, i) => {
      const row = document.createElement('tr');
      // The interval column only when intervals were asked for (it would
      // not fit a phone otherwise).
      const interval = result.intervals === undefined
        ? []
        : [`${format(result.intervals.low[i])} to ${format(result.intervals.high[i])}`];
      const owner = format(result.truth?.values[i] ?? Number.NaN);
      const cells = [format(q), format(result.values[i]), ...interval, owner,
        result.truth ? String(result.truth.rankErrors[i]) : 'not kept (streamed)'];
      cells.forEach((text, c) => {
        const cell = document.createElement(c === 0 ? 'th' : 'td');
        if (c === 0) cell.setAttribute('scope', 'row');
        if (c >= 2 + interval.length) cell.className = 'owner';
        cell.textContent = text;
        row.append(cell);
      });
      return row;
    }),
  );
  $('results').hidden = false;
  const figure = $('cdf-figure');
  cdfPlot?.destroy();
  cdfPlot = undefined;
  if (result.truth === undefined) {
    figure.hidden = true;
    return;
  }
  figure.hidden = false;
  // Private quantiles drawn at their requested level on the true CDF.
  const [xs, ys] = result.truth.cdf;
  const points = asked.quantiles.map((q, i) => [result.values[i], q] as const).sort((a, b) => a[0] - b[0]);
  // The x scale also spans the intervals, so their bars fit the plot.
  const ends = result.intervals === undefined ? [] : [...result.intervals.low, ...result.intervals.high];
  const allX = [...new Set([...xs, ...points.map((p) => p[0]), ...ends])].sort((a, b) => a - b);
  const yAt = new Map(xs.map((x, i) => [x, ys[i]]));
  // Every private quantile is drawn, those that share a value too (an atom:
  // 0 mm of rain for the first five deciles), in the draw hook below; one
  // point per x in the series' data would keep only one of them.
  $('cdf-chart').dataset.privatePoints = String(points.length);
  cdfPlot = new uPlot(
    {
      width: Math.min(720, $('cdf-chart').clientWidth || 720),
      height: 300,
      scales: { x: { time: false }, y: { range: [0, 1] } },
      series: [
        {},
        { label: 'true CDF (owner only)', stroke: '#555', spanGaps: true },
        { label: 'private quantiles', stroke: '#c0392b', width: 0, points: { show: true, size: 8, fill: '#c0392b' } },
      ],
      axes: [{ label: asked.column }, { label: 'fraction of rows' }],
      // Static legend: series names, not "--" placeholders for hovered values.
      legend: { live: false },
      // Private intervals as horizontal error bars at each quantile's level.
      hooks: {
        draw: [
          (u: uPlot) => {
            const context = u.ctx;
            context.save();
            context.fillStyle = '#c0392b';
            for (const [x, q] of points) {
              context.beginPath();
              context.arc(u.valToPos(x, 'x', true), u.valToPos(q, 'y', true), 4 * devicePixelRatio, 0, 2 * Math.PI);
              context.fill();
            }
            context.restore();
          },
          (u: uPlot) => {
            const intervals = result.intervals;
            if (intervals === undefined) return;
            const context = u.ctx;
            context.save();
            context.beginPath();
            context.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
            context.clip();
            context.strokeStyle = '#c0392b';
            context.lineWidth = 2 * devicePixelRatio;
            asked.quantiles.forEach((q, i) => {
              const y = u.valToPos(q, 'y', true);
              const x0 = u.valToPos(intervals.low[i], 'x', true);
              const x1 = u.valToPos(intervals.high[i], 'x', true);
              const tick = 4 * devicePixelRatio;
              context.beginPath();
              context.moveTo(x0, y);
              context.lineTo(x1, y);
              context.moveTo(x0, y - tick);
              context.lineTo(x0, y + tick);
              context.moveTo(x1, y - tick);
              context.lineTo(x1, y + tick);
              context.stroke();
            });
            context.restore();
          },
        ],
      },
    },
    [allX, allX.map((x) => yAt.get(x) ?? null), allX.map(() => null)],
    $('cdf-chart'),
  );
}

function showComparison(rows: CompareRow[]): void {
  const methods = [...new Set(rows.map((r) => r.method))];
  const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2'];
  comparePlot?.destroy();
  // The canvas's axes, legend and lines, in words.
  const xLabel = 'quantiles released together (m)';
  const yLabel = 'mean rank error per quantile (rows)';
  $('compare-chart').setAttribute('role', 'img');
  $('compare-chart').setAttribute(
    'aria-label',
    `${yLabel} against ${xLabel} from ${COMPARE_COUNTS[0]} to ${COMPARE_COUNTS[COMPARE_COUNTS.length - 1]}, ` +
      `log scales, one line per mechanism: ${methods.join(', ')}`,
  );
  $('compare-figure').hidden = false;
  $('compare-figure').classList.remove('stale-results');
  comparePlot = new uPlot(
    {
      width: Math.min(720, $('compare-chart').clientWidth || 720),
      height: 320,
      // Base-2 x axis over exactly the counts run (1, 2, 4, ..., 32), so every
      // tick is a point; a log-10 axis ran to 100 with ticks at 1 and 10.
      scales: {
        x: { time: false, distr: 3, log: 2, range: [COMPARE_COUNTS[0], COMPARE_COUNTS[COMPARE_COUNTS.length - 1]] },
        y: { distr: 3 },
      },
      series: [{ label: 'quantiles' }, ...methods.map((m, i) => ({ label: m, stroke: palette[i % palette.length] }))],
      axes: [
        { label: xLabel, splits: () => COMPARE_COUNTS },
        { label: yLabel },
      ],
      legend: { live: false },
    },
    [
      COMPARE_COUNTS,
      ...methods.map((m) =>
        COMPARE_COUNTS.map((c) => Math.max(rows.find((r) => r.method === m && r.m === c)?.meanRankError ?? NaN, ZERO_ERROR)),
      ),
    ],
    $('compare-chart'),
  );
}

function send(
  request: Request,
  label: string,
  done: (reply: Reply) => boolean,
  onError: (message: string) => void = (message) => markStale(`the last request failed (${message}).`),
): void {
  clearErrors();
  setBusy(true, label);
  onReply = (reply) => {
    if (reply.type === 'progress') {
      progress.max = reply.total;
      progress.value = reply.done;
      $('progress-label').textContent = `${label} ${Math.round((100 * reply.done) / reply.total)}% (${reply.label})`;
      return;
    }
    if (reply.type === 'error') {
      setBusy(false);
      showError(reply.code, reply.message);
      if (reply.session !== undefined) showSession(reply.session);
      onError(greek(reply.message));
      return;
    }
    if (done(reply)) setBusy(false);
  };
  worker.postMessage(request);
}

function load(request: Request): void {
  source = request;
  request = withLedger(request);
  clearErrors();
  clearResults();
  clearSession();
  // Until the new data is read, nothing from the old one stays selectable.
  columnSelect.replaceChildren();
  $('column-info').textContent = '';
  const failed = (message: string) => {
    large = false;
    counted = false;
    fillMethods();
    $('column-info').textContent = `No data loaded: ${message}`;
  };
  send(request, 'Loading…', (reply) => {
    if (reply.type !== 'columns') return false;
    large = reply.large;
    counted = reply.counted === true;
    columnSelect.replaceChildren(...reply.columns.map((c) => new Option(c.name, c.name)));
    personSelect.replaceChildren(new Option('one row (each value)', ''), ...reply.people.map((name) => new Option(`one person, by ${name}`, name)));
    groupSelect.replaceChildren(new Option('(no grouping)', ''), ...reply.groups.map((name) => new Option(name, name)));
    groupSelect.value = reply.groupBy ?? '';
    $('group-row').hidden = reply.groups.length === 0;
    $('group-help').hidden = reply.groups.length === 0;
    $('person-fieldset').hidden = reply.people.length === 0;
    $('k-row').hidden = true;
    const describe = () => {
      const info = reply.columns.find((c) => c.name === columnSelect.value);
      $('column-info').textContent = reply.large
        ? `${reply.name}: a large file, streamed in bounded memory when you release.`
        : reply.counted
          ? `${reply.name}: a Parquet file of ${reply.rows.toLocaleString('en')} rows. At each release the column is read ` +
            'one row group at a time and counted into buckets; no row is held, and only the counts reach the library.'
          : info === undefined
          ? 'No numeric column found.'
          : `${reply.name}: ${info.numbers.toLocaleString('en')} ${info.numbers === 1 ? 'number' : 'numbers'}` +
            (info.others > 0
              ? `; ${info.others.toLocaleString('en')} ${info.others === 1 ? 'row is' : 'rows are'} empty or not numbers and ${info.others === 1 ? 'is' : 'are'} left out.`
              : '.');
    };
    columnSelect.onchange = () => {
      describe();
      suggestBounds();
      clearResults();
    };
    describe();
    suggestBounds();
    fillMethods();
    // What this dataset's saved ledger says was spent, before any release.
    const ledger = storedLedger(source);
    if (ledger !== undefined) {
      const plain = (budget: object) => budget as Record<string, number>;
      showSession({ spent: plain(ledger.spent), total: plain(ledger.total), releases: ledger.charges.length, ledger });
    }
    return true;
  }, failed);
}

$<HTMLButtonElement>('new-budget').onclick = () => {
  const ok = confirm(
    'Start a new privacy budget for this dataset? Only do this for new data. ' +
      'What was released stays released: forgetting the ledger gives no privacy back.',
  );
  if (!ok) return;
  const key = ledgerKey(source);
  if (key !== undefined) localStorage.removeItem(key);
  worker.postMessage({ type: 'new-budget' } satisfies Request);
  clearSession();
};

datasetSelect.replaceChildren(...datasets.map((d) => new Option(d.label, d.id)));
datasetSelect.onchange = () => load({ type: 'builtin', id: datasetSelect.value });
const yourFile = new Option('(your file)', '');
yourFile.disabled = true;
datasetSelect.append(yourFile);
function loadFile(file: File): void {
  yourFile.textContent = `(your file: ${file.name})`;
  datasetSelect.value = '';
  load({ type: 'file', file });
}
fileInput.onchange = () => {
  const file = fileInput.files?.[0];
  if (file) loadFile(file);
};
drop.ondragover = (event) => {
  event.preventDefault();
  drop.classList.add('over');
};
drop.ondragleave = () => drop.classList.remove('over');
drop.ondrop = (event) => {
  event.preventDefault();
  drop.classList.remove('over');
  const file = event.dataTransfer?.files[0];
  if (file) loadFile(file);
};
preset.onchange = () => {
  custom.hidden = preset.value !== 'custom';
  limitMethods();
};
custom.addEventListener('input', limitMethods);
methodSelect.onchange = describeMethod;
// What the intervals hold matters only when there are intervals.
$<HTMLInputElement>('intervals').onchange = () => {
  const off = !$<HTMLInputElement>('intervals').checked;
  $<HTMLSelectElement>('interval-kind').disabled = off;
  $<HTMLInputElement>('simultaneous').disabled = off;
};
$('budget-value').oninput = checkBudget;
for (const id of ['lower', 'upper', 'step']) $(id).addEventListener('input', boundsEdited);
for (const radio of document.querySelectorAll<HTMLInputElement>('input[name="budget"]')) radio.onchange = checkBudget;
// Enter in any field submits, as in any form; the page never navigates.
$<HTMLFormElement>('settings').onsubmit = (event) => {
  event.preventDefault();
  if (runButton.disabled) return;
  // Empty bounds are a question, not an error of the library's ("lower =
  // NaN"): ask for them where they go.
  const missing = ['lower', 'upper'].filter((id) => $<HTMLInputElement>(id).value.trim() === '');
  if (missing.length > 0 && !large) {
    clearErrors();
    $('bounds-error').textContent =
      `Type the public ${missing.join(' and ')} bound${missing.length === 2 ? 's' : ''} first: what the values can be, known without looking at the data (or estimate them privately).`;
    $<HTMLInputElement>(missing[0]).focus();
    return;
  }
  const asked = settings();
  sendSpending({ type: 'release', settings: asked }, large ? 'Streaming' : counted ? 'Counting' : 'Releasing', (reply) => {
    if (reply.type !== 'result') return false;
    showResult(reply.result, asked);
    return true;
  });
};
// Private bounds: a tenth of the budget field's value, from the session.
$('estimate-bounds').onclick = () => {
  if (runButton.disabled) return;
  const kind = (document.querySelector('input[name="budget"]:checked') as HTMLInputElement).value;
  const share = number('budget-value') / 10;
  const budget = kind === 'rho' ? { rho: share } : { epsilon: share };
  const person =
    personSelect.value === '' || large || counted
      ? undefined
      : { column: personSelect.value, maxContributions: number('max-contributions') };
  sendSpending({ type: 'bounds', column: columnSelect.value, budget, person }, 'Estimating bounds', (reply) => {
    if (reply.type !== 'bounds') return false;
    $<HTMLInputElement>('lower').value = String(reply.lower);
    $<HTMLInputElement>('upper').value = String(reply.upper);
    const spent = budgetText(reply.privacy);
    describeBounds(
      `Estimated privately for ${columnSelect.value}: ${reply.lower} to ${reply.upper}, spending ${spent}` +
        (reply.neighbouring === 'add-remove-user' ? ', protecting a person with all their rows. ' : '. ') +
        'A release with these bounds spends its own budget on top.',
    );
    showSession(reply.session);
    markStale('the bounds changed.');
    return true;
  });
};
compareButton.onclick = () => {
  const asked = settings();
  const trials = Math.max(1, Math.min(200, Math.round(number('trials')) || 20));
  // 'auto' is one of the others.
  const methods = METHODS.map(([value]) => value).filter((value) => value !== 'auto');
  send({ type: 'compare', settings: asked, trials, counts: COMPARE_COUNTS, methods }, 'Comparing', (reply) => {
    if (reply.type !== 'compared') return false;
    showComparison(reply.rows);
    return true;
  });
};
cancelButton.onclick = () => {
  worker.terminate();
  setBusy(false);
  startWorker();
  load(source);
  $('summary').textContent = 'Cancelled.';
};

$('boot-hint').remove();
startWorker();
load(source);
