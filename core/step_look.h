// The step look: the default's private guess at the data's resolution
// (issue 40; docs/algorithms/step-look.md).
//
// Whole-numbered or one-decimal columns released without a `step` lose
// their atoms on the default grid (10^-4 of a 0-100 range: a point between
// two whole numbers weighs as much as the whole number, and there are
// 10^4 of them). With `step` the same release is 2-5 times closer in
// value (Adult age and hours, n = 1,000). The default ('auto', no step,
// Default's decimal grid) therefore first spends kStepLookShare of its budget
// on a noisy histogram of how coarse a lattice each record sits on, picks a
// step from it, and releases on that step's grid as if the user had passed it
// (ResolveMethod's rule: AggTree or AQ), with the rest of the budget. Without a
// step found, AQ runs on the default grid with the rest.
//
// The histogram. The candidate steps are 10^(e + j), j = 1..J, for the
// default grid's 10^e: each a multiple of the last, with both bounds on
// it and at least kStepLookLeastSteps steps between them (public). A
// point's class is the largest j <= J whose step divides it (0: none).
// Cell c holds, over the occupied points of class c, min(records there,
// kStepLookCap): a large atom (zero-inflated data) counts as one point of
// kStepLookCap records, so it cannot make continuous data look stepped.
// The two bounds' points have a cell of their own, the last (J + 1):
// clamped records sit there on any data, so the choice lets them confirm
// what the values inside show, never show a lattice alone (StepLookChoice).
// Seattle precipitation (57% of days at its lower bound, 0 mm; the rest on
// 0.1 mm) at n = 1,000, epsilon = 1 found its step in 10% of releases with
// the bounds left out (the values inside fall short of the mark), 39% with
// them; under rho = 1/2 Adult capital gain in 59% -> 98%.
//
// Guarantee: the histogram with discrete Laplace noise of scale 1/e_s per
// cell is e_s-DP (discrete Gaussian of variance 1/(2 rho_s): rho_s-zCDP)
// under add/remove-one-record neighbours. Proof: adding a record changes
// the count of one point by one, so it changes min(count, cap) by 0 or 1,
// at one point, which lies in one cell (its class's, or the bounds'): one
// cell moves by at most 1 (L1 and L2 sensitivity 1). The step is a function of
// the noisy histogram alone (post-processing), and the release after it
// composes in sequence with its own share (the rest): e_s + e_rest = e, rho
// likewise. Per person the budget is the per-record one (plan.h), as for every
// method.
#ifndef DPQ_CORE_STEP_LOOK_H_
#define DPQ_CORE_STEP_LOOK_H_

#include <cstdint>
#include <vector>

#include "core/discrete_noise.h"
#include "core/prepare.h"
#include "core/runs.h"

namespace dpq {

// The share of the default's budget the step look spends. 2.5%: in the AQ
// paper's setting (no step to find) AQ's rank error at m = 10 goes 6.25 ->
// 6.30 (4,000 releases natively), and at n = 1,000, epsilon = 1 the look
// finds the step of Adult age, Goodreads pages and ratings and Seattle
// wind in 99-99.6% of releases (Adult hours 95%: few distinct values, so
// the cap holds its cells small). 3% cost more than the m = 10 target
// allows. Public; not privacy-relevant (any share composes).
constexpr double kStepLookShare = 0.025;
// The most records one point adds to its cell. 128, not 64: Adult hours
// (40 hours for 47% of the rows, nine multiples of 10 for most of the rest)
// found its step in 86% -> 95% of releases (n = 1,000, epsilon = 1); 80%
// zeros and 20% continuous still none in 1,000 releases at n = 300 to
// 10,000 (the atom adds 128 against about 190 off the lattice). Public;
// any value is private (the sensitivity is 1 for every cap).
constexpr int64_t kStepLookCap = 128;
// A cell counts when its noisy value passes this many noise scales (an
// empty cell's noise does so about once in 40); a step is taken only when
// the counted cells on its lattice pass kStepLookOnScales (pure noise
// there: below once in 10^5) and those off it hold at most
// kStepLookOffShare of all counted. Public; not privacy-relevant.
constexpr double kStepLookFoundScales = 3;
constexpr double kStepLookOnScales = 12;
constexpr double kStepLookOffShare = 0.2;
// The bounds' cell adds at most this share of what the values inside show
// on a lattice (StepLookChoice): those must pass 9 of the 12 scales
// themselves. Noise alone inside does so about 20 times as often as it
// passes 12, so beside a large atom at a bound (its cell passes), a few
// in 10^4 releases of pure noise inside take a step; with as much again
// (6 scales inside) 1-2% of releases of 99% zeros and 1% continuous values
// took a coarse step at epsilon = 10. Public; not privacy-relevant.
constexpr double kStepLookBoundsShare = 1.0 / 3;
// A candidate step leaves at least this many steps between the bounds,
// and there are at most kStepLookMostLevels candidates. Public.
constexpr int64_t kStepLookLeastSteps = 10;
constexpr int kStepLookMostLevels = 8;

// J, the candidate steps of `grid` (0: none, no step look): public.
int StepLookLevels(const OutputGrid& grid);
// The candidate step of level j in [1, J]: 10^(e + j).
double StepLookStep(const OutputGrid& grid, int level);
// The histogram's cells: classes 0..levels, then the bounds.
size_t StepLookCells(int levels);
// The histogram over classes 0..levels and the bounds (above) of the
// records of `runs`.
std::vector<int64_t> StepLookCounts(const Runs& runs, const OutputGrid& grid,
                                    int levels);
// The level chosen from a noisy histogram whose noise has scale (or
// standard deviation) `scale`: the largest j >= 1 where the counted cells
// at classes >= j (inside), plus the counted bounds' cell up to
// kStepLookBoundsShare of them, pass kStepLookOnScales scales, and the counted
// cells below j hold at most kStepLookOffShare of all counted inside; 0 for
// none. So the bounds' records (at most 2 kStepLookCap) never take a step
// alone, nor outweigh the values inside that lie off a lattice.
int StepLookChoice(const std::vector<int64_t>& noisy, double scale);
// Whether the noisy histogram says most values lie off every candidate
// lattice: class 0 holds at least kStepLookContinuousShare of the counted
// mass inside the bounds. Whole numbers or a large atom whose step the look
// missed (a few releases in a hundred on Adult hours) do not: the default then
// keeps AQ, which releases an atom as itself, where a tree would interpolate
// inside a leaf (methods.cc, RunAuto). Post-processing of the noisy histogram.
bool StepLookSawContinuous(const std::vector<int64_t>& noisy, double scale);
constexpr double kStepLookContinuousShare = 0.5;
// log P(the noisy histogram is `noisy` | runs), exactly (the noise's pmf
// per cell), for the privacy tests.
double StepLookLogProbability(const Runs& runs, const OutputGrid& grid,
                              int levels, const CountNoise& noise,
                              const std::vector<int64_t>& noisy);

}  // namespace dpq

#endif  // DPQ_CORE_STEP_LOOK_H_
