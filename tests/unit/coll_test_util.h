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

}  // namespace fabricsim::coll::testutil
