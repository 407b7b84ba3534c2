// `npm pack` gives a tarball that installs into a fresh folder and works there:
// the built WASM is inside, the node entry and the CLI run.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

it('packs, installs in a fresh folder and releases quantiles there', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpq-pack-'));
  // dist/ is already built by the test script: skip the prepack rebuild.
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
      cwd: root,
      encoding: 'utf8',
    }),
  );
  const files: string[] = packed[0].files.map((f: { path: string }) => f.path);
  expect(files).toContain('dist/generated/dpq_module.mjs');
  expect(files).toContain('dist/index.d.ts');
  expect(files.some((f) => f.startsWith('tests/') || f.startsWith('core/'))).toBe(false);
  expect(files).toContain('LICENSE');
  // Every relative link of the shipped Markdown resolves inside the tarball.
  const broken: string[] = [];
  for (const doc of files.filter((f) => f.endsWith('.md'))) {
    const text = readFileSync(join(root, doc), 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const resolved = posix.normalize(posix.join(posix.dirname(doc), target)).replace(/\/$/, '');
      if (!files.some((f) => f === resolved || f.startsWith(`${resolved}/`))) broken.push(`${doc} -> ${target}`);
    }
  }
  expect(broken).toEqual([]);

  const app = join(dir, 'app');
  execFileSync('mkdir', ['-p', app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', type: 'module', private: true }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(dir, packed[0].filename)], {
    cwd: app,
    stdio: 'pipe',
  });
  writeFileSync(
    join(app, 'main.js'),
    `import { loadDpQuantiles } from 'dp-quantiles';
const dpq = await loadDpQuantiles();
const v = dpq.quantiles([1, 2, 3, 4, 5, 6, 7, 8, 9], { lower: 0, upper: 10, quantiles: [0.5], epsilon: 1 });
// The analyst's toolkit and the counts path, from the installed tarball.
const data = Array.from({ length: 5000 }, (_, i) => (i * 37) % 100);
const session = dpq.session({ epsilon: 10 });
const bounds = session.bounds(data, { epsilon: 1 });
const bars = session.release(data, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 2, confidence: 0.9, interval: 'population' });
const users = data.map((_, i) => 'p' + (i % 2500));
const person = session.release(data, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 2, users, maxContributions: 2 });
const counts = new Array(100).fill(50);
const fromCounts = session.releaseFromCounts(counts, { lower: 0, upper: 100, quantiles: [0.5], epsilon: 2 });
const a = dpq.createStream({ lower: 0, upper: 100, alpha: 0.01 });
const b = dpq.createStream({ lower: 0, upper: 100, alpha: 0.01 });
a.push(data.slice(0, 2500));
b.push(data.slice(2500));
a.merge(dpq.loadStream(b.serialize()));
console.log(JSON.stringify({
  v: Array.from(v),
  bounds: [bounds.lower, bounds.upper],
  interval: [bars.intervals.low[0], bars.intervals.high[0], bars.intervals.kind],
  person: person.neighbouring,
  fromCounts: fromCounts.values[0],
  spent: session.spent.epsilon,
  merged: a.count,
}));`,
  );
  const result = JSON.parse(execFileSync(process.execPath, ['main.js'], { cwd: app, encoding: 'utf8' }));
  const out = result.v;
  expect(out).toHaveLength(1);
  expect(out[0]).toBeGreaterThanOrEqual(0);
  expect(out[0]).toBeLessThanOrEqual(10);
  expect(result.bounds[1]).toBeGreaterThanOrEqual(99);
  expect(result.interval[0]).toBeLessThanOrEqual(result.interval[1]);
  expect(result.interval[2]).toBe('population');
  expect(result.person).toBe('add-remove-user');
  expect(result.fromCounts).toBe(Math.round(result.fromCounts));
  expect(result.spent).toBeCloseTo(7, 9);
  expect(result.merged).toBe(5000);

  // A TypeScript consumer: the README's quick start type-checks against the
  // published types under each module resolution users have.
  writeFileSync(
    join(app, 'quickstart.ts'),
    `import { loadDpQuantiles, DpQuantilesError, type ConfidenceIntervals, type CountsData, type CountsOptions, type PerPersonOptions, type QuantilesRelease, type SessionBudget } from 'dp-quantiles';
const data = [3, 1, 4, 1, 5, 9, 2, 6];
const dpq = await loadDpQuantiles();
const values: Float64Array = dpq.quantiles(data, { lower: 0, upper: 10, quantiles: [0.25, 0.5, 0.75], epsilon: 1 });
const release: QuantilesRelease = dpq.release(data, { lower: 0, upper: 10, quantiles: [0.5], rho: 0.5, step: 1 });
const stream = dpq.createStream({ lower: 0, upper: 10, alpha: 1e-3 });
stream.push(data);
stream.dispose();
{
  using scoped = dpq.createStream({ lower: 0, upper: 10, alpha: 1e-3 });
  scoped.push(data);
  using session = dpq.session({ epsilon: 2 });
  const inSession: QuantilesRelease = session.release(data, { lower: 0, upper: 10, quantiles: [0.5], epsilon: 1 });
  const spent: SessionBudget = session.spent;
  console.log(inSession.values.length, spent, session.releaseStream(scoped, { quantiles: [0.5], epsilon: 0.5, method: 'hist-gk' }).values);
}
try {
  dpq.quantiles([Number.NaN], { lower: 0, upper: 1, quantiles: [0.5], epsilon: 1 });
} catch (error) {
  if (error instanceof DpQuantilesError) console.log(error.code);
}
console.log(values.length, release.resolution);
// Error bars and per-person protection, as the README shows them.
const withBars = dpq.release(data, {
  lower: 0, upper: 10, quantiles: [0.5], epsilon: 1, confidence: 0.9,
  users: data.map((_, i) => \`p\${i % 3}\`), maxContributions: 2,
});
const bars: ConfidenceIntervals | undefined = withBars.intervals;
const person: PerPersonOptions = { users: ['a', 'b'], maxContributions: 1 };
console.log(bars?.low[0], bars?.privacy.kind, withBars.neighbouring, withBars.maxContributions, person);
const population = dpq.release(data, { lower: 0, upper: 10, quantiles: [0.5], epsilon: 1, confidence: 0.9, interval: 'population' });
const kind: 'sample' | 'population' | undefined = population.intervals?.kind;
console.log(kind);
// Counts from a database, as docs/scale.md shows them.
const counts: CountsData = [3n, 0n, 5n, 2n];
const countsOptions: CountsOptions = { lower: 0, upper: 4, quantiles: [0.5], epsilon: 1, method: 'aq' };
console.log(dpq.releaseFromCounts(counts, countsOptions).values, dpq.quantilesFromCounts([1, 2], { lower: 0, upper: 1, quantiles: [0.5], rho: 1 }));
`,
  );
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  for (const [module, resolution] of [['nodenext', 'nodenext'], ['esnext', 'bundler'], ['commonjs', 'node10']]) {
    const config = {
      compilerOptions: {
        target: 'es2022', module, moduleResolution: resolution, strict: true, noEmit: true,
        skipLibCheck: false, lib: ['es2022', 'dom'], types: [],
      },
      files: ['quickstart.ts'],
    };
    // Top-level await needs an ES module; under node10/commonjs wrap it.
    if (resolution === 'node10') {
      writeFileSync(join(app, 'quickstart-cjs.ts'), `async function main(): Promise<void> {\n${
        readFileSync(join(app, 'quickstart.ts'), 'utf8').split('\n').slice(1).join('\n')}\n}\nvoid main();\nimport { loadDpQuantiles, DpQuantilesError, type ConfidenceIntervals, type CountsData, type CountsOptions, type PerPersonOptions, type QuantilesRelease, type SessionBudget } from 'dp-quantiles';\n`);
      config.files = ['quickstart-cjs.ts'];
    }
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(config));
    const checked = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app, encoding: 'utf8' });
    expect(checked.stdout + checked.stderr, `${resolution}`).toBe('');
    expect(checked.status).toBe(0);
  }

  writeFileSync(join(app, 'data.csv'), 'x\n1\n2\n3\n');
  const cli = JSON.parse(
    execFileSync(join(app, 'node_modules/.bin/dp-quantiles'), ['data.csv', '--column', 'x', '--lower', '0', '--upper', '4', '--epsilon', '1'], {
      cwd: app,
      encoding: 'utf8',
    }),
  );
  expect(cli.method).toBe('aq');
}, 120_000);
