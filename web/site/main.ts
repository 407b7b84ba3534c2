// The demo page: settings in, private results out. All data and computation
// live in the worker (worker.ts); cancelling replaces the worker.
import 'uplot/dist/uPlot.min.css';

import { drawComparison } from './charts.js';
import datasetList from './generated/dataset-list.json';
import { keepLedger, ledgerKey, storedLedger, withLedger } from './ledger.js';
import { $, budgetText, greek } from './page.js';
import type { ReleaseSettings, Reply, Request } from './protocol.js';
import { clearResults, markStale, showResult, showSession } from './results.js';

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

/** Public facts about a built-in column: never read off its data. */
interface ColumnAbout {
  unit: string;
  lower: number;
  upper: number;
  step: number;
  why: string;
}
const datasets = datasetList as unknown as { id: string; label: string; about: Record<string, ColumnAbout> }[];

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

// The unit of the column asked about: a built-in column's, else none.
function unitOf(column: string): string {
  const current = source;
  return current.type === 'builtin' ? (datasets.find((d) => d.id === current.id)?.about[column]?.unit ?? '') : '';
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
    // The ledger each reply carries is kept (per dataset, across reloads)
    // before anything is shown.
    keepLedger(source, reply.type === 'result' ? reply.result.session : 'session' in reply ? reply.session : undefined);
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
    showResult(reply.result, asked, unitOf(asked.column));
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
    drawComparison(reply.rows, COMPARE_COUNTS);
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
