// The demo site as built (dist-site/), served by a tiny local server and
// driven in Debian's Chromium. Screenshots land in test-results/e2e/.
import { createWriteStream, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { launchChromium, serveStatic } from './chromium.js';

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
  ({ server, origin } = await serveStatic(join(root, 'dist-site')));
  browser = await launchChromium();
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

// The worker's live JS heap (after a forced garbage collection) and backing
// stores (its WebAssembly memory included), from the DevTools protocol:
// performance.memory does not exist in workers. Without the collection the
// number mostly measures garbage not yet collected, not what is held.
async function liveHeapBytes(): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  try {
    await cdp.send('HeapProfiler.collectGarbage');
    const pageUsage = await cdp.send('Runtime.getHeapUsage');
    const { targetInfos } = await cdp.send('Target.getTargets');
    let total = pageUsage.usedSize;
    for (const target of targetInfos.filter((t) => t.type === 'worker')) {
      const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: target.targetId, flatten: false });
      const usage = await new Promise<{ usedSize: number; backingStorageSize?: number }>((resolve) => {
        cdp.on('Target.receivedMessageFromTarget', (event) => {
          const message = JSON.parse(event.message);
          if (message.id === 2) resolve(message.result);
        });
        for (const [id, method] of [[1, 'HeapProfiler.collectGarbage'], [2, 'Runtime.getHeapUsage']] as const) {
          void cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method }) });
        }
      });
      total += usage.usedSize + (usage.backingStorageSize ?? 0);
      await cdp.send('Target.detachFromTarget', { sessionId });
    }
    return total;
  } finally {
    await cdp.detach();
  }
}

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
  // Every value the progress bar takes, recorded on the page as it changes.
  await page.evaluate(() => {
    const bar = document.getElementById('progress') as HTMLProgressElement;
    const seen: number[] = [];
    (window as unknown as { progressSeen: number[] }).progressSeen = seen;
    new MutationObserver(() => seen.push(bar.value / bar.max)).observe(bar, { attributes: true });
  });
  await page.click('#run');
  // Meanwhile the live heaps stay far below the file's size.
  let peak = 0;
  while (await page.locator('#run').isDisabled()) {
    peak = Math.max(peak, await liveHeapBytes());
    await page.waitForTimeout(100);
  }
  const seen = new Set(await page.evaluate(() => (window as unknown as { progressSeen: number[] }).progressSeen));
  expect(await page.textContent('#data-error')).toBe('');
  expect(await page.textContent('#summary')).toMatch(/Streamed [\d,]+ values through a \d+ KiB sketch/);
  // The bar moved through several intermediate values before completing.
  expect([...seen].filter((v) => v > 0 && v < 1).length).toBeGreaterThan(2);
  console.log(`peak live memory (page heap + worker heap + WASM memory) while streaming 50 MB: ${(peak / 1048576).toFixed(1)} MiB`);
  expect(peak).toBeGreaterThan(1024 * 1024);
  // Reading the file whole would hold over 100 MB (UTF-16 text) on its own.
  expect(peak).toBeLessThan(32 * 1024 * 1024);
  await page.screenshot({ path: join(shots, 'stream.png'), fullPage: true });
}, 240_000);

it('cancels a long comparison and keeps working', async () => {
  await page.selectOption('#dataset', 'flights');
  await page.waitForFunction(() => (document.getElementById('column') as HTMLSelectElement).value === 'delay');
  await page.fill('#trials', '200');
  await page.click('#compare');
  await page.waitForFunction(() => !(document.getElementById('cancel') as HTMLButtonElement).disabled);
  await page.click('#cancel');
  expect(await page.textContent('#summary')).toBe('Cancelled.');
  await page.waitForFunction(() => (document.getElementById('column') as HTMLSelectElement).value === 'delay');
  await page.selectOption('#preset', '0.5');
  await page.selectOption('#method', 'aq');
  await release('-100', '500');
  await expect.poll(() => page.locator('#results tbody tr').count()).toBe(1);
}, 60_000);

it('never contacts another origin and raises no page error', () => {
  expect(foreign).toEqual([]);
  expect(pageErrors).toEqual([]);
});
