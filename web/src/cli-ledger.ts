// The CLI's session ledger file (--session FILE): resumed, locked while
// a run spends from it, written whenever its charges grew.
// The session of --budget and --session FILE: a saved ledger resumes (and
// must match --budget when both are given); else --budget starts one. With
// a FILE, the ledger is locked (FILE.lock) from here until close(), so
// concurrent runs cannot each spend from the same balance (the last write
// won: three runs of 0.3 from 0.1 spent 1.0 and saved 0.4). close() writes
// the ledger whenever its charges grew, whatever happened after them: a
// charged refusal (NOT_ENOUGH_DATA) or private bounds followed by a failed
// release are published answers too.
import { closeSync, existsSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';

import { UsageError, parseBudget } from './cli-usage.js';
import { DpQuantilesError, type DpQuantiles, type PrivacySession, type SavedSession, type SessionOptions } from './node.js';

export function openSession(
  dpq: DpQuantiles,
  args: { budget?: string; session?: string },
  neighbouring: 'add-remove' | 'add-remove-user',
): { session: PrivacySession | undefined; close: () => void } {
  const budget = args.budget === undefined ? undefined : parseBudget(args.budget);
  const file = args.session;
  if (file === undefined) {
    return { session: budget === undefined ? undefined : dpq.session({ ...budget, neighbouring } as SessionOptions), close: () => {} };
  }
  const unlock = lockLedger(file);
  let session: PrivacySession;
  try {
    if (existsSync(file)) {
      let saved: unknown;
      try {
        saved = JSON.parse(readFileSync(file, 'utf8'));
      } catch {
        throw new DpQuantilesError('CORRUPT_DATA', `${file} is not a session ledger (not JSON)`);
      }
      session = dpq.restoreSession(saved as SavedSession);
      if (budget !== undefined && JSON.stringify(session.total) !== JSON.stringify(budget)) {
        throw new UsageError(`--budget ${args.budget} is not the total of the ledger in ${file} (${JSON.stringify(session.total)}); leave --budget out to use it`);
      }
      if (session.neighbouring !== neighbouring) {
        throw new UsageError(`the ledger in ${file} protects '${session.neighbouring}'; these releases protect '${neighbouring}'`);
      }
    } else {
      if (budget === undefined) throw new UsageError(`--session ${file}: no ledger there yet; give --budget to start one`);
      session = dpq.session({ ...budget, neighbouring } as SessionOptions);
    }
  } catch (error) {
    unlock();
    throw error;
  }
  const charges = session.releases;
  const opened = session;
  return {
    session,
    close: () => {
      try {
        if (opened.releases > charges) {
          const temporary = `${file}.${process.pid}.tmp`;
          writeFileSync(temporary, `${JSON.stringify(opened.save(), null, 2)}\n`);
          renameSync(temporary, file);
        }
      } finally {
        unlock();
      }
    },
  };
}

// Takes FILE.lock (created exclusively, holding this process's id), waiting
// up to LOCK_WAIT_MS for another run to let go; returns its release, which
// also runs if the process exits or is interrupted first.
export const LOCK_WAIT_MS = 30_000;
export function lockLedger(file: string): () => void {
  const lock = `${file}.lock`;
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const start = Date.now();
  for (;;) {
    try {
      const fd = openSync(lock, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      if (Date.now() - start > LOCK_WAIT_MS) {
        let holder = '';
        try {
          holder = readFileSync(lock, 'utf8').trim();
        } catch {
          continue; // let go just now
        }
        throw new DpQuantilesError(
          'INVALID_STATE',
          `${file} is in use by another run (process ${holder || 'unknown'}, ${lock}); a ledger takes one writer at a time. ` +
            `If no run is using it, delete ${lock}`,
        );
      }
      Atomics.wait(sleeper, 0, 0, 50);
    }
  }
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    try {
      unlinkSync(lock);
    } catch {
      // gone already
    }
  };
  process.once('exit', release);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      release();
      process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
    });
  }
  return release;
}
