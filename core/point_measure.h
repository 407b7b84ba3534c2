// The exponential mechanism's base measure (exponential_quantile.h): a
// public integer weight per output point, uniform, or endpoint shells, or
// shells times a weight per bin (AQ's first look). Only public values shape
// it, so the mechanism's guarantee holds for each (the base measure cancels
// from every ratio of an output's probabilities on neighbours).
#ifndef DPQ_CORE_POINT_MEASURE_H_
#define DPQ_CORE_POINT_MEASURE_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/bits.h"

namespace dpq {

// End weights of the endpoint-shell measure (PointMeasure::Shells): an end
// that is a released value (AQ's cut) weighs 16, a public bound 1 (the
// records lie next to the cuts; a bound may be far from every record, and
// heavier shells there drew tail quantiles to it, but without any an atom
// on the bound is lost: docs/algorithms/aq.md). The shells hold
// kShellsToFlat times the flat part's mass, so the flat part is a fifth of
// the total. Public constants of the mechanism's definition; any values are
// private. At most 16 each: PointMeasure's masses then stay below 2^64.
constexpr uint32_t kReleasedEndWeight = 16;
constexpr uint32_t kBoundEndWeight = 1;
constexpr uint64_t kShellsToFlat = 4;
// A weight per bin of equal bins over the points [0, points - 1] (AQ's
// first look, aq.h): each below 2^32 (the split form's sizes) and with
// points x weight below 2^63, so every mass stays below 2^63. The look's
// evidence per bin goes up to 2^kMostBinWeightBits, which with at most
// 2^52 + 1 points is the most any grid allows. Public values only.
constexpr int kMostBinWeightBits = 10;
// The most bins (a fixed array: a grouped release builds one set of
// weights a group, with no allocation).
constexpr int kMostBins = 16;
// A measure's mass before a point and the point's weight.
struct PrefixWeight {
  uint64_t prefix;
  uint64_t weight;
};
class BinnedWeights {
 public:
  BinnedWeights() = default;
  // `weights[0..bins)` (1 <= bins <= kMostBins; each 1 .. 2^31, points x
  // weight below 2^63) over `points` points, at most one bin a point.
  BinnedWeights(int64_t points, const uint64_t* weights, int bins) {
    Assign(points, weights, bins);
  }
  // The same in place (a look's weights are rebuilt per group; a
  // temporary and its copy cost more than the building).
  void Assign(int64_t points, const uint64_t* weights, int bins);
  // The same over `shape`'s points and bins, its edges copied rather than
  // divided again (a grouped release's groups share one grid).
  void Assign(const BinnedWeights& shape, const uint64_t* weights);
  int64_t points() const { return points_; }

  int bins() const { return bins_; }
  // Bin b covers the points [Edge(b), Edge(b + 1) - 1].
  int64_t Edge(int bin) const { return edges_[static_cast<size_t>(bin)]; }
  static int64_t EdgeOf(int bin, int bins, int64_t points) {
    return static_cast<int64_t>(static_cast<uint64_t>(bin) *
                                static_cast<uint64_t>(points) /
                                static_cast<uint64_t>(bins));
  }
  // The bin of a point of [0, points - 1]: the last b with Edge(b) <= p.
  // (One division: a floating-point guess corrected against the edges
  // took longer natively.)
  DPQ_HOT_INLINE int BinOf(int64_t point) const {
    const uint64_t scaled =
        (static_cast<uint64_t>(point) + 1) * static_cast<uint64_t>(bins_) - 1;
    return static_cast<int>(scaled / static_cast<uint64_t>(points_));
  }
  DPQ_HOT_INLINE uint64_t WeightOf(int64_t point) const {
    return Weight(BinOf(point));
  }
  uint64_t Weight(int bin) const { return weights_[static_cast<size_t>(bin)]; }
  // {Before(x), WeightOf(x)} for a point x of [0, points - 1].
  DPQ_HOT_INLINE PrefixWeight BeforeAndWeight(int64_t x) const {
    const int b = BinOf(x);
    const uint64_t w = Weight(b);
    return {before_[static_cast<size_t>(b)] +
                static_cast<uint64_t>(x - Edge(b)) * w,
            w};
  }
  // The mass of the points below x, for x in [0, points].
  uint64_t Before(int64_t x) const {
    if (x >= points_) return before_[static_cast<size_t>(bins_)];
    const int b = BinOf(x);
    return before_[static_cast<size_t>(b)] +
           static_cast<uint64_t>(x - Edge(b)) *
               weights_[static_cast<size_t>(b)];
  }

 private:
  void SetWeights(const uint64_t* weights);  // and the masses below edges

  int64_t points_ = 1;
  int bins_ = 1;
  std::array<int64_t, kMostBins + 1> edges_ = {0, 1};  // EdgeOf each bin
  std::array<uint64_t, kMostBins> weights_ = {1};
  std::array<uint64_t, kMostBins + 1> before_ = {0, 1};  // mass below edges
};

// A measure's factor (PointMeasure::WithFactor): a weight per bin, each a
// power of two up to 2^kMostFactorBits, multiplying endpoint shells on
// grids of at most 2^(kMostFactorShellBits + 1) - 1 points (there the
// shells' weights stay below 2^28, so the products stay below 2^32 and
// every mass far below 2^64; larger grids keep the shells alone). Public;
// not privacy-relevant.
constexpr int kMostFactorBits = 4;
constexpr int kMostFactorShellBits = 22;

// Shells nearer an end than 2^-26 of the range share one weight, which keeps
// every weight below 2^32 and every mass below 2^64 (end weights <= 16).
// Not privacy-relevant.
constexpr int kMostShellBits = 26;
// Beyond an end's reach its shells' masses fall by 2^kReachDecayBits per
// shell (per doubling of the distance). Public; not privacy-relevant.
constexpr int kReachDecayBits = 2;

// The base measure of the mechanism: a positive integer weight per output
// point of [first, last], so an output's probability is proportional to
// weight x exp(utility rate). It depends only on public values (the output
// range and its ends' kinds), never on the records, so the guarantee holds
// for every such measure (McSherry and Talwar's proof with a base measure).
//
// Uniform: weight 1. Endpoint shells: with M = last - first + 1 points and
// K = floor(log2 M), the points at distance d from an end fall in shell
// k = floor(log2(d + 1)), which has 2^k points of weight 2^(K - k) each, so
// every shell holds the same mass: a stretch beside an end gets the same
// share at every scale. An output point's weight is
//   w(p) = U + c_first e(p - first) + c_last e(last - p),  e(d) = 2^(K - k),
// with U = floor((c_first + c_last) E / (kShellsToFlat M)), E the mass of
// one end's shells, so the flat part holds a fifth of the total (at most;
// U >= 1). Why: an exponential
// mechanism weighs a gap by its width, so with loose bounds a quantile of few
// records (AQ's deepest nodes, a tail) lands anywhere in a wide empty stretch;
// AQ's nodes end at released values, next to which their records lie, and a
// shell measure puts a fixed share of the mass there at every scale
// (docs/algorithms/aq.md measures it). With more than 2^26 points the
// innermost shells merge (kMostShellBits).
class PointMeasure {
 public:
  PointMeasure() = default;  // uniform
  // Endpoint shells over [first, last]; 0 turns an end off (both 0, or
  // last < first: uniform). A reach r >= 0 for an end (a shell index, from
  // public values only) divides the mass of each of that end's shells
  // beyond shell r by 2^kReachDecayBits per shell, so its mass decays with
  // distance instead of staying equal per shell, and with a reach an end's
  // `drop` divides all its weights by 2^drop; with any reach the flat part
  // is 1 per point. -1: no reach (and no drop).
  static PointMeasure Shells(int64_t first, int64_t last, uint32_t first_weight,
                             uint32_t last_weight, int first_reach = -1,
                             int last_reach = -1, int first_drop = 0,
                             int last_drop = 0);

  // Binned weights (AQ's first look): weight bins->WeightOf(p) over
  // [first, last]. `bins` is not owned and must outlive the measure.
  static PointMeasure Binned(int64_t first, int64_t last,
                             const BinnedWeights* bins);

  // These endpoint shells times `factor`'s weight of each point's bin
  // (AQ's first look: bins beyond the span it found weigh less), where the
  // shells and the grid allow it (kMostFactorShellBits; factor weights are
  // powers of two up to 2^kMostFactorBits); else this measure unchanged.
  // `factor` is not owned and must outlive the measure.
  // `table` receives the masses before each bin; the measure reads it and
  // it must outlive the measure (a measure stays small: problems are
  // copied in every draw).
  using FactorTable = std::array<uint64_t, kMostBins + 1>;
  PointMeasure WithFactor(const BinnedWeights* factor,
                          FactorTable* table) const;

  bool uniform() const {
    return first_weight_ == 0 && last_weight_ == 0 && bins_ == nullptr;
  }
  bool has_factor() const { return factor_ != nullptr; }
  // w(p) for a point of [first, last].
  DPQ_HOT_INLINE uint64_t Weight(int64_t point) const {
    if (factor_ != nullptr) return ShellsWeight(point) * FactorOf(point);
    if (bins_ != nullptr) return bins_->WeightOf(point);
    if (uniform()) return 1;
    return ShellsWeight(point);
  }
  // The sum of w over [from, to] (0 when to < from); below 2^64.
  uint64_t Mass(int64_t from, int64_t to) const {
    return to < from ? 0 : Prefix(to + 1) - Prefix(from);
  }
  // Mass(first, x - 1) for x in [first, last + 1], up to a constant (mod
  // 2^64) for the uniform and binned measures: only differences are
  // meaningful. Walkers keep the prefix at their edge, so a segment's mass
  // costs one call.
  DPQ_HOT_INLINE uint64_t Prefix(int64_t x) const {
    if (factor_ != nullptr) {
      // The factor's bins before x's whole, then x's bin's part.
      if (x > last_) return factor_before_[factor_bins_];
      const int b = factor_->BinOf(x) - factor_first_bin_;
      const int64_t start =
          std::max(first_, factor_->Edge(factor_first_bin_ + b));
      return factor_before_[static_cast<size_t>(b)] +
             (ShellsPrefix(x) - ShellsPrefix(start)) * FactorOf(x);
    }
    if (bins_ != nullptr) return bins_->Before(x);
    if (uniform()) return static_cast<uint64_t>(x - first_);
    return ShellsPrefix(x);
  }
  // {Prefix(x), Weight(x)} for a point x of [first, last]: binned weights
  // find x's bin once for both (a division each, where the split form's
  // edges ask for both at once).
  DPQ_HOT_INLINE PrefixWeight PrefixAndWeight(int64_t x) const {
    if (factor_ == nullptr && bins_ != nullptr)
      return bins_->BeforeAndWeight(x);
    return {Prefix(x), Weight(x)};
  }
  // The point p of [from, to] with Mass(from, p - 1) <= offset <
  // Mass(from, p), for offset < Mass(from, to): drawing offset uniformly
  // draws p with probability w(p) / Mass(from, to).
  int64_t PointAt(int64_t from, int64_t to, uint64_t offset) const;

 private:
  DPQ_HOT_INLINE uint64_t ShellsWeight(int64_t point) const {
    return flat_ +
           first_weight_ *
               ShellWeight(point - first_, first_reach_, first_drop_) +
           last_weight_ * ShellWeight(last_ - point, last_reach_, last_drop_);
  }
  DPQ_HOT_INLINE uint64_t ShellsPrefix(int64_t x) const {
    const uint64_t before = static_cast<uint64_t>(x - first_);
    return flat_ * before +
           first_weight_ * SideMass(x - first_, first_reach_, first_drop_) +
           last_weight_ *
               (last_total_ - SideMass(last_ - x + 1, last_reach_, last_drop_));
  }
  DPQ_HOT_INLINE uint64_t FactorOf(int64_t point) const {
    return factor_->WeightOf(point);
  }
  // PointAt without the factor (shells, bins or uniform).
  int64_t BasePointAt(int64_t from, int64_t to, uint64_t offset) const;
  // e(d) for an end with reach `reach`, and the mass of that end's first
  // `cells` points.
  DPQ_HOT_INLINE uint64_t ShellWeight(int64_t distance, int reach,
                                      int drop) const {
    return ShellWeightAt(BitWidth(static_cast<uint64_t>(distance) + 1) - 1,
                         reach, drop);
  }
  // e(d) for the points of shell k (any k <= shift_ alike: a reach starts
  // past shift_).
  DPQ_HOT_INLINE uint64_t ShellWeightAt(int k, int reach, int drop) const {
    const int exponent =
        top_ - (k > shift_ ? k - shift_ : 0) -
        (reach >= 0 && k > reach ? kReachDecayBits * (k - reach) : 0) - drop;
    return exponent < 0 ? 0 : uint64_t{1} << exponent;
  }
  DPQ_HOT_INLINE uint64_t SideMass(int64_t cells, int reach, int drop) const {
    if (cells <= 0) return 0;
    if (reach >= 0) return ReachedSideMass(cells, reach, drop);
    const auto x = static_cast<uint64_t>(cells);
    const int k = BitWidth(x) - 1;  // the shell of the last point counted
    if (k <= shift_) return x << top_;
    // Shells 0..shift_ at the top weight, shift_ + 1..k - 1 at 2^K each,
    // then part of shell k.
    return (((uint64_t{1} << (shift_ + 1)) - 1) << top_) +
           static_cast<uint64_t>(k - 1 - shift_) * (uint64_t{1} << whole_) +
           ((x - (uint64_t{1} << k) + 1) << (whole_ - k));
  }

  // SideMass with a reach: shell by shell (at most K + 1 of them).
  uint64_t ReachedSideMass(int64_t cells, int reach, int drop) const;

  int64_t first_ = 0;
  int64_t last_ = 0;
  const BinnedWeights* bins_ = nullptr;  // Binned; else nullptr
  uint64_t flat_ = 1;                    // U
  uint64_t last_total_ = 0;  // the last end's shells over all M points
  int first_reach_ = -1;
  int last_reach_ = -1;
  int first_drop_ = 0;
  int last_drop_ = 0;
  uint64_t first_weight_ = 0;
  uint64_t last_weight_ = 0;
  int whole_ = 0;  // K
  int top_ = 0;    // min(K, kMostShellBits)
  int shift_ = 0;  // K - top_: shells 0..shift_ share the top weight
  // WithFactor: the factor, the bins [factor_first_bin_, + factor_bins_)
  // that hold [first, last], and the mass before each of them (from
  // first; the last entry the total).
  const BinnedWeights* factor_ = nullptr;
  const uint64_t* factor_before_ = nullptr;
  int factor_first_bin_ = 0;
  int factor_bins_ = 0;
};

}  // namespace dpq

#endif  // DPQ_CORE_POINT_MEASURE_H_
