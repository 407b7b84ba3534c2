// The browser entry point in Debian's Chromium, driven by playwright-core:
// the page imports dist/browser.js directly, as a user without a bundler would.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

import { chromium, type Browser } from 'playwright-core';
import sirv from 'sirv';
import { afterAll, beforeAll, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
let server: Server;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  const serve = sirv(root, { dev: true });
  server = createServer((req, res) => {
    // Only the package and the fixtures are served.
    if (req.url?.startsWith('/dist/') || req.url?.startsWith('/tests/e2e/fixtures/')) {
      serve(req, res);
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
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
