// The CLI end to end on a 10^6-row one-column CSV (start-up, reading,
// parsing, the release): seconds and rows per second, median of 3, next to
// the target. Prints; asserts nothing.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const rows = 1_000_000;
const file = join(mkdtempSync(join(tmpdir(), 'dpq-cli-bench-')), 'rows.csv');
let state = 1;
const lines = ['value'];
for (let i = 0; i < rows; i++) {
  state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
  lines.push(((state / 4294967296) * 100).toFixed(3));
}
writeFileSync(file, `${lines.join('\n')}\n`);
const seconds = [];
for (let run = 0; run < 3; run++) {
  const start = performance.now();
  const result = spawnSync(process.execPath, [cli, file, '--column', 'value', '--lower', '0', '--upper', '100', '--epsilon', '1']);
  if (result.status !== 0) throw new Error(String(result.stderr));
  seconds.push((performance.now() - start) / 1000);
}
seconds.sort((a, b) => a - b);
const median = seconds[1];
console.log('\nThe CLI on a 10^6-row, one-column CSV, end to end (median of 3):\n');
console.log('| target | measured | goal | met |');
console.log('|---|---:|---|---|');
console.log(`| seconds, start-up included | ${median.toFixed(2)} | <= 1.5 | ${median <= 1.5 ? 'yes' : 'no'} |`);
console.log(`| rows per second | ${(rows / median / 1e6).toFixed(2)} M | >= 1 M (with start-up) | ${rows / median >= 1e6 ? 'yes' : 'no'} |`);
