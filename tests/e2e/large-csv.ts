// A large CSV for the demo's streaming paths (tests and the bench): an id, a
// value in [0, 1000) from a fixed linear congruential sequence, and a
// padding column, until the file holds `bytes`, its cells split by
// `delimiter`.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

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
