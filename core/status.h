// Errors as values: every fallible core function returns a Status or a
// StatusOr<T>. The core never throws, so the WASM build can use
// -fno-exceptions and a bad input can never turn into an abort.
#ifndef DPQ_CORE_STATUS_H_
#define DPQ_CORE_STATUS_H_

#include <optional>
#include <string>
#include <utility>

namespace dpq {

// Stable codes shared with the TypeScript layer (see StatusCodeName). Append
// only: the numbers cross the WASM boundary.
enum class StatusCode : int {
  kOk = 0,
  kNonFiniteValue = 1,
  kInvalidBounds = 2,
  kInvalidPrivacy = 3,
  kInvalidQuantiles = 4,
  kUnknownMethod = 5,
  kInvalidOption = 6,
  kTooLarge = 7,
  kInvalidState = 8,
  kCorruptData = 9,
  kEntropyUnavailable = 10,
  kBudgetExceeded = 11,
  kNotEnoughData = 12,
  kInvalidCounts = 13,
};

// The stable string form, e.g. "NON_FINITE_VALUE".
const char* StatusCodeName(StatusCode code);

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value or the Status explaining why there is none.
template <typename T>
class StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  // Only when ok().
  const T& value() const { return *value_; }
  T& value() { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

// A number for an error message: the shortest decimal that reads back as
// the same double (0.1, not 0.10000000000000001; 1e-300, not 0.000000; a
// 300-digit integer as 1e+300), and NaN / Infinity / -Infinity spelled out.
std::string FormatNumber(double value);

}  // namespace dpq

#endif  // DPQ_CORE_STATUS_H_
