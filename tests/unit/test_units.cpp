#include "models/core/units.h"

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

namespace fabricsim {
namespace {

// The UnitError text for s, or "" if parse accepted it.
template <typename Parse>
std::string error_of(Parse parse, const std::string& s) {
  try {
    parse(s);
  } catch (const UnitError& e) {
    return e.what();
  }
  return "";
}

std::string bandwidth_error(const std::string& s) { return error_of(parse_bandwidth_bps, s); }
std::string time_error(const std::string& s) { return error_of(parse_time_ps, s); }
std::string bytes_error(const std::string& s) { return error_of(parse_bytes, s); }

TEST(Units, BandwidthBitsAndBytes) {
  EXPECT_EQ(parse_bandwidth_bps("400Gb/s"), 400'000'000'000ULL);
  EXPECT_EQ(parse_bandwidth_bps("800Gb/s"), 800'000'000'000ULL);
  EXPECT_EQ(parse_bandwidth_bps("100Gbps"), 100'000'000'000ULL);
  EXPECT_EQ(parse_bandwidth_bps("25GB/s"), parse_bandwidth_bps("200Gb/s"));
  EXPECT_EQ(parse_bandwidth_bps("25GBps"), 200'000'000'000ULL);
  EXPECT_EQ(parse_bandwidth_bps("3350GB/s"), 26'800'000'000'000ULL);
  EXPECT_EQ(parse_bandwidth_bps("1.5Tb/s"), 1'500'000'000'000ULL);
  EXPECT_EQ(parse_bandwidth_bps("800Mb/s"), 800'000'000ULL);
  EXPECT_EQ(parse_bandwidth_bps("50GiB/s"), 50ULL * (1ULL << 30) * 8);
  EXPECT_EQ(parse_bandwidth_bps("1b/s"), 1ULL);
  EXPECT_EQ(parse_bandwidth_bps("1B/s"), 8ULL);
  EXPECT_EQ(parse_bandwidth_bps("3bps"), 3ULL);
  EXPECT_EQ(parse_bandwidth_bps("2KiB/s"), 2048ULL * 8);
  EXPECT_EQ(parse_bandwidth_bps("1Tib/s"), 1ULL << 40);
}

TEST(Units, BandwidthPrefixCaseAndMega) {
  EXPECT_EQ(parse_bandwidth_bps("10kb/s"), 10'000ULL);
  EXPECT_EQ(parse_bandwidth_bps("10Kb/s"), 10'000ULL);
  EXPECT_EQ(parse_bandwidth_bps("10mb/s"), 10'000'000ULL);  // 'm' is mega, never milli
  EXPECT_EQ(parse_bandwidth_bps("10gB/s"), 80'000'000'000ULL);
  EXPECT_EQ(parse_bandwidth_bps("1tb/s"), 1'000'000'000'000ULL);
  EXPECT_EQ(parse_bandwidth_bps("1mib/s"), 1ULL << 20);
}

TEST(Units, WhitespaceBetweenNumberAndUnit) {
  EXPECT_EQ(parse_bandwidth_bps("25 GB/s"), 200'000'000'000ULL);
  EXPECT_EQ(parse_time_ps("150 ns"), 150'000ULL);
  EXPECT_EQ(parse_bytes(" 4 KiB "), 4096ULL);
}

TEST(Units, BandwidthRejects) {
  EXPECT_NE(bandwidth_error("-25GB/s").find("must be positive"), std::string::npos);
  EXPECT_NE(bandwidth_error("0Gb/s").find("must be positive"), std::string::npos);
  EXPECT_NE(bandwidth_error("0.0b/s").find("must be positive"), std::string::npos);
  EXPECT_EQ(bandwidth_error("400"), "a bandwidth needs a unit, got '400'; e.g. 400Gb/s");
  EXPECT_NE(bandwidth_error("400Gb").find("add /s, e.g. 400Gb/s"), std::string::npos);
  EXPECT_NE(bandwidth_error("400Gx/s").find("unknown bandwidth unit 'Gx/s'"), std::string::npos);
  EXPECT_NE(bandwidth_error("400Pb/s").find("unknown bandwidth unit"), std::string::npos);
  EXPECT_NE(bandwidth_error("400Gb/s x").find("unknown bandwidth unit 'Gb/s x'"),
            std::string::npos);
  EXPECT_NE(bandwidth_error("inf Gb/s").find("not a finite bandwidth"), std::string::npos);
  EXPECT_NE(bandwidth_error("nan").find("not a finite bandwidth"), std::string::npos);
  EXPECT_NE(bandwidth_error("fast").find("is not a bandwidth"), std::string::npos);
  EXPECT_NE(bandwidth_error("").find("empty bandwidth"), std::string::npos);
  EXPECT_NE(bandwidth_error("1.2.3Gb/s").find("malformed number"), std::string::npos);
  EXPECT_NE(bandwidth_error("1,000Gb/s").find("malformed number"), std::string::npos);
  EXPECT_NE(bandwidth_error("5.Gb/s").find("malformed number"), std::string::npos);
  EXPECT_NE(bandwidth_error("0.1b/s").find("not a whole number of bits per second"),
            std::string::npos);
  EXPECT_NE(bandwidth_error("0.1b/s").find("e.g. 1b/s"), std::string::npos);
}

TEST(Units, OverflowIsAnErrorNotAWrap) {
  EXPECT_EQ(parse_bandwidth_bps("18446744073709551615b/s"), std::numeric_limits<uint64_t>::max());
  EXPECT_NE(bandwidth_error("18446744073709551616b/s").find("too large"), std::string::npos);
  EXPECT_NE(bandwidth_error("3000000TB/s").find("too large"), std::string::npos);
  EXPECT_NE(time_error("20000000s").find("too large"), std::string::npos);
  EXPECT_NE(bytes_error("17000000TiB").find("too large"), std::string::npos);
  EXPECT_NE(bytes_error("1000000000000000000000000000KiB").find("too many digits"),
            std::string::npos);
}

TEST(Units, Time) {
  EXPECT_EQ(parse_time_ps("150ns"), 150'000ULL);
  EXPECT_EQ(parse_time_ps("0.5us"), 500'000ULL);
  EXPECT_EQ(parse_time_ps("2\xC2\xB5s"), 2'000'000ULL);  // MICRO SIGN
  EXPECT_EQ(parse_time_ps("2\xCE\xBCs"), 2'000'000ULL);  // GREEK SMALL LETTER MU
  EXPECT_EQ(parse_time_ps("3ms"), 3'000'000'000ULL);
  EXPECT_EQ(parse_time_ps("1.5s"), 1'500'000'000'000ULL);
  EXPECT_EQ(parse_time_ps("7ps"), 7ULL);
  EXPECT_EQ(parse_time_ps("0ns"), 0ULL);
  EXPECT_EQ(parse_time_ps("1.001ns"), 1001ULL);
}

TEST(Units, TimeRejects) {
  EXPECT_EQ(time_error("2.5ps"),
            "'2.5ps' is not a whole number of picoseconds; round it, e.g. 2ps or 3ps");
  EXPECT_EQ(time_error("150"), "a time needs a unit, got '150'; e.g. 150ns");
  EXPECT_NE(time_error("-1ns").find("must not be negative"), std::string::npos);
  EXPECT_NE(time_error("5min").find("unknown time unit 'min'"), std::string::npos);
  EXPECT_NE(time_error("5NS").find("unknown time unit 'NS'"), std::string::npos);
  EXPECT_NE(time_error("5Ms").find("use ps, ns, us, ms or s"), std::string::npos);
}

TEST(Units, Bytes) {
  EXPECT_EQ(parse_bytes("4KiB"), 4096ULL);
  EXPECT_EQ(parse_bytes("1.5KiB"), 1536ULL);
  EXPECT_EQ(parse_bytes("64B"), 64ULL);
  EXPECT_EQ(parse_bytes("0B"), 0ULL);
  EXPECT_EQ(parse_bytes("4KB"), 4000ULL);
  EXPECT_EQ(parse_bytes("4kB"), 4000ULL);
  EXPECT_EQ(parse_bytes("2MB"), 2'000'000ULL);
  EXPECT_EQ(parse_bytes("3GB"), 3'000'000'000ULL);
  EXPECT_EQ(parse_bytes("1TB"), 1'000'000'000'000ULL);
  EXPECT_EQ(parse_bytes("8GiB"), 8ULL << 30);
  EXPECT_EQ(parse_bytes("2MiB"), 2ULL << 20);
  EXPECT_EQ(parse_bytes("1TiB"), 1ULL << 40);
}

TEST(Units, BytesRejects) {
  EXPECT_EQ(bytes_error("4096"), "a size needs a unit, got '4096'; e.g. 4096B");
  EXPECT_EQ(bytes_error("1.3KiB"),
            "'1.3KiB' is not a whole number of bytes; round it, e.g. 1331B or 1332B");
  EXPECT_NE(bytes_error("0.5B").find("not a whole number of bytes"), std::string::npos);
  EXPECT_EQ(bytes_error("4Kb"), "'4Kb' is in bits (b); a size is in bytes (B); e.g. 4KB");
  EXPECT_NE(bytes_error("4KiB/s").find("unknown size unit"), std::string::npos);
  EXPECT_NE(bytes_error("-4KiB").find("must not be negative"), std::string::npos);
}

TEST(Units, ErrorKeepsProblemAndHintApart) {
  try {
    parse_time_ps("2.5ps");
    FAIL() << "accepted 2.5ps";
  } catch (const UnitError& e) {
    EXPECT_EQ(e.problem(), "'2.5ps' is not a whole number of picoseconds");
    EXPECT_EQ(e.hint(), "round it, e.g. 2ps or 3ps");
  }
}

TEST(Units, FormatBytes) {
  EXPECT_EQ(format_bytes(0), "0B");
  EXPECT_EQ(format_bytes(8ULL << 30), "8GiB");
  EXPECT_EQ(format_bytes(128 * 1024), "128KiB");
  EXPECT_EQ(format_bytes(1000), "1000B");
  EXPECT_EQ(format_bytes(1536), "1.5KiB");
  EXPECT_EQ(format_bytes(1023), "1023B");
}

TEST(Units, FormatTime) {
  EXPECT_EQ(format_time_ps(0), "0ns");
  EXPECT_EQ(format_time_ps(150'000), "150ns");
  EXPECT_EQ(format_time_ps(1'250'000), "1.25us");
  EXPECT_EQ(format_time_ps(7), "7ps");
  EXPECT_EQ(format_time_ps(1001), "1.001ns");
  EXPECT_EQ(format_time_ps(1'000'001), "1000.001ns");
  EXPECT_EQ(format_time_ps(3'000'000'000'000ULL), "3s");
}

TEST(Units, FormatBandwidth) {
  EXPECT_EQ(format_bandwidth_bps(400'000'000'000ULL), "400Gb/s");
  EXPECT_EQ(format_bandwidth_bps(26'800'000'000'000ULL), "26.8Tb/s");
  EXPECT_EQ(format_bandwidth_bps(800'000'000ULL), "800Mb/s");
  EXPECT_EQ(format_bandwidth_bps(50ULL * (1ULL << 30) * 8), "50GiB/s");
  EXPECT_EQ(format_bandwidth_bps(5), "5b/s");
}

TEST(Units, FormatThenParseRoundTrips) {
  const uint64_t samples[] = {1,          7,           999,           1000,          1001,
                              1536,       4096,        123'456'789,   1ULL << 33,    1ULL << 40,
                              999'999'999'999ULL, 400'000'000'000ULL, 18'446'744'073'709'551'615ULL};
  for (uint64_t v : samples) {
    EXPECT_EQ(parse_bytes(format_bytes(v)), v) << format_bytes(v);
    EXPECT_EQ(parse_time_ps(format_time_ps(v)), v) << format_time_ps(v);
    EXPECT_EQ(parse_bandwidth_bps(format_bandwidth_bps(v)), v) << format_bandwidth_bps(v);
  }
}

}  // namespace
}  // namespace fabricsim
