// The demo's large-file path in Chromium: a 50 MB CSV streamed through the
// sketch on every core (the page's default) against one worker
// (?workers=1), and both against the limit, the page reading the same File
// itself (decode, split lines, parse the value column), interleaved in one
// browser. Prints the times and ratios beside their targets; asserts none.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, it } from 'vitest';

import { launchChromium, serveStatic } from '../tests/e2e/chromium.js';
import { releaseStreamed, writeLargeCsv } from '../tests/e2e/large-csv.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const PAIRS = Number(process.env.DEMO_BENCH_PAIRS ?? 3);
let server: Server;
let origin: string;
let browser: Browser;
let dir: string;

beforeAll(async () => {
  ({ server, origin } = await serveStatic(join(root, 'dist-site')));
  browser = await launchChromium();
  dir = mkdtempSync(join(tmpdir(), 'dpq-demo-bench-'));
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

async function openPage(query: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${origin}/index.html${query}`);
  await page.waitForFunction(() => (document.getElementById('column') as HTMLSelectElement).options.length > 0);
  return page;
}

// A release of the file's value column on `page`: the time the page reports.
async function streamed(page: Page, csv: string): Promise<number> {
  await releaseStreamed(page, csv);
  const error = await page.textContent('#data-error');
  if (error !== '') throw new Error(`the release failed: ${error}`);
  return Number((await page.textContent('#summary'))!.match(/in ([\d.]+) ms/)![1]);
}

// The limit: the page reads the same File in one pass (decoded in chunks,
// split into lines, the second cell parsed), nothing else.
async function plainRead(page: Page, csv: string): Promise<number> {
  await page.setInputFiles('#file', csv);
  return page.evaluate(async () => {
    const file = (document.getElementById('file') as HTMLInputElement).files![0];
    const start = performance.now();
    const reader = file.stream().pipeThrough(new TextDecoderStream()).getReader();
    let carry = '';
    let sum = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const lines = (carry + value).split('\n');
      carry = lines.pop() ?? '';
      for (const line of lines) {
        const cell = line.split(',')[1];
        if (cell !== undefined) sum += Number(cell) || 0;
      }
    }
    if (!Number.isFinite(sum)) throw new Error('unreachable');
    return performance.now() - start;
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

it('times the demo streaming 50 MB: every core, one worker, and a plain read', async () => {
  const csv = join(dir, 'large.csv');
  await writeLargeCsv(csv, 50 * 1024 * 1024);
  const cores = await (await openPage('')).evaluate(() => navigator.hardwareConcurrency);
  const times: Record<'parallel' | 'single' | 'read', number[]> = { parallel: [], single: [], read: [] };
  for (let pair = 0; pair < PAIRS; pair++) {
    // A fresh page a run, in an order that changes each pair.
    const order = pair % 2 === 0 ? (['parallel', 'single', 'read'] as const) : (['read', 'single', 'parallel'] as const);
    for (const kind of order) {
      const page = await openPage(kind === 'single' ? '?workers=1' : '');
      try {
        times[kind].push(kind === 'read' ? await plainRead(page, csv) : await streamed(page, csv));
      } finally {
        await page.context().close();
      }
    }
  }
  const [parallel, single, read] = [median(times.parallel), median(times.single), median(times.read)];
  const workers = Math.min(cores, 4);
  console.log(
    [
      `Demo, a 50 MB CSV streamed in Chromium (${cores} cores; median of ${PAIRS} interleaved runs each):`,
      `  every core (${workers} sketch workers): ${parallel.toFixed(0)} ms   (runs ${times.parallel.map((t) => t.toFixed(0)).join(', ')})`,
      `  one worker (?workers=1):       ${single.toFixed(0)} ms   (runs ${times.single.map((t) => t.toFixed(0)).join(', ')})`,
      `  plain read by the page:        ${read.toFixed(0)} ms   (runs ${times.read.map((t) => t.toFixed(0)).join(', ')})`,
      `  speed-up of every core over one worker: ${(single / parallel).toFixed(2)}x   (goal on 2 or more idle cores: at least 1.1x)`,
      `  every core / plain read:                ${(parallel / read).toFixed(2)}x   (goal: at most 2x, as for the CLI)`,
    ].join('\n'),
  );
});
