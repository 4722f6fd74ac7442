// Helpers shared by the pure-C++ collective schedule tests.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/core/errors.h"

namespace fabricsim::coll::testutil {

using Buffers = std::vector<std::vector<double>>;

// Integer-valued inputs, distinct per rank and element, small enough that every partial
// sum is exact in a double whatever the reduction order.
inline Buffers make_inputs(int ranks, uint64_t count) {
  Buffers in(static_cast<std::size_t>(ranks), std::vector<double>(count));
  for (int r = 0; r < ranks; ++r)
    for (uint64_t i = 0; i < count; ++i)
      in[static_cast<std::size_t>(r)][i] =
          static_cast<double>(static_cast<uint64_t>(r + 1) * 1000003ull + i * 7919ull);
  return in;
}

// Runs `fn`, expects InternalError whose message contains `needle`.
inline ::testing::AssertionResult throws_internal(const std::function<void()>& fn,
                                                  const std::string& needle) {
  try {
    fn();
  } catch (const InternalError& e) {
    if (std::string(e.what()).find(needle) != std::string::npos)
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message lacks '" << needle << "': " << e.what();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "wrong exception type: " << e.what();
  }
  return ::testing::AssertionFailure() << "no exception (expected '" << needle << "')";
}

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

inline std::vector<double> elementwise_sum(const Buffers& in, uint64_t count) {
  std::vector<double> sum(count, 0.0);
  for (const auto& b : in)
    for (uint64_t i = 0; i < count; ++i) sum[i] += b[i];
  return sum;
}

// Compares buffers element by element and reports only the first mismatch.
inline ::testing::AssertionResult same_buffer(const std::vector<double>& got,
                                              const std::vector<double>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i])
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got[i] << ", want " << want[i];
  return ::testing::AssertionSuccess();
}

}  // namespace fabricsim::coll::testutil
