// Fuzzes sketch deserialization and the stream's push and release: any bytes
// must load as a sketch or give CORRUPT_DATA, and a loaded sketch must work.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/stream.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  if (size == 0) return 0;
  // First byte: what to do with the rest.
  if (bytes[0] % 2 == 0) {
    dpq::StatusOr<dpq::QuantileStream> stream =
        dpq::QuantileStream::Deserialize(bytes + 1, size - 1);
    if (!stream.ok()) return 0;
    dpq::StreamReleaseRequest request;
    request.quantiles = {0.5};
    request.epsilon = 1;
    request.seed = 1;
    double out = 0;
    (void)stream.value().Release(request, &out);
    request.method = "hist-gk";
    (void)stream.value().Release(request, &out);
    const std::vector<uint8_t> again = stream.value().Serialize();
    if (!dpq::QuantileStream::Deserialize(again.data(), again.size()).ok()) {
      __builtin_trap();  // what Serialize wrote must load
    }
    return 0;
  }
  dpq::fuzz::FuzzInput in(bytes + 1, size - 1);
  dpq::StreamOptions options;
  options.lower = in.Number();
  options.upper = in.Number();
  options.alpha = in.Byte() % 2 ? in.Number() : 0.01 * (1 + in.Byte() % 50);
  if (in.Byte() % 2) options.bins = in.Number();
  dpq::StatusOr<dpq::QuantileStream> stream =
      dpq::QuantileStream::Create(options);
  if (!stream.ok()) return 0;
  std::vector<double> values;
  while (in.Remaining() > 8 && values.size() < 512)
    values.push_back(in.Number());
  (void)stream.value().Push(values.data(), values.size());
  dpq::StreamReleaseRequest request;
  request.quantiles = {0.1, 0.5, 0.9};
  request.rho = 0.5;
  request.seed = 2;
  request.method = values.size() % 2 ? "exp-gk" : "hist-gk";
  std::vector<double> out(3);
  (void)stream.value().Release(request, out.data());
  const std::vector<uint8_t> bytes_out = stream.value().Serialize();
  if (!dpq::QuantileStream::Deserialize(bytes_out.data(), bytes_out.size())
           .ok()) {
    __builtin_trap();
  }
  return 0;
}
