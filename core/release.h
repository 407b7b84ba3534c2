// The one entry point callers use: validates a request, prepares the records
// and dispatches to the mechanism named by `method`.
#ifndef DPQ_CORE_RELEASE_H_
#define DPQ_CORE_RELEASE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/privacy.h"
#include "core/status.h"

namespace dpq {

struct ReleaseRequest {
  double lower = 0;  // public lower bound; smaller values are clamped to it
  double upper = 0;  // public upper bound; larger values are clamped to it
  std::vector<double> quantiles;  // each in (0, 1), any order, repeats allowed
  std::optional<double> epsilon;  // pure epsilon-DP budget, or
  std::optional<double> rho;      // rho-zCDP budget: exactly one of the two
  std::string method = "aq";
  // Method-specific numeric options by name; a name the method does not take
  // is an INVALID_OPTION error, never silently ignored.
  std::vector<std::pair<std::string, double>> options;
  // Reproducible randomness for tests. NOT private: see SeededRandom.
  std::optional<uint64_t> seed;
};

// What a successful release spent, for the caller's privacy accounting.
struct ReleaseReport {
  std::string method;
  PrivacyBudget spent;
  int levels = 0;                // AQ recursion levels
  double epsilon_per_level = 0;  // epsilon of each exponential mechanism
};

// The method names ReleaseQuantiles accepts.
std::vector<std::string> ReleaseMethods();

// Releases one private value per requested quantile into
// out[0, request.quantiles.size()), in the order requested, non-decreasing
// along increasing quantiles and inside [lower, upper]. `data` is the
// caller's scratch copy: it is clamped, sorted and overwritten. On error,
// `out` is left unspecified and the Status names the problem.
StatusOr<ReleaseReport> ReleaseQuantiles(double* data, size_t count,
                                         const ReleaseRequest& request,
                                         double* out);

}  // namespace dpq

#endif  // DPQ_CORE_RELEASE_H_
