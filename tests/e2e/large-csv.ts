// Large CSVs through the demo's streaming paths (tests and the bench).
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

import type { Page } from 'playwright-core';

// An id, a value in [0, 1000) from a fixed linear congruential sequence,
// and a padding column, until the file holds `bytes`, its cells split by
// `delimiter`.

export async function writeLargeCsv(path: string, bytes: number, delimiter = ','): Promise<void> {
  const out = createWriteStream(path);
  out.write(`id${delimiter}value\n`);
  let state = 7;
  for (let i = 0; out.bytesWritten + out.writableLength < bytes; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const row = `${i}${delimiter}${((state / 4294967296) * 1000).toFixed(4)}${delimiter}padding-${i % 97}\n`;
    if (!out.write(row)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

// Opens `csv` (a large file: streamed) on the demo `page`, releases its
// column `value` over [0, 1000] and waits for the page to finish, calling
// `watch` every 100 ms meanwhile.
export async function releaseStreamed(page: Page, csv: string, watch?: () => Promise<void>): Promise<void> {
  await page.setInputFiles('#file', csv);
  await page.waitForFunction(() => (document.getElementById('column-info') as HTMLElement).textContent!.includes('streamed'));
  await page.selectOption('#column', 'value');
  await page.fill('#lower', '0');
  await page.fill('#upper', '1000');
  await page.click('#run');
  while (await page.locator('#run').isDisabled()) {
    await watch?.();
    await page.waitForTimeout(100);
  }
}
