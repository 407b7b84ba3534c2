// Debian's Chromium for the browser tests (Playwright cannot download its
// own here), and a local static server for what they load.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { chromium, type Browser } from 'playwright-core';
import sirv from 'sirv';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run'],
  });
}

/**
 * Serves `root` on 127.0.0.1 (requests `allow` refuses get 404), with
 * `headers` on every response.
 */
export async function serveStatic(
  root: string,
  allow: (url: string) => boolean = () => true,
  headers: Record<string, string> = {},
): Promise<{ server: Server; origin: string }> {
  const serve = sirv(root, { dev: true });
  const notFound = (res: ServerResponse) => {
    res.statusCode = 404;
    res.end();
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (!allow(req.url ?? '')) notFound(res);
    else serve(req, res, () => notFound(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
