// Grouped releases (groups.h) and private key selection
// (partition_selection.h).
#include "core/groups.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/decimal.h"
#include "core/inverse_sensitivity.h"
#include "core/joint_exp.h"
#include "core/methods.h"
#include "core/partition_selection.h"
#include "core/random.h"
#include "core/release.h"
#include "core/step_look.h"
#include "tests/cpp/test_util.h"

namespace dpq {
namespace {

// Rows in `keys` groups: group g's values spread around 10 g, a few rows
// with an unlisted code (keys), and group `empty` left without rows.
struct Rows {
  std::vector<double> values;
  std::vector<uint32_t> codes;
};

Rows MakeRows(uint32_t keys, size_t per_group, uint64_t seed,
              uint32_t empty = UINT32_MAX) {
  SeededRandom rng(seed);
  Rows rows;
  for (uint32_t g = 0; g < keys; ++g) {
    if (g == empty) continue;
    for (size_t i = 0; i < per_group; ++i) {
      rows.values.push_back(10.0 * g + 8 * UniformDouble(rng));
      rows.codes.push_back(g);
    }
  }
  for (int i = 0; i < 7; ++i) {  // unlisted: left out
    rows.values.push_back(55);
    rows.codes.push_back(keys + static_cast<uint32_t>(i));
  }
  // Shuffled: rows arrive in any order.
  for (size_t i = rows.values.size(); i > 1; --i) {
    const auto j = static_cast<size_t>(UniformInteger(rng, i));
    std::swap(rows.values[i - 1], rows.values[j]);
    std::swap(rows.codes[i - 1], rows.codes[j]);
  }
  return rows;
}

// The grouped release of `rows` (copied: the buffers are scratch).
StatusOr<GroupedReport> Grouped(const Rows& rows, const GroupRequest& request,
                                std::vector<double>* out,
                                PrivacySession* session = nullptr) {
  std::vector<double> values = rows.values;
  std::vector<unsigned char> codes(8 * std::max<size_t>(rows.codes.size(), 1));
  std::memcpy(codes.data(), rows.codes.data(), 4 * rows.codes.size());
  out->assign(
      static_cast<size_t>(request.keys) * request.release.quantiles.size(), -1);
  return ReleaseByGroup(values.data(), codes.data(), values.size(), request,
                        out->data(), session);
}

GroupRequest BasicGroups(uint32_t keys) {
  GroupRequest request;
  request.release.lower = 0;
  request.release.upper = 100;
  request.release.quantiles = {0.25, 0.5, 0.75};
  request.release.epsilon = 1;
  request.release.seed = 7;
  request.keys = keys;
  return request;
}

TEST(GroupsTest, PublicKeysReleaseEveryKeyNearItsOwnData) {
  const uint32_t keys = 9;
  const Rows rows = MakeRows(keys, 2000, 1, /*empty=*/4);
  GroupRequest request = BasicGroups(keys);
  std::vector<double> out;
  const StatusOr<GroupedReport> report = Grouped(rows, request, &out);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report.value().release.method, "aq");
  EXPECT_EQ(report.value().release.spent.epsilon, 1);  // parallel: once
  for (uint32_t g = 0; g < keys; ++g) {
    ASSERT_EQ(report.value().released[g], 1);
    for (size_t j = 0; j < 3; ++j) {
      const double value = out[g * 3 + j];
      EXPECT_GE(value, 0);
      EXPECT_LE(value, 100);
      // Group g's data lies in [10 g, 10 g + 8], its quartiles at 2, 4, 6.
      if (g != 4) EXPECT_NEAR(value, 10.0 * g + 2 * (j + 1), 0.5) << g;
    }
  }
}

TEST(GroupsTest, RowOrderAndUnlistedKeysChangeNothing) {
  // Runs are order-free and unlisted rows are left out: the same rows in
  // another order, with other unlisted rows, release the same values.
  const uint32_t keys = 5;
  const Rows rows = MakeRows(keys, 300, 2);
  Rows other = rows;
  std::reverse(other.values.begin(), other.values.end());
  std::reverse(other.codes.begin(), other.codes.end());
  other.values.push_back(-40);
  other.codes.push_back(999);
  for (const char* method : {"aq", "aggtree", "appindexp", "jointexp"}) {
    GroupRequest request = BasicGroups(keys);
    request.release.method = method;
    request.release.confidence = 0.9;
    std::vector<double> a;
    std::vector<double> b;
    const StatusOr<GroupedReport> first = Grouped(rows, request, &a);
    const StatusOr<GroupedReport> second = Grouped(other, request, &b);
    ASSERT_TRUE(first.ok()) << method << first.status().message();
    ASSERT_TRUE(second.ok()) << method;
    EXPECT_EQ(a, b) << method;
    EXPECT_EQ(first.value().release.interval_low,
              second.value().release.interval_low);
    EXPECT_EQ(first.value().release.interval_low.size(), keys * 3u);
  }
}

TEST(GroupsTest, OneKeyIsTheSingleRelease) {
  // A grouped release of one key is the release of its rows, bit for bit.
  const Rows rows = MakeRows(1, 500, 3);
  for (const char* method : {"aq", "aggtree", "tree-cdf", "hs-jointexp"}) {
    GroupRequest request = BasicGroups(1);
    request.release.method = method;
    std::vector<double> grouped;
    ASSERT_TRUE(Grouped(rows, request, &grouped).ok()) << method;
    std::vector<double> kept;
    for (size_t i = 0; i < rows.values.size(); ++i) {
      if (rows.codes[i] == 0) kept.push_back(rows.values[i]);
    }
    std::vector<double> single(3);
    ASSERT_TRUE(ReleaseQuantiles(kept.data(), kept.size(), request.release,
                                 single.data())
                    .ok());
    EXPECT_EQ(grouped, single) << method;
  }
}

// The GROUP BY of rows: (key, bucket, count) in a scrambled order, with a
// pair split in two rows (they add up) and zero counts.
struct Triples {
  std::vector<uint32_t> keys;
  std::vector<double> buckets;
  std::vector<double> counts;
};

Triples GroupBy(const Rows& rows, uint32_t keys, size_t bucket_count) {
  std::map<std::pair<uint32_t, int64_t>, double> counted;
  const double width = 100.0 / static_cast<double>(bucket_count);
  for (size_t i = 0; i < rows.values.size(); ++i) {
    const auto bucket = std::min<int64_t>(
        std::max<int64_t>(
            static_cast<int64_t>(std::floor(rows.values[i] / width)), 0),
        static_cast<int64_t>(bucket_count) - 1);
    counted[{rows.codes[i], bucket}] += 1;
  }
  Triples t;
  for (const auto& [pair, count] : counted) {
    if (pair.first >= keys) continue;
    const double half = std::floor(count / 2);
    for (const double c : {half, count - half, 0.0}) {
      t.keys.push_back(pair.first);
      t.buckets.push_back(static_cast<double>(pair.second));
      t.counts.push_back(c);
    }
  }
  SeededRandom rng(99);
  for (size_t i = t.keys.size(); i > 1; --i) {
    const auto j = static_cast<size_t>(UniformInteger(rng, i));
    std::swap(t.keys[i - 1], t.keys[j]);
    std::swap(t.buckets[i - 1], t.buckets[j]);
    std::swap(t.counts[i - 1], t.counts[j]);
  }
  return t;
}

TEST(GroupsTest, CountsReleaseTheRowsBitForBit) {
  // Rows with `buckets` and a GROUP BY of the same buckets: the same values
  // and intervals, for every kind of method, public and private keys.
  const uint32_t keys = 6;
  const Rows rows = MakeRows(keys, 400, 4, /*empty=*/2);
  const size_t bucket_count = 1000;
  const Triples t = GroupBy(rows, keys, bucket_count);
  for (const bool private_keys : {false, true}) {
    for (const char* method : {"aq", "aggtree", "appindexp", "jointexp"}) {
      GroupRequest request = BasicGroups(keys);
      request.release.method = method;
      request.release.buckets = static_cast<double>(bucket_count);
      request.release.confidence = 0.8;
      if (private_keys) {
        request.private_keys = true;
        request.delta = 1e-6;
      }
      std::vector<double> from_rows;
      const StatusOr<GroupedReport> a = Grouped(rows, request, &from_rows);
      ASSERT_TRUE(a.ok()) << method << a.status().message();
      GroupRequest counted = request;
      counted.release.buckets.reset();
      std::vector<double> from_counts(keys * 3, -1);
      const StatusOr<GroupedReport> b = ReleaseByGroupFromCounts(
          t.keys.data(), t.buckets.data(), t.counts.data(), t.keys.size(),
          bucket_count, counted, from_counts.data());
      ASSERT_TRUE(b.ok()) << method << b.status().message();
      EXPECT_EQ(from_rows, from_counts) << method;
      EXPECT_EQ(a.value().released, b.value().released) << method;
      EXPECT_EQ(a.value().release.interval_high,
                b.value().release.interval_high);
      if (private_keys) {
        // 400 rows a key: selected; the empty key never.
        EXPECT_EQ(a.value().released[2], 0);
        EXPECT_EQ(
            std::count(a.value().released.begin(), a.value().released.end(), 1),
            5);
      }
    }
  }
}

// Groups of sizes around each of the keyed prepare's paths (empty, under
// kRadixMinRecords, the digit width's 4,096, presorted, atoms, values
// outside the bounds), shuffled together with unlisted rows.
Rows MixedSizes(const std::vector<size_t>& sizes, uint64_t seed) {
  SeededRandom rng(seed);
  Rows rows;
  for (uint32_t g = 0; g < sizes.size(); ++g) {
    for (size_t i = 0; i < sizes[g]; ++i) {
      double x = 100 * UniformDouble(rng) - 10;           // some below 0
      if (g % 3 == 1) x = std::floor(x / 7) * 7;          // atoms
      if (g % 4 == 2) x = 0.37 * static_cast<double>(i);  // in order
      rows.values.push_back(x);
      rows.codes.push_back(g);
    }
  }
  for (int i = 0; i < 50; ++i) {
    rows.values.push_back(1e9);
    rows.codes.push_back(static_cast<uint32_t>(sizes.size()) + 3);
  }
  for (size_t i = rows.values.size(); i > 1; --i) {
    const auto j = static_cast<size_t>(UniformInteger(rng, i));
    std::swap(rows.values[i - 1], rows.values[j]);
    std::swap(rows.codes[i - 1], rows.codes[j]);
  }
  return rows;
}

const std::vector<size_t> kMixedSizes = {0,   1,    5,    63,   64, 65, 300,
                                         700, 4095, 4096, 5000, 2,  64, 9000};

TEST(GroupsTest, EachSliceIsItsRowsRelease) {
  // Each key listed alone: its grouped release is the release of its rows,
  // bit for bit (the default's on the default grid: the groups' step look
  // over one key's records is its own), on a step grid, buckets, and a grid
  // past
  // 32-bit keys (10^10 points: the bucket permutation's path).
  const Rows rows = MixedSizes(kMixedSizes, 11);
  for (int grid = 0; grid < 4; ++grid) {
    for (uint32_t g = 0; g < kMixedSizes.size(); ++g) {
      GroupRequest request = BasicGroups(1);
      if (grid == 1) request.release.options.push_back({"step", 0.5});
      if (grid == 2) request.release.buckets = 777;
      if (grid == 3) request.release.options.push_back({"step", 1e-8});
      Rows one = rows;
      std::vector<double> kept;
      for (size_t i = 0; i < one.codes.size(); ++i) {
        if (one.codes[i] == g) kept.push_back(one.values[i]);
        one.codes[i] = one.codes[i] == g ? 0 : 1;
      }
      std::vector<double> grouped;
      ASSERT_TRUE(Grouped(one, request, &grouped).ok()) << g;
      std::vector<double> single(3);
      ASSERT_TRUE(ReleaseQuantiles(kept.data(), kept.size(), request.release,
                                   single.data())
                      .ok());
      EXPECT_EQ(grouped, single) << "group " << g << " grid " << grid;
    }
  }
}

TEST(GroupsTest, SlicesOfEverySizeMatchTheirCounts) {
  // All keys at once (each slice's runs written beside the next slices'
  // keys): the rows release what a GROUP BY of their buckets releases.
  const Rows rows = MixedSizes(kMixedSizes, 12);
  const auto keys = static_cast<uint32_t>(kMixedSizes.size());
  for (const size_t bucket_count : {size_t{50}, size_t{1} << 16}) {
    const Triples t = GroupBy(rows, keys, bucket_count);
    GroupRequest request = BasicGroups(keys);
    request.release.method = "aggtree";  // reads every run
    request.release.buckets = static_cast<double>(bucket_count);
    std::vector<double> from_rows;
    ASSERT_TRUE(Grouped(rows, request, &from_rows).ok());
    GroupRequest counted = request;
    counted.release.buckets.reset();
    std::vector<double> from_counts(keys * 3, -1);
    ASSERT_TRUE(ReleaseByGroupFromCounts(
                    t.keys.data(), t.buckets.data(), t.counts.data(),
                    t.keys.size(), bucket_count, counted, from_counts.data())
                    .ok());
    EXPECT_EQ(from_rows, from_counts) << bucket_count;
  }
}

TEST(GroupsTest, BudgetAddsUpPerGroupAndPerPerson) {
  // What each group's mechanisms run with, times the groups a person
  // spans and their rows per group, plus the selection, is at most the
  // decimal written (every split rounded down).
  const uint32_t keys = 4;
  // Enough people a key that private keys select every key.
  Rows rows = MakeRows(keys, 3000, 5);
  std::vector<uint32_t> users(rows.values.size());
  for (size_t i = 0; i < users.size(); ++i)
    users[i] = static_cast<uint32_t>(i / 3);
  for (const double epsilon : {1.0, 0.3, 2.7}) {
    for (const bool private_keys : {false, true}) {
      for (const int g : {0, 1, 3}) {
        GroupRequest request = BasicGroups(keys);
        request.release.epsilon = epsilon;
        request.release.quantiles = {0.5};
        if (private_keys) {
          request.private_keys = true;
          request.delta = 1e-5;
        }
        const int k = 2;
        if (g > 0) {
          request.release.users = users.data();
          request.release.max_contributions = k;
          request.max_groups = g;
        }
        std::vector<double> out;
        const StatusOr<GroupedReport> report = Grouped(rows, request, &out);
        ASSERT_TRUE(report.ok()) << report.status().message();
        const GroupedReport& r = report.value();
        // One quantile: the step look's histogram, then AQ's one level
        // after its first look's histogram.
        Decimal used =
            Decimal::Exact(r.release.mechanism_epsilon)
                .Plus(Decimal::Exact(r.release.look_spent.epsilon))
                .Plus(Decimal::Exact(r.release.step_look_spent.epsilon))
                .TimesInteger(static_cast<uint32_t>(std::max(g, 1)))
                .TimesInteger(g > 0 ? k : 1);
        if (private_keys) {
          used = used.Plus(Decimal::Exact(r.selection_spent.epsilon));
          EXPECT_EQ(r.selection.max_groups, std::max(g, 1));
          EXPECT_EQ(r.release.spent.delta, 1e-5);
        }
        EXPECT_LE(used, Decimal::Written(epsilon))
            << epsilon << " private " << private_keys << " g " << g;
        ASSERT_EQ(std::count(r.released.begin(), r.released.end(), 1), 4);
        // Not wasted either: within a millionth.
        EXPECT_LE(Decimal::Written(epsilon).Minus(used),
                  Decimal::Written(epsilon).Times(*Decimal::Parse("0.000001")));
        EXPECT_EQ(r.release.neighbouring,
                  g > 0 ? "add-remove-user" : "add-remove");
      }
    }
  }
}

TEST(GroupsTest, EachPersonKeepsAtMostGGroupsAndKRowsInEach) {
  // 50 people, each with rows in every one of 8 keys (3 to 7 rows each):
  // after bounding, every person is in exactly g keys with at most k rows,
  // the kept keys are spread evenly (uniform choice), and the people per
  // key add up.
  const uint32_t keys = 8;
  std::vector<double> values;
  std::vector<uint32_t> codes;
  std::vector<uint32_t> users;
  for (uint32_t person = 0; person < 50; ++person) {
    for (uint32_t key = 0; key < keys; ++key) {
      for (uint32_t r = 0; r < 3 + (person + key) % 5; ++r) {
        values.push_back(person);
        codes.push_back(key);
        users.push_back(person);
      }
    }
  }
  std::vector<int> kept_per_key(keys, 0);
  SeededRandom rng(3);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<double> v = values;
    std::vector<unsigned char> c(8 * codes.size());
    std::memcpy(c.data(), codes.data(), 4 * codes.size());
    std::vector<uint64_t> people;
    const StatusOr<size_t> kept = BoundPeopleAcrossGroups(
        v.data(), c.data(), users.data(), v.size(), keys, 3, 2, rng, &people);
    ASSERT_TRUE(kept.ok());
    std::map<uint32_t, std::map<uint32_t, int>> rows_of;  // person -> key
    for (size_t i = 0; i < kept.value(); ++i) {
      uint32_t key;
      std::memcpy(&key, c.data() + 4 * i, 4);
      ++rows_of[static_cast<uint32_t>(v[i])][key];
    }
    ASSERT_EQ(rows_of.size(), 50u);
    uint64_t total = 0;
    for (const auto& [person, per_key] : rows_of) {
      ASSERT_EQ(per_key.size(), 3u) << person;
      for (const auto& [key, n] : per_key) {
        ASSERT_EQ(n, 2);
        ++kept_per_key[key];
      }
    }
    for (uint64_t p : people) total += p;
    EXPECT_EQ(total, 150u);
  }
  // 40 trials x 50 people x 3 of 8 keys: 750 a key expected.
  for (int n : kept_per_key) EXPECT_NEAR(n, 750, 5 * std::sqrt(750.0));
}

TEST(PartitionSelectionTest, OneRowAppearsWithProbabilityAtMostDelta) {
  // Exact probabilities from the discrete Laplace's closed form: a key of
  // count 1 is selected with probability at most delta / g, and tightly
  // (within the threshold's whole-number rounding); neighbouring counts
  // differ by at most e^(epsilon / g) either way. A scale 10% smaller, or
  // a threshold one lower, breaks one of them.
  for (const double epsilon : {0.05, 0.1, 1.0, 3.0}) {
    for (const double delta : {1e-9, 1e-6, 1e-3}) {
      for (const int64_t g : {1, 4}) {
        // Rows counted (k = 3 a key) with g = 4; people with g = 1.
        const int64_t per_key = g == 4 ? 3 : 1;
        const StatusOr<SelectionPlan> plan =
            PlanSelection(epsilon, delta, g, per_key);
        ASSERT_TRUE(plan.ok());
        const auto fresh = static_cast<uint64_t>(per_key);  // a new key
        const long double one = SelectionProbability(fresh, plan.value());
        const long double bound = static_cast<long double>(delta) / g;
        EXPECT_LE(one, bound) << epsilon << " " << delta << " " << g;
        SelectionPlan lower = plan.value();
        --lower.threshold;
        EXPECT_GT(SelectionProbability(fresh, lower), bound)
            << "the threshold is not the smallest";
        // A key's count moves by up to per_key: the ratio over that step.
        const long double limit =
            std::exp(static_cast<long double>(epsilon) / g);
        long double worst = 0;
        for (uint64_t c = 1;
             c < 400 && c < static_cast<uint64_t>(plan.value().threshold) + 200;
             ++c) {
          const uint64_t d = c + fresh;
          const long double p = SelectionProbability(c, plan.value());
          const long double q = SelectionProbability(d, plan.value());
          ASSERT_LE(q, p * limit * (1 + 1e-12L)) << c;
          ASSERT_LE(SelectionComplement(c, plan.value()),
                    SelectionComplement(d, plan.value()) * limit * (1 + 1e-12L))
              << c;
          worst = std::max(worst, q / p);
        }
        // The scale is g / epsilon (as a rational at least that): ratios
        // reach e^(epsilon / g) to within a part in 10^6.
        EXPECT_GT(worst,
                  std::exp(static_cast<long double>(epsilon) / g * 0.999999L));
      }
    }
  }
  // A delta so small its logarithm is infinite: nothing can clear the
  // threshold (capped past any count), no overflow (the fuzzer's find).
  const StatusOr<SelectionPlan> tiny = PlanSelection(1, 5e-324, 1);
  ASSERT_TRUE(tiny.ok());
  EXPECT_GT(tiny.value().threshold, int64_t{1} << 53);
  EXPECT_FALSE(PlanSelection(1, 0, 1).ok());
  EXPECT_FALSE(PlanSelection(1, 1, 1).ok());
  EXPECT_FALSE(PlanSelection(0, 1e-6, 1).ok());
}

TEST(PartitionSelectionTest, SamplerMatchesTheExactProbabilities) {
  // Keys of counts around the threshold, selected as often as the exact
  // probabilities say (5 standard deviations, 20,000 seeded draws each).
  const SelectionPlan plan = PlanSelection(1, 1e-3, 1).value();
  SeededRandom rng(17);
  std::vector<uint64_t> counts;
  for (int64_t c = plan.threshold - 6; c <= plan.threshold + 6; ++c) {
    counts.push_back(static_cast<uint64_t>(std::max<int64_t>(c, 1)));
  }
  counts.push_back(0);  // absent: never
  std::vector<int> selected(counts.size(), 0);
  const int draws = 20000;
  for (int i = 0; i < draws; ++i) {
    const std::vector<uint8_t> s = SelectKeys(counts, plan, rng);
    for (size_t j = 0; j < s.size(); ++j) selected[j] += s[j];
  }
  for (size_t j = 0; j + 1 < counts.size(); ++j) {
    const double p = static_cast<double>(SelectionProbability(counts[j], plan));
    EXPECT_NEAR(selected[j], draws * p, 5 * std::sqrt(draws * p * (1 - p)) + 1)
        << counts[j];
  }
  EXPECT_EQ(selected.back(), 0);
}

TEST(GroupsTest, CountsBoundedPerPersonUpstreamDivideTheBudget) {
  // Counts of rows a query bounded to g keys and k rows a person: each
  // group runs with epsilon / (g k); private keys count rows, so a key's
  // count moves by up to k, and the selection's scale and threshold say so.
  const uint32_t keys = 3;
  const Rows rows = MakeRows(keys, 3000, 8);
  const Triples t = GroupBy(rows, keys, 100);
  for (const bool private_keys : {false, true}) {
    GroupRequest request = BasicGroups(keys);
    request.release.quantiles = {0.5};
    request.release.max_contributions = 3;
    request.max_groups = 2;
    if (private_keys) {
      request.private_keys = true;
      request.delta = 1e-6;
    }
    std::vector<double> out(keys, -1);
    const StatusOr<GroupedReport> report = ReleaseByGroupFromCounts(
        t.keys.data(), t.buckets.data(), t.counts.data(), t.keys.size(), 100,
        request, out.data());
    ASSERT_TRUE(report.ok()) << report.status().message();
    const GroupedReport& r = report.value();
    EXPECT_EQ(r.release.neighbouring, "add-remove-user");
    EXPECT_EQ(r.max_groups, 2);
    const double per_group = private_keys ? 0.9 : 1.0;
    // AQ's one level and its first look's histogram share it.
    EXPECT_NEAR(r.release.mechanism_epsilon + r.release.look_spent.epsilon,
                per_group / 6, 1e-12);
    if (private_keys) {
      EXPECT_EQ(r.selection.per_key, 3);
      EXPECT_GE(r.selection.scale.Value(), 2 * 3 / 0.1);
      EXPECT_LE(SelectionProbability(3, r.selection), 1e-6 / 2);
    }
  }
  // Only one of the two bounds: refused.
  GroupRequest half = BasicGroups(keys);
  half.max_groups = 2;
  std::vector<double> out(keys * 3);
  EXPECT_EQ(
      ReleaseByGroupFromCounts(t.keys.data(), t.buckets.data(), t.counts.data(),
                               t.keys.size(), 100, half, out.data())
          .status()
          .code(),
      StatusCode::kInvalidOption);
}

TEST(GroupsTest, TheStepLookIsOneLookOverEveryKey) {
  // 50 keys of 100 whole numbers each: alone, a key's 100 records are too
  // few for its own look to find a step; the groups' one look over all
  // 5,000 finds 1, and every key releases whole numbers on it.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SeededRandom data_rng(seed);
    Rows rows;
    for (uint32_t key = 0; key < 50; ++key) {
      for (int i = 0; i < 100; ++i) {
        rows.values.push_back(
            std::floor(20 + key + 30 * UniformDouble(data_rng)));
        rows.codes.push_back(key);
      }
    }
    GroupRequest request = BasicGroups(50);
    request.release.seed = seed;
    std::vector<double> out;
    const StatusOr<GroupedReport> grouped = Grouped(rows, request, &out);
    ASSERT_TRUE(grouped.ok()) << grouped.status().message();
    EXPECT_EQ(grouped.value().release.step_look_step, 1) << seed;
    EXPECT_EQ(grouped.value().release.step_look_share, kStepLookShare);
    for (const double v : out) EXPECT_EQ(v, std::floor(v)) << seed;
    if (seed > 3) continue;
    // With intervals: each key's are drawn on the step found, as its
    // values are (release.cc): whole numbers, every key's.
    request.release.confidence = 0.9;
    const StatusOr<GroupedReport> with = Grouped(rows, request, &out);
    ASSERT_TRUE(with.ok()) << with.status().message();
    const ReleaseReport& r = with.value().release;
    EXPECT_EQ(r.step_look_step, 1) << seed;
    ASSERT_EQ(r.interval_low.size(), 50 * request.release.quantiles.size());
    for (size_t i = 0; i < r.interval_low.size(); ++i) {
      EXPECT_EQ(r.interval_low[i], std::floor(r.interval_low[i])) << seed;
      EXPECT_EQ(r.interval_high[i], std::floor(r.interval_high[i])) << seed;
    }
  }
  // Private keys, none selected (200 keys of 10 rows, below the
  // selection's threshold): the report still says what the look found and
  // what every key would have run (AggTree: nine deciles on 101 points).
  Rows small;
  for (uint32_t key = 0; key < 200; ++key) {
    for (int i = 0; i < 10; ++i) {
      small.values.push_back(20 + (key + 7 * i) % 50);
      small.codes.push_back(key);
    }
  }
  GroupRequest hidden = BasicGroups(200);
  hidden.private_keys = true;
  hidden.delta = 1e-6;
  hidden.release.quantiles.clear();
  for (int i = 1; i <= 9; ++i) hidden.release.quantiles.push_back(i / 10.0);
  std::vector<double> none;
  const StatusOr<GroupedReport> unseen = Grouped(small, hidden, &none);
  ASSERT_TRUE(unseen.ok()) << unseen.status().message();
  EXPECT_EQ(std::count(unseen.value().released.begin(),
                       unseen.value().released.end(), 1),
            0);
  EXPECT_EQ(unseen.value().release.step_look_step, 1);
  EXPECT_EQ(unseen.value().release.method, "aggtree");
  // Values off every lattice: no step, AQ on the default grid.
  const Rows continuous = MakeRows(50, 100, 4);
  std::vector<double> out;
  const StatusOr<GroupedReport> grouped =
      Grouped(continuous, BasicGroups(50), &out);
  ASSERT_TRUE(grouped.ok());
  EXPECT_TRUE(std::isnan(grouped.value().release.step_look_step));
  EXPECT_EQ(grouped.value().release.method, "aq");
}

TEST(GroupsTest, TheStepLookCostsItsShareOfTheWholeBudget) {
  // The default's step look over every key's records (groups.cc): a person
  // (g keys, k rows in each; a row without people) moves its histogram by
  // c = g k at most, all in one cell at worst. Exactly, over every noisy
  // count near it, the probability ratio of the look's noise shifted by c
  // stays within kStepLookShare of the whole epsilon and reaches it; under
  // rho, a shift of c costs c^2 / (2 variance), kStepLookShare of rho.
  const std::vector<uint32_t> users = {0};  // read only by the release
  for (const int g : {0, 1, 3}) {
    const int k = 2;
    const double c = g > 0 ? g * k : 1;
    // The look's noise for a budget, per person when g > 0.
    const auto noise_for = [&](std::optional<double> epsilon,
                               std::optional<double> rho) {
      GroupRequest request = BasicGroups(4);
      request.release.epsilon = epsilon;
      request.release.rho = rho;
      if (g > 0) {
        request.release.users = users.data();
        request.release.max_contributions = k;
        request.max_groups = g;
      }
      return GroupStepLookNoise(request);
    };
    for (const double epsilon : {0.3, 1.0, 2.7}) {
      const StatusOr<CountNoise> noise = noise_for(epsilon, std::nullopt);
      ASSERT_TRUE(noise.ok()) << noise.status().message();
      ASSERT_EQ(noise.value().kind, CountNoise::Kind::kLaplace);
      const double share = kStepLookShare * epsilon;
      double worst = 0;
      for (int64_t y = -60; y <= 60; ++y) {
        const double ratio =
            std::fabs(std::log(noise.value().Pmf(y)) -
                      std::log(noise.value().Pmf(y - static_cast<int64_t>(c))));
        EXPECT_LE(ratio, share * (1 + 1e-12))
            << "g " << g << " eps " << epsilon;
        worst = std::max(worst, ratio / share);
      }
      EXPECT_GT(worst, 0.999) << "g " << g << " eps " << epsilon;
    }
    for (const double rho : {0.02, 0.5}) {
      const StatusOr<CountNoise> noise = noise_for(std::nullopt, rho);
      ASSERT_TRUE(noise.ok()) << noise.status().message();
      ASSERT_EQ(noise.value().kind, CountNoise::Kind::kGaussian);
      const double cost = c * c / (2 * noise.value().parameter.Value());
      EXPECT_LE(cost, kStepLookShare * rho * (1 + 1e-12)) << "g " << g;
      EXPECT_GT(cost, 0.999 * kStepLookShare * rho) << "g " << g;
    }
  }
}

TEST(GroupsTest, PrivateKeysUnderRhoAreApproximateZcdp) {
  // rho with delta: the selection runs at epsilon_s = sqrt(2 rho_s) (pure
  // epsilon_s-DP outside its delta event, PartitionSelectionTest checks it
  // exactly, hence epsilon_s^2 / 2 <= rho_s zCDP there), the groups at the
  // rest: delta-approximate rho-zCDP. epsilon_s is the largest double
  // allowed: its square's half is rho_s to 12 digits (a 10% larger epsilon_s
  // fails here).
  const uint32_t keys = 6;
  const Rows rows = MakeRows(keys, 400, 21, /*empty=*/3);
  for (const double rho : {0.5, 0.02}) {
    GroupRequest request = BasicGroups(keys);
    request.release.epsilon.reset();
    request.release.rho = rho;
    request.release.seed.reset();
    request.private_keys = true;
    request.delta = 1e-6;
    std::vector<double> out;
    const StatusOr<GroupedReport> grouped = Grouped(rows, request, &out);
    ASSERT_TRUE(grouped.ok()) << grouped.status().message();
    const GroupedReport& g = grouped.value();
    EXPECT_EQ(g.release.spent.kind, PrivacyBudget::Kind::kZcdp);
    EXPECT_EQ(g.release.spent.rho, rho);
    EXPECT_EQ(g.release.spent.delta, 1e-6);
    EXPECT_EQ(g.selection_spent.kind, PrivacyBudget::Kind::kZcdp);
    const double rho_s = g.selection_spent.rho;
    EXPECT_NEAR(rho_s, rho / 10, rho * 1e-12);
    const double epsilon_s = g.selection.epsilon;
    EXPECT_LE(epsilon_s * epsilon_s / 2, rho_s);
    EXPECT_GT(epsilon_s * epsilon_s / 2, rho_s * (1 - 1e-12));
    EXPECT_LE(SelectionProbability(1, g.selection), 1e-6);
    if (rho == 0.5) {
      // 400 rows clear the threshold (43 here); the empty key never.
      EXPECT_LT(g.selection.threshold, 100);
      EXPECT_EQ(std::count(g.released.begin(), g.released.end(), 1), 5);
      EXPECT_EQ(g.released[3], 0);
    }
  }
  // Sessions: an (epsilon, delta) session holds it, its delta kept beside
  // the conversion's; a rho session has no delta to spend; a session that
  // counts it twice (per person in an add-remove session) refuses it.
  GroupRequest request = BasicGroups(keys);
  request.release.epsilon.reset();
  request.release.rho = 0.5;
  request.release.seed.reset();
  request.private_keys = true;
  request.delta = 1e-6;
  std::vector<double> out;
  PrivacySession approx =
      PrivacySession::Create(PrivacyBudget::Approx(10, 1e-5),
                             Neighbouring::kAddRemove)
          .value();
  const StatusOr<GroupedReport> held = Grouped(rows, request, &out, &approx);
  ASSERT_TRUE(held.ok()) << held.status().message();
  EXPECT_EQ(approx.Spent().delta, 1e-5);
  EXPECT_EQ(approx.Spent().epsilon, ZcdpToApproxEpsilon(0.5, 9e-6));
  EXPECT_EQ(approx.charges().back().cost.delta, 1e-6);
  PrivacySession zcdp =
      PrivacySession::Create(PrivacyBudget::Zcdp(2), Neighbouring::kAddRemove)
          .value();
  const StatusOr<GroupedReport> refused = Grouped(rows, request, &out, &zcdp);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidPrivacy);
  EXPECT_NE(refused.status().message().find("delta"), std::string::npos);
  EXPECT_EQ(zcdp.releases(), 0);
  // The ledger replays it: a charge of rho with delta.
  PrivacySession replayed =
      PrivacySession::Create(PrivacyBudget::Approx(10, 1e-5),
                             Neighbouring::kAddRemove)
          .value();
  ASSERT_TRUE(replayed
                  .Charge(PrivacyBudget::ApproxZcdp(0.5, 1e-6),
                          Neighbouring::kAddRemove)
                  .ok());
  EXPECT_EQ(replayed.Spent().epsilon, approx.Spent().epsilon);
  // Two of them leave 8e-6 to convert 1.0 of rho.
  ASSERT_TRUE(replayed
                  .Charge(PrivacyBudget::ApproxZcdp(0.5, 1e-6),
                          Neighbouring::kAddRemove)
                  .ok());
  EXPECT_EQ(replayed.Spent().epsilon, ZcdpToApproxEpsilon(1, 8e-6));
  EXPECT_FALSE(
      replayed
          .Charge(PrivacyBudget::ApproxZcdp(0.5, 1.5), Neighbouring::kAddRemove)
          .ok());
  EXPECT_EQ(replayed
                .Charge(PrivacyBudget::ApproxZcdp(0.5, 1e-6),
                        Neighbouring::kAddRemoveUser, 1)
                .code(),
            StatusCode::kInvalidPrivacy);
}

// The exact log-probabilities of every tuple of a joint method (JointExp or
// inverse sensitivity, with the library's own kernels) on one group's cells.
std::vector<double> JointLogs(bool inverse, std::vector<double> cells,
                              int64_t steps,
                              const std::vector<double>& quantiles,
                              double epsilon) {
  std::sort(cells.begin(), cells.end());
  const JointKernel kernel =
      inverse ? InverseSensitivityKernel(cells.size(), quantiles, epsilon)
              : JointExpKernel(cells.size(), quantiles, epsilon);
  const JointSampler sampler(cells.data(), cells.size(), steps, kernel);
  std::vector<double> logs;
  for (const auto& t :
       testing::AllNonDecreasingTuples(steps, quantiles.size())) {
    logs.push_back(sampler.LogProbability(t));
  }
  return logs;
}

// The largest |log P(o) - log P'(o)| of a release of two groups, A and B,
// whose per-group releases are independent: over pairs of tuples the
// log-ratios add, so the worst is the larger of the two signed sums of each
// group's extreme log-ratios.
double TwoGroupLogRatio(const std::vector<double>& a,
                        const std::vector<double>& a_neighbour,
                        const std::vector<double>& b,
                        const std::vector<double>& b_neighbour) {
  auto extremes = [](const std::vector<double>& x,
                     const std::vector<double>& y) {
    double up = -INFINITY;
    double down = INFINITY;
    for (size_t t = 0; t < x.size(); ++t) {
      up = std::max(up, x[t] - y[t]);
      down = std::min(down, x[t] - y[t]);
    }
    return std::pair<double, double>(up, down);
  };
  const auto [a_up, a_down] = extremes(a, a_neighbour);
  const auto [b_up, b_down] = extremes(b, b_neighbour);
  return std::max(a_up + b_up, -(a_down + b_down));
}

TEST(GroupsTest, EveryMethodGroupsTakeHoldsItsGuaranteeWhenARowMovesGroups) {
  // The witness of the review: eps = 1, grid 0..7, quantiles [.2 .4 .6 .8],
  // A = {0, 6, 6, 6, 6, 6}, B = {6, 6, 6, 6, 6}. A replace-one neighbour
  // replaces the 0 by a row of key B (both groups change size) or of an
  // unlisted key (A does); an add/remove neighbour removes the 0 (A
  // changes). For each joint method, the grouped release either refuses it
  // or its reported relation holds on the composed release, exactly. Without
  // the refusal, inverse sensitivity reports replace-one and reaches 1.50.
  const int64_t steps = 7;
  const std::vector<double> quantiles = {0.2, 0.4, 0.6, 0.8};
  const double epsilon = 1;
  const std::vector<double> a = {0, 6, 6, 6, 6, 6};
  const std::vector<double> a_less = {6, 6, 6, 6, 6};
  const std::vector<double> b = {6, 6, 6, 6, 6};
  const std::vector<double> b_more = {0, 6, 6, 6, 6, 6};
  Rows rows;
  for (const double x : a) {
    rows.values.push_back(x);
    rows.codes.push_back(0);
  }
  for (const double x : b) {
    rows.values.push_back(x);
    rows.codes.push_back(1);
  }
  for (const char* method : {"jointexp", "inverse-sensitivity"}) {
    const bool inverse = std::string(method) == "inverse-sensitivity";
    auto logs = [&](const std::vector<double>& cells) {
      return JointLogs(inverse, cells, steps, quantiles, epsilon);
    };
    // Replace-one: the 0 moves to B, or to an unlisted key.
    const double moved =
        TwoGroupLogRatio(logs(a), logs(a_less), logs(b), logs(b_more));
    const double unlisted =
        TwoGroupLogRatio(logs(a), logs(a_less), logs(b), logs(b));
    // Add/remove: the 0 removed (A changes; B does not).
    const double removed = unlisted;
    if (inverse) {
      EXPECT_NEAR(moved, 1.50, 0.01);  // the review's witness
      EXPECT_GT(unlisted, 1.03 * epsilon);
    }
    GroupRequest request = BasicGroups(2);
    request.release.upper = 7;
    request.release.options.push_back({"step", 1});
    request.release.quantiles = quantiles;
    request.release.epsilon = epsilon;
    request.release.method = method;
    std::vector<double> out;
    const StatusOr<GroupedReport> report = Grouped(rows, request, &out);
    if (!report.ok()) {
      EXPECT_EQ(report.status().code(), StatusCode::kInvalidOption) << method;
      EXPECT_NE(report.status().message().find("add-remove method"),
                std::string::npos)
          << report.status().message();
      continue;
    }
    const std::string& relation = report.value().release.neighbouring;
    EXPECT_EQ(report.value().release.spent.epsilon, epsilon) << method;
    if (relation == "replace-one") {
      EXPECT_LE(std::max(moved, unlisted), epsilon + 1e-9) << method;
    } else {
      ASSERT_EQ(relation, "add-remove") << method;
      EXPECT_LE(removed, epsilon + 1e-9) << method;
    }
  }
}

TEST(GroupsTest, GroupsTakeOnlyAddRemoveMethods) {
  // Every method of the table: a grouped release (rows and counts) takes it
  // if and only if it protects an added or removed record; the refusal says
  // why, before the data is read.
  const Rows rows = MakeRows(3, 30, 5);
  const std::vector<uint32_t> keys = {0, 1};
  const std::vector<double> buckets = {3, 4};
  const std::vector<double> counts = {2, 5};
  for (const MethodSpec& spec : Methods()) {
    GroupRequest request = BasicGroups(3);
    request.release.method = spec.name;
    std::vector<double> out;
    const StatusOr<GroupedReport> from_rows = Grouped(rows, request, &out);
    std::vector<double> counted_out(3 * 3);
    const StatusOr<GroupedReport> from_counts =
        ReleaseByGroupFromCounts(keys.data(), buckets.data(), counts.data(),
                                 keys.size(), 10, request, counted_out.data());
    if (spec.neighbouring == Neighbouring::kAddRemove) {
      EXPECT_TRUE(from_rows.ok()) << spec.name << from_rows.status().message();
      EXPECT_TRUE(from_counts.ok()) << spec.name;
      continue;
    }
    EXPECT_EQ(from_rows.status().code(), StatusCode::kInvalidOption);
    EXPECT_EQ(from_counts.status().code(), StatusCode::kInvalidOption);
    EXPECT_NE(from_rows.status().message().find("two groups' sizes"),
              std::string::npos)
        << from_rows.status().message();
  }
}

TEST(GroupsTest, AppIndExpWithDeltaHoldsDeltaAcrossAPersonsGroups) {
  // Per person, appindexp with delta runs each group's m mechanisms at
  // epsilon_p; a person reaches g groups by k rows each: g m mechanisms,
  // each k epsilon_p-bounded-range. For each setting the plan takes, the
  // composed release's delta (Dong, Durfee and Rogers' optimal composition,
  // at epsilon_p as the release reports it) stays within delta; the plan
  // refuses the others before reading data.
  std::vector<double> values;
  std::vector<uint32_t> codes;
  std::vector<uint32_t> users;
  for (uint32_t i = 0; i < 400; ++i) {
    values.push_back(i % 97);
    codes.push_back(i % 10);
    users.push_back(i / 7);
  }
  int taken = 0;
  int refused = 0;
  double worst = 0;
  for (const double epsilon : {0.5, 1.0, 4.0}) {
    for (const double delta : {1e-9, 1e-6}) {
      for (const int64_t g : {2, 5, 10}) {
        for (const int64_t k : {1, 3}) {
          for (const size_t m : {1, 3, 9}) {
            GroupRequest request = BasicGroups(10);
            request.release.method = "appindexp";
            request.release.options.push_back({"delta", delta});
            request.release.epsilon = epsilon;
            request.release.quantiles.clear();
            for (size_t j = 0; j < m; ++j) {
              request.release.quantiles.push_back((j + 0.5) / m);
            }
            request.release.users = users.data();
            request.release.max_contributions = static_cast<double>(k);
            request.max_groups = static_cast<double>(g);
            std::vector<double> v = values;
            std::vector<unsigned char> c(8 * codes.size());
            std::memcpy(c.data(), codes.data(), 4 * codes.size());
            std::vector<double> out(10 * m);
            const StatusOr<GroupedReport> report = ReleaseByGroup(
                v.data(), c.data(), v.size(), request, out.data());
            if (!report.ok()) {
              EXPECT_EQ(report.status().code(), StatusCode::kInvalidOption);
              ++refused;
              continue;
            }
            ++taken;
            EXPECT_EQ(report.value().release.spent.delta, delta);
            const double part = report.value().release.mechanism_epsilon;
            const double composed = OptimalExponentialCompositionDelta(
                static_cast<double>(k) * part, static_cast<int>(g * m),
                epsilon);
            EXPECT_LE(composed, delta) << epsilon << " " << g << " " << k;
            worst = std::max(worst, composed / delta);
          }
        }
      }
    }
  }
  // Every setting is taken, with a wide margin: the composed delta is at
  // most 5.1e-4 of delta (at g = 2, m = 3; eps 0.5, delta 1e-6).
  EXPECT_EQ(taken, 108);
  EXPECT_EQ(refused, 0);
  EXPECT_LT(worst, 1e-3);
  // More mechanisms than the optimal composition takes: refused, before the
  // data is read.
  GroupRequest request = BasicGroups(10);
  request.release.method = "appindexp";
  request.release.options.push_back({"delta", 1e-6});
  request.release.quantiles = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  request.release.users = users.data();
  request.release.max_contributions = 1;
  request.max_groups = 200;
  std::vector<double> out;
  const StatusOr<GroupedReport> many =
      Grouped(Rows{values, codes}, request, &out);
  EXPECT_EQ(many.status().code(), StatusCode::kInvalidOption);
  EXPECT_NE(many.status().message().find("1800"), std::string::npos)
      << many.status().message();
}

// The largest |log P(z) - log P(z - d)| of a count's noise over z: what a
// count moved by d does to the probability of any noisy value, exactly
// from the noise's pmf.
double CountLogRatio(const CountNoise& noise, int64_t d) {
  double worst = 0;
  for (int64_t z = -400; z <= 400; ++z) {
    worst = std::max(
        worst, std::fabs(std::log(noise.Pmf(z)) - std::log(noise.Pmf(z - d))));
  }
  return worst;
}

TEST(GroupsTest, CountsSpendTheirShareForTheirSensitivity) {
  // Public keys: a record moves one key's count by 1; a person (users, g
  // keys) one person in each of g keys; rows bounded in SQL k in each of g
  // keys. Over the keys a neighbour touches, the counts' log-ratio of any
  // outcome is exactly at most the counts' share, and above 0.9 of it (a
  // share 10% too generous fails).
  struct Case {
    int64_t g;   // keys a person reaches (0: not per person)
    bool users;  // people counted (else rows bounded upstream)
    int64_t k;   // rows a person keeps in a key
  };
  std::vector<uint32_t> users(10, 0);
  for (const Case& c : std::vector<Case>{
           {0, false, 1}, {3, true, 2}, {2, false, 3}, {1, false, 4}}) {
    for (const double share : {0.1, 0.3}) {
      GroupRequest request = BasicGroups(5);
      request.count = true;
      request.count_share = share;
      if (c.g > 0) {
        request.max_groups = static_cast<double>(c.g);
        request.release.max_contributions = static_cast<double>(c.k);
        if (c.users) request.release.users = users.data();
      }
      const StatusOr<CountNoise> noise = GroupCountNoise(request);
      ASSERT_TRUE(noise.ok()) << noise.status().message();
      const int64_t per_key = c.users ? 1 : c.k;
      const int64_t keys = std::max<int64_t>(c.g, 1);
      const double ratio =
          static_cast<double>(keys) * CountLogRatio(noise.value(), per_key);
      EXPECT_LE(ratio, share + 1e-9) << c.g << " " << c.k;
      EXPECT_GT(ratio, 0.9 * share) << c.g << " " << c.k;
      // Under rho: the discrete Gaussian's variance is at least L2^2 / (2
      // rho_c), and within a tenth of it.
      GroupRequest zcdp = request;
      zcdp.release.epsilon.reset();
      zcdp.release.rho = 0.5;
      const StatusOr<CountNoise> gaussian = GroupCountNoise(zcdp);
      ASSERT_TRUE(gaussian.ok());
      const double l2 = static_cast<double>(keys * per_key * per_key);
      const double variance = gaussian.value().parameter.Value();
      EXPECT_GE(variance, l2 / (2 * 0.5 * share) * (1 - 1e-12));
      EXPECT_LT(variance, 1.1 * l2 / (2 * 0.5 * share));
    }
  }
}

TEST(GroupsTest, CountsComeAfterTheQuantilesOnTheRestOfTheBudget) {
  // count: true with share 0.25 at epsilon 1 releases the quantiles a
  // release at epsilon 0.75 does, bit for bit (the counts draw after them):
  // the two parts compose to the budget. Each count is near its key's rows;
  // the report says what the counts spent.
  const Rows rows = MakeRows(4, 500, 8, /*empty=*/2);
  GroupRequest counted = BasicGroups(4);
  counted.count = true;
  counted.count_share = 0.25;
  std::vector<double> a;
  const StatusOr<GroupedReport> with = Grouped(rows, counted, &a);
  ASSERT_TRUE(with.ok()) << with.status().message();
  GroupRequest plain = BasicGroups(4);
  plain.release.epsilon = 0.75;
  std::vector<double> b;
  ASSERT_TRUE(Grouped(rows, plain, &b).ok());
  EXPECT_EQ(a, b);
  const GroupedReport& report = with.value();
  EXPECT_EQ(report.release.spent.epsilon, 1);
  EXPECT_EQ(report.count_spent.epsilon, 0.25);
  EXPECT_EQ(std::string(report.count_of), "rows");
  ASSERT_EQ(report.counts.size(), 4u);
  for (uint32_t key = 0; key < 4; ++key) {
    const double truth = key == 2 ? 0 : 500;
    EXPECT_NEAR(report.counts[key], truth, 100) << key;  // scale 4: 25 scales
  }
  // Without count: none; countShare alone, or with private keys: refused.
  std::vector<double> c;
  EXPECT_TRUE(Grouped(rows, BasicGroups(4), &c).value().counts.empty());
  GroupRequest alone = BasicGroups(4);
  alone.count_share = 0.2;
  EXPECT_EQ(Grouped(rows, alone, &c).status().code(),
            StatusCode::kInvalidOption);
  GroupRequest selected = BasicGroups(4);
  selected.private_keys = true;
  selected.delta = 1e-6;
  selected.count = true;
  selected.count_share = 0.2;
  EXPECT_EQ(Grouped(rows, selected, &c).status().code(),
            StatusCode::kInvalidOption);
}

TEST(GroupsTest, PrivateKeysCountWithTheSelectionsNoisyCount) {
  // Private keys: a selected key's count is the noisy count that cleared
  // the threshold (at least it), at no cost beyond the selection; the
  // quantiles are those of the same release without count.
  const Rows rows = MakeRows(4, 600, 9, /*empty=*/1);
  GroupRequest request = BasicGroups(4);
  request.private_keys = true;
  request.delta = 1e-6;
  request.count = true;
  std::vector<double> a;
  const StatusOr<GroupedReport> with = Grouped(rows, request, &a);
  ASSERT_TRUE(with.ok()) << with.status().message();
  const GroupedReport& report = with.value();
  EXPECT_EQ(report.count_spent.epsilon, 0);
  for (uint32_t key = 0; key < 4; ++key) {
    if (report.released[key] == 0) {
      EXPECT_TRUE(std::isnan(report.counts[key]));
      continue;
    }
    EXPECT_GE(report.counts[key],
              static_cast<double>(report.selection.threshold));
    EXPECT_NEAR(report.counts[key], 600, 150);  // scale 10: 15 scales
  }
  GroupRequest plain = request;
  plain.count = false;
  std::vector<double> b;
  ASSERT_TRUE(Grouped(rows, plain, &b).ok());
  EXPECT_EQ(a, b);
}

TEST(GroupsTest, BadRequestsAreTypedErrorsBeforeTheData) {
  const Rows rows = MakeRows(3, 10, 6);
  std::vector<double> out;
  GroupRequest request = BasicGroups(3);
  request.private_keys = true;  // no delta
  EXPECT_EQ(Grouped(rows, request, &out).status().code(),
            StatusCode::kInvalidPrivacy);
  request.release.epsilon.reset();
  request.release.rho = 0.5;  // nor under rho
  EXPECT_EQ(Grouped(rows, request, &out).status().code(),
            StatusCode::kInvalidPrivacy);
  request.delta = 1;  // delta must be below 1
  EXPECT_EQ(Grouped(rows, request, &out).status().code(),
            StatusCode::kInvalidPrivacy);
  request = BasicGroups(3);
  request.max_groups = 2;  // without users
  EXPECT_EQ(Grouped(rows, request, &out).status().code(),
            StatusCode::kInvalidOption);
  // users without maxContributions: both missing bounds named, the rows'
  // first.
  std::vector<uint32_t> people(rows.values.size(), 0);
  request = BasicGroups(3);
  request.release.users = people.data();
  StatusOr<GroupedReport> bounds = Grouped(rows, request, &out);
  EXPECT_EQ(bounds.status().code(), StatusCode::kInvalidOption);
  EXPECT_NE(bounds.status().message().find(
                "needs maxContributions: the most rows a person keeps in a "
                "group; and maxGroups"),
            std::string::npos)
      << bounds.status().message();
  request.max_groups = 2;
  bounds = Grouped(rows, request, &out);
  EXPECT_NE(bounds.status().message().find("needs maxContributions"),
            std::string::npos);
  EXPECT_EQ(bounds.status().message().find("and maxGroups"), std::string::npos);
  request = BasicGroups(0);  // no public key
  EXPECT_EQ(Grouped(rows, request, &out).status().code(),
            StatusCode::kInvalidOption);
  request = BasicGroups(3);
  request.delta = 1e-6;  // delta without private keys
  EXPECT_EQ(Grouped(rows, request, &out).status().code(),
            StatusCode::kInvalidOption);
  Rows bad = rows;
  bad.values[4] = std::nan("");
  const StatusOr<GroupedReport> nan = Grouped(bad, BasicGroups(3), &out);
  EXPECT_EQ(nan.status().code(), StatusCode::kNonFiniteValue);
  EXPECT_NE(nan.status().message().find("values[4]"), std::string::npos);
  // A session is charged once, refuses what does not fit before the data.
  PrivacySession session =
      PrivacySession::Create(PrivacyBudget::Pure(1.5), Neighbouring::kAddRemove)
          .value();
  ASSERT_TRUE(Grouped(rows, BasicGroups(3), &out, &session).ok());
  EXPECT_EQ(session.Spent().epsilon, 1);
  EXPECT_EQ(Grouped(rows, BasicGroups(3), &out, &session).status().code(),
            StatusCode::kBudgetExceeded);
  EXPECT_EQ(session.releases(), 1);
}

}  // namespace
}  // namespace dpq
