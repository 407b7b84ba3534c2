#include "core/exponential_quantile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <vector>

#include "core/prepare.h"
#include "core/random.h"
#include "tests/cpp/test_util.h"

namespace dpq {
namespace {

double LogSumExp(const std::vector<double>& logs) {
  double top = -INFINITY;
  for (double x : logs) top = std::max(top, x);
  double sum = 0;
  for (double x : logs) sum += std::exp(x - top);
  return top + std::log(sum);
}

// A problem over sorted record points that keeps its runs alive.
struct OwnedProblem {
  RunsStore runs;
  QuantileProblem problem;
  operator const QuantileProblem&() const { return problem; }  // NOLINT
};

OwnedProblem Problem(const std::vector<double>& cells, int64_t steps, double q,
                     PointMeasure measure = PointMeasure()) {
  OwnedProblem owned{testing::RunsOf(cells), {}};
  owned.problem = QuantileProblem::Whole(owned.runs.view(), steps, q);
  owned.problem.measure = measure;
  return owned;
}

// The shell measure's weights written out from its definition: shell
// k = floor(log2(d + 1)) weighs 2^(K - k) (K = floor(log2 M) <= 26 here),
// U = max(1, floor((c_first + c_last) E / (2 M))).
std::vector<uint64_t> ShellWeights(int64_t points, uint64_t c_first,
                                   uint64_t c_last) {
  int whole = 0;
  while ((int64_t{2} << whole) <= points) ++whole;
  auto e = [&](int64_t d) {
    int k = 0;
    while ((int64_t{2} << k) <= d + 1) ++k;
    return uint64_t{1} << (whole - k);
  };
  uint64_t side = 0;
  for (int64_t d = 0; d < points; ++d) side += e(d);
  const uint64_t flat = std::max<uint64_t>(
      1, (c_first + c_last) * side / (4 * static_cast<uint64_t>(points)));
  std::vector<uint64_t> w;
  for (int64_t d = 0; d < points; ++d) {
    w.push_back(flat + c_first * e(d) + c_last * e(points - 1 - d));
  }
  return w;
}

// `m` over [first, first + w.size() - 1] has the weights w: each weight,
// the masses of many ranges, and PointAt inverting them (offset o lands on
// the point whose share holds it).
void ExpectMeasureIs(const PointMeasure& m, int64_t first,
                     const std::vector<uint64_t>& w) {
  const auto points = static_cast<int64_t>(w.size());
  const int64_t last = first + points - 1;
  std::vector<uint64_t> prefix = {0};
  for (uint64_t x : w) prefix.push_back(prefix.back() + x);
  for (int64_t p = first; p <= last; ++p) {
    ASSERT_EQ(m.Weight(p), w[p - first]) << points << " " << p;
    // The edges' fused read gives both alike.
    const PrefixWeight at = m.PrefixAndWeight(p);
    ASSERT_EQ(at.prefix, m.Prefix(p)) << points << " " << p;
    ASSERT_EQ(at.weight, w[p - first]) << points << " " << p;
  }
  for (int64_t a = first; a <= last; a += 1 + points / 13) {
    for (int64_t b = a - 1; b <= last; b += 1 + points / 11) {
      ASSERT_EQ(m.Mass(a, b), prefix[b + 1 - first] - prefix[a - first])
          << points << " [" << a << ", " << b << "]";
    }
  }
  for (const int64_t from : {first, first + points / 3}) {
    const uint64_t total = m.Mass(from, last);
    for (uint64_t o = 0; o < total; o += 1 + total / 97) {
      const int64_t p = m.PointAt(from, last, o);
      ASSERT_LE(m.Mass(from, p - 1), o);
      ASSERT_GT(m.Mass(from, p), o);
    }
    // Both ends of every point's share, where a quotient off by one
    // (PointAt divides inside a piece) would land on a neighbour.
    for (int64_t p = from; p <= last; ++p) {
      ASSERT_EQ(m.PointAt(from, last, m.Mass(from, p - 1)), p);
      ASSERT_EQ(m.PointAt(from, last, m.Mass(from, p) - 1), p);
    }
  }
}

TEST(PointMeasureTest, ShellsMatchTheirDefinition) {
  for (int64_t points : {1, 2, 3, 7, 8, 9, 100, 1025}) {
    for (const auto& [c_first, c_last] :
         std::vector<std::pair<uint32_t, uint32_t>>{
             {1, 1}, {4, 1}, {1, 4}, {4, 4}, {4, 0}, {0, 1}}) {
      const int64_t first = 17;
      const int64_t last = first + points - 1;
      const PointMeasure m = PointMeasure::Shells(first, last, c_first, c_last);
      ExpectMeasureIs(m, first, ShellWeights(points, c_first, c_last));
    }
  }
  // Uniform: weight 1, mass = points, PointAt = from + offset.
  const PointMeasure uniform;
  EXPECT_TRUE(uniform.uniform());
  EXPECT_EQ(uniform.Mass(3, 9), 7u);
  EXPECT_EQ(uniform.PointAt(3, 9, 4), 7);
  EXPECT_TRUE(PointMeasure::Shells(0, 9, 0, 0).uniform());
}

// With reaches: an end's shell k beyond its reach r weighs
// 2^(K - k - kReachDecayBits (k - r) - drop), 0 once that exponent is
// negative, and the flat part is 1.
std::vector<uint64_t> ReachedShellWeights(int64_t points, uint64_t c_first,
                                          uint64_t c_last, int r_first,
                                          int r_last, int drop_first,
                                          int drop_last) {
  int whole = 0;
  while ((int64_t{2} << whole) <= points) ++whole;
  auto e = [&](int64_t d, int reach, int drop) -> uint64_t {
    int k = 0;
    while ((int64_t{2} << k) <= d + 1) ++k;
    const int exponent =
        whole - k - (k > reach ? kReachDecayBits * (k - reach) : 0) - drop;
    return exponent < 0 ? 0 : uint64_t{1} << exponent;
  };
  std::vector<uint64_t> w;
  for (int64_t d = 0; d < points; ++d) {
    w.push_back(1 + c_first * e(d, r_first, drop_first) +
                c_last * e(points - 1 - d, r_last, drop_last));
  }
  return w;
}

TEST(PointMeasureTest, ReachedShellsMatchTheirDefinition) {
  struct Case {
    uint32_t c_first, c_last;
    int r_first, r_last, drop_first, drop_last;
  };
  for (int64_t points : {1, 2, 7, 8, 100, 1025, 4096}) {
    for (const Case& c : {Case{1, 16, 0, 5, 4, 0}, Case{16, 1, 3, 0, 0, 4},
                          Case{16, 16, 2, 9, 0, 0}, Case{1, 16, 0, 0, 4, 0}}) {
      const int64_t first = 5;
      const int64_t last = first + points - 1;
      const PointMeasure m =
          PointMeasure::Shells(first, last, c.c_first, c.c_last, c.r_first,
                               c.r_last, c.drop_first, c.drop_last);
      ExpectMeasureIs(
          m, first,
          ReachedShellWeights(points, c.c_first, c.c_last, c.r_first, c.r_last,
                              c.drop_first, c.drop_last));
    }
  }
  // On the finest grid (2^52 + 1 points, innermost shells merged) masses
  // still add up and PointAt inverts them.
  const int64_t last = int64_t{1} << 52;
  const PointMeasure big = PointMeasure::Shells(0, last, 1, 16, 0, 30, 4, 0);
  const uint64_t total = big.Mass(0, last);
  EXPECT_EQ(total, big.Mass(0, last / 3) + big.Mass(last / 3 + 1, last));
  for (uint64_t o : {uint64_t{0}, total / 7, total / 2, total - 1}) {
    const int64_t p = big.PointAt(0, last, o);
    ASSERT_LE(big.Mass(0, p - 1), o);
    ASSERT_GT(big.Mass(0, p), o);
  }
  // Offsets past 2^52 inside one piece (an integer division), at both ends
  // of points' shares.
  ASSERT_GT(total, uint64_t{1} << 54);
  for (const int64_t p : {last / 2, last / 2 + 1, last - 5, int64_t{1} << 40}) {
    ASSERT_EQ(big.PointAt(0, last, big.Mass(0, p - 1)), p);
    ASSERT_EQ(big.PointAt(0, last, big.Mass(0, p) - 1), p);
  }
  // Beyond the reach a point one shell further weighs 2^-(1 +
  // kReachDecayBits) as much (1 for the shell, the rest the decay); the
  // flat part is 1 and the bound's own shells are gone this far from it.
  const int64_t in30 = last - ((int64_t{1} << 30) - 1);
  const int64_t in31 = last - ((int64_t{1} << 31) - 1);
  EXPECT_EQ(big.Weight(in31) - 1,
            (big.Weight(in30) - 1) >> (1 + kReachDecayBits));
  // (K = 52, the top 26 shells merged: shell 30 weighs 2^(26 - 4) a point.)
  EXPECT_EQ(big.Weight(in30), 1 + 16 * (uint64_t{1} << 22));
}

// A reached end's masses come from three geometric sums (rising, level,
// falling shells) and the part of the last shell: every reach and drop on
// grids up to 300 points against the definition, and on grids up to 2^52
// points the mass one point adds at both sides of every shell boundary
// (where a sum off by one shell, or a wrong first empty shell, shows).
TEST(PointMeasureTest, ReachedMassesMatchTheDefinitionAtEveryReachAndDrop) {
  for (int64_t points : {1, 2, 5, 16, 17, 63, 300}) {
    for (int reach = 0; reach <= 9; ++reach) {
      for (int drop = 0; drop <= 9; drop += 3) {
        const PointMeasure m = PointMeasure::Shells(
            3, 3 + points - 1, 16, 4, reach, 9 - reach, drop, drop / 3);
        ExpectMeasureIs(m, 3,
                        ReachedShellWeights(points, 16, 4, reach, 9 - reach,
                                            drop, drop / 3));
      }
    }
  }
  for (int bits : {20, 27, 33, 52}) {
    const int64_t last = (int64_t{1} << bits) + 12345;
    for (int reach : {0, 3, 10, 19, 26, 30, 51}) {
      for (int drop : {0, 4, 9}) {
        const PointMeasure m =
            PointMeasure::Shells(0, last, 16, 4, reach, reach / 2, drop, 1);
        for (int k = 0; k <= bits; ++k) {
          for (const int64_t d : {(int64_t{1} << k) - 2, (int64_t{1} << k) - 1,
                                  (int64_t{1} << k)}) {
            for (const int64_t p : {d, last - d}) {
              if (p < 0 || p > last) continue;
              ASSERT_EQ(m.Mass(p, p), m.Weight(p))
                  << bits << " " << reach << " " << drop << " " << p;
              ASSERT_EQ(m.Mass(0, p), m.Mass(0, p - 1) + m.Weight(p));
            }
          }
        }
        EXPECT_EQ(m.Mass(0, last),
                  m.Mass(0, last / 3) + m.Mass(last / 3 + 1, last));
      }
    }
  }
}

TEST(PointMeasureTest, APointsBinIsTheLastWhoseEdgeIsAtOrBelowIt) {
  // BinOf guesses in floating point and corrects against the edges: it must
  // give the definition's bin at every point, on grids from fewer points
  // than bins to 2^52 + 1 points, near every edge.
  std::array<uint64_t, kMostBins> f{};
  f.fill(1);
  for (const int64_t points :
       {int64_t{1}, int64_t{5}, int64_t{16}, int64_t{17}, int64_t{1000},
        int64_t{999983}, (int64_t{1} << 40) + 7, (int64_t{1} << 52) + 1}) {
    for (const int bins : {1, 3, 7, 10, 16}) {
      const BinnedWeights w(points, f.data(), bins);
      auto definition = [&](int64_t p) {
        int last = 0;
        for (int b = 0; b <= bins; ++b) {
          if (BinnedWeights::EdgeOf(b, bins, points) <= p && b < bins) last = b;
        }
        return last;
      };
      std::vector<int64_t> probes;
      for (int b = 0; b <= bins; ++b) {
        const int64_t edge = BinnedWeights::EdgeOf(b, bins, points);
        ASSERT_EQ(w.Edge(b), edge);
        for (int64_t d = -2; d <= 2; ++d) probes.push_back(edge + d);
      }
      for (int64_t p = 0; p < std::min<int64_t>(points, 40); ++p) {
        probes.push_back(p);
      }
      for (const int64_t p : probes) {
        if (p < 0 || p >= points) continue;
        ASSERT_EQ(w.BinOf(p), definition(p))
            << points << " " << bins << " " << p;
      }
    }
  }
}

TEST(PointMeasureTest, BinnedWeightsMatchTheirDefinition) {
  // AQ's first look's measure: each point weighs its bin's weight, on
  // stretches that start and end inside bins, across several bins (PointAt
  // counts the bins it crosses), from fewer points than bins up.
  std::array<uint64_t, kMostBins> f{};
  for (size_t b = 0; b < f.size(); ++b) f[b] = 1 + (b * 7 + 3) % 11;
  for (const int64_t points :
       {int64_t{5}, int64_t{16}, int64_t{100}, int64_t{1000}, int64_t{4099}}) {
    for (const int bins : {1, 3, 7, 16}) {
      const BinnedWeights w(points, f.data(), bins);
      for (const auto& [first, last] :
           std::vector<std::pair<int64_t, int64_t>>{{0, points - 1},
                                                    {points / 7, points / 2},
                                                    {points / 3, points - 1}}) {
        std::vector<uint64_t> weights;
        for (int64_t p = first; p <= last; ++p) {
          int bin = 0;
          while (bin + 1 < bins &&
                 BinnedWeights::EdgeOf(bin + 1, bins, points) <= p) {
            ++bin;
          }
          weights.push_back(f[static_cast<size_t>(bin)]);
        }
        ExpectMeasureIs(PointMeasure::Binned(first, last, &w), first, weights);
      }
    }
  }
}

TEST(PointMeasureTest, AFactorMultipliesTheShellsBinByBin) {
  // Factor weights 2^0..2^4 over 16 bins of a grid of 3000 points; measures
  // on stretches of it, with and without reaches, weigh shells x factor.
  std::array<uint64_t, kMostBins> f{};
  for (int b = 0; b < kMostBins; ++b) {
    f[static_cast<size_t>(b)] = uint64_t{1}
                                << ((b * 7) % (kMostFactorBits + 1));
  }
  const BinnedWeights factor(3000, f.data(), kMostBins);
  for (int64_t points : {1, 2, 7, 100, 190, 1025, 2900}) {
    for (const int64_t first : {int64_t{0}, int64_t{93}}) {
      if (first + points > 3000) continue;
      const int64_t last = first + points - 1;
      for (const auto& m :
           {PointMeasure::Shells(first, last, 16, 1),
            PointMeasure::Shells(first, last, 1, 16, 0, 3, 4, 0),
            PointMeasure::Shells(first, last, 16, 16, 2, -1, 0, 0)}) {
        PointMeasure::FactorTable table;
        const PointMeasure product = m.WithFactor(&factor, &table);
        // One factor over the whole stretch changes no draw: none is taken.
        bool varies = false;
        for (int64_t p = first; p <= last; ++p) {
          varies |= factor.WeightOf(p) != factor.WeightOf(first);
        }
        ASSERT_EQ(product.has_factor(), varies) << first << " " << points;
        std::vector<uint64_t> w;
        for (int64_t p = first; p <= last; ++p) {
          w.push_back(m.Weight(p) * (varies ? factor.WeightOf(p) : 1));
        }
        ExpectMeasureIs(product, first, w);
      }
    }
  }
  // Bins and the uniform measure take no factor, nor grids of 2^23 points
  // and more (the products would pass 2^32); 2^23 - 1 do.
  PointMeasure::FactorTable table;
  const BinnedWeights bins(100, f.data(), kMostBins);
  EXPECT_FALSE(PointMeasure::Binned(0, 99, &bins)
                   .WithFactor(&factor, &table)
                   .has_factor());
  EXPECT_FALSE(PointMeasure().WithFactor(&factor, &table).has_factor());
  const int64_t most = (int64_t{1} << (kMostFactorShellBits + 1)) - 1;
  const BinnedWeights wide(most + 1, f.data(), kMostBins);
  EXPECT_FALSE(PointMeasure::Shells(0, most, 16, 1)
                   .WithFactor(&wide, &table)
                   .has_factor());
  const PointMeasure largest =
      PointMeasure::Shells(0, most - 1, 16, 16).WithFactor(&wide, &table);
  ASSERT_TRUE(largest.has_factor());
  EXPECT_LT(largest.Weight(0), uint64_t{1} << 32);
  EXPECT_LT(largest.Weight(most - 1), uint64_t{1} << 32);
  const uint64_t total = largest.Mass(0, most - 1);
  EXPECT_EQ(total,
            largest.Mass(0, most / 3) + largest.Mass(most / 3 + 1, most - 1));
  for (uint64_t o : {uint64_t{0}, total / 7, total / 2, total - 1}) {
    const int64_t p = largest.PointAt(0, most - 1, o);
    ASSERT_LE(largest.Mass(0, p - 1), o);
    ASSERT_GT(largest.Mass(0, p), o);
  }
}

TEST(PointMeasureTest, EveryShellHoldsTheSameMassAndAFifthIsFlat) {
  // M = 2^10 points, one end: shells 0..9 hold 2^10 each, shell 10 the one
  // point left; the flat part is U M = E / 4, a fifth of the total.
  const PointMeasure m = PointMeasure::Shells(0, 1023, 1, 0);
  for (int k = 0; k < 10; ++k) {
    const int64_t from = (int64_t{1} << k) - 1;
    const int64_t to = (int64_t{2} << k) - 2;
    // Shell k's shell part: 2^k points of 2^(10 - k).
    const uint64_t flat = m.Weight(1023) - 1;
    EXPECT_EQ(m.Mass(from, to) - flat * static_cast<uint64_t>(to - from + 1),
              uint64_t{1} << 10)
        << k;
  }
  // U = floor(E / (4 M)) exactly, here floor(11265 / 4096) = 2.
  const uint64_t flat = m.Weight(1023) - 1;
  const uint64_t shells = m.Mass(0, 1023) - flat * 1024;
  EXPECT_EQ(flat, shells / (4 * 1024));
  // With many points the floor hardly matters: a fifth is flat.
  const int64_t last = (int64_t{1} << 20) - 1;
  const PointMeasure big = PointMeasure::Shells(0, last, 4, 0);
  const uint64_t big_flat = big.Weight(last) - 4;
  EXPECT_NEAR(static_cast<double>(big_flat) * static_cast<double>(last + 1) /
                  static_cast<double>(big.Mass(0, last)),
              1.0 / 5, 0.01);
}

TEST(PointMeasureTest, LargeGridsStayExactAndBelowTwoToThe64) {
  // 2^52 + 1 points (the finest grid): the innermost shells merge so every
  // weight stays below 2^32; masses add up, PointAt inverts them. With end
  // weights up to 16 the total mass is near 2^63: it must not wrap, so it
  // lies between (c_first + c_last) E and 5/4 of that, with 26 shells of
  // 2^52 <= E <= 54 of them (the innermost 27 shells merge into about two).
  const int64_t last = int64_t{1} << 52;
  for (const auto& [c_first, c_last] :
       std::vector<std::pair<uint32_t, uint32_t>>{
           {4, 4}, {1, 4}, {16, 16}, {1, 16}, {16, 1}}) {
    const PointMeasure m = PointMeasure::Shells(0, last, c_first, c_last);
    const uint64_t total = m.Mass(0, last);
    const uint64_t ends = c_first + c_last;
    EXPECT_GE(total, ends * 26 * (uint64_t{1} << 52));
    EXPECT_LE(total, ends * 54 / 4 * 5 * (uint64_t{1} << 52) + ends);
    EXPECT_LT(m.Weight(0), uint64_t{1} << 32);
    EXPECT_LT(m.Weight(last), uint64_t{1} << 32);
    SeededRandom rng(5);
    for (int i = 0; i < 2000; ++i) {
      const int64_t a = static_cast<int64_t>(rng.NextUint64() % (last + 1));
      const int64_t b = static_cast<int64_t>(rng.NextUint64() % (last + 1));
      const int64_t lo = std::min(a, b);
      const int64_t hi = std::max(a, b);
      ASSERT_EQ(m.Mass(0, lo) + m.Mass(lo + 1, hi) + m.Mass(hi + 1, last),
                total);
      ASSERT_EQ(m.Mass(lo, lo), m.Weight(lo));
      const uint64_t offset = m.Mass(lo, hi - 1);
      ASSERT_EQ(m.PointAt(lo, hi, offset), hi);
    }
  }
}

TEST(ExponentialQuantileTest, SensitivityIsMaxOfQAndOneMinusQ) {
  EXPECT_DOUBLE_EQ(QuantileSensitivity(0.5), 0.5 * kSensitivitySafety);
  EXPECT_DOUBLE_EQ(QuantileSensitivity(0.1), 0.9 * kSensitivitySafety);
  EXPECT_DOUBLE_EQ(QuantileSensitivity(0.75), 0.75 * kSensitivitySafety);
}

TEST(ExponentialQuantileTest, PointProbabilitiesEqualTheAtomAwareFormula) {
  // Brute force over every point: v stands for ranks [#{x < v}, #{x <= v}],
  // weight exp(-eps dist(t, that interval) / (2 max(q, 1 - q))), t = q n
  // rounded to a multiple of 2^-20 (the base-two rate differs from the rate
  // by under 2^-49 relative).
  const std::vector<double> cells = {1, 3, 3, 3, 4, 8, 8, 11};
  const int64_t steps = 12;
  for (double epsilon : {0.3, 1.0, 5.0}) {
    for (double q : {0.05, 0.3, 0.5, 0.62, 0.99}) {
      std::vector<double> formula;
      for (int64_t v = 0; v <= steps; ++v) {
        double below = 0, at_or_below = 0;
        for (double c : cells) {
          below += c < v;
          at_or_below += c <= v;
        }
        const double t =
            std::nearbyint(q * cells.size() * 1048576.0) / 1048576.0;
        EXPECT_LT(std::fabs(t - q * cells.size()), 1.0 / 1048576.0);
        const double d = std::max({below - t, 0.0, t - at_or_below});
        formula.push_back(-epsilon * d / (2 * std::max(q, 1 - q)) /
                          kSensitivitySafety);
      }
      const double normaliser = LogSumExp(formula);
      for (int64_t v = 0; v <= steps; ++v) {
        EXPECT_NEAR(PointLogProbability(Problem(cells, steps, q), epsilon, v),
                    formula[v] - normaliser, 1e-12)
            << "point " << v << " q " << q << " eps " << epsilon;
      }
    }
  }
}

// The privacy check of the atom-aware form: for every neighbouring pair
// (X, X + {x}) of small datasets, every output point's exact probability
// moves by at most e^eps, and some pair comes within 10% of it.
void CheckAtomAwarePrivacy(const std::vector<double>& cell_values,
                           int64_t steps, size_t max_size) {
  ASSERT_TRUE(std::is_sorted(cell_values.begin(), cell_values.end()));
  // Probabilities are constant between record points, so these points cover
  // every piece of the output range.
  const std::vector<int64_t> points = testing::PiecePoints(cell_values, steps);
  double worst_ratio = 0;
  for (double epsilon : {0.1, 1.0, 4.0}) {
    for (double q : {0.05, 0.25, 0.5, 0.75, 0.95}) {
      testing::ForEachMultiset(
          cell_values, max_size, [&](const std::vector<double>& x) {
            for (double added : cell_values) {
              std::vector<double> neighbour = x;
              neighbour.push_back(added);
              std::sort(neighbour.begin(), neighbour.end());
              for (int64_t j : points) {
                const double ratio = std::fabs(
                    PointLogProbability(Problem(x, steps, q), epsilon, j) -
                    PointLogProbability(Problem(neighbour, steps, q), epsilon,
                                        j));
                ASSERT_LE(ratio, epsilon + 1e-12)
                    << "point " << j << " q " << q << " eps " << epsilon;
                worst_ratio = std::max(worst_ratio, ratio / epsilon);
              }
            }
          });
    }
  }
  // Tight: a sensitivity even 10% looser than max(q, 1 - q) would fail here.
  EXPECT_GT(worst_ratio, 0.9);
}

TEST(ExponentialQuantileTest, PrivacyRatioBoundedOnEveryPointOfASmallGrid) {
  // All multisets of <= 4 records on 6 points, plus one record, 13 points.
  CheckAtomAwarePrivacy({0, 2, 4, 7, 9, 12}, 12, 4);
}

TEST(ExponentialQuantileTest, PrivacyRatioBoundedOnTheProductionGrid) {
  const int64_t steps = kMaxGridSteps;
  CheckAtomAwarePrivacy({0, 3, 1e9, steps / 2.0 + 1, 2.5e15, double(steps)},
                        steps, 3);
}

TEST(ExponentialQuantileTest, SplitFormPrivacyRatioBoundedOverSubPoints) {
  // The split form's outputs are (point, sub-point), its records at fixed
  // sub-points (SubGapBound); every neighbour, including a record added
  // inside a run (an atom's count c growing to c + 1 moves every record's
  // sub-point), for several K.
  const std::vector<double> cell_values = {0, 1, 3};
  const int64_t steps = 3;
  double worst_ratio = 0;
  for (uint64_t k : {2, 3, 5}) {
    for (double epsilon : {0.5, 2.0}) {
      for (double q : {0.25, 0.5, 0.8}) {
        testing::ForEachMultiset(
            cell_values, 3, [&](const std::vector<double>& x) {
              const auto small =
                  SplitProbabilities(Problem(x, steps, q), epsilon, k, true);
              for (double added : cell_values) {
                std::vector<double> neighbour = x;
                neighbour.push_back(added);
                std::sort(neighbour.begin(), neighbour.end());
                const auto large = SplitProbabilities(
                    Problem(neighbour, steps, q), epsilon, k, true);
                ASSERT_EQ(small.size(), large.size());
                for (const auto& [output, p] : small) {
                  const double ratio =
                      std::fabs(std::log(p / large.at(output)));
                  ASSERT_LE(ratio, epsilon + 1e-12) << "q " << q << " K " << k;
                  worst_ratio = std::max(worst_ratio, ratio / epsilon);
                }
              }
            });
      }
    }
  }
  EXPECT_GT(worst_ratio, 0.9);
}

TEST(ExponentialQuantileTest, FixedSubPointsMoveByAtMostOneRecord) {
  // The records before sub-point s of a point holding c records, and with
  // c + 1: the same or one more, for every s (what the split form's
  // privacy and AQ's children rest on). Small K exhaustively; K = 2^32 and
  // counts past 2^32 (several records a sub-point) at sampled s.
  auto before = [](uint64_t c, uint64_t k, uint64_t s) {
    uint64_t h = 0;
    while (h < c && SubGapBound(c, k, h + 1) < static_cast<int64_t>(s)) ++h;
    return h;
  };
  for (uint64_t k : {1, 2, 3, 7, 16}) {
    for (uint64_t c = 1; c < 40; ++c) {
      EXPECT_EQ(SubGapBound(c, k, 0), -1);
      EXPECT_EQ(SubGapBound(c, k, c + 1), static_cast<int64_t>(k) - 1);
      for (uint64_t s = 0; s < k; ++s) {
        const uint64_t grown = before(c + 1, k, s) - before(c, k, s);
        ASSERT_LE(grown, 1u) << "K " << k << " c " << c << " s " << s;
      }
    }
  }
  const uint64_t k = kSplitSubPoints;
  SeededRandom rng(5);
  for (uint64_t c :
       {uint64_t{1}, uint64_t{3}, uint64_t{1} << 33, (uint64_t{1} << 53) - 2}) {
    for (int trial = 0; trial < 200; ++trial) {
      const uint64_t s = UniformInteger(rng, k);
      // Closed form of `before`: the h <= c with floor((2h - 1) K / 2c) < s.
      auto count = [&](uint64_t records) {
        uint64_t low = 0, high = records;  // answer in [low, high]
        while (low < high) {
          const uint64_t mid = low + (high - low + 1) / 2;
          if (SubGapBound(records, k, mid) < static_cast<int64_t>(s)) {
            low = mid;
          } else {
            high = mid - 1;
          }
        }
        return low;
      };
      const uint64_t grown = count(c + 1) - count(c);
      ASSERT_LE(grown, 1u) << c << " " << s;
    }
    // The sub-points are non-decreasing and inside [0, K).
    for (uint64_t h : {uint64_t{1}, c / 2 + 1, c}) {
      ASSERT_LE(SubGapBound(c, k, h), SubGapBound(c, k, h + 1));
      ASSERT_GE(SubGapBound(c, k, h), 0);
    }
  }
}

TEST(ExponentialQuantileTest, TargetsAreExactUpToTwoToThe53Records) {
  // q n 2^20 for n up to 2^53 - 1 (counted rows), formed exactly: the
  // rounding error is at most half a unit, 2^-21 of a rank.
  for (uint64_t n : {uint64_t{1}, uint64_t{1000}, uint64_t{1} << 43,
                     (uint64_t{1} << 53) - 1}) {
    for (double q : {0.5, 0.1, 0.999, 1e-9, 1.0 / 3.0, 1.0, 0.75, 1e-300,
                     std::numeric_limits<double>::denorm_min()}) {
      const std::vector<std::pair<int64_t, uint64_t>> one = {{0, n}};
      const RunsStore runs = RunsStore::FromPairs(one);
      const QuantileProblem problem = QuantileProblem::Whole(runs.view(), 1, q);
      const Uint128 target = problem.ScaledTarget();
      // |target - q n 2^20| <= 1/2, checked in long double near the value.
      const long double exact = static_cast<long double>(q) *
                                static_cast<long double>(n) * 1048576.0L;
      const long double got = static_cast<long double>(target);
      EXPECT_LE(std::fabs(got - exact), 0.5L + exact * 1e-18L) << n << " " << q;
      // Distances from it, as 128 bits would give them, capped at 2^63.
      EXPECT_EQ(problem.ScaledDistance(0, 0),
                std::min<Uint128>(target, kMaxScaledDistance));
    }
  }
}

// Draws points and compares their frequencies with the exact probabilities
// over every point of a small grid.
void CheckSamplerMatchesExact(const std::vector<double>& cells, int64_t steps,
                              double q, double epsilon, uint64_t seed,
                              int tail_margin = 64, int headroom = 64,
                              PointMeasure measure = PointMeasure()) {
  const OwnedProblem owned = Problem(cells, steps, q, measure);
  const QuantileProblem& problem = owned.problem;
  std::vector<double> probabilities;
  for (int64_t j = 0; j <= steps; ++j) {
    probabilities.push_back(std::exp(PointLogProbability(problem, epsilon, j)));
  }
  ExponentialQuantileSampler sampler(epsilon);
  sampler.set_tail_margin_bits(tail_margin);
  sampler.set_headroom(headroom);
  SeededRandom rng(seed);
  const int draws = 100000;
  std::vector<double> counts(steps + 1, 0);
  for (int i = 0; i < draws; ++i) {
    const int64_t j = sampler.SamplePoint(problem, rng);
    ASSERT_GE(j, 0);
    ASSERT_LE(j, steps);
    counts[j] += 1;
  }
  double df;
  const double statistic =
      testing::ChiSquare(counts, probabilities, draws, &df);
  EXPECT_LT(statistic, testing::ChiSquareCritical(df))
      << "q " << q << " eps " << epsilon << " df " << df;
}

TEST(ExponentialQuantileTest, SamplerMatchesExactProbabilities) {
  // Atoms, records at both ends, large and small epsilon.
  const std::vector<double> cells = {0, 2, 2, 5, 9, 9, 9, 14, 16};
  uint64_t seed = 100;
  for (double epsilon : {0.01, 0.7, 3.0, 20.0}) {
    for (double q : {0.1, 0.5, 0.8}) {
      CheckSamplerMatchesExact(cells, 16, q, epsilon, ++seed);
    }
  }
}

TEST(ExponentialQuantileTest, SamplerTailsAreExact) {
  // A margin of a few bits leaves much of the mass in groups, so draws go
  // through the bound-and-list path, and a headroom of 2 bits thins most
  // entries; the distribution must not change.
  std::vector<double> cells;
  for (int i = 0; i < 60; ++i) cells.push_back(2 * i + (i % 3 == 0 ? 1 : 0));
  uint64_t seed = 7;
  for (int margin : {0, 1, 3}) {
    CheckSamplerMatchesExact(cells, 130, 0.3, 0.9, ++seed, margin);
    CheckSamplerMatchesExact(cells, 130, 0.5, 0.2, ++seed, margin, 2);
  }
}

TEST(ExponentialQuantileTest, SamplerMatchesExactWithAShellMeasure) {
  // The base measure's weights enter every item, gap point and group.
  const std::vector<double> cells = {0, 2, 2, 5, 9, 9, 9, 14, 16};
  uint64_t seed = 500;
  for (const auto& [c_first, c_last] :
       std::vector<std::pair<uint32_t, uint32_t>>{{4, 1}, {1, 4}, {4, 4}}) {
    const PointMeasure measure = PointMeasure::Shells(0, 16, c_first, c_last);
    for (double epsilon : {0.01, 0.7, 3.0}) {
      CheckSamplerMatchesExact(cells, 16, 0.3, epsilon, ++seed, 64, 64,
                               measure);
    }
    CheckSamplerMatchesExact(cells, 16, 0.8, 0.5, ++seed, 1, 2, measure);
    CheckSamplerMatchesExact({}, 16, 0.5, 1.0, ++seed, 64, 64, measure);
  }
  // With a factor (AQ's look beside a bound): 2^4 down to 1 over 8 bins.
  const std::array<uint64_t, 8> f = {16, 16, 8, 4, 2, 1, 1, 1};
  const BinnedWeights factor(17, f.data(), 8);
  PointMeasure::FactorTable table;
  for (const PointMeasure& shells :
       {PointMeasure::Shells(0, 16, 16, 1),
        PointMeasure::Shells(0, 16, 16, 1, 1, 0, 0, 4)}) {
    const PointMeasure product = shells.WithFactor(&factor, &table);
    ASSERT_TRUE(product.has_factor());
    for (double epsilon : {0.01, 0.7, 3.0}) {
      CheckSamplerMatchesExact(cells, 16, 0.9, epsilon, ++seed, 64, 64,
                               product);
      CheckSamplerMatchesExact(cells, 16, 0.9, epsilon, ++seed, 1, 2, product);
    }
  }
  // Weights are what they say: with no records the draw is the measure.
  const PointMeasure measure = PointMeasure::Shells(0, 16, 4, 1);
  const std::vector<double> none;
  for (int64_t v = 0; v <= 16; ++v) {
    EXPECT_NEAR(PointLogProbability(Problem(none, 16, 0.5, measure), 1.0, v),
                std::log(static_cast<double>(measure.Weight(v)) /
                         static_cast<double>(measure.Mass(0, 16))),
                1e-12);
  }
}

TEST(ExponentialQuantileTest, NoRecordsGivesAUniformPoint) {
  const QuantileProblem problem = QuantileProblem::Whole(Runs(), 9, 0.5);
  for (int64_t j = 0; j <= 9; ++j) {
    EXPECT_NEAR(PointLogProbability(problem, 1.0, j), std::log(0.1), 1e-12);
  }
  CheckSamplerMatchesExact({}, 9, 0.5, 1.0, 11);
}

TEST(ExponentialQuantileTest, AllEqualRecordsWork) {
  const std::vector<double> cells(50, 7);
  CheckSamplerMatchesExact(cells, 12, 0.5, 2.0, 12);
}

// The split form's sampler against its exact (point, split) distribution.
void CheckSplitSamplerMatchesExact(const std::vector<double>& cells,
                                   int64_t steps, double q, double epsilon,
                                   uint64_t sub_points, uint64_t seed,
                                   PointMeasure measure = PointMeasure()) {
  const OwnedProblem owned = Problem(cells, steps, q, measure);
  const QuantileProblem& problem = owned.problem;
  const auto exact = SplitProbabilities(problem, epsilon, sub_points, false);
  std::map<std::pair<int64_t, uint64_t>, size_t> index;
  std::vector<double> probabilities;
  for (const auto& [output, p] : exact) {
    index[output] = probabilities.size();
    probabilities.push_back(p);
  }
  const ExponentialQuantileSampler sampler(epsilon, sub_points);
  SeededRandom rng(seed);
  const int draws = 100000;
  std::vector<double> counts(probabilities.size(), 0);
  for (int i = 0; i < draws; ++i) {
    const SplitPoint cut = sampler.SampleSplit(problem, rng);
    auto it = index.find({cut.point, cut.split});
    ASSERT_NE(it, index.end()) << cut.point << " " << cut.split;
    ASSERT_GT(probabilities[it->second], 0);
    counts[it->second] += 1;
  }
  double df;
  const double statistic =
      testing::ChiSquare(counts, probabilities, draws, &df);
  EXPECT_LT(statistic, testing::ChiSquareCritical(df))
      << "q " << q << " eps " << epsilon << " K " << sub_points;
}

TEST(ExponentialQuantileTest, SplitSamplerMatchesExactDistribution) {
  uint64_t seed = 300;
  const std::array<uint64_t, 4> f = {16, 4, 2, 1};  // a look's factor
  const BinnedWeights factor(7, f.data(), 4);
  PointMeasure::FactorTable table;
  for (uint64_t sub_points : {1, 2, 3}) {
    for (double epsilon : {0.5, 3.0}) {
      CheckSplitSamplerMatchesExact({1, 1, 1, 3}, 4, 0.5, epsilon, sub_points,
                                    ++seed);
      CheckSplitSamplerMatchesExact({0, 2, 2, 4}, 4, 0.3, epsilon, sub_points,
                                    ++seed);
      CheckSplitSamplerMatchesExact({0, 2, 2, 4}, 6, 0.3, epsilon, sub_points,
                                    ++seed, PointMeasure::Shells(0, 6, 4, 1));
      CheckSplitSamplerMatchesExact({1, 3}, 6, 0.6, epsilon, sub_points, ++seed,
                                    PointMeasure::Shells(0, 6, 1, 4));
      CheckSplitSamplerMatchesExact(
          {0, 2, 2, 4}, 6, 0.3, epsilon, sub_points, ++seed,
          PointMeasure::Shells(0, 6, 16, 1, -1, 0, 0, 4)
              .WithFactor(&factor, &table));
    }
  }
}

TEST(ExponentialQuantileTest, AnAtomHoldingTheTargetIsReleasedItself) {
  // 500 copies of point 40 among 1000 records in [0, 100] at eps = 1: the
  // median's target sits 250 ranks inside the atom.
  std::vector<double> cells;
  for (int i = 0; i < 1000; ++i) {
    cells.push_back(i % 2 == 0 ? 40 : (i < 500 ? i % 40 : 41 + i % 59));
  }
  std::sort(cells.begin(), cells.end());
  const OwnedProblem owned = Problem(cells, 100, 0.5);
  const QuantileProblem& problem = owned.problem;
  EXPECT_GT(PointLogProbability(problem, 1.0, 40), std::log(1 - 1e-9));
  // The split form cuts the atom near rank 500.
  const ExponentialQuantileSampler sampler(1.0);
  SeededRandom rng(5);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(sampler.SamplePoint(problem, rng), 40);
    const SplitPoint cut = sampler.SampleSplit(problem, rng);
    EXPECT_EQ(cut.point, 40);
    EXPECT_NEAR(static_cast<double>(cut.split), 500.0, 30.0);
  }
}

TEST(ExponentialQuantileTest, HugeAtomGivesNoNanAndNoBias) {
  // 10^4 copies of one point plus a few others, on the production grid, up
  // to an epsilon where every weight underflows in linear space.
  std::vector<double> cells(10000, 1e12);
  for (double c : {5.0, 7e11, 3e12, 4e15}) cells.push_back(c);
  std::sort(cells.begin(), cells.end());
  const int64_t steps = kMaxGridSteps;
  for (double epsilon : {0.01, 1.0, 100.0, 1e4}) {
    const OwnedProblem owned = Problem(cells, steps, 0.5);
    const QuantileProblem& problem = owned.problem;
    const ExponentialQuantileSampler sampler(epsilon);
    SeededRandom rng(13);
    int atom = 0;
    for (int i = 0; i < 500; ++i) {
      const int64_t j = sampler.SamplePoint(problem, rng);
      ASSERT_GE(j, 0);
      ASSERT_LE(j, steps);
      atom += j == 1e12;
      const SplitPoint cut = sampler.SampleSplit(problem, rng);
      ASSERT_LE(cut.split, cells.size());
    }
    const double p_atom = std::exp(PointLogProbability(problem, epsilon, 1e12));
    ASSERT_FALSE(std::isnan(p_atom));
    EXPECT_NEAR(atom / 500.0, p_atom, 0.08) << epsilon;
  }
}

}  // namespace
}  // namespace dpq
