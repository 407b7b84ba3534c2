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

// Loads the smoke page from `pageOrigin` and checks what it released; returns
// the Content-Security-Policy messages the console showed.
async function checkSmokePage(pageOrigin: string): Promise<string[]> {
  const page = await browser.newPage();
  const foreign: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(pageOrigin) && !request.url().startsWith('data:')) {
      foreign.push(request.url());
    }
  });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content.Security.Policy|unsafe-eval/i.test(message.text())) violations.push(message.text());
  });
  await page.goto(`${pageOrigin}/tests/e2e/fixtures/smoke.html`);
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
  // Per person: the heavy person keeps one value; the median stays near 50.
  const person = (result as { person: { median: number; neighbouring: string; k: number } }).person;
  expect(person).toMatchObject({ neighbouring: 'add-remove-user', k: 1 });
  expect(person.median).toBeGreaterThan(40);
  expect(person.median).toBeLessThan(60);
  // Session, bounds, intervals of both kinds and counts, in the browser.
  const toolkit = result as {
    bounds: [number, number];
    intervals: [number, number, string];
    population: [number, number, string];
    fromCounts: number;
    spent: number;
    overspend: string;
  };
  expect(toolkit.bounds[0]).toBeLessThanOrEqual(1);
  expect(toolkit.bounds[1]).toBeGreaterThanOrEqual(99);
  expect(toolkit.intervals[2]).toBe('sample');
  expect(toolkit.population[2]).toBe('population');
  for (const [low, high] of [toolkit.intervals, toolkit.population]) {
    expect(low).toBeLessThanOrEqual(50);
    expect(high).toBeGreaterThanOrEqual(49);
  }
  // Bucket lower edges: a whole number near the median.
  expect(toolkit.fromCounts).toBe(Math.round(toolkit.fromCounts));
  expect(Math.abs(toolkit.fromCounts - 50)).toBeLessThan(10);
  expect(toolkit.spent).toBeCloseTo(7, 9);
  expect(toolkit.overspend).toBe('BUDGET_EXCEEDED');
  // Nothing leaves the machine.
  expect(foreign).toEqual([]);
  await page.close();
  return violations;
}

it('releases quantiles in Chromium from the unbundled browser entry', async () => {
  expect(await checkSmokePage(origin)).toEqual([]);
});

// The smoke page served with a Content-Security-Policy header.
async function withPolicy(policy: string): Promise<string[]> {
  const strict = await serveStatic(
    root,
    (url) => url.startsWith('/dist/') || url.startsWith('/tests/e2e/fixtures/'),
    { 'Content-Security-Policy': policy },
  );
  try {
    return await checkSmokePage(strict.origin);
  } finally {
    await new Promise((resolve) => strict.server.close(resolve));
  }
}

it('loads and releases under a strict Content-Security-Policy (no eval)', async () => {
  // What analytics pages often run under: scripts from the page's origin
  // only, WebAssembly compilation allowed, no eval or new Function. The glue
  // once used new Function and failed here with an EvalError.
  expect(await withPolicy("script-src 'self' 'wasm-unsafe-eval'")).toEqual([]);
  // default-src 'self' also blocks the loader's first try, a fetch of its
  // inlined data: URL; it then decodes the module itself and works.
  const blocked = await withPolicy("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'");
  for (const message of blocked) expect(message).toMatch(/data:application\/octet-stream/);
});
