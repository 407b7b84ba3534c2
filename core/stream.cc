#include "core/stream.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/dp_exp_gk.h"
#include "core/dp_hist_gk.h"
#include "core/prepare.h"
#include "core/privacy.h"
#include "core/random.h"

namespace dpq {

StatusOr<QuantileStream> QuantileStream::Create(const StreamOptions& options) {
  Status status = ValidateBounds(options.lower, options.upper);
  if (!status.ok()) return status;
  const int64_t steps =
      OutputGrid::ForBounds(options.lower, options.upper).steps();
  status = ValidateGkParameters(options.alpha, options.bins, steps);
  if (!status.ok()) return status;
  return QuantileStream(GkSketch(options.lower, options.upper, options.alpha,
                                 static_cast<int64_t>(options.bins)));
}

StatusOr<QuantileStream> QuantileStream::Deserialize(const uint8_t* bytes,
                                                     size_t size) {
  StatusOr<GkSketch> sketch = GkSketch::Deserialize(bytes, size);
  if (!sketch.ok()) return sketch.status();
  return QuantileStream(std::move(sketch.value()));
}

Status QuantileStream::Push(const double* values, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    // Validate the whole chunk first: a bad chunk adds nothing.
    if (!std::isfinite(values[i])) {
      return Status(StatusCode::kNonFiniteValue,
                    "value at index " + std::to_string(i) +
                        " of the chunk is " +
                        (std::isnan(values[i]) ? "NaN" : "infinite") +
                        "; nothing of this chunk was added");
    }
  }
  if (static_cast<double>(sketch_.count()) + static_cast<double>(count) >
      static_cast<double>(uint64_t{1} << 53)) {
    return Status(StatusCode::kTooLarge, "a stream holds at most 2^53 values");
  }
  const OutputGrid grid =
      OutputGrid(sketch_.lower(), sketch_.upper(), sketch_.steps());
  for (size_t i = 0; i < count; ++i) {
    const double x =
        std::min(std::max(values[i], sketch_.lower()), sketch_.upper());
    sketch_.Insert(grid.CellOf(x));
  }
  return Status::Ok();
}

StatusOr<ReleaseReport> QuantileStream::Release(
    const StreamReleaseRequest& request, double* out, PrivacySession* session) {
  const bool exp_gk = request.method == "exp-gk";
  if (!exp_gk && request.method != "hist-gk") {
    return Status(StatusCode::kUnknownMethod,
                  "unknown stream method '" + request.method +
                      "'; available: 'exp-gk', 'hist-gk'");
  }
  int64_t bins = sketch_.bins();
  // A public step: each released value moves to its nearest point
  // lower + k step (post-processing), printed as that decimal (prepare.h).
  std::optional<OutputGrid> step_grid;
  for (const auto& option : request.options) {
    if (option.first == "step") {
      StatusOr<OutputGrid> grid =
          OutputGrid::WithStep(sketch_.lower(), sketch_.upper(), option.second);
      if (!grid.ok()) return grid.status();
      step_grid = grid.value();
      continue;
    }
    if (option.first != "bins" || exp_gk) {
      return Status(StatusCode::kInvalidOption,
                    "option '" + option.first + "' does not apply to method '" +
                        request.method + "'" +
                        (exp_gk ? " (it takes only 'step')"
                                : " (it takes 'bins' and 'step')"));
    }
    const double value = option.second;
    if (!(value >= 1) || value != std::floor(value) ||
        value > static_cast<double>(sketch_.bins()) ||
        sketch_.bins() % static_cast<int64_t>(value) != 0) {
      return Status(StatusCode::kInvalidOption,
                    "bins must be a whole number dividing the stream's " +
                        std::to_string(sketch_.bins()) + " bins");
    }
    bins = static_cast<int64_t>(value);
  }
  Status status =
      ValidateQuantiles(request.quantiles.data(), request.quantiles.size());
  if (!status.ok()) return status;
  StatusOr<PrivacyBudget> budget =
      MakePrivacyBudget(request.epsilon, request.rho);
  if (!budget.ok()) return budget.status();
  const Neighbouring neighbouring =
      exp_gk ? Neighbouring::kReplaceOne : Neighbouring::kAddRemove;
  if (session != nullptr) {
    status = session->Check(budget.value(), neighbouring);
    if (exp_gk && status.code() == StatusCode::kInvalidPrivacy &&
        session->neighbouring() == Neighbouring::kAddRemove) {
      // DPExpGK in a default session. Say which option makes it fit.
      return Status(StatusCode::kInvalidPrivacy,
                    "the stream method 'exp-gk' (DPExpGK) "
                    "protects a replaced value with the number of values "
                    "public, which an add-remove session cannot hold: pass "
                    "method 'hist-gk' (DPHistGK, add/remove one value), or "
                    "create the session with neighbouring 'replace-one'");
    }
    if (!status.ok()) return status;
  }

  sketch_.Flush();
  const SortedQuantiles sorted =
      SortDistinctQuantiles(request.quantiles.data(), request.quantiles.size());
  std::unique_ptr<RandomSource> rng = MakeRandomSource(request.seed);
  ReleaseReport report;
  report.seeded = request.seed.has_value();
  report.method = request.method;
  report.spent = budget.value();
  report.neighbouring = NeighbouringName(neighbouring);
  std::vector<double> values;
  // The mechanisms run at or below the decimals written (privacy.h).
  const PrivacyBudget running = AtOrBelowWritten(budget.value());
  if (exp_gk) {
    report.mechanism_epsilon = ExponentialMechanismEpsilonPerPart(
        running, static_cast<int>(sorted.distinct.size()));
    const OutputGrid grid(sketch_.lower(), sketch_.upper(), sketch_.steps());
    for (double q : sorted.distinct) {
      values.push_back(grid.ValueAt(
          SampleExpGk(sketch_, q, report.mechanism_epsilon, *rng)));
    }
    std::sort(values.begin(), values.end());  // post-processing
  } else {
    StatusOr<std::vector<double>> released =
        ReleaseHistGk(sketch_, sorted.distinct, bins, running, *rng);
    if (!released.ok()) return released.status();
    values = std::move(released.value());
  }
  if (!rng->healthy()) return EntropyUnavailable();
  if (step_grid.has_value()) {
    for (double& value : values) {
      value = step_grid->ValueAt(step_grid->PointOf(value));
    }
    report.resolution = step_grid->resolution();
  } else {
    // Without a step, each value moves to its nearest point of the grid a
    // release from rows uses by default (OutputGrid::Default: multiples of
    // a power of ten, at most 2^20 steps), so it prints as that decimal
    // (61.1523, not 61.15234375000001); far finer than the sketch's rank
    // error. Post-processing, monotone: the order stays.
    const OutputGrid grid =
        OutputGrid::Default(sketch_.lower(), sketch_.upper());
    for (double& value : values) value = grid.ValueAt(grid.PointOf(value));
    report.resolution = grid.resolution();
  }
  if (session != nullptr) {
    status = session->Charge(report.spent, neighbouring);
    if (!status.ok()) return status;
  }
  for (size_t i = 0; i < request.quantiles.size(); ++i) {
    out[i] = values[sorted.index_of_input[i]];
  }
  return report;
}

}  // namespace dpq
