#include "core/contributions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "core/aq.h"
#include "core/release.h"
#include "core/session.h"
#include "tests/cpp/test_util.h"

namespace dpq {
namespace {

TEST(ContributionsTest, KeepsAtMostKRecordsOfEachPerson) {
  std::vector<double> data;
  std::vector<uint32_t> users;
  // Person p has p + 1 records, valued 100 p + i.
  for (uint32_t p = 0; p < 8; ++p) {
    for (uint32_t i = 0; i <= p; ++i) {
      data.push_back(100.0 * p + i);
      users.push_back(p * 7919);  // any ids, not dense
    }
  }
  SeededRandom rng(3);
  const size_t kept =
      BoundContributions(data.data(), users.data(), data.size(), 3, rng);
  EXPECT_EQ(kept, 1u + 2 + 3 + 3 * 5);
  std::map<int, int> per_person;
  for (size_t i = 0; i < kept; ++i)
    ++per_person[static_cast<int>(data[i]) / 100];
  for (int p = 0; p < 8; ++p) EXPECT_EQ(per_person[p], std::min(p + 1, 3));
}

TEST(ContributionsTest, TheKeptSubsetIsUniform) {
  // One person with 4 records and k = 2: each of the 6 pairs equally likely.
  SeededRandom rng(5);
  std::map<std::pair<double, double>, double> seen;
  const int draws = 60000;
  for (int t = 0; t < draws; ++t) {
    std::vector<double> data = {0, 1, 2, 3};
    const std::vector<uint32_t> users = {9, 9, 9, 9};
    ASSERT_EQ(BoundContributions(data.data(), users.data(), 4, 2, rng), 2u);
    seen[{std::min(data[0], data[1]), std::max(data[0], data[1])}] += 1;
  }
  ASSERT_EQ(seen.size(), 6u);
  std::vector<double> counts;
  for (const auto& entry : seen) counts.push_back(entry.second);
  double df = 0;
  const double chi =
      testing::ChiSquare(counts, std::vector<double>(6, 1.0 / 6), draws, &df);
  EXPECT_LT(chi, testing::ChiSquareCritical(df));
}

TEST(ContributionsTest, PerRecordBudgetIsGroupPrivacyRoundedDown) {
  EXPECT_EQ(PerRecordBudget(PrivacyBudget::Pure(1), 1).epsilon, 1.0);
  const PrivacyBudget pure = PerRecordBudget(PrivacyBudget::Pure(1), 3);
  EXPECT_LE(pure.epsilon * 3, 1.0);
  EXPECT_NEAR(pure.epsilon, 1.0 / 3, 1e-15);
  const PrivacyBudget zcdp = PerRecordBudget(PrivacyBudget::Zcdp(0.9), 3);
  EXPECT_LE(zcdp.rho * 9, 0.9);
  EXPECT_NEAR(zcdp.rho, 0.1, 1e-15);
  // (epsilon, delta): k epsilon' <= epsilon, k e^{(k-1) epsilon'} delta' <=
  // delta.
  const PrivacyBudget approx =
      PerRecordBudget(PrivacyBudget::Approx(2, 1e-6), 4);
  EXPECT_LE(approx.epsilon * 4, 2.0);
  EXPECT_LE(4 * std::exp(3 * approx.epsilon) * approx.delta, 1e-6);
  EXPECT_GT(4 * std::exp(3 * approx.epsilon) * approx.delta, 0.999999e-6);
}

TEST(ContributionsTest, SessionsComposePerPersonReleases) {
  // Add-remove session: k >= 2 counts once, k = 1 twice.
  PrivacySession rows =
      PrivacySession::Create(PrivacyBudget::Pure(3), Neighbouring::kAddRemove)
          .value();
  ASSERT_TRUE(
      rows.Charge(PrivacyBudget::Pure(1), Neighbouring::kAddRemoveUser, 2)
          .ok());
  EXPECT_DOUBLE_EQ(rows.Spent().epsilon, 1);
  ASSERT_TRUE(
      rows.Charge(PrivacyBudget::Pure(0.5), Neighbouring::kAddRemoveUser, 1)
          .ok());
  EXPECT_DOUBLE_EQ(rows.Spent().epsilon, 2);
  // A per-person session refuses per-record releases.
  PrivacySession people = PrivacySession::Create(PrivacyBudget::Zcdp(1),
                                                 Neighbouring::kAddRemoveUser)
                              .value();
  EXPECT_EQ(
      people.Charge(PrivacyBudget::Zcdp(0.1), Neighbouring::kAddRemove).code(),
      StatusCode::kInvalidPrivacy);
  ASSERT_TRUE(
      people.Charge(PrivacyBudget::Zcdp(0.25), Neighbouring::kAddRemoveUser, 1)
          .ok());
  EXPECT_DOUBLE_EQ(people.Spent().rho, 0.25);
  // Replace-one sessions refuse them.
  PrivacySession replace =
      PrivacySession::Create(PrivacyBudget::Pure(3), Neighbouring::kReplaceOne)
          .value();
  EXPECT_EQ(
      replace.Charge(PrivacyBudget::Pure(1), Neighbouring::kAddRemoveUser, 3)
          .code(),
      StatusCode::kInvalidPrivacy);
}

ReleaseRequest SmallRequest(const std::vector<double>& quantiles, int64_t steps,
                            double epsilon, int64_t k) {
  ReleaseRequest request;
  request.lower = 0;
  request.upper = static_cast<double>(steps);
  request.quantiles = quantiles;
  request.epsilon = epsilon;
  request.options = {{"step", 1.0}};
  request.max_contributions = static_cast<double>(k);
  return request;
}

// The epsilon each of AQ's mechanisms runs with in a per-person release,
// read from the release itself (so the test checks the wiring, not a copy of
// the formula).
double PerLevelEpsilon(const std::vector<double>& quantiles, int64_t steps,
                       double epsilon, int64_t k) {
  std::vector<double> data = {1, 2};
  const std::vector<uint32_t> users = {0, 1};
  ReleaseRequest request = SmallRequest(quantiles, steps, epsilon, k);
  request.users = users.data();
  std::vector<double> out(quantiles.size());
  const StatusOr<ReleaseReport> report =
      ReleaseQuantiles(data.data(), data.size(), request, out.data());
  EXPECT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report.value().neighbouring, "add-remove-user");
  EXPECT_EQ(report.value().max_contributions, k);
  EXPECT_DOUBLE_EQ(report.value().spent.epsilon, epsilon);
  return report.value().mechanism_epsilon;
}

// Exact privacy for one person: every output's probability under X and
// under X plus one person's k records (all placements on a small grid)
// differ by at most e^epsilon, and some come close.
// `outputs` lists every output, or for one quantile a point of every piece
// on which the probability is constant.
// Returns the largest log-ratio seen, as a fraction of epsilon.
double CheckPersonPrivacy(const std::vector<double>& quantiles, int64_t steps,
                          const std::vector<std::vector<int64_t>>& outputs,
                          const std::vector<double>& cells, size_t max_size,
                          int64_t k) {
  double worst_ratio = 0;
  for (double epsilon : {0.1, 1.0, 4.0}) {
    // What the release gives AQ: the per-record budget, its first look's
    // share spent on a histogram and the rest shared along each path
    // (aq.h); its root runs with the reported epsilon.
    const double per_level = PerLevelEpsilon(quantiles, steps, epsilon, k);
    const PrivacyBudget per_record =
        PerRecordBudget(AtOrBelowWritten(PrivacyBudget::Pure(epsilon)), k);
    const StatusOr<AqLookPlan> plan = PlanAqLook(per_record, kAqLookShare);
    if (!plan.ok()) {
      ADD_FAILURE() << plan.status().message();
      return 0;
    }
    const double rest = plan.value().rest.epsilon;
    EXPECT_LE(AddUp(rest, plan.value().share.epsilon), per_record.epsilon);
    EXPECT_EQ(per_level,
              DivideDown(rest, ApproximateQuantilesLevels(quantiles.size())));
    // Histograms of the look: above every count (the noise's ratio is then
    // e^(k epsilon_look) exactly), below them, and between.
    const std::vector<std::vector<int64_t>> looks = {
        std::vector<int64_t>(kAqLookBins, 50),
        std::vector<int64_t>(kAqLookBins, -50),
        {3, 0, 0, 0, 0, 0, 0, 200, 0, 0, 0, 0, 0, 0, 0, 1}};
    // Every multiset of exactly k added records.
    std::vector<std::vector<double>> additions;
    testing::ForEachMultiset(cells, static_cast<size_t>(k),
                             [&](const std::vector<double>& added) {
                               if (added.size() == static_cast<size_t>(k)) {
                                 additions.push_back(added);
                               }
                             });
    // The release's log-probability: the look's histogram, then AQ with
    // the measure it gives.
    auto log_probability = [&](const std::vector<double>& records,
                               const std::vector<int64_t>& noisy,
                               const std::vector<int64_t>& output) {
      const auto runs = testing::RunsOf(records);
      const AqLook look =
          AqLookFromCounts(noisy, plan.value().noise_scale, steps + 1);
      return AqLookLogProbability(runs.view(), steps + 1, plan.value().noise,
                                  noisy) +
             ApproximateQuantilesLogProbability(runs.view(), steps, quantiles,
                                                rest, AqBudgetSplit::kPerPath,
                                                output, 2, look);
    };
    testing::ForEachMultiset(
        cells, max_size, [&](const std::vector<double>& x) {
          for (const auto& person : additions) {
            std::vector<double> neighbour = x;
            neighbour.insert(neighbour.end(), person.begin(), person.end());
            std::sort(neighbour.begin(), neighbour.end());
            for (const auto& noisy : looks) {
              for (const auto& output : outputs) {
                const double a = log_probability(x, noisy, output);
                const double b = log_probability(neighbour, noisy, output);
                EXPECT_EQ(std::isinf(a), std::isinf(b));
                if (std::isinf(a) || std::isinf(b)) continue;
                EXPECT_LE(std::fabs(a - b), epsilon + 1e-9);
                worst_ratio = std::max(worst_ratio, std::fabs(a - b) / epsilon);
              }
            }
          }
        });
  }
  return worst_ratio;
}

// One output of every piece, as one-quantile outputs.
std::vector<std::vector<int64_t>> Pieces(const std::vector<double>& cells,
                                         int64_t steps) {
  std::vector<std::vector<int64_t>> outputs;
  for (int64_t j : testing::PiecePoints(cells, steps)) outputs.push_back({j});
  return outputs;
}

TEST(ContributionsTest, AqProtectsAPersonWithKRecordsExactly) {
  // One quantile on a large grid (the normalizer is then dominated by the
  // far points, which is where the bound is nearly attained).
  const int64_t steps = int64_t{1} << 40;
  const std::vector<double> cells = {0, 3, 1e9, 5e11, double(steps)};
  double worst = 0;
  for (const auto& [q, k] : std::vector<std::pair<double, int64_t>>{
           {0.5, 2}, {0.5, 3}, {0.25, 2}, {0.9, 3}}) {
    worst = std::max(worst, CheckPersonPrivacy({q}, steps, Pieces(cells, steps),
                                               cells, 3, k));
  }
  // Tight: a per-record budget 10% smaller than epsilon / k would fail.
  EXPECT_GT(worst, 0.9);
  // Three quantiles (two levels), every output of a small grid; records
  // beside an end, where the shell measure is heaviest, reach 0.88.
  EXPECT_GT(CheckPersonPrivacy({0.25, 0.5, 0.75}, 8,
                               testing::AllNonDecreasingTuples(8, 3), {0, 1, 8},
                               4, 2),
            0.85);
}

TEST(ContributionsTest, OnePersonWithManyRecordsCannotMoveTheMedian) {
  // 1,001 people with one record each, uniform on [0, 100], and one person
  // with 10,000 records at 100. Unbounded, the median is 100; with k = 1 the
  // heavy person is one record among 1,002.
  SeededRandom rng(11);
  std::vector<double> data;
  std::vector<uint32_t> users;
  for (uint32_t p = 0; p < 1001; ++p) {
    data.push_back(100 * UniformDouble(rng));
    users.push_back(p);
  }
  for (int i = 0; i < 10000; ++i) {
    data.push_back(100);
    users.push_back(5000);
  }
  ReleaseRequest request;
  request.lower = 0;
  request.upper = 100;
  request.quantiles = {0.5};
  request.epsilon = 1;
  request.seed = 4;
  std::vector<double> out(1);
  std::vector<double> copy = data;
  ASSERT_TRUE(
      ReleaseQuantiles(copy.data(), copy.size(), request, out.data()).ok());
  EXPECT_GT(out[0], 99.0);  // per record: the heavy person wins
  request.users = users.data();
  request.max_contributions = 1;
  for (int t = 0; t < 20; ++t) {
    request.seed = 100 + t;
    copy = data;
    ASSERT_TRUE(
        ReleaseQuantiles(copy.data(), copy.size(), request, out.data()).ok());
    EXPECT_NEAR(out[0], 50, 8);
  }
}

TEST(ContributionsTest, BadRequestsAreTypedErrors) {
  std::vector<double> data = {1, 2, 3};
  const std::vector<uint32_t> users = {0, 0, 1};
  std::vector<double> out(1);
  ReleaseRequest request = SmallRequest({0.5}, 8, 1, 2);
  // maxContributions without users, and users without maxContributions.
  EXPECT_EQ(
      ReleaseQuantiles(data.data(), 3, request, out.data()).status().code(),
      StatusCode::kInvalidOption);
  request.users = users.data();
  for (double bad : {0.0, 1.5, -1.0, std::nan(""), 1e12}) {
    request.max_contributions = bad;
    EXPECT_EQ(
        ReleaseQuantiles(data.data(), 3, request, out.data()).status().code(),
        StatusCode::kInvalidOption);
  }
  request.max_contributions.reset();
  EXPECT_EQ(
      ReleaseQuantiles(data.data(), 3, request, out.data()).status().code(),
      StatusCode::kInvalidOption);
  // Inverse sensitivity protects a replaced record: no per-person release.
  request.max_contributions = 2;
  request.method = "inverse-sensitivity";
  EXPECT_EQ(
      ReleaseQuantiles(data.data(), 3, request, out.data()).status().code(),
      StatusCode::kInvalidOption);
}

}  // namespace
}  // namespace dpq
