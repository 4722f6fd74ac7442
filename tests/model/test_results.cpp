// The nccl-tests style result rows (fabrics/cli/results.h): algbw, busbw, time.
// Pure C++ checks, but they live in model_tests: linking this code pulls in SystemC
// (results.h includes system_spec.h),
// and libsystemc needs an sc_main, which only model_tests provides.
#include "fabrics/cli/results.h"

#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace fabricsim {
namespace {

SystemSpec spec_with_ranks(int n) {
  SystemSpec spec;
  spec.name = "unit";
  spec.ranks.resize(n);
  std::iota(spec.ranks.begin(), spec.ranks.end(), 0);
  spec.workload.collective = "all_reduce";
  spec.workload.datatype = "float";
  spec.workload.elem_bytes = 4;
  spec.workload.algorithm = "ring";
  return spec;
}

SweepRow row(uint64_t bytes, uint64_t start_ps, uint64_t end_ps) {
  SweepRow r;
  r.bytes = bytes;
  r.count = bytes / 4;
  r.algorithm = "ring";
  r.start_ps = start_ps;
  r.end_ps = end_ps;
  return r;
}

// 1 MiB in 10 us (start at 1 us, end at 11 us): algbw = 1048576 B / 1e-5 s / 1e9 =
// 104.8576 GB/s. The time is end - start, not end.
TEST(Results, AlgbwIsBytesOverTimeInDecimalGBps) {
  const SystemSpec spec = spec_with_ranks(8);
  const auto rows = make_rows(spec, {row(1 << 20, 1'000'000, 11'000'000)});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].time_us, 10.0);
  EXPECT_NEAR(rows[0].algbw_GBps, 104.8576, 1e-9);
  EXPECT_EQ(rows[0].bytes, uint64_t(1) << 20);
  EXPECT_EQ(rows[0].count, uint64_t(1) << 18);
}

// busbw = algbw x 2(n-1)/n: 1.75 at n = 8.
TEST(Results, BusbwFactorAtEightRanksIs1_75) {
  const SystemSpec spec = spec_with_ranks(8);
  const auto rows = make_rows(spec, {row(1 << 20, 0, 10'000'000)});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(rows[0].busbw_GBps, 104.8576 * 1.75, 1e-9);
  EXPECT_NEAR(rows[0].busbw_GBps / rows[0].algbw_GBps, 1.75, 1e-12);
}

// n = 2: 2(2-1)/2 = 1, busbw equals algbw.
TEST(Results, BusbwFactorAtTwoRanksIsOne) {
  const SystemSpec spec = spec_with_ranks(2);
  // 8 MB in 100 us = 80 GB/s.
  const auto rows = make_rows(spec, {row(8'000'000, 0, 100'000'000)});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(rows[0].algbw_GBps, 80.0, 1e-9);
  EXPECT_NEAR(rows[0].busbw_GBps, 80.0, 1e-9);
}

TEST(Results, BusbwFactorForOtherRankCounts) {
  for (int n : {3, 4, 16, 72}) {
    const SystemSpec spec = spec_with_ranks(n);
    const auto rows = make_rows(spec, {row(1'000'000, 0, 1'000'000)});  // 1 MB in 1 us
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_NEAR(rows[0].algbw_GBps, 1000.0, 1e-9) << "n=" << n;
    EXPECT_NEAR(rows[0].busbw_GBps, 1000.0 * 2.0 * (n - 1) / n, 1e-9) << "n=" << n;
  }
}

TEST(Results, RowsKeepOrderAndCopyFields) {
  const SystemSpec spec = spec_with_ranks(4);
  SweepRow a = row(1024, 0, 1'000'000);
  a.checked = true;
  a.wrong = 3;
  SweepRow b = row(4096, 1'000'000, 3'000'000);
  b.algorithm = "tree";
  const auto rows = make_rows(spec, {a, b});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].bytes, 1024u);
  EXPECT_EQ(rows[1].bytes, 4096u);
  EXPECT_EQ(rows[0].type, "float");
  EXPECT_EQ(rows[0].redop, "sum");
  EXPECT_EQ(rows[0].algorithm, "ring");
  EXPECT_EQ(rows[1].algorithm, "tree");
  EXPECT_TRUE(rows[0].checked);
  EXPECT_EQ(rows[0].wrong, 3u);
  EXPECT_FALSE(rows[1].checked);
  EXPECT_DOUBLE_EQ(rows[1].time_us, 2.0);
  EXPECT_NEAR(rows[1].algbw_GBps, 4096.0 / 2e-6 / 1e9, 1e-12);
}

// A zero-length interval must not divide by zero.
TEST(Results, ZeroTimeGivesZeroBandwidth) {
  const SystemSpec spec = spec_with_ranks(8);
  const auto rows = make_rows(spec, {row(1024, 5, 5)});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].time_us, 0.0);
  EXPECT_EQ(rows[0].algbw_GBps, 0.0);
  EXPECT_EQ(rows[0].busbw_GBps, 0.0);
}

TEST(Results, EmptySweepGivesNoRows) {
  EXPECT_TRUE(make_rows(spec_with_ranks(8), {}).empty());
}

// The table's average line is the mean busbw over rows: (175 + 87.5) / 2 = 131.25.
TEST(Results, TableAverageBusbwIsMeanOfRows) {
  const SystemSpec spec = spec_with_ranks(8);
  // 100 KB in 1 us = 100 GB/s algbw -> 175 busbw; 100 KB in 2 us -> 87.5.
  const auto rows = make_rows(spec, {row(100'000, 0, 1'000'000), row(100'000, 0, 2'000'000)});
  std::ostringstream os;
  print_table(os, spec, rows);
  EXPECT_NE(os.str().find("# Avg bus bandwidth    : 131.25 GB/s"), std::string::npos) << os.str();
}

}  // namespace
}  // namespace fabricsim
