// AppIndExp: m independent single-quantile exponential mechanisms (the
// atom-aware form of exponential_quantile.h, sensitivity max(q, 1 - q)), one
// per quantile, on the whole dataset (the AQ paper's baseline, Section 4.1;
// Gillenwater, Joseph and Kulesza 2021).
//
// Guarantee, add/remove-one-record neighbours: each mechanism is e-DP and
// e-bounded-range (exponential_quantile.h), and the m of them compose:
//  - pure: e = epsilon / m, basic composition, epsilon-DP;
//  - (epsilon, delta): e from the optimal composition of m non-adaptive
//    exponential mechanisms (Dong, Durfee and Rogers 2020, Theorem 3);
//  - zCDP: e = sqrt(8 rho / m), each e^2/8-zCDP, rho-zCDP in total.
// The m draws are independent and sorted afterwards (post-processing).
#ifndef DPQ_CORE_APP_IND_EXP_H_
#define DPQ_CORE_APP_IND_EXP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/random.h"
#include "core/runs.h"

namespace dpq {

// One point per quantile (strictly increasing quantiles), sorted, from
// `runs`: the records on a grid with `steps` steps.
std::vector<int64_t> SampleAppIndExp(const Runs& runs, int64_t steps,
                                     const std::vector<double>& quantiles,
                                     double epsilon_each, RandomSource& rng);

}  // namespace dpq

#endif  // DPQ_CORE_APP_IND_EXP_H_
