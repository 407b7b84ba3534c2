// The dp-quantiles command as installed: dist/cli.js run by node.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'dpq-cli-'));

function writeCsv(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function run(args: string[], input?: string) {
  return spawnSync(process.execPath, [cli, ...args], { input, encoding: 'utf8' });
}

const rows = Array.from({ length: 200 }, (_, i) => `${i},${(i * 37) % 101},x${i}`);
const good = writeCsv('good.csv', `id,score,label\n${rows.join('\n')}\n`);

describe('dp-quantiles CLI', () => {
  it('prints private quantiles, method and privacy spent as JSON', () => {
    const out = execFileSync(process.execPath, [
      cli, good, '--column', 'score', '--lower', '0', '--upper', '100',
      '--epsilon', '2', '--quantiles', '0.1,0.5,0.9',
    ], { encoding: 'utf8' });
    const result = JSON.parse(out);
    expect(result.method).toBe('aq');
    expect(result.privacy).toEqual({ kind: 'pure', epsilon: 2 });
    expect(result.column).toBe('score');
    expect(result.quantiles.map((q: { q: number }) => q.q)).toEqual([0.1, 0.5, 0.9]);
    for (const { value } of result.quantiles) {
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThanOrEqual(100);
    }
    expect(result.quantiles[0].true).toBeUndefined();
  });

  it('reads standard input, a column index, negative bounds and rho', () => {
    const result = run(
      ['--column', '1', '--lower', '-10', '--upper', '110', '--rho', '0.5', '--show-true', '--seed', '3'],
      `id,score,label\n${rows.join('\n')}\n`,
    );
    expect(result.status).toBe(0);
    const parsed = JSON.parse(result.stdout);
    expect(parsed.column).toBe('score');
    // Seeded: reproducible noise, so it says it is not private.
    expect(parsed.privacy).toEqual({ kind: 'none', reason: 'seeded' });
    expect(parsed.warning).toMatch(/NOT private/);
    const unseeded = run(['--column', '1', '--lower', '-10', '--upper', '110', '--rho', '0.5'],
      `id,score,label\n${rows.join('\n')}\n`);
    expect(JSON.parse(unseeded.stdout).privacy).toEqual({ kind: 'zcdp', rho: 0.5 });
    expect(parsed.quantiles[1].true).toBe(50);
    expect(typeof parsed.quantiles[1].rankError).toBe('number');
  });

  it('names the line of a malformed row', () => {
    const bad = writeCsv('bad-fields.csv', 'a,b\n1,2\n3,4\n5\n7,8\n');
    const result = run([bad, '--column', 'b', '--lower', '0', '--upper', '10', '--epsilon', '1']);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/line 4/);
  });

  it('skips and counts rows whose cell is empty or not a number, as the demo does', () => {
    const bad = writeCsv('bad-value.csv', 'a,b\n1,2\n3,oops\n5,\n7,6\n');
    const result = run([bad, '--column', 'b', '--lower', '0', '--upper', '10', '--epsilon', '1']);
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/skipped 2 rows whose 'b' is empty or not a number \(first at line 3\)/);
    expect(JSON.parse(result.stdout).quantiles).toHaveLength(3);
  });

  it('refuses a column without numbers, and one of decimal commas unless told', () => {
    const text = writeCsv('text.csv', `name,score\n${Array.from({ length: 50 }, (_, i) => `n${i},${i}`).join('\n')}\n`);
    const none = run([text, '--column', 'name', '--lower', '0', '--upper', '100', '--epsilon', '1']);
    expect(none.status).toBe(1);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/'name' has no numbers: none of its 50 rows parsed as one/);
    // Decimal commas (a European spreadsheet: ';' between cells).
    const european = writeCsv('european.csv', `x;y\n${Array.from({ length: 40 }, (_, i) => `${i},5;1`).join('\n')}\n`);
    const refused = run([european, '--column', 'x', '--lower', '0', '--upper', '100', '--epsilon', '1']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/40 look like decimal commas: try --decimal-comma/);
    // As the hint says: the ';' is detected, the commas read as decimals.
    const read = run([european, '--column', 'x', '--lower', '0', '--upper', '100', '--epsilon', '1', '--decimal-comma',
      '--seed', '1', '--show-true']);
    expect(read.stderr).toBe('');
    const decimals = JSON.parse(read.stdout);
    expect(decimals.quantiles).toHaveLength(3);
    expect(decimals.quantiles[1].true).toBe(20.5);
    expect(run([text, '--column', 'score', '--lower', '0', '--upper', '1', '--epsilon', '1', '--decimal-comma']).stderr)
      .toMatch(/--decimal-comma needs another delimiter/);
    // Most rows not numbers: refused unless --skip-non-numbers.
    const mostly = writeCsv('mostly.csv', `v\n1\n2\n${Array(5).fill('n/a').join('\n')}\n`);
    expect(run([mostly, '--column', 'v', '--lower', '0', '--upper', '9', '--epsilon', '1']).stderr)
      .toMatch(/most rows of 'v' are not numbers: 5 of 7/);
    expect(run([mostly, '--column', 'v', '--lower', '0', '--upper', '9', '--epsilon', '1', '--skip-non-numbers']).status).toBe(0);
    // An empty dataset still releases (refusing would say it is empty).
    const empty = writeCsv('empty.csv', 'v\n');
    const released = run([empty, '--column', 'v', '--lower', '0', '--upper', '9', '--epsilon', '1']);
    expect(released.status).toBe(0);
    expect(released.stderr).toMatch(/no values: the release is noise alone/);
  });

  it('checks every option before opening the file', () => {
    // A file that does not exist: the option is refused first.
    const bad = run(['/nonexistent/big.csv', '--column', 'x', '--lower', '0', '--upper', '1', '--epsilon', '-1']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/INVALID_PRIVACY: epsilon is -1/);
    expect(run(['/nonexistent/big.csv', '--column', 'x', '--lower', '0', '--upper', '1', '--epsilon', '1', '--quantiles', '1.5']).stderr)
      .toMatch(/INVALID_QUANTILES/);
    expect(run(['/nonexistent/big.csv', '--column', 'x', '--lower', '5', '--upper', '1', '--epsilon', '1']).stderr)
      .toMatch(/INVALID_BOUNDS/);
    expect(run(['/nonexistent/big.csv', '--column', 'x', '--lower', '0', '--upper', '1', '--epsilon', '1', '--method', 'nope']).stderr)
      .toMatch(/UNKNOWN_METHOD/);
    // Budgets too: an overspend of --budget (here by two releases, and by
    // private bounds and a release) is refused before the file is opened.
    expect(
      run(['/nonexistent/big.csv', '--column', 'x', '--lower', '0', '--upper', '1', '--quantiles', '0.5', '--quantiles', '0.5', '--epsilon', '0.9', '--budget', 'epsilon=1']).stderr,
    ).toMatch(/BUDGET_EXCEEDED/);
    expect(
      run(['/nonexistent/big.csv', '--column', 'x', '--estimate-bounds', 'epsilon=0.2', '--epsilon', '0.9', '--budget', 'epsilon=1']).stderr,
    ).toMatch(/BUDGET_EXCEEDED/);
    // A good command on that path fails on the file, in one line of ours.
    const missing = run(['/nonexistent/big.csv', '--column', 'x', '--lower', '0', '--upper', '1', '--epsilon', '1']);
    expect(missing.stderr.split('\n')[0]).toBe("dp-quantiles: no file named '/nonexistent/big.csv'");
    expect(missing.stderr).not.toMatch(/ENOENT/);
  });

  it('says the same thing the same way: infinite numbers, a missing column, a mistyped flag', () => {
    const base = [good, '--column', 'score', '--lower', '0', '--upper', '100'];
    for (const infinite of ['Infinity', '1e400']) {
      expect(run([...base, '--epsilon', infinite]).stderr.split('\n')[0]).toBe(
        `dp-quantiles: --epsilon must be a finite number, got '${infinite}'`,
      );
    }
    expect(run([good, '--column', '17', '--lower', '0', '--upper', '100', '--epsilon', '1']).stderr).toMatch(
      /has no column 17: it has 3 columns \(0 to 2\)/,
    );
    expect(run([...base, '--epsilon', '1', '--quantile', '0.5']).stderr.split('\n')[0]).toBe(
      "dp-quantiles: unknown option '--quantile' (did you mean '--quantiles'?)",
    );
    const help = run(['--help']).stdout;
    for (const flag of ['--decimal-comma', '--skip-non-numbers', '--group-by']) expect(help.split('\n\n')[0]).toContain(flag);
  });

  it('reads what spreadsheets write and says what is wrong in one line', () => {
    // A byte-order mark (Excel) and semicolons (many locales).
    const excel = writeCsv('excel.csv', '\uFEFFhours;name\n40;a\n38;b\n45;c\n');
    const fromExcel = run([excel, '--column', 'hours', '--lower', '0', '--upper', '100', '--epsilon', '1']);
    expect(fromExcel.status).toBe(0);
    expect(JSON.parse(fromExcel.stdout).column).toBe('hours');
    const tabs = writeCsv('tabs.tsv', 'x\ty\n1\t2\n3\t4\n');
    expect(run([tabs, '--column', 'y', '--lower', '0', '--upper', '5', '--epsilon', '1', '--delimiter', 'tab']).status).toBe(0);
    // A directory: one clear line, no stack.
    const directory = run([dir, '--column', 'x', '--lower', '0', '--upper', '1', '--epsilon', '1']);
    expect(directory.status).toBe(1);
    expect(directory.stderr).toMatch(/is a directory; give a CSV file/);
    expect(directory.stderr).not.toMatch(/at |EISDIR/);
    // A usage error prints its line and where to look, not the whole help.
    const usage = run([good, '--lower', '0', '--upper', '1', '--epsilon', '1']);
    expect(usage.stderr.trim().split('\n')).toEqual(["dp-quantiles: --column is required", "see 'dp-quantiles --help'"]);
    // A wrong column lists the columns.
    expect(run([good, '--column', 'nope', '--lower', '0', '--upper', '1', '--epsilon', '1']).stderr)
      .toMatch(/no column named 'nope'; the columns are 'id', 'score', 'label'/);
    // --version.
    const version = run(['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('reads quoted cells (commas, quotes, line breaks), CRLF, spaces and empty lines as CSV does', () => {
    // The fast path cuts unquoted lines; a line with a quote is one CSV
    // record, with the lines its quotes span. Every value must be read once.
    const text =
      '\uFEFFid,"note, with comma",value,shop\r\n' +
      '1,plain,  10 ,a\r\n' +
      '2,"a ""quoted"" note",20,b\r\n' +
      '3,"a note\r\nover two lines",30,a\r\n' +
      '\r\n' +
      '4,"x,y",40,"b"\r\n' +
      '5,last, 50,a';
    const file = writeCsv('quoted.csv', text);
    const args = [file, '--column', 'value', '--lower', '0', '--upper', '100', '--epsilon', '1', '--quantiles', '0.1,0.3,0.5,0.7,0.9', '--show-true', '--step', '1'];
    const read = JSON.parse(run(args).stdout);
    expect(read.quantiles.map((q: { true: number }) => q.true)).toEqual([10, 20, 30, 40, 50]);
    // By group, the quoted "b" is b.
    const grouped = JSON.parse(run([...args, '--group-by', 'shop', '--keys', 'a,b']).stdout);
    expect(grouped.groups.map((g: { quantiles: { true: number }[] }) => g.quantiles[4].true)).toEqual([50, 40]);
    // A quote left open names its line.
    const open = writeCsv('open.csv', 'id,value\n1,2\n3,"4\n');
    expect(run([open, '--column', 'value', '--lower', '0', '--upper', '9', '--epsilon', '1']).stderr).toMatch(/line 3: malformed CSV/);
  });

  it('streams a 10^6-row file: the JavaScript heap holds the column, not the file', async () => {
    // 25 MB of CSV. The old reader kept the text and every row (845 MB of
    // RSS) and cannot run in a 48 MB heap; the streaming one keeps 8 bytes a
    // value.
    const rows = ['id,value,label'];
    let state = 1;
    for (let i = 0; i < 1_000_000; i++) {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      rows.push(`${i},${((state / 4294967296) * 1000).toFixed(4)},row${i}`);
    }
    const big = writeCsv('big.csv', `${rows.join('\n')}\n`);
    const result = spawnSync(
      process.execPath,
      ['--max-old-space-size=48', cli, big, '--column', 'value', '--lower', '0', '--upper', '1000', '--epsilon', '1', '--quantiles', '0.5'],
      { encoding: 'utf8' },
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const median = JSON.parse(result.stdout).quantiles[0].value;
    expect(median).toBeGreaterThan(490);
    expect(median).toBeLessThan(510);

    // Run as users run it (the executable, through its shebang, which keeps
    // V8's young generation small): peak resident memory under 100 MB. Linux
    // reports the high-water mark in /proc/<pid>/status; it only grows, so
    // the last reading before exit is the peak so far.
    const child = spawn(cli, [big, '--column', 'value', '--lower', '0', '--upper', '1000', '--epsilon', '1', '--quantiles', '0.5'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let peakKiB = 0;
    const poll = setInterval(() => {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
        peakKiB = Math.max(peakKiB, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
      } catch {
        // exited between readings
      }
    }, 10);
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    const [code] = await once(child, 'exit');
    clearInterval(poll);
    expect(code).toBe(0);
    expect(JSON.parse(stdout).quantiles[0].value).toBeGreaterThan(490);
    console.log(`CLI on a 10^6-row CSV: peak RSS ${(peakKiB / 1024).toFixed(1)} MiB`);
    expect(peakKiB).toBeGreaterThan(20 * 1024);
    expect(peakKiB).toBeLessThan(100 * 1024);
  }, 60_000);

  it('spends several releases from one --budget session and refuses an overspend', () => {
    const scores = writeCsv('session.csv', `score\n${Array.from({ length: 400 }, (_, i) => (i * 37) % 101).join('\n')}\n`);
    const both = run([scores, '--column', 'score', '--lower', '0', '--upper', '100', '--epsilon', '1',
      '--quantiles', '0.5', '--quantiles', '0.1,0.9', '--budget', 'epsilon=2', '--show-true']);
    expect(both.stderr).toBe('');
    const out = JSON.parse(both.stdout);
    expect(out.releases).toHaveLength(2);
    expect(out.releases[1].quantiles.map((entry: { q: number }) => entry.q)).toEqual([0.1, 0.9]);
    expect(out.releases[0].quantiles[0].rankError).toBeGreaterThanOrEqual(0);
    expect(out.session).toEqual({ total: { epsilon: 2 }, spent: { epsilon: 2 }, remaining: { epsilon: 0 }, releases: 2 });
    // A third set does not fit: refused, nothing printed.
    const over = run([scores, '--column', 'score', '--lower', '0', '--upper', '100', '--epsilon', '1',
      '--quantiles', '0.5', '--quantiles', '0.1', '--quantiles', '0.9', '--budget', 'epsilon=2']);
    expect(over.status).toBe(1);
    expect(over.stdout).toBe('');
    expect(over.stderr).toMatch(/BUDGET_EXCEEDED: .*epsilon = 2 of epsilon = 2 spent in 2 releases/);
    // zCDP releases in an (epsilon, delta) session.
    const mixed = JSON.parse(run([scores, '--column', 'score', '--lower', '0', '--upper', '100', '--rho', '0.25',
      '--quantiles', '0.5', '--quantiles', '0.25', '--budget', 'epsilon=5,delta=1e-5']).stdout);
    expect(mixed.session.spent.epsilon).toBeCloseTo(4.7284, 3);
    expect(run([scores, '--column', 'score', '--lower', '0', '--upper', '1', '--epsilon', '1', '--budget', 'eps=2']).stderr)
      .toMatch(/--budget takes epsilon=E/);
  });

  it('keeps a ledger across runs with --session FILE', () => {
    const scores = writeCsv('ledger.csv', `score\n${Array.from({ length: 400 }, (_, i) => (i * 37) % 101).join('\n')}\n`);
    const ledger = join(dir, 'ledger.json');
    const args = [scores, '--column', 'score', '--lower', '0', '--upper', '100', '--epsilon', '0.4', '--session', ledger];
    // No ledger yet: --budget starts one.
    expect(run(args).stderr).toMatch(/no ledger there yet; give --budget/);
    const first = JSON.parse(run([...args, '--budget', 'epsilon=1']).stdout);
    expect(first.session.spent).toEqual({ epsilon: 0.4 });
    // The next run resumes it (the --budget may be left out).
    const second = JSON.parse(run(args).stdout);
    expect(second.session.spent).toEqual({ epsilon: 0.8 });
    expect(JSON.parse(readFileSync(ledger, 'utf8')).charges).toHaveLength(2);
    // A third does not fit: refused, nothing printed, the ledger unchanged.
    const over = run(args);
    expect(over.status).toBe(1);
    expect(over.stderr).toMatch(/BUDGET_EXCEEDED/);
    expect(JSON.parse(readFileSync(ledger, 'utf8')).charges).toHaveLength(2);
    // 0.2 still fits exactly (0.4 + 0.4 + 0.2 = 1).
    expect(JSON.parse(run([...args.slice(0, -4), '--epsilon', '0.2', '--session', ledger]).stdout).session.spent).toEqual({ epsilon: 1 });
    // Another total, or a damaged ledger: refused before the data is read.
    expect(run([...args, '--budget', 'epsilon=2']).stderr).toMatch(/is not the total of the ledger/);
    writeFileSync(ledger, '{"format":"dp-quantiles-ledger","version":1}');
    expect(run(args).stderr).toMatch(/CORRUPT_DATA/);
    writeFileSync(ledger, 'not json');
    expect(run(args).stderr).toMatch(/CORRUPT_DATA: .* not a session ledger/);
  });

  it('saves every charge to --session FILE, also when the run fails after it, and checks the plan before reading', async () => {
    const three = writeCsv('three.csv', 'v\n1\n2\n3\n');
    const ledger = join(dir, 'charged.json');
    const spent = () => JSON.parse(readFileSync(ledger, 'utf8')).spent;
    // Private bounds on 3 values are refused, charged and published: each
    // run's 0.4 is in the file.
    // (Seeded: unseeded, some empty bin of the noisy histogram clears its
    // threshold in about 3% of runs, and the bounds then come from it. A
    // seeded release is charged like any other.)
    const bounds = [three, '--column', 'v', '--estimate-bounds', 'epsilon=0.4', '--epsilon', '0.1', '--session', ledger];
    for (let i = 1; i <= 3; i++) {
      const seeded = [...bounds, '--seed', String(i + 1)];
      const refused = run(i === 1 ? [...seeded, '--budget', 'epsilon=5'] : seeded);
      expect(refused.stderr).toMatch(/NOT_ENOUGH_DATA/);
      expect(spent()).toEqual({ epsilon: Number((0.4 * i).toFixed(1)) });
    }
    // Bounds succeed, then a step too fine for them fails: the message says
    // nothing computed from the private bounds, and their 0.4 is saved.
    const wide = writeCsv('wide.csv', `v\n${Array.from({ length: 2000 }, (_, i) => (i * 7919) % 1000).join('\n')}\n`);
    const fine = run([wide, '--column', 'v', '--estimate-bounds', 'epsilon=0.4', '--epsilon', '0.5', '--step', '0.0001', '--method', 'aggtree', '--session', ledger]);
    expect(fine.status).toBe(1);
    expect(fine.stderr).toMatch(/INVALID_OPTION: the release does not fit the privately estimated bounds/);
    expect(fine.stderr).not.toMatch(/\d{4,}/); // no grid size, no bound
    expect(spent()).toEqual({ epsilon: 1.6 });
    // An overspend is refused from the options and the ledger alone, before
    // the file is opened (this one does not exist).
    const over = run([join(dir, 'absent.csv'), '--column', 'v', '--lower', '0', '--upper', '9', '--epsilon', '4', '--session', ledger]);
    expect(over.stderr).toMatch(/BUDGET_EXCEEDED/);
    expect(spent()).toEqual({ epsilon: 1.6 });
    // Concurrent runs take turns (a lock on the ledger): four of 0.9 from
    // 1.6 of 5 fit three, and the file holds exactly what was spent.
    const runs = Array.from({ length: 4 }, () =>
      spawn(process.execPath, [cli, wide, '--column', 'v', '--lower', '0', '--upper', '1000', '--epsilon', '0.9', '--session', ledger]),
    );
    const codes = await Promise.all(runs.map(async (child) => (await once(child, 'close'))[0]));
    expect(codes.filter((code) => code === 0)).toHaveLength(3);
    expect(spent()).toEqual({ epsilon: 4.3 });
    expect(JSON.parse(readFileSync(ledger, 'utf8')).charges).toHaveLength(7);
  });

  it('releases every group with --group-by: public --keys or private with --delta', () => {
    const lines = Array.from({ length: 6000 }, (_, i) => `${['north', 'south', 'east'][i % 3]},${20 + 10 * (i % 3) + ((i * 37) % 100) / 10}`);
    const sales = writeCsv('groups.csv', `region,amount\n${lines.join('\n')}\n`);
    const args = [sales, '--column', 'amount', '--lower', '0', '--upper', '100', '--epsilon', '1', '--quantiles', '0.5', '--step', '0.1'];
    const ran = run([...args, '--group-by', 'region', '--keys', 'south,north,west']);
    const byRegion = JSON.parse(ran.stdout);
    // Owner notes on stderr, never in the release: the listed key with no
    // rows, and the rows of unlisted keys (east's 2,000).
    expect(ran.stderr).toMatch(/1 of the --keys hold no rows: "west".*data owner only/);
    expect(ran.stderr).toMatch(/2000 rows hold no listed key and were left out \(this note is for the data owner only\)/);
    expect(ran.stdout).not.toMatch(/2000|hold no rows/);
    expect(byRegion.groupBy).toBe('region');
    expect(byRegion.keys).toBe('public');
    expect(byRegion.privacy).toEqual({ kind: 'pure', epsilon: 1 });
    expect(byRegion.groups.map((g: { key: string }) => g.key)).toEqual(['south', 'north', 'west']);
    // north's amounts in [20, 30), south's in [30, 40): medians near 25 and 35.
    expect(Math.abs(byRegion.groups[0].quantiles[0].value - 35)).toBeLessThan(1);
    expect(Math.abs(byRegion.groups[1].quantiles[0].value - 25)).toBeLessThan(1);
    // The first look: its share once, each group's span on the group (of
    // 16 bins of 6.25, south's values lie in [30, 40)).
    expect(byRegion.firstLook).toEqual({ share: 0.05 });
    const [low, high] = byRegion.groups[0].firstLook.found;
    expect(low).toBeLessThanOrEqual(30);
    expect(high).toBeGreaterThanOrEqual(40);
    // Without --step the default looks for the step once over every group's
    // rows (the amounts are tenths).
    const looked = JSON.parse(run([...args.slice(0, -2), '--group-by', 'region', '--keys', 'south,north']).stdout);
    expect(looked.stepLook).toEqual({ share: 0.025, step: 0.1 });
    const chosen = JSON.parse(run([...args, '--group-by', 'region', '--delta', '1e-6']).stdout);
    expect(chosen.keys).toBe('private');
    expect(chosen.groups.map((g: { key: string }) => g.key)).toEqual(['east', 'north', 'south']);
    expect(chosen.selection.privacy).toEqual({ kind: 'approx', epsilon: 0.1, delta: 1e-6 });
    // --show-true on a listed key with no rows says so (owner note), not a
    // true value of null with a rank error of 0.
    const shown = JSON.parse(run([...args, '--group-by', 'region', '--keys', 'south,west', '--show-true']).stdout);
    expect(shown.groups[1]).toMatchObject({ key: 'west', rows: 0, note: expect.stringMatching(/holds no rows.*owner note/) });
    expect(shown.groups[1].quantiles[0]).not.toHaveProperty('true');
    expect(shown.groups[0].quantiles[0].true).toBeCloseTo(35, 0);
    // Keys holding commas, quoted as in CSV; every key matched: no notes.
    const quoted = writeCsv('quoted.csv', `city,amount
"Zürich, CH",5
東京,7
"Zürich, CH",6
`);
    const cities = run([quoted, '--column', 'amount', '--lower', '0', '--upper', '10', '--epsilon', '1', '--quantiles', '0.5', '--group-by', 'city', '--keys', '"Zürich, CH", 東京']);
    expect(JSON.parse(cities.stdout).groups.map((g: { key: string }) => g.key)).toEqual(['Zürich, CH', '東京']);
    expect(cities.stderr).toBe('');
    // --group-sizes: each group's noisy count beside its quantiles.
    const sized = JSON.parse(run([...args, '--group-by', 'region', '--keys', 'south,north', '--group-sizes']).stdout);
    expect(sized.count).toEqual({ of: 'rows', share: 0.1, privacy: { kind: 'pure', epsilon: 0.1 } });
    for (const group of sized.groups) expect(Math.abs(group.count - 2000)).toBeLessThan(150);
    // Two group-by columns: one --keys list each, every combination a group.
    const twoLines = Array.from({ length: 4000 }, (_, i) => `${['north', 'south'][i % 2]},${['a', 'b'][(i >> 1) % 2]},${10 + 10 * (i % 2) + 40 * ((i >> 1) % 2) + ((i * 37) % 100) / 20}`);
    const two = writeCsv('two.csv', `region,shop,amount\n${twoLines.join('\n')}\n`);
    const twoArgs = [two, '--column', 'amount', '--lower', '0', '--upper', '100', '--epsilon', '1', '--quantiles', '0.5', '--step', '0.05'];
    const crossed = run([...twoArgs, '--group-by', 'region,shop', '--keys', 'north,south', '--keys', 'b,a,c', '--show-true']);
    const byBoth = JSON.parse(crossed.stdout);
    expect(byBoth.groups.map((g: { key: string[] }) => g.key)).toEqual([
      ['north', 'b'], ['north', 'a'], ['north', 'c'], ['south', 'b'], ['south', 'a'], ['south', 'c'],
    ]);
    // north/a in [10, 15): median near 12.5; south/b in [60, 65).
    expect(Math.abs(byBoth.groups[1].quantiles[0].value - 12.5)).toBeLessThan(1);
    expect(Math.abs(byBoth.groups[3].quantiles[0].value - 62.5)).toBeLessThan(1);
    expect(byBoth.groups[3].quantiles[0].true).toBeCloseTo(62.5, 0);
    expect(crossed.stderr).toMatch(/2 of the --keys hold no rows: "\[\\"north\\",\\"c\\"\]", "\[\\"south\\",\\"c\\"\]"/);
    const privately = JSON.parse(run([...twoArgs, '--group-by', 'region,shop', '--delta', '1e-6']).stdout);
    expect(privately.groups.map((g: { key: string[] }) => g.key)).toEqual([['north', 'a'], ['north', 'b'], ['south', 'a'], ['south', 'b']]);
    expect(run([...twoArgs, '--group-by', 'region,shop', '--keys', 'north']).stderr).toMatch(/one --keys list for each/);
    // A group-by column that is not there: the columns are listed.
    expect(run([...args, '--group-by', 'department', '--keys', 'a']).stderr).toMatch(/no group-by column named 'department'; the columns are 'region', 'amount'/);
    // Checked before the file is read (this one does not exist).
    const absent = join(dir, 'absent.csv');
    for (const [extra, message] of [
      [['--keys', 'a'], /--keys goes with --group-by/],
      [['--group-by', 'region'], /--group-by needs --keys/],
      [['--group-by', 'region', '--keys', 'a', '--delta', '1e-6'], /not both/],
      [['--group-by', 'region', '--keys', 'a', '--max-groups', '2'], /--max-groups with --user-column/],
      [['--group-by', 'region', '--keys', 'a,a'], /repeats the public key/],
      [['--group-by', 'region', '--keys', '"a,b'], /--keys is not a comma-separated list/],
    ] as [string[], RegExp][]) {
      const refused = run([absent, ...args.slice(1), ...extra]);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toMatch(message);
    }
  });

  it('prints confidence intervals with --confidence', () => {
    const result = JSON.parse(execFileSync(process.execPath, [
      cli, good, '--column', 'score', '--lower', '0', '--upper', '100',
      '--epsilon', '4', '--quantiles', '0.25,0.75', '--confidence', '0.9', '--interval-share', '0.5',
    ], { encoding: 'utf8' }));
    expect(result.intervals).toEqual({
      confidence: 0.9, kind: 'sample', simultaneous: false, method: result.intervals.method, privacy: { kind: 'pure', epsilon: 2 },
    });
    expect(['brackets', 'tree']).toContain(result.intervals.method);
    for (const { value, interval } of result.quantiles) {
      expect(interval[0]).toBeLessThanOrEqual(value);
      expect(interval[1]).toBeGreaterThanOrEqual(value);
    }
    expect(run([good, '--column', 'score', '--lower', '0', '--upper', '100', '--epsilon', '1', '--confidence', '1']).stderr)
      .toMatch(/INVALID_OPTION: confidence must be/);
    const population = JSON.parse(run([
      good, '--column', 'score', '--lower', '0', '--upper', '100',
      '--epsilon', '4', '--quantiles', '0.5', '--confidence', '0.9', '--interval', 'population',
    ]).stdout);
    expect(population.intervals.kind).toBe('population');
    expect(population.quantiles[0].interval[0]).toBeLessThanOrEqual(population.quantiles[0].value);
    expect(run([good, '--column', 'score', '--lower', '0', '--upper', '100', '--epsilon', '1', '--confidence', '0.9', '--interval', 'all']).stderr)
      .toMatch(/INVALID_OPTION: interval must be/);
    // All deciles at once: one noisy tree, simultaneous coverage.
    const together = JSON.parse(run([
      good, '--column', 'score', '--lower', '0', '--upper', '100', '--epsilon', '4',
      '--quantiles', '0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9', '--confidence', '0.9', '--simultaneous',
    ]).stdout);
    expect(together.intervals.simultaneous).toBe(true);
    expect(together.intervals.method).toBe('tree');
    expect(run([good, '--column', 'score', '--lower', '0', '--upper', '100', '--epsilon', '1', '--simultaneous']).stderr)
      .toMatch(/INVALID_OPTION: intervalShare, interval and simultaneous apply only with confidence/);
  });

  it('releases from a GROUP BY\'s bucket counts with --counts', async () => {
    // 100 buckets over [0, 100], some empty, as a database returns them.
    const lines = ['bucket,n'];
    const counts = new Float64Array(100);
    for (let b = 0; b < 100; b += 3) {
      counts[b] = 10 + (b % 7);
      lines.push(`${b},${counts[b]}`);
    }
    const file = writeCsv('counts.csv', `${lines.join('\n')}\n`);
    const args = [file, '--counts', '--buckets', '100', '--lower', '0', '--upper', '100', '--epsilon', '1', '--quantiles', '0.1,0.5,0.9', '--seed', '4'];
    const result = run(args);
    expect(result.stderr).toBe('');
    const out = JSON.parse(result.stdout);
    expect(out.counts).toEqual({ buckets: 100, resolution: 1 });
    // The package, from the same counts and seed: the same values.
    const { loadDpQuantiles } = await import('../../dist/node.js');
    const dpq = await loadDpQuantiles();
    const expected = dpq.releaseFromCounts(counts, { lower: 0, upper: 100, quantiles: [0.1, 0.5, 0.9], epsilon: 1, seed: 4 });
    expect(out.quantiles.map((e: { value: number }) => e.value)).toEqual(Array.from(expected.values));
    // Several sets from one session, with intervals.
    const session = JSON.parse(
      run([file, '--counts', '--buckets', '100', '--lower', '0', '--upper', '100', '--epsilon', '1', '--quantiles', '0.5', '--quantiles', '0.25,0.75', '--budget', 'epsilon=2', '--confidence', '0.9']).stdout,
    );
    expect(session.releases).toHaveLength(2);
    expect(session.session.spent).toEqual({ epsilon: 2 });
    expect(session.releases[0].quantiles[0].interval).toHaveLength(2);
    // Bad input, each named.
    expect(run([file, '--counts', '--lower', '0', '--upper', '100', '--epsilon', '1']).stderr).toMatch(/--counts needs --buckets B/);
    expect(run([file, '--counts', '--buckets', '50', '--lower', '0', '--upper', '100', '--epsilon', '1']).stderr).toMatch(
      /line \d+: bucket '51' is not a whole number from 0 to 49/,
    );
    const negative = writeCsv('negative.csv', '0,5\n1,-2\n');
    expect(run([negative, '--counts', '--buckets', '2', '--lower', '0', '--upper', '1', '--epsilon', '1']).stderr).toMatch(/INVALID_COUNTS: counts\[1\]/);
    expect(run([file, '--counts', '--buckets', '100', '--column', 'n', '--lower', '0', '--upper', '100', '--epsilon', '1']).stderr).toMatch(
      /--column does not apply to --counts/,
    );
  });

  it('protects a person with --user-column and --max-contributions', () => {
    // 300 people with one score each in [0, 100], and 'bot' with 3,000 rows at 100.
    const lines = Array.from({ length: 300 }, (_, i) => `p${i},${(i * 37) % 101}`);
    for (let i = 0; i < 3000; i++) lines.push('bot,100');
    const events = writeCsv('events.csv', `user,score\n${lines.join('\n')}\n`);
    const base = [events, '--column', 'score', '--lower', '0', '--upper', '100', '--epsilon', '1', '--quantiles', '0.5'];
    expect(JSON.parse(run(base).stdout).quantiles[0].value).toBeGreaterThan(99);
    const person = run([...base, '--user-column', 'user', '--max-contributions', '2', '--budget', 'epsilon=2']);
    expect(person.stderr).toBe('');
    const out = JSON.parse(person.stdout);
    expect(out.releases[0].neighbouring).toBe('add-remove-user');
    expect(out.releases[0].maxContributions).toBe(2);
    expect(out.releases[0].quantiles[0].value).toBeLessThan(75);
    expect(out.session.spent).toEqual({ epsilon: 1 });
    expect(run([...base, '--user-column', 'user']).stderr).toMatch(/go together/);
    expect(run([...base, '--user-column', 'nobody', '--max-contributions', '1']).stderr).toMatch(/no user column named 'nobody'/);
    expect(run([...base, '--user-column', 'user', '--max-contributions', '0']).stderr).toMatch(/INVALID_OPTION: maxContributions/);
  });

  it('estimates the bounds privately with --estimate-bounds, also inside a --budget session', () => {
    const incomes = writeCsv('unknown-range.csv', `income\n${Array.from({ length: 3000 }, (_, i) => 1000 + ((i * 7919) % 99000)).join('\n')}\n`);
    const alone = run([incomes, '--column', 'income', '--estimate-bounds', 'epsilon=0.5', '--epsilon', '1', '--quantiles', '0.5']);
    expect(alone.stderr).toBe('');
    const out = JSON.parse(alone.stdout);
    expect(out.estimatedBounds.privacy).toEqual({ kind: 'pure', epsilon: 0.5 });
    expect(out.bounds[0]).toBeLessThan(out.bounds[1]);
    // The estimate misses by design with probability up to 5% (about 1% here),
    // so where it lands is checked on a seeded run, which is not private.
    const seeded = JSON.parse(run([incomes, '--column', 'income', '--estimate-bounds', 'epsilon=0.5', '--epsilon', '1',
      '--quantiles', '0.5', '--seed', '7']).stdout);
    expect(seeded.estimatedBounds.privacy.kind).toBe('none');
    expect(seeded.bounds[0]).toBeGreaterThanOrEqual(512);
    expect(seeded.bounds[0]).toBeLessThanOrEqual(2048);
    expect(seeded.bounds[1]).toBeGreaterThanOrEqual(65536);
    expect(seeded.quantiles[0].value).toBeGreaterThan(30000);
    expect(seeded.quantiles[0].value).toBeLessThan(70000);
    const inSession = JSON.parse(run([incomes, '--column', 'income', '--estimate-bounds', 'rho=0.02', '--rho', '0.1',
      '--budget', 'rho=0.125']).stdout);
    expect(inSession.session.spent.rho).toBe(0.12);
    // The recommended split, as people write it: 0.2 for the bounds and 0.8
    // for the values fill a session of 1 exactly (as doubles they add to
    // 1.0000000000000002), and 10^-9 more does not fit.
    const split = run([incomes, '--column', 'income', '--estimate-bounds', 'epsilon=0.2', '--epsilon', '0.8',
      '--budget', 'epsilon=1']);
    expect(split.stderr).toBe('');
    expect(JSON.parse(split.stdout).session.spent).toEqual({ epsilon: 1 });
    expect(JSON.parse(split.stdout).session.remaining).toEqual({ epsilon: 0 });
    expect(run([incomes, '--column', 'income', '--estimate-bounds', 'epsilon=0.2', '--epsilon', '0.800000001',
      '--budget', 'epsilon=1']).stderr).toMatch(/BUDGET_EXCEEDED: .*it would make epsilon = 1.000000001/);
    expect(inSession.estimatedBounds.privacy).toEqual({ kind: 'zcdp', rho: 0.02 });
    expect(run([incomes, '--column', 'income', '--lower', '0', '--estimate-bounds', 'epsilon=1', '--epsilon', '1']).stderr)
      .toMatch(/not both/);
    expect(run([incomes, '--column', 'income', '--epsilon', '1']).stderr).toMatch(/--estimate-bounds/);
    // Per person: the bounds protect a person too, and one person's 5,000
    // rows at 10^9 do not stretch them.
    const rows = Array.from({ length: 3000 }, (_, i) => `p${i},${1000 + ((i * 7919) % 99000)}`);
    for (let i = 0; i < 5000; i++) rows.push('whale,1000000000');
    const events = writeCsv('events-income.csv', `user,income\n${rows.join('\n')}\n`);
    const person = run([events, '--column', 'income', '--user-column', 'user', '--max-contributions', '1',
      '--estimate-bounds', 'epsilon=1', '--epsilon', '1', '--quantiles', '0.5', '--seed', '2']);
    // (The whale's rows are clamped, and the owner is told so on stderr.)
    expect(person.status).toBe(0);
    expect(person.stderr).toMatch(/values lie outside/);
    const perPerson = JSON.parse(person.stdout);
    expect(perPerson.estimatedBounds.neighbouring).toBe('add-remove-user');
    expect(perPerson.bounds[1]).toBeLessThanOrEqual(131072);
    expect(perPerson.neighbouring).toBe('add-remove-user');
  });

  it('warns the data owner on stderr when most values were clamped', () => {
    const incomes = writeCsv('incomes.csv', `income\n${Array.from({ length: 50 }, (_, i) => 20000 + i * 1000).join('\n')}\n`);
    const result = run([incomes, '--column', 'income', '--lower', '-5000', '--upper', '-1', '--epsilon', '1']);
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/warning: 100% of the values lie outside \[-5000, -1\]/);
    const fine = run([incomes, '--column', 'income', '--lower', '0', '--upper', '100000', '--epsilon', '1']);
    expect(fine.stderr).toBe('');
  });

  it('reports library errors with their code', () => {
    const result = run([good, '--column', 'score', '--lower', '5', '--upper', '1', '--epsilon', '1']);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/INVALID_BOUNDS/);
  });

  it('rejects a missing column and missing bounds with usage', () => {
    expect(run([good, '--column', 'nope', '--lower', '0', '--upper', '1', '--epsilon', '1']).stderr)
      .toMatch(/no column named 'nope'/);
    expect(run([good, '--column', 'score', '--epsilon', '1']).stderr).toMatch(/--lower and --upper/);
  });
});

describe('the build scripts', () => {
  it('configure a build folder afresh when it was configured for another checkout (a copied or moved one)', () => {
    const root = mkdtempSync(join(tmpdir(), 'dpq-moved-'));
    const script = fileURLToPath(new URL('../../scripts/fresh-build-dirs.sh', import.meta.url));
    mkdirSync(join(root, 'build/native'), { recursive: true });
    mkdirSync(join(root, 'build/wasm'), { recursive: true });
    writeFileSync(join(root, 'build/native/CMakeCache.txt'), 'CMAKE_HOME_DIRECTORY:INTERNAL=/somewhere/else\n');
    writeFileSync(join(root, 'build/wasm/CMakeCache.txt'), `CMAKE_HOME_DIRECTORY:INTERNAL=${realpathSync(root)}\n`);
    const out = execFileSync('bash', [script], { cwd: realpathSync(root), encoding: 'utf8' });
    expect(out).toMatch(/build\/native was configured for another folder/);
    expect(existsSync(join(root, 'build/native'))).toBe(false);
    expect(existsSync(join(root, 'build/wasm/CMakeCache.txt'))).toBe(true);
  });
});

describe('dp-quantiles CLI method options', () => {
  it('takes --step and reports rank errors counting ties', () => {
    const integers = writeCsv('hours.csv', `hours\n${Array.from({ length: 400 }, (_, i) => (i % 2 ? 40 : i % 97)).join('\n')}\n`);
    const result = JSON.parse(execFileSync(process.execPath, [
      cli, integers, '--column', 'hours', '--lower', '0', '--upper', '100',
      '--epsilon', '1', '--quantiles', '0.5', '--step', '1', '--show-true',
    ], { encoding: 'utf8' }));
    expect(result.quantiles[0].value).toBe(40);
    expect(result.quantiles[0].true).toBe(40);
    expect(result.quantiles[0].rankError).toBe(0);
    const bad = run([integers, '--column', 'hours', '--lower', '0', '--upper', '100', '--epsilon', '1', '--step', '-1']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('INVALID_OPTION');
    expect(bad.stderr).toContain('step');
  });

  it('passes --option values to the method', () => {
    const result = run([
      good, '--column', 'score', '--lower', '0', '--upper', '100', '--epsilon', '1',
      '--method', 'appindexp', '--option', 'delta=1e-6',
    ]);
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout).privacy).toEqual({ kind: 'approx', epsilon: 1, delta: 1e-6 });
    const tree = run([
      good, '--column', 'score', '--lower', '0', '--upper', '100', '--epsilon', '1',
      '--method', 'tree-cdf', '--option', 'cells=64', '--option', 'budget=min-variance',
    ]);
    expect(tree.status).toBe(0);
    expect(JSON.parse(tree.stdout).method).toBe('tree-cdf');
  });

  it('reports an option the method does not take', () => {
    const result = run([
      good, '--column', 'score', '--lower', '0', '--upper', '100', '--epsilon', '1', '--option', 'height=3',
    ]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/INVALID_OPTION/);
    expect(run([good, '--column', 'score', '--lower', '0', '--upper', '1', '--epsilon', '1', '--option', 'x']).stderr)
      .toMatch(/NAME=VALUE/);
  });
});

describe('examples/stream-large-csv.mjs', () => {
  it('generates a CSV, streams it in chunks and prints private quantiles', () => {
    const example = fileURLToPath(new URL('../../examples/stream-large-csv.mjs', import.meta.url));
    const csv = join(dir, 'stream.csv');
    execFileSync(process.execPath, [example, '--generate', '150000', csv], { stdio: 'pipe' });
    const result = spawnSync(process.execPath, [example, csv, '--column', 'value', '--lower', '0', '--upper', '1000', '--alpha', '1e-3'], {
      encoding: 'utf8',
    });
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/100% read, 150,000 values/);
    const output = JSON.parse(result.stdout);
    expect(output.method).toBe('hist-gk');
    expect(output.sketchBytes).toBeLessThan(150000 * 8);
    const median = output.quantiles.find((q: { q: number }) => q.q === 0.5).value;
    expect(median).toBeGreaterThan(45); // log-normal(4, 1): median e^4 = 54.6
    expect(median).toBeLessThan(65);
  });

  it('skips empty and non-number cells with a note instead of crashing', () => {
    const example = fileURLToPath(new URL('../../examples/stream-large-csv.mjs', import.meta.url));
    const rows = Array.from({ length: 2000 }, (_, i) => `${i},${i % 100 === 0 ? '' : i % 97 === 0 ? 'n/a' : (i % 50) + 0.5}`);
    const csv = writeCsv('holes.csv', `id,value\n${rows.join('\n')}\n`);
    const result = spawnSync(process.execPath, [example, csv, '--column', 'value', '--lower', '0', '--upper', '50', '--alpha', '1e-2'], {
      encoding: 'utf8',
    });
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/skipped 40 rows whose 'value' is empty or not a number \(first at line 2\)/);
    expect(result.stderr).toMatch(/1,960 values/);
    expect(JSON.parse(result.stdout).quantiles).toHaveLength(6);
    const missing = spawnSync(process.execPath, [example, csv, '--column', 'nope'], { encoding: 'utf8' });
    expect(missing.status).toBe(1);
    expect(missing.stderr.trim()).toBe("stream-large-csv: no column named 'nope' in the header: id, value");
  });
});
