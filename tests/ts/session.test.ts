// Privacy sessions on the real WASM module: a budget across releases.
import { beforeAll, describe, expect, it } from 'vitest';

import { loadDpQuantiles, type DpQuantiles } from '../../dist/node.js';

import { errorCode as code, lcgData } from './helpers.js';

let dpq: DpQuantiles;
beforeAll(async () => {
  dpq = await loadDpQuantiles();
});

const data = lcgData(1000, 7);
const base = { lower: 0, upper: 100, quantiles: [0.25, 0.5, 0.75] };

describe('sessions', () => {
  it('spend from one budget and refuse an overspend before reading the data', () => {
    const session = dpq.session({ epsilon: 3 });
    expect(session.total).toEqual({ epsilon: 3 });
    session.release(data, { ...base, epsilon: 1 });
    session.quantiles(data, { ...base, epsilon: 1, method: 'aggtree' });
    expect(session.spent).toEqual({ epsilon: 2 });
    expect(session.remaining).toEqual({ epsilon: 1 });
    expect(session.releases).toBe(2);
    // Data the release would reject (NaN) is never looked at: the budget
    // check comes first.
    const poisoned = Float64Array.from(data);
    poisoned[5] = Number.NaN;
    expect(code(() => session.release(poisoned, { ...base, epsilon: 1.5 }))).toBe('BUDGET_EXCEEDED');
    try {
      session.release(data, { ...base, epsilon: 1.5 });
    } catch (error) {
      expect((error as Error).message).toMatch(/epsilon = 2 of epsilon = 3 spent in 2 releases/);
    }
    // A failed release spends nothing.
    expect(code(() => session.release(data, { ...base, lower: 5, upper: 1, epsilon: 0.5 }))).toBe('INVALID_BOUNDS');
    expect(session.spent).toEqual({ epsilon: 2 });
    session.sanitize(data, { lower: 0, upper: 100, epsilon: 1, size: 20 });
    expect(session.spent).toEqual({ epsilon: 3 });
    expect(code(() => session.release(data, { ...base, epsilon: 1e-6 }))).toBe('BUDGET_EXCEEDED');
    session.dispose();
    expect(code(() => session.spent)).toBe('INVALID_STATE');
  });

  it('add budgets up as the decimals written: the README split fits, a billionth more does not', () => {
    // The README's private-bounds example, as written there.
    {
      using s = dpq.session({ epsilon: 1 });
      const { lower, upper } = s.bounds(data, { epsilon: 0.2 });
      const median = s.quantiles(data, { lower, upper, quantiles: [0.5], epsilon: 0.8 });
      expect(median.length).toBe(1);
      expect(s.spent).toEqual({ epsilon: 1 });
      expect(s.remaining).toEqual({ epsilon: 0 });
      expect(code(() => s.quantiles(data, { ...base, epsilon: 1e-12 }))).toBe('BUDGET_EXCEEDED');
    }
    const fits = (total: object, parts: object[]) => {
      using s = dpq.session(total as never);
      for (const part of parts) {
        if (code(() => s.quantiles(data, { ...base, ...part } as never)) !== 'no error') return false;
      }
      return true;
    };
    const eps = (...values: number[]) => values.map((epsilon) => ({ epsilon }));
    expect(fits({ epsilon: 1 }, eps(0.1, 0.9))).toBe(true);
    expect(fits({ epsilon: 1 }, eps(0.7, 0.2, 0.1))).toBe(true);
    expect(fits({ epsilon: 1 }, eps(...Array(10).fill(0.1)))).toBe(true);
    expect(fits({ epsilon: 3 }, eps(0.1, 0.2, 2.7))).toBe(true);
    expect(fits({ rho: 1 }, [{ rho: 0.3 }, { rho: 0.7 }])).toBe(true);
    expect(fits({ epsilon: 1 }, eps(0.1, 0.900000001))).toBe(false);
    expect(fits({ epsilon: 1 }, eps(...Array(9).fill(0.1), 0.100000001))).toBe(false);
    expect(fits({ epsilon: 3 }, eps(0.1, 0.2, 2.700000001))).toBe(false);
    expect(fits({ rho: 1 }, [{ rho: 0.3 }, { rho: 0.700000001 }])).toBe(false);
    // What was spent prints as written.
    using s = dpq.session({ epsilon: 1 });
    s.quantiles(data, { ...base, epsilon: 0.1 });
    s.quantiles(data, { ...base, epsilon: 0.2 });
    expect(s.spent).toEqual({ epsilon: 0.3 });
    expect(s.remaining).toEqual({ epsilon: 0.7 });
    expect(() => s.quantiles(data, { ...base, epsilon: 0.700000001 })).toThrow(
      /epsilon = 0.3 of epsilon = 1 spent in 2 releases, and it would make epsilon = 1.000000001/,
    );
  });

  it('refusals that depend on the data: what each one charges', () => {
    // docs/refusals.md. Input checks are not charged (no budget can make a
    // deterministic refusal private); NOT_ENOUGH_DATA is decided from a
    // private histogram and is charged; the joint methods never refuse by
    // size (a public record cap and a subset instead).
    using s = dpq.session({ epsilon: 20 });
    const poisoned = Float64Array.from(data);
    poisoned[3] = Number.NaN;
    expect(code(() => s.quantiles(poisoned, { ...base, epsilon: 1 }))).toBe('NON_FINITE_VALUE');
    expect(s.spent).toEqual({ epsilon: 0 });
    expect(code(() => s.releaseFromCounts([1, -2, 3], { ...base, epsilon: 1 }))).toBe('INVALID_COUNTS');
    expect(s.spent).toEqual({ epsilon: 0 });
    expect(code(() => s.releaseFromCounts([Number.MAX_SAFE_INTEGER, 1], { ...base, epsilon: 1, method: 'aq' }))).toBe(
      'TOO_LARGE',
    );
    expect(s.spent).toEqual({ epsilon: 0 });
    expect(code(() => s.bounds([1, 2, 3], { epsilon: 0.5, seed: 2 }))).toBe('NOT_ENOUGH_DATA');
    expect(s.spent).toEqual({ epsilon: 0.5 });
    const quantiles = Array.from({ length: 400 }, (_, i) => (i + 1) / 401);
    const joint = { ...base, quantiles, epsilon: 8, step: 1, method: 'jointexp' as const };
    const many = s.release(lcgData(4321, 3), joint);
    expect(many.recordCap).toBeLessThan(4321);
    expect(s.release(lcgData(10, 3), joint).recordCap).toBe(many.recordCap);
    expect(s.spent).toEqual({ epsilon: 16.5 });
  });

  it('save a ledger that survives a reload, and refuse a damaged one', () => {
    const s = dpq.session({ epsilon: 2, delta: 1e-6 });
    s.release(data, { ...base, epsilon: 0.2 });
    s.release(data, { ...base, rho: 0.01 });
    s.release(data, { ...base, epsilon: 0.3, method: 'appindexp', delta: 1e-7 });
    s.bounds(data, { epsilon: 0.1 });
    const saved = s.save();
    expect(saved.format).toBe('dp-quantiles-ledger');
    expect(saved.charges.map((c) => c.kind)).toEqual(['pure', 'zcdp', 'approx', 'pure']);
    // Through JSON, as a file or localStorage keeps it.
    const text = JSON.stringify(saved);
    const restored = dpq.restoreSession(JSON.parse(text));
    expect(restored.spent).toEqual(s.spent);
    expect(restored.total).toEqual({ epsilon: 2, delta: 1e-6 });
    expect(restored.releases).toBe(4);
    // It refuses what no longer fits, as the original does.
    expect(code(() => restored.release(data, { ...base, epsilon: 1.5 }))).toBe('BUDGET_EXCEEDED');
    expect(code(() => s.release(data, { ...base, epsilon: 1.5 }))).toBe('BUDGET_EXCEEDED');
    restored.release(data, { ...base, epsilon: 0.2 });
    expect(dpq.restoreSession(restored.save()).releases).toBe(5);
    // Exact decimals survive: ten 0.1 fill 1 after a round trip.
    const tenths = dpq.session({ epsilon: 1 });
    for (let i = 0; i < 9; i++) tenths.quantiles(data, { ...base, epsilon: 0.1 });
    const resumed = dpq.restoreSession(JSON.parse(JSON.stringify(tenths.save())));
    resumed.quantiles(data, { ...base, epsilon: 0.1 });
    expect(resumed.spent).toEqual({ epsilon: 1 });
    expect(code(() => resumed.quantiles(data, { ...base, epsilon: 1e-9 }))).toBe('BUDGET_EXCEEDED');
    // Damaged or inconsistent ledgers: CORRUPT_DATA, and nothing is made.
    const damaged: unknown[] = [
      null,
      { ...saved, format: 'other' },
      { ...saved, spent: { epsilon: 0.5, delta: 1e-6 } },
      { ...saved, charges: [...saved.charges, { kind: 'pure', epsilon: 1.9, neighbouring: 'add-remove' }] },
      { ...saved, charges: [{ kind: 'pure', neighbouring: 'add-remove' }] },
      { ...saved, charges: 'none' },
      { ...saved, total: { epsilon: -1 } },
      { ...saved, neighbouring: 'swap' },
    ];
    // A charge that is not a positive, finite amount of its own kind gives
    // budget back when replayed (-0.5 once counted as 0): refused, each with
    // its spent made to match so that only the charge is wrong.
    const one = (charge: Record<string, unknown>, spent: Record<string, number>) => ({
      format: 'dp-quantiles-ledger',
      version: 1,
      total: { epsilon: 2 },
      neighbouring: 'add-remove',
      charges: [{ kind: 'pure', epsilon: 0.5, neighbouring: 'add-remove' }, charge],
      spent,
    });
    const good = one({ kind: 'pure', epsilon: 0.25, neighbouring: 'add-remove' }, { epsilon: 0.75 });
    expect(dpq.restoreSession(good as never).spent).toEqual({ epsilon: 0.75 });
    for (const [charge, spent] of [
      [{ kind: 'pure', epsilon: -0.5, neighbouring: 'add-remove' }, { epsilon: 0.5 }],
      [{ kind: 'pure', epsilon: 0, neighbouring: 'add-remove' }, { epsilon: 0.5 }],
      [{ kind: 'pure', epsilon: 1e400, neighbouring: 'add-remove' }, { epsilon: 0.5 }],
      [{ kind: 'pure', epsilon: '0.25', neighbouring: 'add-remove' }, { epsilon: 0.75 }],
      [{ kind: 'pure', epsilon: 0.25, rho: 0.1, neighbouring: 'add-remove' }, { epsilon: 0.75 }],
      [{ kind: 'pure', epsilon: 0.25, neighbouring: 'add-remove', refund: 0.25 }, { epsilon: 0.75 }],
      [{ kind: 'zcdp', rho: -0.01, neighbouring: 'add-remove' }, { epsilon: 0.5 }],
      [{ kind: 'approx', epsilon: 0.25, delta: 1, neighbouring: 'add-remove' }, { epsilon: 0.75 }],
      [{ kind: 'pure', epsilon: 0.25, neighbouring: 'add-remove', maxContributions: 2 }, { epsilon: 0.75 }],
      [{ kind: 'pure', epsilon: 0.25, neighbouring: 'add-remove-user', maxContributions: 0 }, { epsilon: 0.75 }],
      [{ kind: 'bonus', epsilon: 0.25, neighbouring: 'add-remove' }, { epsilon: 0.75 }],
    ] as [Record<string, unknown>, Record<string, number>][]) {
      // The package's own check names the charge (the core's replay would
      // refuse most of these too, less plainly).
      let message = '';
      try {
        dpq.restoreSession(one(charge, spent) as never);
      } catch (e) {
        message = `${(e as { code?: string }).code}: ${(e as Error).message}`;
      }
      expect(message, JSON.stringify(charge)).toMatch(/^CORRUPT_DATA: .*charges\[1\] is not a charge/);
    }
    for (const ledger of damaged) expect(code(() => dpq.restoreSession(ledger as never))).toBe('CORRUPT_DATA');
    s.dispose();
    restored.dispose();
  });

  it('compose kinds: pure releases in a rho session count epsilon^2 / 2', () => {
    using session = dpq.session({ rho: 1 });
    session.release(data, { ...base, epsilon: 1 });
    session.release(data, { ...base, rho: 0.25 });
    expect(session.spent).toEqual({ rho: 0.75 });
    expect(code(() => session.release(data, { ...base, rho: 0.3 }))).toBe('BUDGET_EXCEEDED');
    expect(code(() => session.release(data, { ...base, method: 'appindexp', epsilon: 0.1, delta: 1e-9 }))).toBe(
      'INVALID_PRIVACY',
    );
  });

  it('convert zCDP releases once inside an (epsilon, delta) session', () => {
    using session = dpq.session({ epsilon: 5, delta: 1e-5 });
    session.release(data, { ...base, rho: 0.25 });
    session.release(data, { ...base, rho: 0.25 });
    // rho = 0.5 at delta = 1e-5: epsilon 4.7284 (Canonne, Kamath and
    // Steinke's conversion; the common rho + 2 sqrt(rho log(1/delta)) says 5.30).
    const spent = session.spent as { epsilon: number; delta: number };
    expect(spent.epsilon).toBeCloseTo(4.7284, 3);
    expect(spent.delta).toBeLessThanOrEqual(1e-5);
    session.release(data, { ...base, method: 'appindexp', epsilon: 0.1, delta: 1e-9 });
    expect(code(() => session.release(data, { ...base, rho: 0.1 }))).toBe('BUDGET_EXCEEDED');
  });

  it('follow the neighbouring relation of each method', () => {
    using addRemove = dpq.session({ epsilon: 4 });
    expect(addRemove.neighbouring).toBe('add-remove');
    expect(code(() => addRemove.release(data, { ...base, method: 'inverse-sensitivity', epsilon: 1 }))).toBe(
      'INVALID_PRIVACY',
    );
    using replace = dpq.session({ epsilon: 4, neighbouring: 'replace-one' });
    replace.release(data, { ...base, method: 'inverse-sensitivity', epsilon: 1 });
    replace.release(data, { ...base, epsilon: 1 }); // add-remove: counts twice
    expect(replace.spent).toEqual({ epsilon: 3 });
  });

  it('hold stream releases too', () => {
    using stream = dpq.createStream({ lower: 0, upper: 100, alpha: 1e-3 });
    stream.push(data);
    using session = dpq.session({ epsilon: 1 });
    const released = session.releaseStream(stream, { quantiles: [0.5], method: 'hist-gk', epsilon: 0.75 });
    expect(released.values[0]).toBeGreaterThan(30);
    expect(released.values[0]).toBeLessThan(70);
    expect(session.spent).toEqual({ epsilon: 0.75 });
    expect(code(() => session.releaseStream(stream, { quantiles: [0.5], method: 'hist-gk', epsilon: 0.5 }))).toBe(
      'BUDGET_EXCEEDED',
    );
    expect(code(() => session.releaseStream(stream, { quantiles: [0.5], method: 'exp-gk', epsilon: 0.1 }))).toBe(
      'INVALID_PRIVACY',
    );
    // DPExpGK in a default session: the message says what to pass.
    expect(() => session.releaseStream(stream, { quantiles: [0.5], method: 'exp-gk', epsilon: 0.1 })).toThrow(
      /pass method 'hist-gk'.*or create the session with neighbouring 'replace-one'/,
    );
  });

  it('reject bad totals with a typed error', () => {
    expect(code(() => dpq.session({ epsilon: 0 }))).toBe('INVALID_PRIVACY');
    expect(code(() => dpq.session({ epsilon: 1, delta: 1 }))).toBe('INVALID_PRIVACY');
    // @ts-expect-error: exactly one of epsilon and rho
    expect(code(() => dpq.session({ epsilon: 1, rho: 1 }))).toBe('INVALID_PRIVACY');
    // @ts-expect-error: a typo
    expect(code(() => dpq.session({ epsilom: 1 }))).toBe('INVALID_OPTION');
    // @ts-expect-error: not a relation
    expect(code(() => dpq.session({ epsilon: 1, neighbouring: 'swap' }))).toBe('INVALID_OPTION');
    // Ten releases of 0.1 fill a session of 1 exactly (in binary they are
    // 1 + 5.6e-17), and the eleventh is refused.
    const ten = dpq.session({ epsilon: 1 });
    for (let i = 0; i < 10; i++) ten.release(data, { ...base, epsilon: 0.1 });
    expect(ten.spent).toEqual({ epsilon: 1 });
    expect(code(() => ten.release(data, { ...base, epsilon: 0.1 }))).toBe('BUDGET_EXCEEDED');
    ten.dispose();
  });
});
