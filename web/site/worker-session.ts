// The demo worker's privacy session: one per loaded dataset, resumed from
// the ledger the page keeps, and the one way replies reach the page.
import { loadDpQuantiles } from '../../dist/browser.js';
import type { DpQuantiles, PrivacySession, SavedSession } from '../../dist/browser.js';
import type { ReleaseResult, Reply } from './protocol.js';

export const ready: Promise<DpQuantiles> = loadDpQuantiles();

/**
 * One privacy session per loaded dataset: every release on it spends from
 * this total, and loading data starts a new one. (epsilon, delta) so that
 * epsilon and rho releases both fit (docs/sessions.md). The comparison's
 * runs are for the owner's eyes and are not charged.
 */
const SESSION_TOTAL = { epsilon: 10, delta: 1e-6 } as const;

let session: PrivacySession | undefined;

// The dataset's saved ledger, resumed at its first release.
let savedLedger: SavedSession | undefined;

export function newSession(ledger?: SavedSession): void {
  session?.dispose();
  session = undefined;
  savedLedger = ledger;
}

export async function currentSession(): Promise<PrivacySession> {
  if (session === undefined) {
    const dpq = await ready;
    // A damaged ledger (CORRUPT_DATA) cannot be trusted to say what was
    // spent: the page is told by the error, and nothing is released.
    session = savedLedger === undefined ? dpq.session(SESSION_TOTAL) : dpq.restoreSession(savedLedger);
    savedLedger = undefined;
  }
  return session;
}

// A release's newest saved ledger: when it is not what this worker's
// session holds (another tab spent from it since), the session restarts from
// it, so two tabs add up their charges instead of each writing its own over
// the other's (the page takes a lock around read, release and write).
export function takeNewestLedger(ledger: SavedSession | undefined): void {
  if (ledger === undefined) return;
  const held = session === undefined ? savedLedger : session.save();
  if (held === undefined || JSON.stringify(held) !== JSON.stringify(ledger)) newSession(ledger);
}

// What the session has spent, for the page, with the ledger it keeps.
export function sessionState(): ReleaseResult['session'] {
  if (session === undefined) return undefined;
  const plain = (budget: object) =>
    Object.fromEntries(Object.entries(budget).filter((entry): entry is [string, number] => typeof entry[1] === 'number'));
  return { spent: plain(session.spent), total: plain(session.total), releases: session.releases, ledger: session.save() };
}

export function post(reply: Reply): void {
  (self as unknown as Worker).postMessage(reply);
}
