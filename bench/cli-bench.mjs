// The CLI end to end on 10^6-row CSVs of one column and of five (id, a
// text column, the value, a flag, a note), as users run it: through its bin
// (the file itself, so its shebang's Node flags apply, as npx and an
// installed bin do). Beside each run, the limit: a plain Node script that
// reads the same file, splits its lines, parses the column and sorts it
// (readFileSync + split + Number + Float64Array.sort), the two interleaved
// so that both see the machine in the same state. Seconds and peak RSS
// (where /usr/bin/time is installed), the ratio as the median of the
// pairs' ratios, next to the targets. Prints; asserts nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const rows = 1_000_000;
const dir = mkdtempSync(join(tmpdir(), 'dpq-cli-bench-'));
const one = ['value'];
const five = ['id,name,value,flag,note'];
let state = 1;
for (let i = 0; i < rows; i++) {
  state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
  const value = ((state / 4294967296) * 100).toFixed(3);
  one.push(value);
  five.push(`${i},name-${i % 1000},${value},${i % 2 ? 'yes' : 'no'},a note about row ${i}`);
}
const files = { one: join(dir, 'one.csv'), five: join(dir, 'five.csv') };
writeFileSync(files.one, `${one.join('\n')}\n`);
writeFileSync(files.five, `${five.join('\n')}\n`);
// The limit: read, split, parse one column, sort.
const plain = join(dir, 'plain.mjs');
writeFileSync(
  plain,
  `import { readFileSync } from 'node:fs';
const [file, column] = [process.argv[2], Number(process.argv[3])];
const lines = readFileSync(file, 'utf8').split('\\n');
const values = new Float64Array(lines.length);
let n = 0;
for (let i = 1; i < lines.length; i++) {
  if (lines[i] === '') continue;
  values[n++] = Number(column === 0 ? lines[i] : lines[i].split(',')[column]);
}
values.subarray(0, n).sort();
console.log(n);
`,
);
const timer = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
function once(command) {
  const start = performance.now();
  const result =
    timer === undefined
      ? spawnSync(command[0], command.slice(1), { encoding: 'utf8' })
      : spawnSync(timer, ['-f', '%M', ...command], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(String(result.stderr));
  return {
    seconds: (performance.now() - start) / 1000,
    rss: timer === undefined ? NaN : Number(result.stderr.trim().split('\n').pop()) / 1024,
  };
}
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
console.log('\nThe CLI through its bin on 10^6-row CSVs, against a plain read of the same column (8 interleaved pairs):\n');
console.log('| file | CLI (s) | plain read (s) | CLI / read | goal | peak RSS (MB) | goal |');
console.log('|---|---:|---:|---:|---|---:|---|');
for (const [name, file] of Object.entries(files)) {
  const column = name === 'one' ? 0 : 2;
  const cliArgs = [cli, file, '--column', 'value', '--lower', '0', '--upper', '100', '--epsilon', '1'];
  const readArgs = [process.execPath, plain, file, String(column)];
  once(cliArgs); // warm the file cache
  const ratios = [];
  const cliSeconds = [];
  const readSeconds = [];
  const rss = [];
  for (let pair = 0; pair < 8; pair++) {
    const first = pair % 2 === 0;
    const a = first ? once(cliArgs) : once(readArgs);
    const b = first ? once(readArgs) : once(cliArgs);
    const [c, r] = first ? [a, b] : [b, a];
    ratios.push(c.seconds / r.seconds);
    cliSeconds.push(c.seconds);
    readSeconds.push(r.seconds);
    rss.push(c.rss);
  }
  const ratio = median(ratios);
  const peak = Math.max(...rss);
  console.log(
    `| ${name === 'one' ? 'one column' : 'five columns'} | ${median(cliSeconds).toFixed(2)} | ${median(readSeconds).toFixed(2)} | ` +
      `${ratio.toFixed(2)} | <= 2 ${ratio <= 2 ? '(met)' : '(not met)'} | ${Number.isNaN(peak) ? 'not measured' : peak.toFixed(0)} | <= 100 |`,
  );
}
