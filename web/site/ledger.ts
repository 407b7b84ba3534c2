import type { SavedSession } from '../../dist/browser.js';
import type { ReleaseResult, Request } from './protocol.js';

// Each dataset's session ledger lives in localStorage (workers have none),
// so the budget shown survives a reload: the page hands it to the worker
// with the data, and keeps the ledger each release sends back. Deleting a
// ledger gives no privacy back; "New budget" asks first.
export function ledgerKey(request: Request): string | undefined {
  if (request.type === 'builtin') return `dp-quantiles-ledger:builtin:${request.id}`;
  if (request.type === 'file') {
    const { name, size, lastModified } = request.file;
    return `dp-quantiles-ledger:file:${name}:${size}:${lastModified}`;
  }
  return undefined;
}

export function storedLedger(request: Request): SavedSession | undefined {
  const key = ledgerKey(request);
  const text = key === undefined ? null : localStorage.getItem(key);
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as SavedSession;
  } catch {
    return undefined;
  }
}

export function withLedger(request: Request): Request {
  const ledger = storedLedger(request);
  return ledger === undefined || (request.type !== 'builtin' && request.type !== 'file') ? request : { ...request, ledger };
}

export function keepLedger(request: Request, session: ReleaseResult['session']): void {
  const key = ledgerKey(request);
  if (session !== undefined && key !== undefined) localStorage.setItem(key, JSON.stringify(session.ledger));
}
