// The demo site as built (dist-site/), served by a tiny local server and
// driven in Debian's Chromium. Screenshots land in test-results/e2e/.
import { createWriteStream, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium, type Browser, type Page } from 'playwright-core';
import sirv from 'sirv';
import { afterAll, beforeAll, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const shots = join(root, 'test-results/e2e');
let server: Server;
let origin: string;
let browser: Browser;
let page: Page;
const foreign: string[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  const serve = sirv(join(root, 'dist-site'), { dev: true });
  server = createServer((req, res) => serve(req, res, () => {
    res.statusCode = 404;
    res.end();
  }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run', '--enable-precise-memory-info'],
  });
  page = await browser.newPage({ viewport: { width: 1100, height: 1400 } });
  // Every request, including the worker's, must go to the page's own origin.
  page.context().on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:')) foreign.push(url);
  });
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  await page.goto(`${origin}/index.html`);
  await page.waitForFunction(() => (document.getElementById('column') as HTMLSelectElement).options.length > 0);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

async function release(lower: string, upper: string): Promise<void> {
  await page.fill('#lower', lower);
  await page.fill('#upper', upper);
  await page.click('#run');
  await page.waitForFunction(() => !(document.getElementById('run') as HTMLButtonElement).disabled, undefined, {
    timeout: 120_000,
  });
}

it('releases quantiles of a built-in dataset with a table and a chart', async () => {
  expect(await page.locator('#dataset option').count()).toBeGreaterThanOrEqual(3);
  await page.selectOption('#column', 'temp_max');
  await release('-20', '50');
  await expect.poll(() => page.locator('#results tbody tr').count()).toBe(3);
  expect(await page.locator('#cdf-chart canvas').count()).toBeGreaterThan(0);
  expect(await page.textContent('#summary')).toMatch(/aq: 3 quantiles in .* ms, spending epsilon = 1/);
  await page.screenshot({ path: join(shots, 'release.png'), fullPage: true });
}, 60_000);

it('uses every built-in dataset and the deciles preset', async () => {
  await page.selectOption('#dataset', 'flights');
  await page.waitForFunction(() => (document.getElementById('column') as HTMLSelectElement).value === 'delay');
  await page.selectOption('#preset', 'deciles');
  await page.selectOption('#method', 'tree-cdf');
  await release('-100', '500');
  await expect.poll(() => page.locator('#results tbody tr').count()).toBe(9);
  await page.selectOption('#dataset', 'movies');
  await page.waitForFunction(() => (document.getElementById('column-info') as HTMLElement).textContent!.includes('left out'));
}, 60_000);

it('opens a CSV from disk and reports rows that are not numbers', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpq-site-'));
  const csv = join(dir, 'scores.csv');
  const rows = Array.from({ length: 500 }, (_, i) => `${i},${(i * 37) % 101},x`);
  writeFileSync(csv, `id,score,label\n${rows.join('\n')}\n7,oops,y\n8,,z\n`);
  await page.setInputFiles('#file', csv);
  await page.waitForFunction(() => (document.getElementById('column-info') as HTMLElement).textContent!.includes('scores.csv'));
  await page.selectOption('#column', 'score');
  expect(await page.textContent('#column-info')).toMatch(/500 numbers; 2 rows are empty or not numbers/);
  await page.selectOption('#preset', '0.5');
  await release('0', '100');
  await expect.poll(() => page.locator('#results tbody tr').count()).toBe(1);
}, 60_000);

it('shows a bad bound next to the field and keeps working', async () => {
  await release('10', '5');
  expect(await page.textContent('#bounds-error')).toMatch(/lower must be < upper/);
  await page.screenshot({ path: join(shots, 'bad-bound.png') });
  await release('0', '100');
  expect(await page.textContent('#bounds-error')).toBe('');
}, 60_000);

it('draws the comparison of every mechanism', async () => {
  await page.fill('#trials', '2');
  await page.click('#compare');
  await page.waitForSelector('#compare-chart canvas', { timeout: 180_000 });
  await page.screenshot({ path: join(shots, 'compare.png'), fullPage: true });
}, 200_000);

it('streams a 50 MB CSV with a progress bar in bounded memory', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpq-large-'));
  const csv = join(dir, 'large.csv');
  const out = createWriteStream(csv);
  out.write('id,value\n');
  let state = 7;
  for (let i = 0; out.bytesWritten + out.writableLength < 50 * 1024 * 1024; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    if (!out.write(`${i},${((state / 4294967296) * 1000).toFixed(4)},padding-${i % 97}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  await page.setInputFiles('#file', csv);
  await page.waitForFunction(() => (document.getElementById('column-info') as HTMLElement).textContent!.includes('streamed'));
  await page.selectOption('#column', 'value');
  await page.fill('#lower', '0');
  await page.fill('#upper', '1000');
  await page.click('#run');
  // Progress advances, and the heaps stay far below the file's size.
  const seen = new Set<number>();
  let peak = 0;
  while (await page.locator('#run').isDisabled()) {
    seen.add(Number(await page.getAttribute('#progress', 'value')));
    const heaps = [await page.evaluate(() => (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? 0)];
    for (const worker of page.workers()) {
      heaps.push(await worker.evaluate(() => (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? 0).catch(() => 0));
    }
    peak = Math.max(peak, heaps.reduce((a, b) => a + b, 0));
    await page.waitForTimeout(100);
  }
  expect(await page.textContent('#data-error')).toBe('');
  expect(await page.textContent('#summary')).toMatch(/Streamed [\d,]+ values through a \d+ KiB sketch/);
  expect([...seen].filter((v) => v > 0).length).toBeGreaterThan(2);
  console.log(`peak JS heap while streaming 50 MB: ${(peak / 1048576).toFixed(1)} MiB`);
  expect(peak).toBeGreaterThan(0);
  expect(peak).toBeLessThan(40 * 1024 * 1024);
  await page.screenshot({ path: join(shots, 'stream.png'), fullPage: true });
}, 240_000);

it('never contacts another origin and raises no page error', () => {
  expect(foreign).toEqual([]);
  expect(pageErrors).toEqual([]);
});
