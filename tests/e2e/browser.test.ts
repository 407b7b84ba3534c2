// The browser entry point in Debian's Chromium, driven by playwright-core:
// the page imports dist/browser.js directly, as a user without a bundler would.
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { launchChromium, serveStatic } from './chromium.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let server: Server;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  // Only the package and the fixtures are served.
  ({ server, origin } = await serveStatic(
    root,
    (url) => url.startsWith('/dist/') || url.startsWith('/tests/e2e/fixtures/'),
  ));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

it('releases quantiles in Chromium from the unbundled browser entry', async () => {
  const page = await browser.newPage();
  const foreign: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(origin) && !request.url().startsWith('data:')) {
      foreign.push(request.url());
    }
  });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  await page.goto(`${origin}/tests/e2e/fixtures/smoke.html`);
  await page.waitForFunction(() => 'smokeResult' in window, undefined, { timeout: 30_000 });
  const result = await page.evaluate(() => (window as unknown as { smokeResult: unknown }).smokeResult);
  expect(errors).toEqual([]);
  expect(result).toMatchObject({ code: 'NON_FINITE_VALUE', after: 1 });
  const values = (result as { values: number[] }).values;
  expect(values).toHaveLength(3);
  expect(values[0]).toBeGreaterThan(15);
  expect(values[0]).toBeLessThan(35);
  expect(values[1]).toBeGreaterThan(values[0]);
  expect(values[2]).toBeGreaterThan(values[1]);
  // Nothing leaves the machine.
  expect(foreign).toEqual([]);
  await page.close();
});
