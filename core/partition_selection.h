// Private key selection (DESIGN.md, "Groups"): which groups of a grouped
// release appear, when the keys are not public. A key appears only if a
// noisy count of its rows (or, per person, of its people) reaches a public
// threshold: Laplace thresholding, as PipelineDP and Google's DP libraries
// select partitions (Korolova et al. 2009; Desfontaines, Voss, Gipson and
// Mandayam, "Differentially private partition selection", PoPETS 2022),
// here with the exact discrete Laplace of discrete_noise.h.
//
// Guarantee: (epsilon, delta)-DP under adding or removing one record, or,
// per person, one person who counts in at most g keys (their rows bounded
// first, groups.h). Proof sketch: let x' be x with one person (or record)
// added; the person adds 1 to the count of each of at most g keys.
//  - Keys that exist in x: their noisy counts are c + Z with Z discrete
//    Laplace of scale b >= g / epsilon, so each moves by at most 1 and its
//    probability of any outcome by at most e^(1/b) <= e^(epsilon/g); over g
//    keys, at most e^epsilon (the keys' noise is independent, and keys the
//    person does not touch are identical).
//  - Keys new in x' (count 1 in x', absent in x, never output from x): each
//    appears with probability P(1 + Z >= T) = e^(-(T - 1)/b) / (1 +
//    e^(-1/b)) <= delta / g, so any of them appears with probability at
//    most delta. Outside that event the outputs compare as above.
// So the selected set is (epsilon, delta)-DP; the releases of the selected
// groups then compose sequentially with it (groups.h).
#ifndef DPQ_CORE_PARTITION_SELECTION_H_
#define DPQ_CORE_PARTITION_SELECTION_H_

#include <cstdint>
#include <vector>

#include "core/discrete_noise.h"
#include "core/random.h"
#include "core/status.h"

namespace dpq {

// The selection's public parameters: the noise scale (a rational at least
// g / epsilon) and the threshold T a noisy count must reach.
struct SelectionPlan {
  Rational scale;
  int64_t threshold = 0;
  double epsilon = 0;
  double delta = 0;
  int64_t max_groups = 1;
  // The most a person adds to one key's count: 1 when people are counted,
  // k when their rows are (counts bounded upstream to k a key).
  int64_t per_key = 1;
};

// The plan for `epsilon` (the selection's share), `delta` in (0, 1) and a
// person counting in at most `max_groups` keys, adding at most `per_key` to
// each (the scale is then max_groups per_key / epsilon, and the proof above
// holds with c + per_key for c + 1): the smallest whole T with
// P(per_key + Z >= T) <= delta / max_groups for the scale used (computed with a
// relative margin of 2^-40 over the floating-point logarithm, so never
// below the exact one). INVALID_PRIVACY for a bad epsilon or delta.
StatusOr<SelectionPlan> PlanSelection(double epsilon, double delta,
                                      int64_t max_groups, int64_t per_key = 1);

// One noisy count per key, in order, from `rng`: 1 where count + Z reaches
// the threshold, else 0. Keys with a count of 0 are not in the data and
// never selected (they are absent, not counted).
// With `noisy`, also each key's noisy count (0 for a key not in the data):
// releasing c + Z for the selected keys is covered by the proof above,
// which bounds every value of c + Z.
std::vector<uint8_t> SelectKeys(const std::vector<uint64_t>& counts,
                                const SelectionPlan& plan, RandomSource& rng,
                                std::vector<int64_t>* noisy = nullptr);

// The exact probability that a key of count c >= 1 is selected (long
// double, from the discrete Laplace's closed form): for the privacy tests.
long double SelectionProbability(uint64_t count, const SelectionPlan& plan);
// 1 minus that, computed without cancellation.
long double SelectionComplement(uint64_t count, const SelectionPlan& plan);

}  // namespace dpq

#endif  // DPQ_CORE_PARTITION_SELECTION_H_
