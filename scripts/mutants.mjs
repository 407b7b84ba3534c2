// npm run mutants: every line that sets a mechanism's per-part epsilon, its
// sensitivity or a charge, made 10% too generous in a scratch copy; the
// native core tests that guard it must then fail. Prints each mutant and
// whether it was killed; exits 1 if any survives. Slow (one incremental
// build per mutant), so not part of npm test.
//
//   node scripts/mutants.mjs [--keep] [NAME ...]   (names: a subset to run)
//   node scripts/mutants.mjs --check   (only that every mutant's text occurs
//                                       once: npm test runs it, so a change
//                                       that moves a text is caught there)
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
    // The rank search in a drawn band (LastSame): one rank past the last
    // whose edge is at or before the offset names another rank's outputs.
    name: 'band end',
    file: 'core/output_walk.h',
    from: '  return low;\n}',
    to: '  return std::min(low + 1, limit);\n}',
    tests: 'OutputWalkTest.*:ExactExponentialTest.*Round*',
  },
  {
    // A band's proposal takes its nearest rank's floor(y), the least of
    // its ranks' wherever the band ends; its farthest rank's leaves the
    // nearer ones above their proposal.
    name: 'band proposal whole',
    file: 'core/output_walk.h',
    from: 'list(RankBand{size, edge_, a, last, whole, run_}',
    to: 'list(RankBand{size, edge_, a, last, w_->Whole(last, last), run_}',
    tests: 'OutputWalkTest.*:ExactExponentialTest.*Round*',
  },
  {
    // A band proposed by its size: where a unit spans several offsets its
    // units are rounded up; rounded down, the band's last offsets are
    // never drawn (and a small band not at all).
    name: 'sized units',
    file: 'core/exact_exponential.cc',
    from: 'units = ((static_cast<uint64_t>(size) - 1) >> -shift) + 1;',
    to: 'units = static_cast<uint64_t>(size) >> -shift;',
    tests: 'ExactExponentialTest.*',
  },
  {
    // ... and an offset there takes the unit's low digits drawn apart:
    // without them only the unit's first offset is drawn.
    name: 'sized offset digits',
    file: 'core/exact_exponential.cc',
    from: "offset = high | UniformPowerOfTwoBits(bits, s);",
    to: "offset = high;",
    tests: 'ExactExponentialTest.*',
  },
  {
    // Shell pieces followed from one to the next: a piece past a boundary
    // from the last end weighed as the shell before it.
    name: 'shell piece step',
    file: 'core/point_measure.cc',
    from: 'w_last = last_weight_ * ShellWeightAt(k_last, last_reach_, last_drop_);',
    to: 'w_last = last_weight_ * ShellWeightAt(k_last + 1, last_reach_, last_drop_);',
    tests: 'PointMeasureTest.*',
  },
  {
    // Binned weights located bin by bin, counting the bins: a piece
    // weighed by the bin before it lands the offset on a wrong point.
    name: 'binned piece weight',
    file: 'core/point_measure.cc',
    from: 'const uint64_t weight = bins_->Weight(b);',
    to: 'const uint64_t weight = bins_->Weight(b > 0 ? b - 1 : b);',
    tests: 'PointMeasureTest.*',
  },
  {
    // The edges' fused read of a point's mass before it and its weight:
    // the weight of the bin after it.
    name: 'fused edge weight',
    file: 'core/point_measure.h',
    from: 'const uint64_t w = Weight(b);',
    to: 'const uint64_t w = Weight(b + 1 < bins_ ? b + 1 : b);',
    tests: 'PointMeasureTest.*',
  },
  {
    // A digit comparison (the 2^-f trial, the discrete Laplace's
    // exp(-gamma) trials) reads U's digits up to the first that differs,
    // that one included; leaving it unread reuses a digit it decided on.
    name: 'trial digits',
    file: 'core/bits.h',
    from: '  bits.Consume(decide + 1);',
    to: '  bits.Consume(decide);',
    tests: 'ExactExponentialTest.*:DiscreteNoiseTest.*',
  },
  {
    // The trial's window around its double must hold the double's error:
    // a narrower one takes digits that are not 2^-f's.
    name: 'trial window',
    file: 'core/exact_exponential.cc',
    from: '  return TwoToMinusFrom(bits, fraction, kTwoToMinusWindowBits, stretch.count);',
    to: '  return TwoToMinusFrom(bits, fraction, 58, stretch.count);',
    tests: 'ExactExponentialTest.*',
  },
  {
    // The trial's first digits from the next stretch of f (smaller 2^-f):
    // digits that are not 2^-f's.
    name: 'trial stretches',
    file: 'core/exact_exponential.cc',
    from: '      fraction >> (kExponentFractionBits - kTwoToMinusStretchBits))];',
    to: '      std::min<Uint128>(255, (fraction >> (kExponentFractionBits - kTwoToMinusStretchBits)) + 1))];',
    tests: 'ExactExponentialTest.*',
  },
  {
    // A range of one record a run reads record i's run as first + i: an
    // off-by-one there puts a rank's outputs at the wrong point.
    name: 'single runs',
    file: 'core/output_walk.h',
    from: '  if (range.single) return range.first + static_cast<size_t>(record);',
    to: '  if (range.single) return range.first + static_cast<size_t>(record) / 2 * 2;',
    tests: 'OutputWalkTest.*',
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
    // Whole steps (large numerators): every power a^y for a scale 10%
    // larger, i.e. a different law (too wide; a narrower one could leave
    // a^b's exponent past 1, with no digits).
    name: 'count noise: whole steps, the powers',
    file: 'core/discrete_noise.cc',
    from: '      digits = ExpMinusLeadingDigits(y * scale_.denominator, scale_.numerator,',
    to: '      digits = ExpMinusLeadingDigits(y * scale_.denominator * 10 / 11, scale_.numerator,',
    tests: 'DiscreteNoiseTest.*',
  },
  {
    // Whole steps: the powers' first digits carried one product short, so
    // each a^y gets a^(y - 1)'s digits.
    name: 'count noise: whole steps, the carried powers',
    file: 'core/discrete_noise.cc',
    from: '      if (y > 1) {',
    to: '      if (y > 2) {',
    tests: 'DiscreteNoiseTest.*',
  },
  {
    // Whole steps: a tie of U's first digits with a power's decided the
    // wrong way round (only the narrow widths of the tests tie often).
    name: 'count noise: whole steps, the tie',
    file: 'core/discrete_noise.cc',
    from: '      return BelowExpMinus(bits, Residue(k + 1, 2)) ? k + 1 : k;',
    to: '      return BelowExpMinus(bits, Residue(k + 1, 2)) ? k : k + 1;',
    tests: 'DiscreteNoiseTest.*',
  },
  {
    // Whole steps: the digits read decided by the lower neighbour alone,
    // so a later draw reuses digits the upper one needed.
    name: 'count noise: whole steps, the digits read',
    file: 'core/discrete_noise.cc',
    from: '    if (k < steps_) used = std::max(used, Differs(u, tops_[k + 1]));',
    to: '    if (k < steps_ && k == 0) used = std::max(used, Differs(u, tops_[k + 1]));',
    tests: 'DiscreteNoiseTest.*',
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
  // Issue 39's list: every line of the session's composition, the splits
  // under rho and for population intervals, AQ's per-path remainder, the
  // joint methods' reserve and certificate, their record cap's sensitivity,
  // the (epsilon, delta) composition, the replace-one flag, the ledger's
  // checks; and the draws' correctness where a bug is a hang or a bias.
  {
    name: 'session: replaced record counts twice (rho x 4)',
    file: 'core/session.cc',
    from: '    rho = rho.TimesInteger(4);',
    to: '    rho = rho.TimesInteger(3);',
    tests: 'SessionTest.*',
  },
  {
    name: 'session: (1 + e^epsilon) delta',
    file: 'core/session.cc',
    from: 'Decimal::Exact(MultiplyUp(delta.Up(), AddUp(1, ExpUp(epsilon.Up()))));',
    to: 'Decimal::Exact(0.9 * MultiplyUp(delta.Up(), AddUp(1, ExpUp(epsilon.Up()))));',
    tests: 'SessionTest.*',
  },
  {
    name: 'session: twice for a person at k = 1',
    file: 'core/session.cc',
    from: '                      max_contributions < 2);',
    to: '                      max_contributions < 1);',
    tests: 'SessionTest.*:ContributionsTest.*',
  },
  {
    name: 'session: twice in a replace-one session',
    file: 'core/session.cc',
    from: '                      neighbouring_ == Neighbouring::kReplaceOne) ||',
    to: '                      false) ||',
    tests: 'SessionTest.*',
  },
  {
    name: 'session: conversion delta rounded down',
    file: 'core/session.cc',
    from: '  const double conversion_delta = left.Down();',
    to: '  const double conversion_delta = 1.1 * left.Down();',
    tests: 'SessionTest.*',
  },
  {
    name: 'session: conversion rho rounded up',
    file: 'core/session.cc',
    from: 'ZcdpToApproxEpsilon(rho.Up(), conversion_delta)',
    to: 'ZcdpToApproxEpsilon(rho.Up() / 1.1, conversion_delta)',
    tests: 'SessionTest.*',
  },
  {
    name: 'session: Fits epsilon',
    file: 'core/session.cc',
    from: '  return spent.epsilon <= Written(total_.epsilon) &&',
    to: '  return spent.epsilon <= Written(1.1 * total_.epsilon) &&',
    tests: 'SessionTest.*',
  },
  {
    name: 'session: Fits delta',
    file: 'core/session.cc',
    from: '         spent.delta <= Written(total_.delta) &&',
    to: '         spent.delta <= Written(1.1 * total_.delta) &&',
    tests: 'SessionTest.*',
  },
  {
    name: 'session: Fits rho',
    file: 'core/session.cc',
    from: '         spent.rho <= Written(total_.rho);',
    to: '         spent.rho <= Written(1.1 * total_.rho);',
    tests: 'SessionTest.*',
  },
  {
    name: 'session: a charge must be a valid cost',
    file: 'core/session.cc',
    from: '      valid = positive(cost.epsilon) && cost.delta == 0 && cost.rho == 0;',
    to: '      valid = !std::isnan(cost.epsilon) && cost.delta == 0 && cost.rho == 0;',
    tests: 'SessionTest.*',
  },
  {
    name: 'mechanisms at or below the decimal (delta)',
    file: 'core/privacy.cc',
    from: '  running.delta = DownWritten(written.delta);',
    to: '  running.delta = 1.1 * DownWritten(written.delta);',
    tests: 'ReleaseTest.NoMechanism*:AppIndExpTest.*:DirectedRoundingTest.*',
  },
  {
    name: 'mechanisms at or below the decimal (rho)',
    file: 'core/privacy.cc',
    from: '  running.rho = DownWritten(written.rho);',
    to: '  running.rho = 1.1 * DownWritten(written.rho);',
    tests: 'ReleaseTest.NoMechanism*:DirectedRoundingTest.*',
  },
  {
    name: 'intervals\' share (rho)',
    file: 'core/plan.cc',
    from: '    intervals = split.share;',
    to: '    intervals = split.share;\n    intervals.rho *= 1.1;',
    tests: 'ReleaseTest.NoMechanism*',
  },
  {
    name: 'population intervals\' count share',
    file: 'core/plan.cc',
    from: '    planned.count = split.share;',
    to: '    planned.count = split.share;\n    planned.count.epsilon *= 1.1;\n    planned.count.rho *= 1.1;',
    tests: 'ReleaseTest.NoMechanism*',
  },
  {
    name: 'AQ per-path remainder',
    file: 'core/aq.cc',
    from: '    return SubtractDown(budget, own_epsilon);',
    to: '    return 1.1 * SubtractDown(budget, own_epsilon);',
    tests: 'AqTest.*Privacy*:AqTest.EveryPath*:ContributionsTest.Aq*',
  },
  {
    name: 'joint rounding reserve (kernel for the whole epsilon)',
    file: 'core/methods.cc',
    from: '      SubtractDown(setup.epsilon, JointRoundingReserve(setup.epsilon));',
    to: '      setup.epsilon;',
    tests: 'JointExpTest.*',
  },
  {
    name: 'joint rounding certificate',
    file: 'core/joint_exp.cc',
    from: '      8 * (2 * m + 1) * JointRoundingBound(count + 1, steps, kernel);',
    to: '      4 * (2 * m + 1) * JointRoundingBound(count + 1, steps, kernel);',
    tests: 'JointExpTest.*',
  },
  {
    name: 'JointExp record cap: add/remove sensitivity 1 - min w',
    file: 'core/joint_exp.cc',
    from: '  kernel.slope = epsilon / (4 * kSensitivitySafety);\n  return kernel;\n}\n\ndouble JointSamplerBytes',
    to: '  double min_w = 1 - previous;\n  double last = 0;\n  for (double q : quantiles) {\n    min_w = std::min(min_w, q - last);\n    last = q;\n  }\n  kernel.slope = epsilon / (4 * (1 - min_w) * kSensitivitySafety);\n  return kernel;\n}\n\ndouble JointSamplerBytes',
    tests: 'JointExpTest.RecordCap*',
  },
  {
    name: '(epsilon, delta) optimal composition',
    file: 'core/privacy.cc',
    from: '    worst = std::max(worst, sum);',
    to: '    worst = std::max(worst, 0.9 * sum);',
    tests: 'OptimalCompositionTest.*:AppIndExpTest.*',
  },
  {
    name: 'inverse sensitivity is replace-one',
    file: 'core/methods.cc',
    from: '       RunInverseSensitivity,\n       Neighbouring::kReplaceOne,',
    to: '       RunInverseSensitivity,\n       Neighbouring::kAddRemove,',
    tests: 'ReleaseMethodsTest.*:InverseSensitivityTest.*',
  },
  {
    // Not privacy: a split draw that lets a rank without outputs set a
    // band's exponent proposes far above the band's weight and never
    // accepts (10^13 counted rows at a point hung).
    name: 'split draw steps over empty ranks',
    file: 'core/output_walk.h',
    from: '    if (n <= k_ || r == 0 || r >= n) return r;',
    to: '    if (n > 0) return r;',
    tests: 'OutputWalkTest.*',
  },
  {
    // The record cap's subset must be uniform for its coupling.
    name: 'subset: a repeated draw is redrawn',
    file: 'core/runs.cc',
    from: '      if (out == 0 || scratch[out - 1] != next) scratch[out++] = next;',
    to: '      scratch[out++] = next;\n      if (out == k) break;',
    tests: 'JointExpTest.SampleRunPoints*',
  },
  {
    name: 'subset: Floyd keeps j when t is taken',
    file: 'core/runs.cc',
    from: '    if ((bits[t >> 6] >> (t & 63)) & 1) t = j;',
    to: '    if ((bits[t >> 6] >> (t & 63)) & 1) t = (t + 1) % (j + 1);',
    tests: 'JointExpTest.SampleRunPoints*',
  },
  {
    // AQ's first look: its histogram's noise at 10% more than its share,
    // the quantiles still on the rest.
    name: 'first look: histogram noise',
    file: 'core/aq.cc',
    from: '  StatusOr<CountNoise> noise = CountNoiseFor(split.share);',
    to: '  StatusOr<CountNoise> noise = CountNoiseFor(SplitBudget(budget, share * 1.1).share);',
    tests: 'AqTest.FirstLook*:ContributionsTest.*:StepLookTest.*',
  },
  {
    // The quantiles after a first look run on the rest of the budget, not
    // on all of it.
    name: 'first look: the quantiles on the rest',
    file: 'core/methods.cc',
    from: '  *rest = plan.value().rest;',
    to: '  *rest = in.budget;',
    tests: 'ReleaseTest.*:ContributionsTest.*:GroupsTest.*',
  },
  {
    // The default's small tree on spread values runs on what the step look
    // and AQ's first look left, not on what the step look alone left.
    name: 'spread tree: the tree on what the looks left',
    file: 'core/methods.cc',
    from: '  const PrivacyBudget& tree_budget = after_look;',
    to: '  const PrivacyBudget& tree_budget = rest;',
    tests: 'SpreadTest.*',
  },
  {
    // The default's step look: a record counted in a second cell (the
    // histogram's sensitivity 2, not 1).
    name: 'step look: one cell a record',
    file: 'core/step_look.cc',
    from: '      total += counted;',
    to: '      total += counted;\n      sums[1] += 1;',
    tests: 'StepLookTest.*',
  },
  {
    // The step look's runs on a lattice of ten, listed without a branch:
    // every run listed puts the runs off it in class 1 and up.
    name: 'step look: the listed runs',
    file: 'core/step_look.cc',
    from: '      on_count += on;',
    to: '      on_count += on | 1u;',
    tests: 'StepLookTest.*',
  },
  {
    // The step look's bounds: a record at a bound counted in its class's
    // cell too (the bounds' cell is apart; sensitivity 2, not 1).
    name: 'step look: the bounds apart',
    file: 'core/step_look.cc',
    from: '      bounds += counted;',
    to: '      bounds += counted;\n      sums[1] += counted;',
    tests: 'StepLookTest.*',
  },
  {
    // A release's step look: its histogram's noise for 10% more than its
    // share (PlanStepLook, the plan the exact test checks).
    name: 'step look: histogram noise',
    file: 'core/methods.cc',
    from: '  return PlanAqLook(budget, kStepLookShare);',
    to: '  return PlanAqLook(budget, kStepLookShare * 1.1);',
    tests: 'StepLookTest.*',
  },
  {
    // The release after the step look on all of the budget, not the rest.
    name: 'step look: the release on the rest',
    file: 'core/methods.cc',
    from: '  *rest = look.value().rest;',
    to: '  *rest = budget;',
    tests: 'ReleaseTest.*:StepLookTest.*',
  },
  {
    // Groups: every group's release after the shared step look on all of
    // its budget, not the rest.
    name: 'groups step look: the groups on the rest',
    file: 'core/groups.cc',
    from: '    plan.budget = paid.value().rest;',
    to: '    plan.budget = planned.plan.budget;',
    tests: 'GroupsTest.*',
  },
  {
    // The groups' step look: its noise for 10% more than its share of a
    // group's budget per record.
    name: 'groups step look: histogram noise',
    file: 'core/groups.cc',
    from: '  return PlanAqLook(per_record, share);',
    to: '  return PlanAqLook(per_record, share * 1.1);',
    tests: 'GroupsTest.*',
  },
  {
    // Under rho, a person in g keys moves the looked histogram by g k, so
    // its noise is for share / g of rho per record; without the 1 / g the
    // look costs g times its share.
    name: 'groups step look: g keys under rho',
    file: 'core/groups.cc',
    from: '                           ? kStepLookShare / g',
    to: '                           ? kStepLookShare + 0 * g',
    tests: 'GroupsTest.*',
  },
  {
    // Private keys under rho: the selection's epsilon 10% above what its
    // share of rho allows (sqrt(2 rho_s)).
    name: 'private keys under rho: selection epsilon',
    file: 'core/groups.cc',
    from: '      selection_epsilon = SqrtDown(2 * split.share.rho);',
    to: '      selection_epsilon = 1.1 * SqrtDown(2 * split.share.rho);',
    tests: 'GroupsTest.PrivateKeysUnderRho*',
  },
  {
    // An approximate zCDP release's delta dropped from the session's ledger.
    name: 'session: approximate zCDP keeps its delta',
    file: 'core/session.cc',
    from: '      next.zcdp_delta = next.zcdp_delta.Plus(delta);',
    to: '      (void)delta;',
    tests: 'GroupsTest.PrivateKeysUnderRho*:SessionTest.*',
  },
  {
    // A replace-one method let into groups: moving a row's key changes two
    // groups' sizes, and the exact composed release reaches 1.5 eps.
    name: 'groups: replace-one methods refused',
    file: 'core/groups.cc',
    from: '  if (planned.plan.neighbouring == Neighbouring::kReplaceOne) {',
    to: '  if (false && planned.plan.neighbouring == Neighbouring::kReplaceOne) {',
    tests: 'GroupsTest.EveryMethodGroupsTake*',
  },
  {
    // The groups' counts' noise for a share 10% above theirs.
    name: 'groups: count noise',
    file: 'core/groups.cc',
    from: 'DivideDown(noise_budget.epsilon, MultiplyUp(g, k));',
    to: 'DivideDown(noise_budget.epsilon, MultiplyUp(g, k) / 1.1);',
    tests: 'GroupsTest.Counts*',
  },
];

// Mutants of the TypeScript package, checked by its Vitest tests on the
// built module: the CLI's ledger and the ledger's restore checks. Applied in
// place (tsc rebuilds dist/), restored whatever happens.
const tsMutants = [
  {
    name: 'CLI: a charge is saved also when the run fails after it',
    file: 'web/src/cli.ts',
    // As until 0.5: the ledger written only after a run that succeeded.
    from: '    await releaseColumn(dpq, { ...args, column: args.column }, file, options, quantileSets, boundsBudget, maxContributions, session, groupOptions);\n  } finally {\n    close();\n  }',
    to: '    await releaseColumn(dpq, { ...args, column: args.column }, file, options, quantileSets, boundsBudget, maxContributions, session, groupOptions);\n    close();\n  } finally {\n  }',
    tests: ['tests/ts/cli.test.ts', '-t', 'saves every charge'],
  },
  {
    name: 'CLI: concurrent runs take the ledger\'s lock',
    file: 'web/src/cli-ledger.ts',
    from: '  const unlock = lockLedger(file);',
    to: '  const unlock = () => {};',
    tests: ['tests/ts/cli.test.ts', '-t', 'saves every charge'],
  },
  {
    name: 'restore: a charge is a positive, finite amount of its kind',
    file: 'web/src/api.ts',
    from: '        amounts.every((key) => amount((c as unknown as Record<string, unknown>)[key])) &&',
    to: '        amounts.every((key) => typeof (c as unknown as Record<string, unknown>)[key] === \'number\') &&',
    tests: ['tests/ts/session.test.ts', '-t', 'save a ledger'],
  },
];

const args = process.argv.slice(2);
const keep = args.includes('--keep');
const wanted = args.filter((a) => !a.startsWith('--'));
const chosen = wanted.length === 0 ? mutants : mutants.filter((m) => wanted.some((w) => m.name.includes(w)));
const chosenTs = wanted.length === 0 ? tsMutants : tsMutants.filter((m) => wanted.some((w) => m.name.includes(w)));

if (args.includes('--check')) {
  const stale = [...chosen, ...chosenTs].filter(
    (m) => readFileSync(join(root, m.file), 'utf8').split(m.from).length !== 2,
  );
  for (const m of stale) console.error(`${m.name}: its text does not occur exactly once in ${m.file}`);
  console.log(`${chosen.length + chosenTs.length - stale.length} of ${chosen.length + chosenTs.length} mutant texts occur once`);
  process.exit(stale.length === 0 ? 0 : 1);
}

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
// The TypeScript mutants, on the package as built (npm run build:package
// first): each applied to its source, dist/ rebuilt by tsc, its tests run.
function tsc() {
  return spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: root, encoding: 'utf8' });
}
for (const mutant of chosenTs) {
  const path = join(root, mutant.file);
  const original = readFileSync(path, 'utf8');
  let mutated = original;
  for (const edit of [{ from: mutant.from, to: mutant.to }]) {
    const at = mutated.indexOf(edit.from);
    if (at < 0 || mutated.indexOf(edit.from, at + 1) >= 0) {
      throw new Error(`${mutant.name}: the text to mutate must occur exactly once in ${mutant.file}`);
    }
    mutated = mutated.replace(edit.from, edit.to);
  }
  let verdict;
  try {
    writeFileSync(path, mutated);
    const built = tsc();
    if (built.status !== 0) {
      verdict = 'does not build (fix the mutant)';
      survivors.push(mutant.name);
    } else {
      const run = spawnSync('npx', ['vitest', 'run', ...mutant.tests], { cwd: root, stdio: 'ignore', timeout: 600_000 });
      if (run.status === 0) {
        verdict = 'SURVIVED';
        survivors.push(mutant.name);
      } else {
        verdict = 'killed (a test failed)';
      }
    }
  } finally {
    writeFileSync(path, original);
    tsc();
  }
  console.log(`${verdict.startsWith('killed') ? 'ok  ' : 'FAIL'} ${mutant.name}: ${verdict}`);
}
if (!keep && existsSync(scratch) && survivors.length === 0) rmSync(scratch, { recursive: true, force: true });
const total = chosen.length + chosenTs.length;
console.log(survivors.length === 0 ? `all ${total} mutants killed` : `${survivors.length} survived: ${survivors.join('; ')}`);
process.exit(survivors.length === 0 ? 0 : 1);
