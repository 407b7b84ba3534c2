// The CLI end to end on a 10^6-row one-column CSV (start-up, reading,
// parsing, the release), as users run it: through its bin (the file itself,
// so its shebang's Node flags apply, as npx and an installed bin do), and
// for comparison with plain `node dist/cli.js`: seconds and peak RSS
// (where /usr/bin/time is installed), median of 5, next to the targets.
// Prints; asserts nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
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
const args = [file, '--column', 'value', '--lower', '0', '--upper', '100', '--epsilon', '1'];
const timer = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
function runs(command) {
  const seconds = [];
  const rss = [];
  for (let run = 0; run < 5; run++) {
    const start = performance.now();
    const result =
      timer === undefined
        ? spawnSync(command[0], [...command.slice(1), ...args], { encoding: 'utf8' })
        : spawnSync(timer, ['-f', '%M', ...command, ...args], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(String(result.stderr));
    seconds.push((performance.now() - start) / 1000);
    if (timer !== undefined) rss.push(Number(result.stderr.trim().split('\n').pop()) / 1024);
  }
  const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
  return { seconds: median(seconds), rss: rss.length > 0 ? median(rss) : NaN };
}
const bin = runs([cli]);
const plain = runs([process.execPath, cli]);
console.log('\nThe CLI on a 10^6-row, one-column CSV, end to end (median of 5):\n');
console.log('| target | measured | goal | met |');
console.log('|---|---:|---|---|');
console.log(`| seconds through the bin (shebang flags), start-up included | ${bin.seconds.toFixed(2)} | <= 1.5 | ${bin.seconds <= 1.5 ? 'yes' : 'no'} |`);
console.log(`| peak RSS through the bin (MB) | ${bin.rss.toFixed(0)} | <= 100 | ${bin.rss <= 100 ? 'yes' : Number.isNaN(bin.rss) ? 'not measured' : 'no'} |`);
console.log(`| rows per second through the bin | ${(rows / bin.seconds / 1e6).toFixed(2)} M | >= 1 M (with start-up) | ${rows / bin.seconds >= 1e6 ? 'yes' : 'no'} |`);
console.log(`| for comparison: node dist/cli.js (no shebang flags) | ${plain.seconds.toFixed(2)} s, ${plain.rss.toFixed(0)} MB | | |`);
