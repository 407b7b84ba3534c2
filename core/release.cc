#include "core/release.h"

#include <memory>

#include "core/aq.h"
#include "core/prepare.h"
#include "core/random.h"

namespace dpq {
namespace {

struct MethodSpec {
  const char* name;
  std::vector<std::string> option_names;
};

const std::vector<MethodSpec>& Methods() {
  static const std::vector<MethodSpec> methods = {
      {"aq", {}},
  };
  return methods;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) {
    if (!joined.empty()) joined += ", ";
    joined += "'" + name + "'";
  }
  return joined;
}

Status CheckOptions(
    const MethodSpec& method,
    const std::vector<std::pair<std::string, double>>& options) {
  for (const auto& option : options) {
    bool known = false;
    for (const std::string& name : method.option_names) {
      known = known || name == option.first;
    }
    if (!known) {
      return Status(
          StatusCode::kInvalidOption,
          "option '" + option.first + "' does not apply to method '" +
              method.name + "'" +
              (method.option_names.empty()
                   ? " (it takes no options)"
                   : " (it takes " + JoinNames(method.option_names) + ")"));
    }
  }
  return Status::Ok();
}

StatusOr<const MethodSpec*> FindMethod(const std::string& name) {
  for (const MethodSpec& method : Methods()) {
    if (name == method.name) return &method;
  }
  return Status(StatusCode::kUnknownMethod,
                "unknown method '" + name +
                    "'; available: " + JoinNames(ReleaseMethods()));
}

}  // namespace

std::vector<std::string> ReleaseMethods() {
  std::vector<std::string> names;
  for (const MethodSpec& method : Methods()) names.push_back(method.name);
  return names;
}

StatusOr<ReleaseReport> ReleaseQuantiles(double* data, size_t count,
                                         const ReleaseRequest& request,
                                         double* out) {
  StatusOr<const MethodSpec*> method = FindMethod(request.method);
  if (!method.ok()) return method.status();
  Status status = CheckOptions(*method.value(), request.options);
  if (!status.ok()) return status;
  status = ValidateRecordCount(count);
  if (!status.ok()) return status;
  status = ValidateBounds(request.lower, request.upper);
  if (!status.ok()) return status;
  status =
      ValidateQuantiles(request.quantiles.data(), request.quantiles.size());
  if (!status.ok()) return status;
  StatusOr<PrivacyBudget> budget =
      MakePrivacyBudget(request.epsilon, request.rho);
  if (!budget.ok()) return budget.status();
  status = ClampAndSort(data, count, request.lower, request.upper);
  if (!status.ok()) return status;

  const OutputGrid grid = OutputGrid::ForBounds(request.lower, request.upper);
  ConvertToCells(data, count, grid);
  const SortedQuantiles sorted =
      SortDistinctQuantiles(request.quantiles.data(), request.quantiles.size());

  std::unique_ptr<RandomSource> rng;
  if (request.seed.has_value()) {
    rng = std::make_unique<SeededRandom>(*request.seed);
  } else {
    rng = std::make_unique<SecureRandom>();
  }

  ReleaseReport report;
  report.method = method.value()->name;
  report.spent = budget.value();
  report.levels = ApproximateQuantilesLevels(sorted.distinct.size());
  report.epsilon_per_level =
      ExponentialMechanismEpsilonPerPart(budget.value(), report.levels);
  const std::vector<int64_t> points =
      SampleApproximateQuantiles(data, count, grid.steps(), sorted.distinct,
                                 report.epsilon_per_level, *rng);
  if (!rng->healthy()) {
    return Status(StatusCode::kEntropyUnavailable,
                  "the secure random source failed; nothing was released");
  }
  for (size_t i = 0; i < request.quantiles.size(); ++i) {
    out[i] = grid.ValueAt(points[sorted.index_of_input[i]]);
  }
  return report;
}

}  // namespace dpq
