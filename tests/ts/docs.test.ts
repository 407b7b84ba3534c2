// Every TypeScript and JavaScript example in README.md and docs/ runs as a
// user would copy it: the blocks of one document, in order, make one module
// that is type-checked (strict) against the packed tarball's types and run
// with Node in a fresh folder where only the tarball is installed. A block
// that is not meant to run must not be marked ts or js (```text, ```sh).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function markdownUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? markdownUnder(join(dir, entry.name))
      : entry.name.endsWith('.md')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** The ts and js blocks of a Markdown text, in order. */
export function codeBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```(?:ts|js|typescript|javascript)\n([\s\S]*?)^```/gm)].map((m) => m[1]);
}

const documents = ['README.md', 'CHANGELOG.md', ...markdownUnder('docs')].map((path) => ({
  path,
  blocks: codeBlocks(readFileSync(join(root, path), 'utf8')),
}));
const withCode = documents.filter((d) => d.blocks.length > 0);

let app: string;

beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'dpq-docs-'));
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: root, encoding: 'utf8' }),
  );
  app = join(dir, 'app');
  mkdirSync(join(app, 'examples'), { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'docs-examples', type: 'module', private: true }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(dir, packed[0].filename)], {
    cwd: app,
    stdio: 'pipe',
  });
  for (const { path, blocks } of withCode) {
    writeFileSync(join(app, 'examples', `${slug(path)}.ts`), blocks.join('\n'));
  }
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true,
        lib: ['es2022', 'esnext.disposable', 'dom'], types: ['node'], typeRoots: [join(root, 'node_modules/@types')],
        rootDir: 'examples', outDir: 'out', skipLibCheck: false,
      },
      include: ['examples/*.ts'],
    }),
  );
}, 120_000);

function slug(path: string): string {
  return path.replace(/\.md$/, '').replace(/[^\w]+/g, '-');
}

describe('documentation', () => {
  it('has a README of at most 300 lines and code examples in it and in docs/', () => {
    expect(readFileSync(join(root, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(300);
    const paths = withCode.map((d) => d.path);
    for (const path of ['README.md', 'docs/api.md', 'docs/sessions.md', 'docs/scale.md']) expect(paths).toContain(path);
    expect(withCode.reduce((sum, d) => sum + d.blocks.length, 0)).toBeGreaterThanOrEqual(20);
  });

  it('type-checks every example against the published types', () => {
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const checked = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app, encoding: 'utf8' });
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.status).toBe(0);
  }, 120_000);

  it.each(withCode.map((d) => [d.path]))('runs the examples of %s', (path) => {
    const file = join(app, 'out', `${slug(path)}.js`);
    const run = spawnSync(process.execPath, [file], { cwd: app, encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr, `${relative(app, file)}\n${run.stdout}`).toBe('');
    expect(run.status).toBe(0);
  }, 90_000);
});
