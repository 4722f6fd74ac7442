// The published-figure comparison (fabrics/systems/references.h): points matched to rows by
// size and algorithm, errors as simulated / published - 1, tolerance bands, and the
// parser's merging of busbw and time points of one size.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "fabrics/systems/references.h"
#include "models/core/errors.h"

namespace fabricsim {
namespace {

TEST(Published, PointsMergeBySizeAndSort) {
  const YAML::Node n = YAML::Load(
      "[{source: s, collective: all_reduce, tolerance: 10%, busbw_GBps: {8GiB: 360, 1MiB: 66}, time_us: {1048576B: 27.5}}]");
  const std::vector<PublishedCurve> c = parse_published("f.yaml", n);
  ASSERT_EQ(c.size(), 1u);
  ASSERT_EQ(c[0].points.size(), 2u);
  EXPECT_EQ(c[0].points[0].bytes, 1048576u);
  EXPECT_DOUBLE_EQ(c[0].points[0].busbw_GBps, 66);
  EXPECT_DOUBLE_EQ(c[0].points[0].time_us, 27.5);
  EXPECT_EQ(c[0].points[1].bytes, 8ull << 30);
  EXPECT_LT(c[0].points[1].time_us, 0);  // not given
  EXPECT_DOUBLE_EQ(c[0].tolerance_pct, 10);
}

TEST(Published, ErrorsAndTolerancePerMatchedRow) {
  PublishedCurve ring{"a", "all_reduce", "ring", 5, {{1 << 20, 100, 20}, {2 << 20, 200, -1}, {4 << 20, 300, -1}}};
  const std::vector<ComparedRow> rows{{1 << 20, "ring", 96, 21}, {2 << 20, "tree", 150, 40}};
  const nlohmann::json j = compare_published({ring}, "all_reduce", rows);
  const nlohmann::json& p = j[0]["points"];
  // 1 MiB: busbw 96 vs 100 = -4% (inside 5%), time 21 vs 20 = +5% (on the band: inside).
  EXPECT_DOUBLE_EQ(p[0]["simulated_busbw_GBps"].get<double>(), 96);
  EXPECT_NEAR(p[0]["busbw_error_pct"].get<double>(), -4.0, 1e-12);
  EXPECT_NEAR(p[0]["time_error_pct"].get<double>(), 5.0, 1e-12);
  EXPECT_TRUE(p[0]["within_tolerance"].get<bool>());
  // 2 MiB: the only row of that size is a tree row; the curve is ring's: no match.
  EXPECT_TRUE(p[1]["simulated_busbw_GBps"].is_null());
  EXPECT_FALSE(p[1].contains("within_tolerance"));
  // 4 MiB: no row at all.
  EXPECT_TRUE(p[2]["busbw_error_pct"].is_null());
  // Any algorithm: the tree row matches and is 25% low, outside 5%.
  PublishedCurve any{"b", "all_reduce", "", 5, {{2 << 20, 200, -1}}};
  const nlohmann::json k = compare_published({any}, "all_reduce", rows);
  // A run of another collective matches nothing.
  EXPECT_TRUE(compare_published({any}, "all_gather", rows)[0]["points"][0]["busbw_error_pct"].is_null());
  EXPECT_NEAR(k[0]["points"][0]["busbw_error_pct"].get<double>(), -25.0, 1e-12);
  EXPECT_FALSE(k[0]["points"][0]["within_tolerance"].get<bool>());
}

TEST(Assumptions, NameResolvedParameters) {
  const nlohmann::json resolved = {{"device_types", {{"sw", {{"speedup", 2.0}}}}}, {"seed", 1}};
  const std::vector<Assumption> a =
      parse_assumptions("f.yaml", YAML::Load("{device_types.sw.speedup: not public}"), resolved);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].why, "not public");
  EXPECT_THROW(parse_assumptions("f.yaml", YAML::Load("{device_types.sw: x}"), resolved), InputError);
}

}  // namespace
}  // namespace fabricsim
