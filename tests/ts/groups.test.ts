// Grouped releases on the real WASM module: public and private keys, per
// person across groups, GROUP BY counts bit for bit with the rows (DuckDB
// counting 10^7 rows), sessions, and typed errors.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { DuckDBInstance } from '@duckdb/node-api';
import { beforeAll, describe, expect, it } from 'vitest';

import { loadDpQuantiles, type DpQuantiles, type GroupKey } from '../../dist/node.js';

import { errorCode as code } from './helpers.js';

let dpq: DpQuantiles;
beforeAll(async () => {
  dpq = await loadDpQuantiles();
});

// Salaries by department: department d's around 40 + 20 d.
function salaries(n: number): { values: Float64Array; departments: string[] } {
  const names = ['eng', 'sales', 'ops', 'legal'];
  const values = new Float64Array(n);
  const departments: string[] = [];
  for (let i = 0; i < n; i++) {
    const d = i % 4;
    departments.push(names[d]);
    values[i] = 30 + 20 * d + ((i * 7919) % 1000) / 50;
  }
  return { values, departments };
}

const base = { lower: 0, upper: 200, quantiles: [0.5, 0.9], epsilon: 1 };

describe('releaseByGroup', () => {
  it('releases every public key in order, an empty one too, each near its own data', () => {
    const { values, departments } = salaries(20_000);
    const release = dpq.releaseByGroup(values, departments, { ...base, keys: ['legal', 'eng', 'hr'], seed: 3 });
    expect(release.keys).toBe('public');
    expect(release.groups.map((g) => g.key)).toEqual(['legal', 'eng', 'hr']);
    // Keys are typed as given: these three strings, here.
    const key: 'legal' | 'eng' | 'hr' = release.groups[0].key;
    // @ts-expect-error: not one of the keys given
    const notAKey: 'sales' = release.groups[0].key;
    void [key, notAKey];
    // Once, for every group (a seeded release says it is not private).
    expect(release.privacy).toEqual({ kind: 'none', reason: 'seeded' });
    expect(dpq.releaseByGroup(values, departments, { ...base, keys: ['legal', 'eng', 'hr'] }).privacy).toEqual({ kind: 'pure', epsilon: 1 });
    // legal's salaries lie in [90, 110): median about 100; eng's in [30, 50).
    expect(release.groups[0].values[0]).toBeCloseTo(100, 0);
    expect(release.groups[1].values[0]).toBeCloseTo(40, 0);
    // hr holds no row: released as empty data, inside the bounds.
    for (const v of release.groups[2].values) expect(v >= 0 && v <= 200).toBe(true);
    // Rows of unlisted keys (sales, ops) are left out: changing them changes nothing.
    const other = Float64Array.from(values, (v, i) => (departments[i] === 'sales' ? 7 : v));
    expect(dpq.releaseByGroup(other, departments, { ...base, keys: ['legal', 'eng', 'hr'], seed: 3 }).groups).toEqual(release.groups);
  });

  it('takes integer codes from a typed array, and gives intervals per group', () => {
    const n = 50_000;
    const values = new Float64Array(n);
    const codes = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      codes[i] = i % 5;
      values[i] = 10 * (i % 5) + ((i * 31) % 100) / 20;
    }
    const release = dpq.releaseByGroup(values, codes, {
      ...base,
      upper: 100,
      keys: [0, 1, 2, 3, 4],
      confidence: 0.9,
      quantiles: [0.25, 0.75],
    });
    expect(release.intervals?.confidence).toBe(0.9);
    release.groups.forEach((group, g) => {
      expect(group.values[0]).toBeCloseTo(10 * g + 1.25, 0);
      const intervals = group.intervals as { low: Float64Array; high: Float64Array };
      for (let j = 0; j < 2; j++) {
        expect(intervals.low[j]).toBeLessThanOrEqual(group.values[j]);
        expect(intervals.high[j]).toBeGreaterThanOrEqual(group.values[j]);
        expect(intervals.high[j] - intervals.low[j]).toBeLessThan(2);
      }
    });
  });

  it('maps typed-array codes as it maps an array of the same keys, bit for bit', () => {
    // The typed-array fast path (consecutive keys, or a table) against the
    // general one: codes outside the keys, negative and past them, are left out.
    const n = 3_000;
    const values = Float64Array.from({ length: n }, (_, i) => ((i * 7919) % 1000) / 10);
    const codes = Int32Array.from({ length: n }, (_, i) => ((i * 13) % 12) - 2);
    for (const keys of [[0, 1, 2, 3], [7, 3, 9, -1], [5, 6, 7, 8, 9]]) {
      const options = { ...base, upper: 100, keys, seed: 21 };
      const typed = dpq.releaseByGroup(values, codes, options);
      const plain = dpq.releaseByGroup(values, Array.from(codes), options);
      const floats = dpq.releaseByGroup(values, Float64Array.from(codes), options);
      expect(typed.groups).toEqual(plain.groups);
      expect(floats.groups).toEqual(plain.groups);
      // A group listed alone is its own rows' release (the default's: the
      // groups' one step look over one group's rows is its own).
      const own = values.filter((_, i) => codes[i] === keys[1]);
      const alone = dpq.releaseByGroup(values, codes, { ...options, keys: [keys[1]] }).groups[0];
      expect(alone.values).toEqual(dpq.release(own, { ...base, upper: 100, seed: 21 }).values);
    }
  });

  it("reports each group's own first look, not the first group's", () => {
    // Two groups far apart in [0, 200]: each look finds its own group's bins
    // (16 of 12.5), and the top level carries the share only.
    const n = 4_000;
    const values = Float64Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 10 : 160) + ((i * 7919) % 1000) / 200);
    const groups = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 'low' : 'high'));
    let narrow = 0;
    for (let seed = 1; seed <= 5; seed++) {
      const release = dpq.releaseByGroup(values, groups, { ...base, quantiles: [0.01, 0.99], keys: ['low', 'high'], seed });
      expect(release.firstLook).toEqual({ share: 0.1 });
      const [low, high] = release.groups;
      // Each span holds its own group's values (an empty bin's noise can
      // widen it: it passes the mark about once in 40).
      const [a, b] = low.firstLook?.found ?? [NaN, NaN];
      expect(a).toBeLessThanOrEqual(10);
      expect(b).toBeGreaterThanOrEqual(15);
      const [c, d] = high.firstLook?.found ?? [NaN, NaN];
      expect(c).toBeLessThanOrEqual(160);
      expect(d).toBeGreaterThanOrEqual(165);
      if (b < 150) narrow++;
      if (c > 15) narrow++;
    }
    // Most spans stay off the other group's bins: they are not one span.
    expect(narrow).toBeGreaterThanOrEqual(6);
    // Without the look, no firstLook anywhere.
    const paper = dpq.releaseByGroup(values, groups, { ...base, keys: ['low', 'high'], method: 'aq', look: 0 });
    expect(paper.firstLook).toBeUndefined();
    expect(paper.groups.every((g) => g.firstLook === undefined)).toBe(true);
  });

  it('selects private keys with delta: large keys always, a key of one row almost never', () => {
    const { values, departments } = salaries(8_000);
    const groups: GroupKey[] = [...departments, 'ceo'];
    const data = Float64Array.from([...values, 500]);
    let ceo = 0;
    for (let trial = 0; trial < 200; trial++) {
      const release = dpq.releaseByGroup(data, groups, { ...base, delta: 1e-6 });
      expect(release.keys).toBe('private');
      const keys = release.groups.map((g) => g.key);
      // Sorted keys, not the rows' order.
      expect(keys.filter((k) => k !== 'ceo')).toEqual(['eng', 'legal', 'ops', 'sales']);
      if (keys.includes('ceo')) ceo++;
      expect(release.privacy).toEqual({ kind: 'approx', epsilon: 1, delta: 1e-6 });
      expect(release.selection?.privacy).toEqual({ kind: 'approx', epsilon: 0.1, delta: 1e-6 });
    }
    expect(ceo).toBe(0); // each at most 10^-6
    // Without delta, under epsilon or rho: typed errors before the data is read.
    // @ts-expect-error: neither keys nor delta
    expect(code(() => dpq.releaseByGroup(data, groups, base))).toBe('INVALID_PRIVACY');
    expect(code(() => dpq.releaseByGroup(data, groups, { ...base, epsilon: undefined, rho: 0.5 } as never))).toBe('INVALID_PRIVACY');
  });

  it('selects private keys under rho with delta: delta-approximate rho-zCDP, in sessions with a delta', () => {
    const { values, departments } = salaries(4_000);
    const options = { lower: 0, upper: 200, quantiles: [0.5], rho: 0.5, delta: 1e-6 };
    const release = dpq.releaseByGroup(values, departments, options);
    expect(release.privacy).toEqual({ kind: 'zcdp', rho: 0.5, delta: 1e-6 });
    expect(release.keys).toBe('private');
    expect(release.groups.map((g) => g.key)).toEqual(['eng', 'legal', 'ops', 'sales']);
    expect(release.selection?.privacy).toEqual({ kind: 'zcdp', rho: 0.05, delta: 1e-6 });
    // epsilon_s = sqrt(0.1): a threshold of 43 rows, public (it was 133 at epsilon 1).
    expect(release.selection?.threshold).toBe(43);
    // An (epsilon, delta) session holds it (and saves and restores it); a
    // rho session has no delta to spend.
    const approx = dpq.session({ epsilon: 10, delta: 1e-5 });
    approx.releaseByGroup(values, departments, options);
    expect(approx.spent.delta).toBe(1e-5);
    const saved = approx.save();
    expect(saved.charges).toEqual([{ kind: 'zcdp', rho: 0.5, delta: 1e-6, neighbouring: 'add-remove' }]);
    expect(dpq.restoreSession(JSON.parse(JSON.stringify(saved))).spent).toEqual(approx.spent);
    const zcdp = dpq.session({ rho: 2 });
    expect(code(() => zcdp.releaseByGroup(values, departments, options))).toBe('INVALID_PRIVACY');
    expect(zcdp.releases).toBe(0);
  });

  it('bounds a person across groups with maxGroups, and charges a session once', () => {
    const n = 12_000;
    const values = new Float64Array(n);
    const stores: string[] = [];
    const people = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      people[i] = i % 300;
      stores.push(`store-${i % 7}`);
      values[i] = (i * 13) % 100;
    }
    const session = dpq.session({ epsilon: 2, neighbouring: 'add-remove-user' });
    const release = session.releaseByGroup(values, stores, {
      lower: 0,
      upper: 100,
      quantiles: [0.5],
      epsilon: 1,
      keys: ['store-0', 'store-1', 'store-2'],
      users: people,
      maxContributions: 5,
      maxGroups: 2,
    });
    expect(release.neighbouring).toBe('add-remove-user');
    expect(release.maxGroups).toBe(2);
    expect(release.maxContributions).toBe(5);
    // epsilon / (g k) each: 1 / 10, of which the default's step look takes
    // 2.5% (once over every group), then AQ's first look 5% of the rest.
    expect(release.stepLook?.share).toBe(0.025);
    expect(release.mechanismEpsilon).toBeCloseTo(0.1 * 0.975 * 0.95, 12);
    expect(session.spent).toEqual({ epsilon: 1 });
    expect(session.releases).toBe(1);
    // @ts-expect-error: maxGroups without users
    expect(code(() => dpq.releaseByGroup(values, stores, { ...base, keys: ['store-0'], maxGroups: 2 }))).toBe('INVALID_OPTION');
  });

  it('refuses bad groups and keys with typed errors that name the problem', () => {
    const values = [1, 2, 3];
    const cases: [() => unknown, string, RegExp][] = [
      [() => dpq.releaseByGroup(values, ['a', 'b'], { ...base, keys: ['a'] }), 'INVALID_ARGUMENT', /differ in length/],
      [() => dpq.releaseByGroup(values, ['a', null, 'b'] as never, { ...base, keys: ['a'] }), 'INVALID_ARGUMENT', /groups\[1\] is null/],
      [() => dpq.releaseByGroup(values, ['a', NaN, 'b'] as never, { ...base, delta: 1e-6 }), 'INVALID_ARGUMENT', /groups\[1\] is NaN/],
      [() => dpq.releaseByGroup(values, ['a', 'b', Infinity] as never, { ...base, keys: ['a'] }), 'INVALID_ARGUMENT', /groups\[2\] is Infinity/],
      // Keys of a kind no row has: a CSV column read as text, keyed by numbers.
      [() => dpq.releaseByGroup(values, ['0', '1', '2'], { ...base, keys: [0, 1, 2] }), 'INVALID_OPTION', /keys are numbers but groups holds strings.*"0", "1"/],
      [() => dpq.releaseByGroup(values, Uint8Array.of(0, 1, 2), { ...base, keys: ['0', '1'] }), 'INVALID_OPTION', /keys are strings but groups holds numbers/],
      // delta with public keys: the private keys' option.
      [
        // @ts-expect-error: delta is for private keys
        () => dpq.releaseByGroup(values, ['a', 'a', 'b'], { ...base, keys: ['a', 'b'], delta: 1e-6 }),
        'INVALID_OPTION',
        /delta is for private keys/,
      ],
      [() => dpq.releaseByGroup(values, ['a', 'a', 'b'], { ...base, keys: ['a', 'b', 'a'] }), 'INVALID_OPTION', /repeats the public key "a"/],
      [() => dpq.releaseByGroup(values, Uint8Array.of(0, 1, 2), { ...base, keys: [1, 0, -0] }), 'INVALID_OPTION', /keys\[2\] repeats the public key 0/],
      [() => dpq.releaseByGroup(values, ['a', 'a', 'b'], { ...base, keys: [] }), 'INVALID_OPTION', /keys is empty/],
      [() => dpq.releaseByGroup(values, ['a', 'a', 'b'], { ...base, keys: [{}] as never }), 'INVALID_OPTION', /keys\[0\]/],
      // @ts-expect-error: maxGroups without users
      [() => dpq.releaseByGroup(values, ['a', 'a', 'b'], { ...base, keys: ['a'], maxGroups: 1 }), 'INVALID_OPTION', /maxGroups/],
      // users alone: both missing bounds, the rows' first.
      [
        // @ts-expect-error: users, maxContributions and maxGroups go together
        () => dpq.releaseByGroup(values, ['a', 'a', 'b'], { ...base, keys: ['a'], users: [1, 2, 3] }),
        'INVALID_OPTION',
        /needs maxContributions: the most rows a person keeps in a group; and maxGroups/,
      ],
      // Replace-one: a row moved to another key changes two groups' sizes.
      [
        // @ts-expect-error: groups take add-remove methods only
        () => dpq.releaseByGroup(values, ['a', 'a', 'b'], { ...base, keys: ['a', 'b'], method: 'inverse-sensitivity' }),
        'INVALID_OPTION',
        /inverse-sensitivity.*two groups' sizes.*add-remove method \(aq, auto, jointexp/,
      ],
    ];
    for (const [call, expected, message] of cases) {
      let error: { code?: string; message?: string } = {};
      try {
        call();
      } catch (e) {
        error = e as { code?: string; message?: string };
      }
      expect(error.code, String(message)).toBe(expected);
      expect(error.message).toMatch(message);
    }
    // The module keeps working.
    expect(dpq.releaseByGroup(values, ['a', 'a', 'b'], { ...base, keys: ['a', 'b'] }).groups).toHaveLength(2);
    // Keys of the rows' kind that hold no rows, and mixed kinds that meet
    // in one, are releases (a key with no rows is released as empty data).
    expect(dpq.releaseByGroup(values, ['x', 'y', 'z'], { ...base, keys: ['a', 'b'] }).groups).toHaveLength(2);
    expect(dpq.releaseByGroup(values, ['0', '1', '2'], { ...base, keys: [0, '1'] }).groups).toHaveLength(2);
    // appindexp's own delta with public keys stays its own.
    expect(dpq.releaseByGroup(values, ['a', 'a', 'b'], { ...base, keys: ['a', 'b'], method: 'appindexp', delta: 1e-6 }).privacy).toEqual({ kind: 'approx', epsilon: 1, delta: 1e-6 });
  });
});

describe('keys of several columns', () => {
  it('groups by tuples: public, private, from counts of a two-column GROUP BY', async () => {
    // Salaries by department x site: each tuple's values near 40 + 20 d + 5 s.
    const n = 12_000;
    const names = ['eng', 'sales', 'ops'];
    const dept: string[] = [];
    const site = new Uint8Array(n);
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      dept.push(names[i % 3]);
      site[i] = (i >> 2) % 2;
      values[i] = 40 + 20 * (i % 3) + 5 * site[i] + ((i * 7919) % 100) / 50;
    }
    const keys = [['ops', 1], ['eng', 0], ['eng', 1], ['hr', 0]] as const;
    const release = dpq.releaseByGroup(values, [dept, site], { ...base, quantiles: [0.5], keys, seed: 6, count: true });
    expect(release.groups.map((g) => g.key)).toEqual([['ops', 1], ['eng', 0], ['eng', 1], ['hr', 0]]);
    const key: readonly ['ops', 1] | readonly ['eng', 0] | readonly ['eng', 1] | readonly ['hr', 0] = release.groups[0].key;
    void key;
    // ops at site 1 lie in [85, 87): the median near 86; eng at 0 in [40, 42).
    expect(release.groups[0].values[0]).toBeCloseTo(86, 0);
    expect(release.groups[1].values[0]).toBeCloseTo(41, 0);
    expect(Math.abs(release.groups[2].count! - 2000)).toBeLessThan(150);
    // The same as one joined column, bit for bit.
    const joined = dept.map((d, i) => `${d}|${site[i]}`);
    const one = dpq.releaseByGroup(values, joined, { ...base, quantiles: [0.5], keys: keys.map(([d, s]) => `${d}|${s}`), seed: 6, count: true });
    expect(release.groups.map((g) => [g.values[0], g.count])).toEqual(one.groups.map((g) => [g.values[0], g.count]));
    expect(release.rows()[0]).toMatchObject({ key: ['ops', 1], quantile: 0.5 });
    // Two integer code columns (the direct path): the same groups as the
    // joined column, an unlisted code (7) and a code outside the keys' span
    // (-3) left out.
    const deptCode = Int32Array.from(dept, (d, i) => (i % 97 === 0 ? -3 : i % 89 === 0 ? 7 : names.indexOf(d)));
    const coded = dpq.releaseByGroup(values, [deptCode, site], {
      ...base, quantiles: [0.5], keys: [[2, 1], [0, 0], [0, 1], [5, 0]], seed: 6, count: true,
    });
    const codedJoined = Array.from(deptCode, (c, i) => `${c}|${site[i]}`);
    const codedOne = dpq.releaseByGroup(values, codedJoined, {
      ...base, quantiles: [0.5], keys: ['2|1', '0|0', '0|1', '5|0'], seed: 6, count: true,
    });
    expect(coded.groups.map((g) => [g.values[0], g.count])).toEqual(codedOne.groups.map((g) => [g.values[0], g.count]));
    // Private keys: the tuples the rows hold, sorted by column.
    const chosen = dpq.releaseByGroup(values, [dept, site], { ...base, quantiles: [0.5], delta: 1e-6 });
    expect(chosen.groups.map((g) => g.key)).toEqual([['eng', 0], ['eng', 1], ['ops', 0], ['ops', 1], ['sales', 0], ['sales', 1]]);
    // From a GROUP BY of two key columns in DuckDB: as from the rows.
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    await connection.run('CREATE TABLE t (dept VARCHAR, site INTEGER, v DOUBLE)');
    const appender = await connection.createAppender('t');
    for (let i = 0; i < n; i++) {
      appender.appendVarchar(dept[i]);
      appender.appendInteger(site[i]);
      appender.appendDouble(values[i]);
      appender.endRow();
    }
    appender.closeSync();
    const counted = await connection.runAndReadAll(
      'SELECT dept, site, least(floor(v / 0.2), 999)::BIGINT AS bucket, count(*) AS n FROM t GROUP BY ALL',
    );
    connection.closeSync();
    const columns = counted.getColumns() as unknown[][];
    const fromCounts = dpq.releaseByGroupFromCounts(
      { keys: [columns[0] as string[], columns[1] as number[]], buckets: columns[2] as bigint[], counts: columns[3] as bigint[] },
      { ...base, quantiles: [0.5], keys, buckets: 1000, seed: 6 },
    );
    const fromRows = dpq.releaseByGroup(values, [dept, site], { ...base, quantiles: [0.5], keys, buckets: 1000, seed: 6 });
    expect(fromCounts.groups).toEqual(fromRows.groups);
    // Typed errors: a key that is not a tuple of the columns' count, columns
    // of different lengths.
    expect(code(() => dpq.releaseByGroup(values, [dept, site], { ...base, keys: [['eng']] }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.releaseByGroup(values, [dept, site], { ...base, keys: ['eng'] as never }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.releaseByGroup(values, [dept, site.subarray(1)], { ...base, keys }))).toBe('INVALID_ARGUMENT');
    // A column of a kind no key has in that place: refused, as for one column.
    expect(code(() => dpq.releaseByGroup(values, [dept, site], { ...base, keys: [['eng', '0']] }))).toBe('INVALID_OPTION');
  });
});

describe('group sizes with count', () => {
  it('gives each group a noisy count from a share of the budget, or the selection\'s count', () => {
    // 200 groups of 1,000 rows (seeded: the same every run).
    const n = 200_000;
    const values = Float64Array.from({ length: n }, (_, i) => (i * 7919) % 1000);
    const codes = Uint32Array.from({ length: n }, (_, i) => i % 200);
    const keys = Array.from({ length: 200 }, (_, i) => i);
    const options = { lower: 0, upper: 1000, quantiles: [0.5], epsilon: 1, keys, seed: 4, count: true };
    const release = dpq.releaseByGroup(values, codes, options);
    expect(release.count).toEqual({ of: 'rows', share: 0.1, privacy: { kind: 'none', reason: 'seeded' } });
    const errors = release.groups.map((g) => Math.abs(g.count! - 1000));
    // Discrete Laplace of scale 10: 87% within 20 expected, all within 80.
    expect(errors.filter((e) => e <= 20).length / 200).toBeGreaterThan(0.8);
    expect(Math.max(...errors)).toBeLessThan(80);
    // The quantiles are those of the release at 0.9 of the budget (the
    // counts draw after them), and the rows carry the counts.
    const without = dpq.releaseByGroup(values, codes, { ...options, count: false, epsilon: 0.9 });
    expect(release.groups.map((g) => g.values[0])).toEqual(without.groups.map((g) => g.values[0]));
    expect(release.rows()[3]).toEqual({ key: 3, quantile: 0.5, value: release.groups[3].values[0], count: release.groups[3].count });
    expect(dpq.releaseByGroup(values, codes, { ...options, seed: undefined }).count).toEqual({
      of: 'rows', share: 0.1, privacy: { kind: 'pure', epsilon: 0.1 },
    });
    // countShare 0.15: 95% within 20 expected.
    const wider = dpq.releaseByGroup(values, codes, { ...options, countShare: 0.15 });
    expect(wider.groups.filter((g) => Math.abs(g.count! - 1000) <= 20).length / 200).toBeGreaterThan(0.88);
    // Private keys: the selection's noisy count, at least its threshold.
    const { values: salary, departments } = salaries(4000);
    const selected = dpq.releaseByGroup(salary, departments, { ...base, delta: 1e-6, count: true });
    expect(selected.count).toEqual({ of: 'rows', from: 'selection' });
    for (const group of selected.groups) {
      expect(group.count!).toBeGreaterThanOrEqual(selected.selection!.threshold);
      expect(Math.abs(group.count! - 1000)).toBeLessThan(150);
    }
    // Per person, people are counted.
    const people = Array.from({ length: 4000 }, (_, i) => i % 500);
    const perPerson = dpq.releaseByGroup(salary, departments, {
      ...base, keys: ['eng', 'ops'], users: people, maxContributions: 2, maxGroups: 2, count: true, seed: 3,
    });
    expect(perPerson.count?.of).toBe('people');
    // Without count: no counts; countShare alone, or with private keys, refused.
    expect(dpq.releaseByGroup(salary, departments, { ...base, keys: ['eng'] }).groups[0]).not.toHaveProperty('count');
    expect(code(() => dpq.releaseByGroup(salary, departments, { ...base, keys: ['eng'], countShare: 0.2 }))).toBe('INVALID_OPTION');
    // @ts-expect-error: private keys count with the selection
    expect(code(() => dpq.releaseByGroup(salary, departments, { ...base, delta: 1e-6, count: true, countShare: 0.2 }))).toBe('INVALID_OPTION');
    expect(code(() => dpq.releaseByGroup(salary, departments, { ...base, keys: ['eng'], count: 'yes' as never }))).toBe('INVALID_ARGUMENT');
  });
});

describe('a grouped release as data', () => {
  it('writes plain JSON and a tidy table that DuckDB reads (docs/groups.md)', async () => {
    const { values, departments } = salaries(8000);
    const release = dpq.releaseByGroup(values, departments, {
      ...base, keys: ['eng', 'legal'], quantiles: [0.9, 0.5], confidence: 0.9, seed: 5,
    });
    // JSON: arrays of numbers, not {"0": ..}; nothing else changes.
    const json = JSON.parse(JSON.stringify(release));
    expect(json.groups[0].values).toEqual(Array.from(release.groups[0].values));
    expect(json.groups[1].intervals.low).toEqual(Array.from(release.groups[1].intervals!.low));
    expect(json.privacy).toEqual({ kind: 'none', reason: 'seeded' });
    expect(Object.keys(json)).not.toContain('rows');
    expect(release.toJSON()).toEqual(json);
    // A single release too.
    const single = dpq.release(values, { ...base, seed: 5 });
    expect(JSON.parse(JSON.stringify(single)).values).toEqual(Array.from(single.values));
    // The tidy form: a row a group and quantile, in the order asked.
    const rows = release.rows();
    expect(rows.map((r) => [r.key, r.quantile])).toEqual([['eng', 0.9], ['eng', 0.5], ['legal', 0.9], ['legal', 0.5]]);
    expect(rows[1]).toEqual({
      key: 'eng', quantile: 0.5, value: release.groups[0].values[1],
      low: release.groups[0].intervals!.low[1], high: release.groups[0].intervals!.high[1],
    });
    // Releases compare as data: the functions are not enumerable, and shared.
    expect(dpq.releaseByGroup(values, departments, { ...base, keys: ['eng', 'legal'], quantiles: [0.9, 0.5], confidence: 0.9, seed: 5 }))
      .toEqual(release);
    // The rows go into SQL as they are: DuckDB reads the JSON lines.
    const file = join(mkdtempSync(join(tmpdir(), 'dpq-rows-')), 'rows.json');
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n'));
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const read = await connection.runAndReadAll(
      `SELECT key, value FROM read_json_auto('${file}') WHERE quantile = 0.5 ORDER BY value DESC`,
    );
    connection.closeSync();
    expect(read.getRows()).toEqual([['legal', release.groups[1].values[1]], ['eng', release.groups[0].values[1]]]);
  });
});

describe('releaseByGroupFromCounts', () => {
  it('releases from a GROUP BY exactly as from the rows: DuckDB counting 10^7 rows', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const buckets = 1000;
    // 10^7 rows: a key of 8 departments, a value in [0, 100) from a hash.
    await connection.run(`
      CREATE TABLE t AS
      SELECT (i % 8)::INTEGER AS dept, ((hash(i) % 100000) / 1000.0 + (i % 8) * 3) % 100 AS v
      FROM range(10000000) r(i)`);
    // Bucket j holds the values from j / 10 (as a double) up: FLOOR(v * 10)
    // moved by one where the product rounded across an edge (99.0 / 0.1 is
    // 989.99...), so that the counts are the rows' own (docs/scale.md).
    const grouped = await connection.runAndReadAll(`
      WITH f AS (SELECT dept, v, FLOOR(v * 10)::INTEGER AS j FROM t)
      SELECT dept AS key, LEAST(GREATEST(CASE WHEN (j + 1) / 10.0 <= v THEN j + 1 WHEN j / 10.0 > v THEN j - 1 ELSE j END, 0), ${buckets - 1})::INTEGER AS bucket,
        COUNT(*) AS count
      FROM f GROUP BY key, bucket`);
    const columns = grouped.getColumnsObjectJS() as { key: number[]; bucket: number[]; count: bigint[] };
    const rows = await connection.runAndReadAll('SELECT dept, v FROM t');
    const rowColumns = rows.getColumnsObjectJS() as { dept: number[]; v: number[] };
    connection.closeSync();
    const keys = [0, 1, 2, 3, 4, 5, 6, 7, 9];
    for (const options of [
      { lower: 0, upper: 100, quantiles: [0.1, 0.5, 0.99], epsilon: 1, seed: 11, keys },
      { lower: 0, upper: 100, quantiles: [0.5], epsilon: 1, seed: 12, delta: 1e-6, confidence: 0.8 },
      { lower: 0, upper: 100, quantiles: [0.25, 0.75], epsilon: 1, seed: 13, keys, method: 'aggtree' as const },
    ]) {
      const fromCounts = dpq.releaseByGroupFromCounts(
        { keys: columns.key, buckets: columns.bucket, counts: columns.count },
        { ...options, buckets } as never,
      );
      const fromRows = dpq.releaseByGroup(Float64Array.from(rowColumns.v), rowColumns.dept, { ...options, buckets } as never);
      expect(fromCounts.groups).toEqual(fromRows.groups);
      expect(fromCounts.groups.length).toBeGreaterThanOrEqual(8);
    }
  }, 120_000);

  it('releases per person from counts bounded in SQL (docs/scale.md), on DuckDB at 10^7 rows', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    // 10^7 rows of 200,000 people, each in up to 6 departments.
    await connection.run(`
      CREATE TABLE employees AS
      SELECT (i % 200000) AS person, 'd' || (hash(i * 3 + 1) % 6)::VARCHAR AS dept,
             ((hash(i) % 300000) / 1000.0) AS salary
      FROM range(10000000) r(i)`);
    // The query of docs/scale.md, as written there.
    const bounded = `
      WITH ranked AS (
        SELECT dept, salary, person,
               dense_rank() OVER (PARTITION BY person ORDER BY hash(person, dept, 'f3a9c1')) AS key_rank,
               row_number() OVER (PARTITION BY person, dept ORDER BY random()) AS row_rank
        FROM employees
        WHERE salary IS NOT NULL)`;
    const counted = await connection.runAndReadAll(`${bounded}
      SELECT dept AS key, least(greatest(floor(salary / 0.3), 0), 999)::BIGINT AS bucket, count(*) AS count
      FROM ranked WHERE key_rank <= 2 AND row_rank <= 5 GROUP BY key, bucket`);
    // What the query kept: at most 2 keys a person, 5 rows in each.
    const check = await connection.runAndReadAll(`${bounded}
      SELECT max(keys) AS keys, max(most) AS most FROM (
        SELECT person, count(DISTINCT dept) AS keys, max(n) AS most FROM (
          SELECT person, dept, count(*) AS n FROM ranked WHERE key_rank <= 2 AND row_rank <= 5 GROUP BY person, dept)
        GROUP BY person)`);
    connection.closeSync();
    const limits = check.getRowObjectsJS()[0] as { keys: bigint; most: bigint };
    expect(Number(limits.keys)).toBe(2);
    expect(Number(limits.most)).toBeLessThanOrEqual(5);
    const columns = counted.getColumnsObjectJS() as { key: string[]; bucket: bigint[]; count: bigint[] };
    const release = dpq.releaseByGroupFromCounts(
      { keys: columns.key, buckets: columns.bucket, counts: columns.count },
      {
        keys: ['d0', 'd1', 'd2', 'd3', 'd4', 'd5'],
        buckets: 1000,
        lower: 0,
        upper: 300,
        quantiles: [0.5],
        epsilon: 1,
        maxGroups: 2,
        maxContributions: 5,
      },
    );
    expect(release.neighbouring).toBe('add-remove-user');
    expect(release.maxGroups).toBe(2);
    // Salaries uniform on [0, 300) in every department: medians near 150.
    for (const group of release.groups) expect(Math.abs(group.values[0] - 150)).toBeLessThan(5);
  }, 180_000);

  it('refuses what counts cannot give, with typed errors', () => {
    const counts = { keys: ['a', 'b'], buckets: [1, 2], counts: [3, 4] };
    const options = { lower: 0, upper: 10, quantiles: [0.5], epsilon: 1, keys: ['a', 'b'], buckets: 10 };
    expect(dpq.releaseByGroupFromCounts(counts, options).groups).toHaveLength(2);
    expect(code(() => dpq.releaseByGroupFromCounts(counts, { ...options, buckets: undefined } as never))).toBe('INVALID_OPTION');
    expect(code(() => dpq.releaseByGroupFromCounts({ ...counts, counts: [3] }, options))).toBe('INVALID_ARGUMENT');
    expect(code(() => dpq.releaseByGroupFromCounts({ ...counts, counts: [3, -1] }, options))).toBe('INVALID_COUNTS');
    expect(code(() => dpq.releaseByGroupFromCounts({ ...counts, buckets: [1, 10] }, options))).toBe('INVALID_COUNTS');
    expect(code(() => dpq.releaseByGroupFromCounts(counts, { ...options, step: 1 } as never))).toBe('INVALID_OPTION');
    // @ts-expect-error: groups take add-remove methods only
    expect(code(() => dpq.releaseByGroupFromCounts(counts, { ...options, method: 'inverse-sensitivity' }))).toBe('INVALID_OPTION');
  });
});
