// npm run mutants: every line that sets a mechanism's per-part epsilon, its
// sensitivity or a charge, made 10% too generous in a scratch copy; the
// native core tests that guard it must then fail. Prints each mutant and
// whether it was killed; exits 1 if any survives. Slow (one incremental
// build per mutant), so not part of npm test.
//
//   node scripts/mutants.mjs [--keep] [NAME ...]   (names: a subset to run)
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const scratch = join(root, 'build', 'mutants');

// Each mutant: the file, the exact text (it must occur once), what replaces
// it, and the tests that must catch it (a GoogleTest filter).
const mutants = [
  {
    name: 'single-quantile sensitivity',
    file: 'core/exponential_quantile.cc',
    from: 'return std::max(q, 1 - q) * kSensitivitySafety;',
    to: 'return std::max(q, 1 - q) * kSensitivitySafety / 1.1;',
    tests: 'ExponentialQuantileTest.*Privacy*',
  },
  {
    // The exact draw's rate (what the sampler draws with, not the privacy
    // test's formula): the round enumerations and the chi-square tests
    // compare the draws with the exact distributions at the stated epsilon.
    name: 'exact draw rate',
    file: 'core/exponential_quantile.cc',
    from: 'rate_(epsilon / (2 * QuantileSensitivity(problem.quantile))),',
    to: 'rate_(1.1 * epsilon / (2 * QuantileSensitivity(problem.quantile))),',
    tests: 'ExactExponentialTest.*Round*:ExponentialQuantileTest.Sampler*',
  },
  {
    // A band's outputs share floor(y); each keeps its own 2^-frac(y). Using
    // the band's first rank's fraction for all of them is a wrong
    // distribution the round enumerations catch.
    name: 'band fraction',
    file: 'core/exponential_quantile.cc',
    from: 'if (!AcceptBelow(bits, band->whole, weights_.At(rank, rank))) {',
    to: 'if (!AcceptBelow(bits, band->whole, weights_.At(band->first, band->first))) {',
    tests: 'ExactExponentialTest.*Round*',
  },
  {
    // A wide band's output is accepted with 2^-(y - the band's floor(y)):
    // half the whole part's zero bits over-weights its far outputs.
    name: 'wide band whole',
    file: 'core/exponential_quantile.cc',
    from: 'BernoulliTwoToMinus(bits, static_cast<uint64_t>(whole - band_whole))',
    to: 'BernoulliTwoToMinus(bits, static_cast<uint64_t>(whole - band_whole) / 2)',
    tests: 'ExactExponentialTest.*Round*',
  },
  {
    // Where a band of ranks ends: one rank past the last with the same
    // floor(y) puts a lighter rank under a heavier proposal.
    name: 'band end',
    file: 'core/output_walk.h',
    from: '  return low;\n}',
    to: '  return std::min(low + 1, limit);\n}',
    tests: 'OutputWalkTest.*:ExactExponentialTest.*Round*',
  },
  {
    // The acceptance trial's word-at-a-time first pass must stop at the
    // deciding digit, as the digit-by-digit pass does.
    name: 'word pass digits',
    file: 'core/exact_exponential.cc',
    from: '      bits.Consume(decide + 1);',
    to: '      bits.Consume(decide);',
    tests: 'ExactExponentialTest.*',
  },
  {
    name: 'AQ per-path share',
    file: 'core/aq.cc',
    from: 'return DivideDown(budget, ApproximateQuantilesLevels(end - begin));',
    to: 'return 1.1 * DivideDown(budget, ApproximateQuantilesLevels(end - begin));',
    tests: 'AqTest.*Privacy*:ContributionsTest.Aq*',
  },
  {
    name: 'epsilon per part (pure)',
    file: 'core/privacy.cc',
    from: '      return DivideDown(budget.epsilon, parts);',
    to: '      return 1.1 * DivideDown(budget.epsilon, parts);',
    tests: 'ReleaseTest.NoMechanism*:PrivacyBudgetTest.*',
  },
  {
    name: 'epsilon per part (zCDP)',
    file: 'core/privacy.cc',
    from: '      return SqrtDown(DivideDown(8.0 * budget.rho, parts));',
    to: '      return 1.1 * SqrtDown(DivideDown(8.0 * budget.rho, parts));',
    tests: 'AqTest.Zcdp*:PrivacyBudgetTest.*:ReleaseTest.*Zcdp*',
  },
  {
    name: 'intervals\' share',
    file: 'core/plan.cc',
    from: '    intervals = split.share;',
    to: '    intervals = split.share;\n    intervals.epsilon *= 1.1;',
    tests: 'ReleaseTest.NoMechanism*',
  },
  {
    name: 'interval tree noise',
    file: 'core/plan.cc',
    from: '  StatusOr<CountNoise> noise = CountNoiseFor(level);',
    to: '  PrivacyBudget wider = level;\n  wider.epsilon *= 1.1;\n  StatusOr<CountNoise> noise = CountNoiseFor(wider);',
    tests: 'ReleaseTest.NoMechanism*:IntervalsTest.*Tree*',
  },
  {
    name: 'mechanisms at or below the decimal',
    file: 'core/privacy.cc',
    from: '  running.epsilon = DownWritten(written.epsilon);',
    to: '  running.epsilon = 1.1 * DownWritten(written.epsilon);',
    tests: 'ReleaseTest.NoMechanism*:DirectedRoundingTest.*',
  },
  {
    name: 'JointExp kernel',
    file: 'core/joint_exp.cc',
    from: 'kernel.slope = epsilon / (4 * kSensitivitySafety);',
    to: 'kernel.slope = 1.1 * epsilon / (4 * kSensitivitySafety);',
    tests: 'JointExpTest.*Privacy*:HsJointExpTest.*',
  },
  {
    name: 'inverse sensitivity kernel',
    file: 'core/inverse_sensitivity.cc',
    from: 'kernel.slope = epsilon / 4;',
    to: 'kernel.slope = 1.1 * epsilon / 4;',
    tests: 'InverseSensitivityTest.*',
  },
  {
    name: 'AggTree level share (epsilon)',
    file: 'core/agg_tree.cc',
    from: 'share.epsilon = DivideDown(share.epsilon, shape.height);',
    to: 'share.epsilon = 1.1 * DivideDown(share.epsilon, shape.height);',
    tests: 'AggTreeTest.*Privacy*',
  },
  {
    name: 'AggTree level share (rho)',
    file: 'core/agg_tree.cc',
    from: 'share.rho = DivideDown(share.rho, shape.height);',
    to: 'share.rho = 1.1 * DivideDown(share.rho, shape.height);',
    tests: 'AggTreeTest.Zcdp*',
  },
  {
    name: 'tree CDF level share (epsilon)',
    file: 'core/tree_cdf.cc',
    from: '        DivideDown(MultiplyDown(budget.epsilon, weights[l]), total);',
    to: '        1.1 * DivideDown(MultiplyDown(budget.epsilon, weights[l]), total);',
    tests: 'TreeCdfTest.*Privacy*',
  },
  {
    name: 'tree CDF level share (rho)',
    file: 'core/tree_cdf.cc',
    from: 'shares[l].rho = DivideDown(MultiplyDown(budget.rho, weights[l]), total);',
    to: 'shares[l].rho = 1.1 * DivideDown(MultiplyDown(budget.rho, weights[l]), total);',
    tests: 'TreeCdfTest.Zcdp*',
  },
  {
    name: 'count noise (Laplace scale)',
    file: 'core/discrete_noise.cc',
    from: 'LaplaceScaleAtLeast(ReciprocalUp(share.epsilon));',
    to: 'LaplaceScaleAtLeast(ReciprocalUp(1.1 * share.epsilon));',
    tests: 'AggTreeTest.*Privacy*:TreeCdfTest.*Privacy*:BoundsTest.*Privacy*:DpHistGkTest.*',
  },
  {
    name: 'count noise (Gaussian variance)',
    file: 'core/discrete_noise.cc',
    from: 'GaussianVarianceAtLeast(ReciprocalUp(2 * share.rho));',
    to: 'GaussianVarianceAtLeast(ReciprocalUp(2.2 * share.rho));',
    tests: 'AggTreeTest.*:TreeCdfTest.*:BoundsTest.*:DiscreteNoiseTest.*',
  },
  {
    name: 'DPExpGK sensitivity',
    file: 'core/dp_exp_gk.cc',
    from: 'const BaseTwoRate rate(epsilon / (2 * ExpGkSensitivity(sketch)));',
    to: 'const BaseTwoRate rate(1.1 * epsilon / (2 * ExpGkSensitivity(sketch)));',
    tests: 'DpExpGkTest.*Privacy*',
  },
  {
    name: 'per-person epsilon',
    file: 'core/contributions.cc',
    from: `    case PrivacyBudget::Kind::kPure:
      per_record.epsilon = DivideDown(per_person.epsilon, groups);`,
    to: `    case PrivacyBudget::Kind::kPure:
      per_record.epsilon = 1.1 * DivideDown(per_person.epsilon, groups);`,
    tests: 'ContributionsTest.*:BoundsTest.PerPerson*',
  },
  {
    name: 'per-person rho',
    file: 'core/contributions.cc',
    from: 'per_record.rho = DivideDown(DivideDown(per_person.rho, groups), groups);',
    to: 'per_record.rho = 1.1 * DivideDown(DivideDown(per_person.rho, groups), groups);',
    tests: 'ContributionsTest.*',
  },
  {
    name: 'session: replaced record counts twice',
    file: 'core/session.cc',
    from: '    epsilon = epsilon.TimesInteger(2);',
    to: '    epsilon = epsilon.TimesInteger(2).Times(*Decimal::Parse("0.9"));',
    tests: 'SessionTest.*',
  },
  {
    name: 'session: pure in zCDP as epsilon^2 / 2',
    file: 'core/session.cc',
    from: 'next.pure_as_rho.Plus(epsilon.Times(epsilon).Times(Half()));',
    to: 'next.pure_as_rho.Plus(epsilon.Times(epsilon).Times(Half()).Times(*Decimal::Parse("0.9")));',
    tests: 'SessionTest.*',
  },
  {
    name: 'session: zCDP conversion rounded up',
    file: 'core/session.cc',
    from: '  double found = AddUp(best.value, std::ldexp(best.magnitude, -40));',
    to: '  double found = best.value / 1.1;',
    tests: 'SessionTest.*',
  },
];

const args = process.argv.slice(2);
const keep = args.includes('--keep');
const wanted = args.filter((a) => !a.startsWith('--'));
const chosen = wanted.length === 0 ? mutants : mutants.filter((m) => wanted.some((w) => m.name.includes(w)));

// A scratch copy of what the native core tests build from; its build
// directory is reused between mutants (incremental builds).
mkdirSync(scratch, { recursive: true });
for (const part of ['core', 'tests', 'bench', 'CMakeLists.txt']) {
  rmSync(join(scratch, part), { recursive: true, force: true });
  cpSync(join(root, part), join(scratch, part), { recursive: true });
}
const build = join(scratch, 'build');
const jobs = String(cpus().length);
execFileSync('cmake', ['-S', scratch, '-B', build, '-DCMAKE_BUILD_TYPE=Release', '-DDPQ_BUILD_BENCHMARKS=OFF'], {
  stdio: ['ignore', 'ignore', 'inherit'],
});
function buildTests() {
  return spawnSync('cmake', ['--build', build, '-j', jobs, '--target', 'dpq_core_tests'], { encoding: 'utf8' });
}
const first = buildTests();
if (first.status !== 0) {
  process.stderr.write(first.stdout + first.stderr);
  throw new Error('the unmutated core tests do not build');
}

// The guarding tests pass unmutated (else a mutant would look killed by a
// test that fails anyway).
const unmutated = spawnSync(join(build, 'dpq_core_tests'), [`--gtest_filter=${chosen.map((m) => m.tests).join(':')}`], {
  stdio: 'ignore',
});
if (unmutated.status !== 0) throw new Error('the guarding tests fail without any mutant');

const survivors = [];
for (const mutant of chosen) {
  const path = join(scratch, mutant.file);
  const original = readFileSync(path, 'utf8');
  const at = original.indexOf(mutant.from);
  if (at < 0 || original.indexOf(mutant.from, at + 1) >= 0) {
    throw new Error(`${mutant.name}: the text to mutate must occur exactly once in ${mutant.file}`);
  }
  writeFileSync(path, original.replace(mutant.from, mutant.to));
  let verdict;
  try {
    const built = buildTests();
    if (built.status !== 0) {
      verdict = 'does not build (fix the mutant)';
      survivors.push(mutant.name);
    } else {
      // How many tests the filter selects (a filter that selects none
      // would let every mutant survive unnoticed).
      const listed = spawnSync(join(build, 'dpq_core_tests'), ['--gtest_list_tests', `--gtest_filter=${mutant.tests}`], {
        encoding: 'utf8',
      });
      const ran = listed.stdout.split('\n').filter((line) => line.startsWith('  ')).length;
      // Stops at the first failed assertion: a killed mutant can otherwise
      // print hundreds of megabytes of failures from loops of checks. A
      // mutant may also make a loop run for ever: ten minutes, then it
      // counts as caught (a hang is not a silent overspend) and is named.
      const run = spawnSync(join(build, 'dpq_core_tests'), [`--gtest_filter=${mutant.tests}`, '--gtest_break_on_failure'], {
        stdio: 'ignore',
        timeout: 600_000,
      });
      if (ran === 0) {
        verdict = 'SURVIVED: its filter selects no test';
        survivors.push(mutant.name);
      } else if (run.error?.code === 'ETIMEDOUT') {
        verdict = `killed (timed out: the mutant hangs one of ${ran} tests)`;
      } else if (run.status === 0) {
        verdict = `SURVIVED ${ran} tests`;
        survivors.push(mutant.name);
      } else {
        verdict = `killed (an assertion of ${ran} tests failed)`;
      }
    }
  } finally {
    writeFileSync(path, original);
  }
  console.log(`${verdict.startsWith('killed') ? 'ok  ' : 'FAIL'} ${mutant.name}: ${verdict}`);
}
if (!keep && existsSync(scratch) && survivors.length === 0) rmSync(scratch, { recursive: true, force: true });
console.log(survivors.length === 0 ? `all ${chosen.length} mutants killed` : `${survivors.length} survived: ${survivors.join('; ')}`);
process.exit(survivors.length === 0 ? 0 : 1);
