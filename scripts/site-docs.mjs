// Build step of the demo site: the package's own documents (README.md,
// CHANGELOG.md and the Markdown under docs/, as the npm tarball ships them) rendered to
// HTML under dist-site/docs/, with links between them kept working. The
// page's "API documentation" link points here, so it never depends on a
// registry page.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { marked } from 'marked';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'dist-site/docs');
// The demo's own icon (a data: URI in index.html), so a docs page asks the
// server for no /favicon.ico (a 404 there).
const icon = readFileSync(join(root, 'web/site/index.html'), 'utf8').match(/<link rel="icon"[^>]*>/)[0];
const markdownIn = (dir) => readdirSync(join(root, dir)).filter((f) => f.endsWith('.md')).map((f) => `${dir}/${f}`);
const pages = ['README.md', 'CHANGELOG.md', ...markdownIn('docs'), ...markdownIn('docs/algorithms'), ...markdownIn('docs/experiments')];

// README.md sits at the docs root; a link to another shipped .md becomes its
// .html; links to what the tarball does not ship stay as they are.
function page(path) {
  const source = readFileSync(join(root, path), 'utf8');
  const html = marked.parse(source.replace(/\]\(((?:\.\/)?[\w./-]+)\.md(#[\w-]*)?\)/g, '](./$1.html$2)'));
  const title = (source.match(/^# (.+)$/m) ?? [, path])[1];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<title>${title.replace(/</g, '&lt;')} — dp-quantiles</title>
${icon}
<style>body{font-family:system-ui,sans-serif;max-width:52rem;margin:0 auto;padding:1rem 1.25rem 3rem;line-height:1.5;color:#1a1a1a}
pre{overflow-x:auto;background:#f5f5f5;padding:.75rem}code{font-size:.92em}table{border-collapse:collapse}
th,td{border:1px solid #ccc;padding:.25rem .5rem}a{color:#1d5fbf}</style>
</head>
<body>
<p><a href="${'../'.repeat(path.split('/').length) + 'index.html'}">← the demo</a></p>
${html}
</body>
</html>
`;
}

for (const path of pages) {
  const target = join(out, path.replace(/\.md$/, '.html'));
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, page(path));
}
// The README links the licence text.
copyFileSync(join(root, 'LICENSE'), join(out, 'LICENSE'));
console.log(`site docs: ${pages.length} pages`);
