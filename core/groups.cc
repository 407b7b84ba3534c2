#include "core/groups.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "core/aq.h"
#include "core/contributions.h"
#include "core/methods.h"
#include "core/pipeline.h"
#include "core/plan.h"
#include "core/prepare.h"
#include "core/privacy.h"
#include "core/random.h"
#include "core/runs.h"
#include "core/step_look.h"

namespace dpq {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The plan of a grouped release: the per-group request and plan (one
// group's budget), the whole spend as the session sees it, the selection.
struct GroupPlan {
  ReleaseRequest per_group;
  ReleasePlan plan;
  PrivacyBudget spend;
  std::optional<SelectionPlan> selection;
  PrivacyBudget selection_spent;
  int64_t max_groups = 0;  // per person: g
  size_t m = 0;            // quantiles requested (with repeats)
  // With `count` and public keys: the counts' noise and their share.
  std::optional<CountNoise> count_noise;
  PrivacyBudget count_spent;
};

Status GroupOptionError(const std::string& message) {
  return Status(StatusCode::kInvalidOption, message);
}

// appindexp with delta, per person across g > 1 groups. Each group's m
// exponential mechanisms run at epsilon_p (the m-fold optimal composition of
// its share, per record); a person changes at most g groups by at most k
// rows, so what the release shows of a person is a non-adaptive
// composition of at most g m mechanisms, each k epsilon_p-bounded-range
// (a bounded range adds up over a chain of k rows). Dong, Durfee and Rogers'
// Theorem 3 bounds it by (epsilon_M, delta_OPT(g m, k epsilon_p;
// epsilon_M)), epsilon_M the method's share of the whole epsilon: checked
// here against delta, from public parameters only (docs/groups.md).
Status CheckApproxAcrossGroups(const GroupPlan& planned) {
  const int64_t g = planned.max_groups;
  const auto m = static_cast<int64_t>(planned.plan.quantiles.distinct.size());
  const int64_t k = std::max<int64_t>(planned.plan.max_contributions, 1);
  if (g * m > kMaxOptimalCompositionParts) {
    return GroupOptionError(
        "appindexp with delta across groups composes maxGroups x quantiles "
        "exponential mechanisms a person can reach, at most " +
        std::to_string(kMaxOptimalCompositionParts) + "; got " +
        std::to_string(g * m) + ". Use fewer, or appindexp without delta");
  }
  const double part = ExponentialMechanismEpsilonPerPart(planned.plan.budget,
                                                         static_cast<int>(m));
  const auto kd = static_cast<double>(k);
  const auto gd = static_cast<double>(g);
  const double range = MultiplyUp(kd, part);
  const double method_epsilon =
      MultiplyDown(MultiplyDown(planned.plan.budget.epsilon, kd), gd);
  if (!(OptimalExponentialCompositionDelta(range, static_cast<int>(g * m),
                                           method_epsilon) <=
        planned.plan.spend.delta)) {
    return GroupOptionError(
        "appindexp with delta: its " + std::to_string(g * m) +
        " exponential mechanisms across maxGroups groups would not fit "
        "delta; give a larger delta, fewer maxGroups, or appindexp without "
        "delta");
  }
  return Status::Ok();
}

// Plan, from public parameters only: options, the budget's split between
// selection and groups, per person, the per-group plan, the session check.
StatusOr<GroupPlan> PlanGroups(const GroupRequest& request,
                               const PrivacySession* session) {
  GroupPlan planned;
  const ReleaseRequest& release = request.release;
  if (request.keys > kMaxGroups) {
    return Status(StatusCode::kTooLarge,
                  "a grouped release holds at most 2^24 groups");
  }
  if (!request.private_keys && request.keys == 0) {
    return GroupOptionError("keys: give at least one public key");
  }
  // Per person: the rows' people given (bounded here), or the rows
  // bounded before they were counted (counts from SQL).
  const bool per_person =
      release.users != nullptr || release.contributions_bounded;
  if (request.max_groups.has_value() && !per_person) {
    return GroupOptionError(
        "maxGroups bounds the groups a person counts in: give users (and "
        "maxContributions) with it");
  }
  if (release.users != nullptr && !release.max_contributions.has_value()) {
    // Both missing bounds at once, the person's rows first.
    return GroupOptionError(
        std::string("per person (users), a grouped release needs "
                    "maxContributions: the most rows a person keeps in a "
                    "group") +
        (request.max_groups.has_value()
             ? ""
             : "; and maxGroups: the most groups a person counts in"));
  }
  if (per_person && !request.max_groups.has_value()) {
    return GroupOptionError(
        "per person, a grouped release needs maxGroups: the most groups a "
        "person counts in");
  }
  if (per_person) {
    const double g = *request.max_groups;
    if (!(g >= 1 && g <= static_cast<double>(kMaxGroups)) ||
        g != std::floor(g)) {
      return GroupOptionError("maxGroups must be a whole number from 1 to " +
                              std::to_string(kMaxGroups));
    }
    planned.max_groups = static_cast<int64_t>(g);
  }
  if (!request.private_keys &&
      (request.delta.has_value() || request.selection_share.has_value())) {
    return GroupOptionError(
        "delta and selectionShare are for private keys (no public keys)");
  }
  StatusOr<PrivacyBudget> whole =
      MakePrivacyBudget(release.epsilon, release.rho);
  if (!whole.ok()) return whole.status();
  planned.spend = whole.value();
  // What the groups' releases run with, before dividing per person.
  PrivacyBudget groups = whole.value();
  double selection_epsilon = 0;
  if (request.private_keys) {
    if (!request.delta.has_value()) {
      return Status(StatusCode::kInvalidPrivacy,
                    "private keys need delta: without public keys, a key "
                    "held by one row appears with probability at most "
                    "delta; give delta, or the keys");
    }
    const double share =
        request.selection_share.value_or(kDefaultSelectionShare);
    if (!(share > 0 && share < 1)) {
      return GroupOptionError("selectionShare must be in (0, 1)");
    }
    const double delta = *request.delta;
    if (!(delta > 0 && delta < 1)) {
      return Status(StatusCode::kInvalidPrivacy,
                    "private keys need delta strictly between 0 and 1");
    }
    const BudgetSplit split =
        SplitBudget(AtOrBelowWritten(whole.value()), share);
    if (whole.value().kind == PrivacyBudget::Kind::kZcdp) {
      // Under rho: the selection at epsilon_s = sqrt(2 rho_s) is epsilon_s-DP
      // outside its delta event (partition_selection.h), hence (epsilon_s^2
      // / 2 <= rho_s)-zCDP there: delta-approximate rho_s-zCDP, and with the
      // groups' rho - rho_s, delta-approximate rho-zCDP in all.
      selection_epsilon = SqrtDown(2 * split.share.rho);
      planned.spend = PrivacyBudget::ApproxZcdp(whole.value().rho, delta);
      planned.selection_spent =
          PrivacyBudget::ApproxZcdp(split.share.rho, delta);
    } else {
      selection_epsilon = split.share.epsilon;
      planned.spend = PrivacyBudget::Approx(whole.value().epsilon, delta);
      planned.selection_spent =
          PrivacyBudget::Approx(split.share.epsilon, delta);
    }
    groups = split.rest;
  }
  // Counts, public keys: their share first, the groups the rest.
  PrivacyBudget count_budget;
  double count_share = 0;
  if (request.count_share.has_value() && !request.count) {
    return GroupOptionError("countShare goes with count");
  }
  if (request.count && request.private_keys &&
      request.count_share.has_value()) {
    return GroupOptionError(
        "with private keys a group's count is the selection's noisy count, "
        "which costs nothing more: leave countShare out (selectionShare "
        "sets its noise)");
  }
  if (request.count && !request.private_keys) {
    count_share = request.count_share.value_or(kDefaultCountShare);
    if (!(count_share > 0 && count_share < 1)) {
      return GroupOptionError("countShare must be in (0, 1)");
    }
    const BudgetSplit split =
        SplitBudget(AtOrBelowWritten(whole.value()), count_share);
    count_budget = split.share;
    groups = split.rest;
    planned.count_spent = WrittenShare(whole.value(), count_share);
  }
  if (planned.max_groups > 1) {
    if (groups.kind == PrivacyBudget::Kind::kZcdp) {
      groups.rho =
          DivideDown(groups.rho, static_cast<double>(planned.max_groups));
    } else {
      groups.epsilon =
          DivideDown(groups.epsilon, static_cast<double>(planned.max_groups));
    }
  }
  // One group's request: its budget, the options every group shares.
  ReleaseRequest per_group = release;
  per_group.epsilon.reset();
  per_group.rho.reset();
  if (groups.kind == PrivacyBudget::Kind::kZcdp) {
    per_group.rho = groups.rho;
  } else {
    per_group.epsilon = groups.epsilon;
  }
  StatusOr<ReleaseRequest> resolved = Resolved(per_group);
  if (!resolved.ok()) return resolved.status();
  planned.per_group = resolved.value();
  StatusOr<ReleasePlan> plan = PlanRelease(planned.per_group, nullptr);
  if (!plan.ok()) return plan.status();
  planned.plan = plan.value();
  if (planned.plan.neighbouring == Neighbouring::kReplaceOne) {
    // A replace-one method assumes its group's n fixed. In groups, replacing
    // a row can move it to another key (two groups change size) or to an
    // unlisted one (one does): an add/remove change to each, which such a
    // method does not protect (groups_test.cc: 1.5 eps at eps = 1).
    std::string add_remove;
    for (const MethodSpec& spec : Methods()) {
      if (spec.neighbouring != Neighbouring::kAddRemove) continue;
      if (!add_remove.empty()) add_remove += ", ";
      add_remove += spec.name;
    }
    return GroupOptionError(
        "method '" + release.method +
        "' protects a replaced record with each group's number of records "
        "public, but replacing a row can move it to another group and change "
        "two groups' sizes: a grouped release needs an add-remove method (" +
        add_remove + ")");
  }
  if (planned.plan.spend.kind == PrivacyBudget::Kind::kApprox) {
    // appindexp's own delta would compose with the selection's; refused
    // rather than accounted (both are deltas of one release).
    if (request.private_keys) {
      return GroupOptionError(
          "appindexp's delta and private keys' delta cannot be combined: "
          "give the keys, or another method");
    }
    planned.spend =
        PrivacyBudget::Approx(whole.value().epsilon, planned.plan.spend.delta);
    if (planned.max_groups > 1) {
      const Status composed = CheckApproxAcrossGroups(planned);
      if (!composed.ok()) return composed;
    }
  }
  if (request.private_keys) {
    // Rows counted per key (counts bounded upstream) move a key's count by
    // up to k; people counted (rows bounded here, or no person) by 1.
    const int64_t per_key =
        release.contributions_bounded ? planned.plan.max_contributions : 1;
    StatusOr<SelectionPlan> selection =
        PlanSelection(selection_epsilon, *request.delta,
                      std::max<int64_t>(planned.max_groups, 1), per_key);
    if (!selection.ok()) return selection.status();
    planned.selection = selection.value();
  }
  planned.m = release.quantiles.size();
  if (count_share > 0) {
    // A count's sensitivity: 1 row; per person (users) 1 person in each of
    // g keys (L1 g, L2^2 g); rows bounded upstream k in each of g keys (L1
    // g k, L2^2 g k^2).
    const auto g =
        static_cast<double>(std::max<int64_t>(planned.max_groups, 1));
    const double k = release.contributions_bounded
                         ? static_cast<double>(planned.plan.max_contributions)
                         : 1.0;
    PrivacyBudget noise_budget = count_budget;
    if (noise_budget.kind == PrivacyBudget::Kind::kZcdp) {
      noise_budget.rho = DivideDown(noise_budget.rho, MultiplyUp(g, k * k));
    } else {
      noise_budget.epsilon = DivideDown(noise_budget.epsilon, MultiplyUp(g, k));
    }
    StatusOr<CountNoise> noise = CountNoiseFor(noise_budget);
    if (!noise.ok()) return noise.status();
    planned.count_noise = noise.value();
  }
  if (session != nullptr) {
    // Per person, a record added to a person can move which of their
    // groups they keep: two groups change, so an add-remove session counts
    // the release twice (k = 1 in the session's rule), a per-person session
    // once.
    const Status status = session->Check(
        planned.spend, planned.plan.neighbouring, per_person ? 1 : 0);
    if (!status.ok()) return status;
  }
  return planned;
}

Status NonFiniteRow(size_t i) {
  return Status(StatusCode::kNonFiniteValue,
                "values[" + std::to_string(i) + "] is not a finite number");
}

// The default's step look for groups counts every key's records in one
// histogram (GroupStepLook below). Rows add each key's counts as its runs
// are made, while they are in cache; counts add them before the keys run.
// Nothing is counted unless the method is the default.
struct StepLookSum {
  explicit StepLookSum(const GroupPlan& planned)
      : grid(planned.plan.grid),
        wanted(std::string(planned.plan.method->name) == "auto"),
        levels(wanted ? StepLookLevels(grid) : 0),
        sum(StepLookCells(levels), 0) {}
  void Add(const Runs& key) {
    if (!wanted) return;
    const std::vector<int64_t> counts = StepLookCounts(key, grid, levels);
    for (size_t c = 0; c < sum.size(); ++c) sum[c] += counts[c];
  }
  const OutputGrid& grid;
  bool wanted;
  int levels;
  std::vector<int64_t> sum;
};

// Prepare, keyed rows: every value checked finite (the first bad one named
// by its row) and, on a keyed grid (runs.h), made its point key in the
// same pass that counts the codes; the listed rows' keys scattered into
// one contiguous slice per code (a counting sort into the codes' buffer's
// second half; unlisted codes left out), and each slice's keys made runs
// in its rows' part of the two buffers. offsets[key] .. offsets[key + 1]
// is a key's slice, runs[key] its runs (points over the values, counts over
// the codes' buffer).
//
// Where each byte goes, with n rows, values V and codes C (8n bytes each):
// keys to V[4i] (behind value i, read first); the scatter reads C[0, 4n)
// and writes C[4n, 8n); key k's slice [s, e) is copied to V[8s, 8s + 4(e -
// s)), free since the scatter, and its runs written over V[8s, 8e) and C[8s,
// 8e), which ends at or before 4n + 4e, where the next slice's keys start.
// No memory beyond the buffers but a counter a key: 16 bytes a row.
// Otherwise (a grid past 32-bit keys) an in-place bucket permutation of
// values and codes, then RowsToRuns per slice.
Status PrepareKeyedRows(double* values, unsigned char* codes, size_t count,
                        uint32_t keys, const GroupPlan& planned,
                        std::vector<size_t>* offsets, std::vector<Runs>* runs,
                        StepLookSum* step_look) {
  const ReleasePlan& plan = planned.plan;
  const OutputGrid& grid = plan.grid;
  std::vector<size_t> next(static_cast<size_t>(keys) + 2, 0);
  auto* ends = reinterpret_cast<double*>(codes);
  runs->assign(keys, Runs());
  if (KeyedGrid(grid)) {
    auto* bytes = reinterpret_cast<unsigned char*>(values);
    const NearestShortcut shortcut = grid.shortcut();
    const double lower = planned.per_group.lower;
    const double upper = planned.per_group.upper;
    for (size_t i = 0; i < count; ++i) {
      double x;
      std::memcpy(&x, bytes + 8 * i, 8);
      if (!std::isfinite(x)) return NonFiniteRow(i);
      // Bucketed: the value's bucket edge first, as ToBucketEdges.
      if (plan.bucketed)
        x = BucketEdge(grid, std::min(std::max(x, lower), upper));
      uint32_t key = 0;  // x is finite: PointKey sets it
      PointKey(x, shortcut, grid, &key);
      StoreWord32(bytes, i, key);
      ++next[std::min(LoadWord32(codes, i), keys) + 1];
    }
    for (size_t b = 1; b < next.size(); ++b) next[b] += next[b - 1];
    offsets->assign(next.begin(), next.end() - 1);  // keys + 1 starts
    unsigned char* slices = codes + 4 * count;
    for (size_t i = 0; i < count; ++i) {
      const uint32_t code = LoadWord32(codes, i);
      if (code < keys) StoreWord32(slices, next[code]++, LoadWord32(bytes, i));
    }
    for (uint32_t key = 0; key < keys; ++key) {
      const size_t start = (*offsets)[key];
      const size_t size = (*offsets)[key + 1] - start;
      unsigned char* slice = bytes + 8 * start;
      bool sorted = true;
      uint32_t previous = 0;
      for (size_t i = 0; i < size; ++i) {
        const uint32_t k = LoadWord32(slices, start + i);
        sorted &= k >= previous;
        previous = k;
        StoreWord32(slice, i, k);
      }
      (*runs)[key] = KeysToRunsInPlace(slice, size, grid, ends + start, sorted);
      step_look->Add((*runs)[key]);  // while the key's runs are in cache
    }
    return Status::Ok();
  }
  for (size_t i = 0; i < count; ++i) {
    if (!std::isfinite(values[i])) return NonFiniteRow(i);
    const uint32_t code = LoadWord32(codes, i);
    ++next[std::min(code, keys) + 1];
  }
  for (size_t b = 1; b < next.size(); ++b) next[b] += next[b - 1];
  offsets->assign(next.begin(), next.end() - 1);  // keys + 1 starts
  // The permutation: each bucket's unplaced rows swap into their buckets.
  for (uint32_t b = 0; b <= keys; ++b) {
    const size_t end = b == keys ? count : (*offsets)[b + 1];
    while (next[b] < end) {
      uint32_t code = std::min(LoadWord32(codes, next[b]), keys);
      while (code != b) {
        const size_t to = next[code]++;
        const double value = values[to];
        const uint32_t other = std::min(LoadWord32(codes, to), keys);
        values[to] = values[next[b]];
        StoreWord32(codes, to, code);
        values[next[b]] = value;
        StoreWord32(codes, next[b], other);
        code = other;
      }
      ++next[b];
    }
  }
  // The codes are spent: their buffer, 8 bytes a row, holds the runs'
  // counts from here on.
  for (uint32_t key = 0; key < keys; ++key) {
    const size_t start = (*offsets)[key];
    const size_t size = (*offsets)[key + 1] - start;
    double* slice = values + start;
    if (plan.bucketed) {
      Status status = ClampValues(slice, size, planned.per_group.lower,
                                  planned.per_group.upper);
      if (!status.ok()) return status;
      ToBucketEdges(slice, size, grid);
    }
    StatusOr<Runs> made = RowsToRuns(slice, size, grid, ends + start);
    if (!made.ok()) return made.status();
    (*runs)[key] = made.value();
    step_look->Add((*runs)[key]);
  }
  return Status::Ok();
}

// The default's step look for groups (step_look.h): one look over every
// key's records, so every key releases on the same step (the column's) and
// a small group gains from the others' records. The histogram is the sum
// of the keys' (each key's counts capped a point as alone): a record is in
// one key and moves one cell of its key's by at most 1, so the sum moves by
// at most 1 a record, and a person (g keys, k rows in each) by at most g k
// in L1 and in L2. Its noise is for a share s of one group's budget per
// record. Pure: epsilon_r = epsilon / (g k) (after the selection's share),
// so the look costs g k s epsilon_r = s epsilon. Under rho, rho_r = rho /
// (g k^2): the noise is for s / g of it, and the look costs (g k)^2 (s /
// g) rho_r = s rho. Each group then releases with its budget's rest, as
// alone: the look and the groups compose in sequence to the whole budget.
StatusOr<AqLookPlan> PlanGroupStepLook(const GroupPlan& planned) {
  const PrivacyBudget& per_record = planned.plan.budget;
  const auto g = static_cast<double>(std::max<int64_t>(planned.max_groups, 1));
  const double share = per_record.kind == PrivacyBudget::Kind::kZcdp
                           ? kStepLookShare / g
                           : kStepLookShare;
  return PlanAqLook(per_record, share);
}

StatusOr<int> GroupStepLook(StepLookSum counted, const GroupPlan& planned,
                            RandomSource& rng) {
  StatusOr<AqLookPlan> look = PlanGroupStepLook(planned);
  if (!look.ok()) return look.status();
  look.value().noise.AddTo(&counted.sum, rng);
  return StepLookChoice(counted.sum, look.value().noise_scale);
}

// Select (private keys), run each released key's runs, report; the
// session is charged once. The same for rows and counts.
StatusOr<GroupedReport> RunGroups(const std::vector<Runs>& runs,
                                  const std::vector<uint64_t>& counts,
                                  StepLookSum step_look,
                                  const GroupRequest& request,
                                  const GroupPlan& planned, RandomSource& rng,
                                  double* out, PrivacySession* session) {
  GroupedReport grouped;
  grouped.private_keys = request.private_keys;
  grouped.max_groups = planned.max_groups;
  std::vector<int64_t> noisy_counts;
  if (planned.selection.has_value()) {
    grouped.selection = *planned.selection;
    grouped.selection_spent = planned.selection_spent;
    grouped.released = SelectKeys(counts, *planned.selection, rng,
                                  request.count ? &noisy_counts : nullptr);
  } else {
    grouped.released.assign(runs.size(), 1);
  }
  ReleaseReport& report = grouped.release;
  grouped.look_low.assign(runs.size(), kNaN);
  grouped.look_high.assign(runs.size(), kNaN);
  grouped.look_seen_low.assign(runs.size(), kNaN);
  grouped.look_seen_high.assign(runs.size(), kNaN);
  ReleasePlan plan = planned.plan;
  PrivacyBudget step_look_spent;
  if (std::string(plan.method->name) == "auto") {
    StatusOr<int> level = GroupStepLook(std::move(step_look), planned, rng);
    if (!level.ok()) return level.status();
    // Each group pays kStepLookShare of its budget per record (under rho
    // the noise took a g-th of that: GroupStepLook) and runs on the rest.
    StatusOr<AqLookPlan> paid = PlanAqLook(plan.budget, kStepLookShare);
    if (!paid.ok()) return paid.status();
    step_look_spent = paid.value().share;
    plan.budget = paid.value().rest;
    // One method for every key: no step, AQ (continuous false).
    plan.step_look = StepLookOutcome{level.value(), false};
  }
  // A step found: the default's plan on it, once for every key.
  std::optional<DefaultOnStep> on_step;
  if (plan.step_look.has_value() && plan.step_look->level > 0) {
    StatusOr<DefaultOnStep> on =
        PlanDefaultOnStep(planned.per_group, plan, plan.step_look->level,
                          plan.budget.kind == PrivacyBudget::Kind::kZcdp);
    if (!on.ok()) return on.status();
    on_step = std::move(on.value());
  }
  bool first = true;
  for (size_t key = 0; key < runs.size(); ++key) {
    if (grouped.released[key] == 0) continue;
    StatusOr<ReleaseReport> one =
        RunPrepared(runs[key], planned.per_group, plan, rng,
                    out + key * planned.m, on_step ? &*on_step : nullptr);
    if (!one.ok()) return one.status();
    grouped.look_low[key] = one.value().look_low;
    grouped.look_high[key] = one.value().look_high;
    grouped.look_seen_low[key] = one.value().look_seen_low;
    grouped.look_seen_high[key] = one.value().look_seen_high;
    if (first) {
      report = std::move(one.value());
      first = false;
    } else {
      report.interval_low.insert(report.interval_low.end(),
                                 one.value().interval_low.begin(),
                                 one.value().interval_low.end());
      report.interval_high.insert(report.interval_high.end(),
                                  one.value().interval_high.begin(),
                                  one.value().interval_high.end());
    }
  }
  // Each key's span is its own (above), not the first key's.
  report.look_low = kNaN;
  report.look_high = kNaN;
  report.look_seen_low = kNaN;
  report.look_seen_high = kNaN;
  if (first) {
    // No key released: the report still says what was spent and how.
    report.method = planned.plan.method->name;
    if (plan.step_look.has_value()) {
      // What every key would have run: the step look's, then the default's
      // choice on the step's grid (release.cc, RunPrepared).
      report.step_look_share = kStepLookShare;
      report.method = "aq";
      if (on_step.has_value()) {
        report.step_look_step = on_step->step;
        report.method = on_step->method->name;
      }
    }
    report.seeded = planned.per_group.seed.has_value();
    report.has_intervals = planned.plan.intervals.has_value();
  }
  if (request.count) {
    // Public keys: each key's count with its own noise, after the
    // quantiles; private keys: the selection's noisy counts.
    if (planned.count_noise.has_value()) {
      noisy_counts.assign(runs.size(), 0);
      for (size_t key = 0; key < runs.size(); ++key) {
        noisy_counts[key] = static_cast<int64_t>(
            counts.empty() ? runs[key].total() : counts[key]);
      }
      planned.count_noise->AddTo(&noisy_counts, rng);
      grouped.count_spent = planned.count_spent;
      grouped.count_share = request.count_share.value_or(kDefaultCountShare);
    }
    grouped.counts.assign(runs.size(), kNaN);
    for (size_t key = 0; key < runs.size(); ++key) {
      if (grouped.released[key] != 0) {
        grouped.counts[key] = static_cast<double>(noisy_counts[key]);
      }
    }
    grouped.count_of = request.release.users != nullptr ? "people" : "rows";
  }
  if (!rng.healthy()) return EntropyUnavailable();
  if (plan.step_look.has_value()) report.step_look_spent = step_look_spent;
  report.spent = planned.spend;
  report.neighbouring = NeighbouringName(planned.plan.neighbouring);
  report.max_contributions = planned.plan.max_contributions;
  if (session != nullptr) {
    const Status status =
        session->Charge(planned.spend, planned.plan.neighbouring,
                        planned.max_groups > 0 ? 1 : 0);
    if (!status.ok()) return status;
  }
  return grouped;
}

}  // namespace

StatusOr<size_t> BoundPeopleAcrossGroups(double* values, unsigned char* codes,
                                         const uint32_t* users, size_t count,
                                         uint32_t keys, int64_t g, int64_t k,
                                         RandomSource& rng,
                                         std::vector<uint64_t>* people) {
  struct Row {
    uint32_t user;
    uint32_t code;
    uint64_t index;
  };
  std::unique_ptr<Row[]> rows(new (std::nothrow)
                                  Row[std::max<size_t>(count, 1)]);
  if (rows == nullptr) {
    return Status(StatusCode::kTooLarge,
                  "no memory to bound each person's rows (private: for the "
                  "data owner only)");
  }
  size_t listed = 0;
  for (size_t i = 0; i < count; ++i) {
    const uint32_t code = LoadWord32(codes, i);
    if (code < keys) rows[listed++] = {users[i], code, i};
  }
  std::sort(rows.get(), rows.get() + listed, [](const Row& a, const Row& b) {
    return a.user != b.user ? a.user < b.user : a.code < b.code;
  });
  std::vector<uint8_t> keep(count, 0);  // by row
  people->assign(keys, 0);
  std::vector<size_t> segments;  // starts of one person's keys
  for (size_t start = 0; start < listed;) {
    size_t end = start;
    while (end < listed && rows[end].user == rows[start].user) ++end;
    segments.clear();
    for (size_t i = start; i < end; ++i) {
      if (i == start || rows[i].code != rows[i - 1].code) segments.push_back(i);
    }
    // g of the person's keys, uniformly: a partial Fisher-Yates shuffle.
    const size_t groups = segments.size();
    const size_t chosen = std::min<size_t>(groups, static_cast<size_t>(g));
    for (size_t j = 0; j < chosen; ++j) {
      const size_t pick =
          j + static_cast<size_t>(UniformInteger(rng, groups - j));
      std::swap(segments[j], segments[pick]);
    }
    for (size_t j = 0; j < chosen; ++j) {
      const size_t first = segments[j];
      size_t last = first;
      while (last < end && rows[last].code == rows[first].code) ++last;
      // k of the key's rows, uniformly.
      const size_t n = last - first;
      const size_t kept = std::min<size_t>(n, static_cast<size_t>(k));
      for (size_t r = 0; r < kept; ++r) {
        const size_t pick = r + static_cast<size_t>(UniformInteger(rng, n - r));
        std::swap(rows[first + r], rows[first + pick]);
        keep[rows[first + r].index] = 1;
      }
      ++(*people)[rows[first].code];
    }
    start = end;
  }
  size_t kept = 0;
  for (size_t i = 0; i < count; ++i) {
    if (keep[i] == 0) continue;
    values[kept] = values[i];
    StoreWord32(codes, kept, LoadWord32(codes, i));
    ++kept;
  }
  return kept;
}

StatusOr<CountNoise> GroupStepLookNoise(const GroupRequest& request) {
  StatusOr<GroupPlan> planned = PlanGroups(request, nullptr);
  if (!planned.ok()) return planned.status();
  StatusOr<AqLookPlan> look = PlanGroupStepLook(planned.value());
  if (!look.ok()) return look.status();
  return look.value().noise;
}

StatusOr<CountNoise> GroupCountNoise(const GroupRequest& request) {
  GroupRequest planned_as = request;
  if (request.release.max_contributions.has_value() &&
      request.release.users == nullptr) {
    planned_as.release.contributions_bounded = true;  // counts bounded in SQL
  }
  StatusOr<GroupPlan> planned = PlanGroups(planned_as, nullptr);
  if (!planned.ok()) return planned.status();
  if (!planned.value().count_noise.has_value()) {
    return GroupOptionError("no count noise: give count with public keys");
  }
  return *planned.value().count_noise;
}

StatusOr<GroupedReport> ReleaseByGroup(double* values, unsigned char* codes,
                                       size_t count,
                                       const GroupRequest& request, double* out,
                                       PrivacySession* session) {
  StatusOr<GroupPlan> planned = PlanGroups(request, session);
  if (!planned.ok()) return planned.status();
  Status status = ValidateRecordCount(count);
  if (!status.ok()) return status;
  std::unique_ptr<RandomSource> rng = MakeRandomSource(request.release.seed);
  std::vector<uint64_t> counts;
  if (planned.value().max_groups > 0) {
    StatusOr<size_t> kept = BoundPeopleAcrossGroups(
        values, codes, request.release.users, count, request.keys,
        planned.value().max_groups, planned.value().plan.max_contributions,
        *rng, &counts);
    if (!kept.ok()) return kept.status();
    count = kept.value();
  }
  std::vector<size_t> offsets;
  std::vector<Runs> runs;
  StepLookSum step_look(planned.value());
  status = PrepareKeyedRows(values, codes, count, request.keys, planned.value(),
                            &offsets, &runs, &step_look);
  if (!status.ok()) return status;
  if (planned.value().max_groups == 0 &&
      (request.private_keys || request.count)) {
    counts.assign(request.keys, 0);
    for (uint32_t key = 0; key < request.keys; ++key) {
      counts[key] = offsets[key + 1] - offsets[key];
    }
  }
  return RunGroups(runs, counts, std::move(step_look), request, planned.value(),
                   *rng, out, session);
}

StatusOr<GroupedReport> ReleaseByGroupFromCounts(
    const uint32_t* keys, const double* buckets, const double* counts,
    size_t rows, size_t bucket_count, const GroupRequest& request, double* out,
    PrivacySession* session) {
  if (request.release.users != nullptr) {
    return GroupOptionError(
        "counts do not say whose rows they are: give maxGroups and "
        "maxContributions for rows bounded per person before they were "
        "counted (docs/scale.md), not users");
  }
  if (request.max_groups.has_value() !=
      request.release.max_contributions.has_value()) {
    return GroupOptionError(
        "per person from counts: give maxGroups and maxContributions "
        "together, the bounds the query applied to each person");
  }
  if (request.release.buckets.has_value() &&
      *request.release.buckets != static_cast<double>(bucket_count)) {
    return GroupOptionError(
        "buckets is the number of buckets the counts are over; leave it out");
  }
  // Planned as the bucketed rows are, so both release the same values.
  GroupRequest bucketed = request;
  bucketed.release.buckets = static_cast<double>(bucket_count);
  bucketed.release.contributions_bounded = request.max_groups.has_value();
  StatusOr<GroupPlan> planned = PlanGroups(bucketed, session);
  if (!planned.ok()) return planned.status();
  // Each row checked (a count a whole number, a bucket in range; the
  // position named, never the value), then ordered by (key, bucket).
  std::vector<size_t> order;
  order.reserve(rows);
  for (size_t i = 0; i < rows; ++i) {
    const double c = counts[i];
    if (!(c >= 0 && c <= kMaxCountedRecords) || c != std::floor(c)) {
      return Status(StatusCode::kInvalidCounts,
                    "counts[" + std::to_string(i) +
                        "] is not a whole number >= 0 (a count of rows)");
    }
    const double b = buckets[i];
    if (!(b >= 0 && b < static_cast<double>(bucket_count)) ||
        b != std::floor(b)) {
      return Status(StatusCode::kInvalidCounts,
                    "buckets[" + std::to_string(i) +
                        "] is not a whole number from 0 to " +
                        std::to_string(bucket_count - 1));
    }
    if (keys[i] < bucketed.keys && c > 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return keys[a] != keys[b] ? keys[a] < keys[b] : buckets[a] < buckets[b];
  });
  // The runs: one (point, cumulative count) per occupied (key, bucket),
  // repeated pairs added; each key's total at most 2^53 - 1.
  std::unique_ptr<double[]> points(
      new (std::nothrow) double[std::max<size_t>(order.size(), 1)]);
  std::unique_ptr<double[]> ends(
      new (std::nothrow) double[std::max<size_t>(order.size(), 1)]);
  if (points == nullptr || ends == nullptr) {
    return Status(StatusCode::kTooLarge, "no memory for the counts' runs");
  }
  std::vector<Runs> runs(bucketed.keys);
  std::vector<uint64_t> totals(bucketed.keys, 0);
  size_t written = 0;
  for (size_t at = 0; at < order.size();) {
    const uint32_t key = keys[order[at]];
    const size_t first = written;
    double total = 0;
    while (at < order.size() && keys[order[at]] == key) {
      const double bucket = buckets[order[at]];
      total += counts[order[at]];
      if (written > first && points[written - 1] == bucket) {
        ends[written - 1] = total;
      } else {
        points[written] = bucket;
        ends[written] = total;
        ++written;
      }
      ++at;
    }
    if (!(total <= kMaxCountedRecords)) {
      return Status(StatusCode::kTooLarge,
                    "one key's counts add up to more than 2^53 - 1 rows "
                    "(private: for the data owner only)");
    }
    runs[key] = {points.get() + first, ends.get() + first, written - first};
    totals[key] = static_cast<uint64_t>(total);
  }
  StepLookSum step_look(planned.value());
  for (const Runs& key : runs) step_look.Add(key);
  std::unique_ptr<RandomSource> rng = MakeRandomSource(request.release.seed);
  return RunGroups(runs, totals, std::move(step_look), bucketed,
                   planned.value(), *rng, out, session);
}

}  // namespace dpq
