#include "core/point_measure.h"

#include <algorithm>
#include <cstdint>

#include "core/bits.h"

namespace dpq {
namespace {

// floor(a / b), b >= 1: below 2^52 by a double division (a 64-bit
// division takes several times as long), else by the division. Exact: a
// and b are exact doubles, and if a = k b - r with 1 <= r < b, a / b lies
// r / b >= 1 / b below k while the division's rounding error is at most
// k 2^-53 = (a + r) 2^-53 / b < r / b (a < 2^52), so the rounded quotient
// stays below k; rounding is monotone and k - 1 is a double, so it stays
// at or above k - 1.
uint64_t Quotient(uint64_t a, uint64_t b) {
  if (a >= (uint64_t{1} << 52)) return a / b;
  return static_cast<uint64_t>(static_cast<double>(a) / static_cast<double>(b));
}

}  // namespace

PointMeasure PointMeasure::Shells(int64_t first, int64_t last,
                                  uint32_t first_weight, uint32_t last_weight,
                                  int first_reach, int last_reach,
                                  int first_drop, int last_drop) {
  PointMeasure m;
  m.first_ = first;
  m.last_ = last;
  // (points == 0 only when last < first; the analyzer cannot tell.)
  const uint64_t points = static_cast<uint64_t>(last - first) + 1;
  if (last < first || points == 0 || (first_weight == 0 && last_weight == 0)) {
    return m;
  }
  m.first_weight_ = first_weight;
  m.last_weight_ = last_weight;
  m.whole_ = BitWidth(points) - 1;
  m.top_ = std::min(m.whole_, kMostShellBits);
  m.shift_ = m.whole_ - m.top_;
  // Shells 0..shift_ are one piece (PointAt): a reach starts past them.
  m.first_reach_ = first_reach < 0 ? -1 : std::max(first_reach, m.shift_);
  m.last_reach_ = last_reach < 0 ? -1 : std::max(last_reach, m.shift_);
  if (m.first_reach_ >= 0) m.first_drop_ = first_drop;
  if (m.last_reach_ >= 0) m.last_drop_ = last_drop;
  m.last_total_ =
      m.SideMass(static_cast<int64_t>(points), m.last_reach_, m.last_drop_);
  if (m.first_reach_ >= 0 || m.last_reach_ >= 0) {
    // The decaying shells are the point: no flat part spread over the
    // stretch they leave (1, so every weight stays positive).
    m.flat_ = 1;
    return m;
  }
  // A fifth flat: U M = (c_first + c_last) E / 4. No overflow: E <= 54
  // 2^52 < 2^57.76 (at most K + 2 <= 54 shells of mass 2^K), the end
  // weights are at most 16 each, so the product is below 2^62.76 and the
  // total mass, 5/4 of it, below 2^63.1; M is at least 1 and at most
  // 2^52 + 1.
  const uint64_t ends = m.first_weight_ + m.last_weight_;
  const uint64_t shells = ends * m.last_total_;
  m.flat_ = std::max<uint64_t>(1, shells / (kShellsToFlat * points));
  return m;
}

uint64_t PointMeasure::ReachedSideMass(int64_t cells, int reach,
                                       int drop) const {
  // Shell k holds the distances [2^k - 1, 2^(k+1) - 2] (2^k points), each
  // of weight 2^e(k) while e(k) >= 0, else 0, with reach >= shift_ (Shells)
  //   e(k) = top_ - drop                       for k <= shift_,
  //          whole_ - drop - k                 for shift_ < k <= reach,
  //          whole_ - drop - k - d (k - reach) past the reach
  // (d = kReachDecayBits). A full shell's mass 2^(k + e(k)) doubles per
  // shell, then stays 2^(whole_ - drop), then falls 2^d-fold per shell:
  // three geometric sums
  // (in one call instead of a loop over up to K shells; every draw's listing
  // asks for several), then the part of the last shell the cells reach.
  // e(k) only falls with k, so the shells from the first with e(k) < 0 on
  // are all 0.
  const auto x = static_cast<uint64_t>(cells);
  const int high = whole_ - drop;  // the mass exponent between shift_ and reach
  auto exponent = [&](int k) {
    if (k <= shift_) return top_ - drop;
    return high - k - (k > reach ? kReachDecayBits * (k - reach) : 0);
  };
  // The first shell weighing 0 (x < 2^(whole_ + 1) reaches shell whole_ at
  // most, so any later bound is the same).
  int zero = 0;
  if (top_ - drop >= 0) {
    if (high < reach) {
      zero = high + 1;  // within (shift_, reach]: e(k) = high - k
    } else {
      // Past the reach: k (1 + kReachDecayBits) <= high + 2 reach.
      zero = (high + kReachDecayBits * reach) / (1 + kReachDecayBits) + 1;
    }
  }
  const int last = BitWidth(x) - 1;       // the shell of the last cell counted
  const int full = std::min(last, zero);  // shells [0, full) counted whole
  uint64_t total = 0;
  // Shells [0, min(full, shift_ + 1)): 2^(top_ - drop) (2^count - 1).
  const int rising = std::min(full, shift_ + 1);
  if (rising > 0) {
    total += ((uint64_t{1} << rising) - 1) << (top_ - drop);
  }
  // Shells [shift_ + 1, min(full, reach + 1)): 2^high each.
  const int level = std::min(full, reach + 1) - (shift_ + 1);
  if (level > 0) total += static_cast<uint64_t>(level) << high;
  // Shells [reach + 1, full): masses 2^(high - d j), j = 1..count, with
  // d = kReachDecayBits, summing to 2^(the last's) (2^(d count) - 1) /
  // (2^d - 1). (d count <= high <= 52: the last's exponent is >= 0.)
  const int falling = full - (reach + 1);
  if (falling > 0) {
    const int least = (full - 1) + exponent(full - 1);  // high - d falling
    const uint64_t steps = (uint64_t{1} << (kReachDecayBits * falling)) - 1;
    total += (steps / ((uint64_t{1} << kReachDecayBits) - 1)) << least;
  }
  if (last < zero && x > 0) {
    const uint64_t start = (uint64_t{1} << last) - 1;
    total += (x - start) << exponent(last);
  }
  return total;
}

void BinnedWeights::Assign(int64_t points, const uint64_t* weights, int bins) {
  points_ = points;
  bins_ = std::min(std::max(bins, 1), kMostBins);
  for (int b = 0; b <= bins_; ++b) {
    edges_[static_cast<size_t>(b)] = EdgeOf(b, bins_, points_);
  }
  SetWeights(weights);
}

void BinnedWeights::Assign(const BinnedWeights& shape,
                           const uint64_t* weights) {
  points_ = shape.points_;
  bins_ = shape.bins_;
  edges_ = shape.edges_;
  SetWeights(weights);
}

void BinnedWeights::SetWeights(const uint64_t* weights) {
  before_[0] = 0;
  for (int b = 0; b < bins_; ++b) {
    const auto i = static_cast<size_t>(b);
    weights_[i] = weights[i];
    before_[i + 1] =
        before_[i] + static_cast<uint64_t>(Edge(b + 1) - Edge(b)) * weights_[i];
  }
}

PointMeasure PointMeasure::Binned(int64_t first, int64_t last,
                                  const BinnedWeights* bins) {
  PointMeasure m;
  m.first_ = first;
  m.last_ = last;
  if (last >= first) m.bins_ = bins;
  return m;
}

PointMeasure PointMeasure::WithFactor(const BinnedWeights* factor,
                                      FactorTable* table) const {
  PointMeasure m = *this;
  if (factor == nullptr || bins_ != nullptr || uniform() ||
      factor_ != nullptr || whole_ > kMostFactorShellBits || last_ < first_) {
    return m;
  }
  // One factor over the whole stretch scales every weight alike: the same
  // draws, so the plain shells (a node inside the found span).
  const int first_bin = factor->BinOf(first_);
  const int last_bin = factor->BinOf(last_);
  bool constant = true;
  for (int b = first_bin + 1; b <= last_bin && constant; ++b) {
    constant = factor->WeightOf(factor->Edge(b)) == factor->WeightOf(first_);
  }
  if (constant) return m;
  m.factor_ = factor;
  m.factor_before_ = table->data();
  m.factor_first_bin_ = first_bin;
  m.factor_bins_ = last_bin - first_bin + 1;
  // Mass before each bin: a bin's shells' mass times its weight. The
  // shells' weights stay below 2^28 here (top_ = K <= 22, end weights 16,
  // a flat part of at most a few hundred), so each product is below 2^32
  // and the total below 2^23 2^32.
  uint64_t total = 0;
  for (int b = 0; b < m.factor_bins_; ++b) {
    const int bin = m.factor_first_bin_ + b;
    const int64_t start = std::max(first_, factor->Edge(bin));
    const int64_t end = std::min(last_ + 1, factor->Edge(bin + 1));
    (*table)[static_cast<size_t>(b)] = total;
    total +=
        (ShellsPrefix(end) - ShellsPrefix(start)) * factor->WeightOf(start);
  }
  (*table)[static_cast<size_t>(m.factor_bins_)] = total;
  return m;
}

int64_t PointMeasure::PointAt(int64_t from, int64_t to, uint64_t offset) const {
  if (factor_ == nullptr) return BasePointAt(from, to, offset);
  // Bin by bin: within one the factor is one power of two, so the offset
  // in shells' mass is the quotient (the point p with f S(p - 1) <= offset
  // < f S(p) has S(p - 1) <= floor(offset / f) < S(p), S integer).
  int64_t p = from;
  while (p < to) {
    const int64_t end = std::min(to, factor_->Edge(factor_->BinOf(p) + 1) - 1);
    const uint64_t f = FactorOf(p);
    const uint64_t shells = ShellsPrefix(end + 1) - ShellsPrefix(p);
    if (offset < shells * f) return BasePointAt(p, end, offset / f);
    offset -= shells * f;
    p = end + 1;
  }
  return to;
}

int64_t PointMeasure::BasePointAt(int64_t from, int64_t to,
                                  uint64_t offset) const {
  if (uniform()) return from + static_cast<int64_t>(offset);
  if (bins_ != nullptr) {
    // Bin by bin, the bins counted rather than found by a division a piece.
    int b = bins_->BinOf(from);
    int64_t p = from;
    while (p < to) {
      const int64_t end = std::min(to, bins_->Edge(b + 1) - 1);
      const uint64_t weight = bins_->Weight(b);
      const uint64_t mass = (static_cast<uint64_t>(end - p) + 1) * weight;
      if (offset < mass)
        return p + static_cast<int64_t>(Quotient(offset, weight));
      offset -= mass;
      p = end + 1;
      ++b;
    }
    return to;
  }
  // Shell piece by shell piece: the weight is constant between shell
  // boundaries from either end (shells 0..shift_ are one piece), so each
  // piece is skipped or entered in O(1), and the next one's shells follow
  // from this one's without a search; a gap crosses few of them.
  int64_t p = from;
  int k_first =
      std::max(BitWidth(static_cast<uint64_t>(p - first_) + 1) - 1, shift_);
  int k_last = BitWidth(static_cast<uint64_t>(last_ - p) + 1) - 1;
  uint64_t w_first =
      first_weight_ * ShellWeightAt(k_first, first_reach_, first_drop_);
  uint64_t w_last =
      last_weight_ * ShellWeightAt(k_last, last_reach_, last_drop_);
  while (p < to) {
    // The last points of p's shell from the first end and from the last.
    const int64_t first_end = first_ + (int64_t{2} << k_first) - 2;
    const int64_t last_end =
        k_last <= shift_ ? last_ : last_ - (int64_t{1} << k_last) + 1;
    const int64_t end = std::min(to, std::min(first_end, last_end));
    const uint64_t weight = flat_ + w_first + w_last;
    // The piece's mass is below 2^64 (every mass is); comparing with it
    // divides only in the piece that holds the offset.
    const uint64_t mass = (static_cast<uint64_t>(end - p) + 1) * weight;
    if (offset < mass)
      return p + static_cast<int64_t>(Quotient(offset, weight));
    offset -= mass;
    p = end + 1;
    if (end == first_end) {
      ++k_first;
      w_first =
          first_weight_ * ShellWeightAt(k_first, first_reach_, first_drop_);
    }
    if (end == last_end) {
      --k_last;
      w_last = last_weight_ * ShellWeightAt(k_last, last_reach_, last_drop_);
    }
  }
  return to;
}

}  // namespace dpq
