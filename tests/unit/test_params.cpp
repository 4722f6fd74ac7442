#include "fabrics/config/params.h"

#include <string>

#include <gtest/gtest.h>

#include "fabrics/config/document.h"
#include "models/core/errors.h"

namespace fabricsim::cfg {
namespace {

const char* const kFile = "f.yaml";
const char* const kPath = "device_types.h100";

TypeSpec device_spec() {
  return {"h100",
          "a GPU endpoint",
          {
              {"lane_rate", ParamKind::kBandwidth, "", "Gb/s or GB/s", "per-lane signalling rate"},
              {"lanes", ParamKind::kInt, "4", "", "lanes per port", {}, 1, 16},
              {"latency", ParamKind::kTime, "150ns", "ns", "port-to-port latency"},
              {"buffer", ParamKind::kBytes, "64KiB", "bytes", "input buffer per port", {}, 4096,
               1024.0 * 1024 * 1024},
              {"efficiency", ParamKind::kReal, "0.9", "", "usable fraction of the line rate", {}, 0, 1},
              {"ecn", ParamKind::kBool, "false", "", "mark congestion"},
              {"name", ParamKind::kString, "gpu", "", "display name"},
              {"arbiter", ParamKind::kEnum, "round_robin", "", "arbitration policy",
               {"round_robin", "weighted", "strict_priority"}},
              {"weights", ParamKind::kIntList, "[1, 1]", "", "per-class weights", {}, 0, 100},
              {"ports", ParamKind::kInt, "", "", "number of ports", {}, 1, 1024},
          }};
}

// The map under device_types.h100 in a document whose first line is "device_types:"
// and whose second is "  h100:"; the parameter lines start at line 3, column 5.
YAML::Node params_map(const std::string& body) {
  return YAML::Load("device_types:\n  h100:\n" + body)["device_types"]["h100"];
}

Params parse(const std::string& body, const std::vector<std::string>& ignore = {}) {
  return parse_params(device_spec(), params_map(body), kFile, kPath, ignore);
}

std::string parse_error(const std::string& body, const std::vector<std::string>& ignore = {}) {
  try {
    parse(body, ignore);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Params, DefaultsAndGivenValues) {
  const Params p = parse("    lane_rate: 25GB/s\n    ports: 8\n");
  EXPECT_EQ(p.bandwidth_bps("lane_rate"), 200'000'000'000ULL);
  EXPECT_EQ(p.integer("ports"), 8);
  EXPECT_EQ(p.integer("lanes"), 4);
  EXPECT_EQ(p.time_ps("latency"), 150'000ULL);
  EXPECT_EQ(p.bytes("buffer"), 65536ULL);
  EXPECT_DOUBLE_EQ(p.real("efficiency"), 0.9);
  EXPECT_FALSE(p.boolean("ecn"));
  EXPECT_EQ(p.str("name"), "gpu");
  EXPECT_EQ(p.str("arbiter"), "round_robin");
  EXPECT_EQ(p.int_list("weights"), (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE(p.was_set("lane_rate"));
  EXPECT_FALSE(p.was_set("lanes"));
  EXPECT_EQ(p.file(), kFile);
  EXPECT_EQ(p.path(), kPath);
}

TEST(Params, EveryKindParsesGivenText) {
  const Params p = parse(
      "    lane_rate: 1.5Tb/s\n    lanes: 16\n    latency: 0.5us\n    buffer: 1.5MiB\n"
      "    efficiency: 1e-1\n    ecn: true\n    name: 'gpu 0'\n    arbiter: weighted\n"
      "    weights: [5, 4, 4, 5]\n    ports: 1024\n",
      {});
  EXPECT_EQ(p.bandwidth_bps("lane_rate"), 1'500'000'000'000ULL);
  EXPECT_EQ(p.integer("lanes"), 16);
  EXPECT_EQ(p.time_ps("latency"), 500'000ULL);
  EXPECT_EQ(p.bytes("buffer"), 1536ULL * 1024);
  EXPECT_DOUBLE_EQ(p.real("efficiency"), 0.1);
  EXPECT_TRUE(p.boolean("ecn"));
  EXPECT_EQ(p.str("name"), "gpu 0");
  EXPECT_EQ(p.str("arbiter"), "weighted");
  EXPECT_EQ(p.int_list("weights"), (std::vector<int64_t>{5, 4, 4, 5}));
  EXPECT_EQ(p.integer("ports"), 1024);
}

TEST(Params, AbsentOrEmptyMapMeansDefaults) {
  TypeSpec spec = device_spec();
  spec.params.erase(spec.params.begin());  // "lane_rate" is required
  spec.params.pop_back();                  // and so is "ports"
  const YAML::Node doc = YAML::Load("a:\nb: {}\n");
  EXPECT_EQ(parse_params(spec, doc["a"], kFile, "a").integer("lanes"), 4);
  EXPECT_EQ(parse_params(spec, doc["b"], kFile, "b").integer("lanes"), 4);
  EXPECT_EQ(parse_params(spec, doc["missing"], kFile, "missing").integer("lanes"), 4);
}

TEST(Params, NotAMap) {
  EXPECT_EQ(parse_error("    - 1\n    - 2\n"),
            "f.yaml:3:5: device_types.h100: expected a map of parameters, found a sequence; write "
            "'key: value' lines; known keys: lane_rate, lanes, latency, buffer, efficiency, ecn, "
            "name, arbiter, weights, ports");
}

TEST(Params, UnknownKeySuggestsTheNearest) {
  EXPECT_EQ(parse_error("    ports: 8\n    lane_rte: 400Gb/s\n"),
            "f.yaml:4:5: device_types.h100.lane_rte: unknown key 'lane_rte'; did you mean 'lane_rate'? "
            "known keys: lane_rate, lanes, latency, buffer, efficiency, ecn, name, arbiter, "
            "weights, ports");
  EXPECT_EQ(parse_error("    lane_rate: 400Gb/s\n    ports: 8\n    colour: red\n"),
            "f.yaml:5:5: device_types.h100.colour: unknown key 'colour'; known keys: lane_rate, lanes, "
            "latency, buffer, efficiency, ecn, name, arbiter, weights, ports");
}

TEST(Params, IgnoredKeysAreLeftForTheCaller) {
  const Params p = parse("    type: h100\n    lane_rate: 400Gb/s\n    ports: 8\n", {"type"});
  EXPECT_EQ(p.integer("ports"), 8);
  EXPECT_NE(parse_error("    tpye: h100\n    lane_rate: 400Gb/s\n    ports: 8\n", {"type"})
                .find("unknown key 'tpye'; did you mean 'type'?"),
            std::string::npos);
}

TEST(Params, MissingRequiredKeyPointsAtTheMap) {
  EXPECT_EQ(parse_error("    lanes: 2\n    lane_rate: 400Gb/s\n"),
            "f.yaml:3:5: device_types.h100: missing required key 'ports'; add 'ports: <int>' "
            "(number of ports)");
  EXPECT_EQ(parse_error("    ports: 2\n"),
            "f.yaml:3:5: device_types.h100: missing required key 'lane_rate'; add 'lane_rate: "
            "<bandwidth in Gb/s or GB/s>' (per-lane signalling rate)");
}

TEST(Params, UnitErrorsCarryLocationAndKeyPath) {
  EXPECT_EQ(parse_error("    ports: 8\n    lane_rate: 400\n"),
            "f.yaml:4:16: device_types.h100.lane_rate: a bandwidth needs a unit, got '400'; e.g. "
            "400Gb/s");
  EXPECT_EQ(parse_error("    ports: 8\n    lane_rate: 400Gb/s\n    latency: 2.5ps\n"),
            "f.yaml:5:14: device_types.h100.latency: '2.5ps' is not a whole number of "
            "picoseconds; round it, e.g. 2ps or 3ps");
  EXPECT_EQ(parse_error("    ports: 8\n    lane_rate: -25GB/s\n"),
            "f.yaml:4:16: device_types.h100.lane_rate: a bandwidth must be positive, got "
            "'-25GB/s'; e.g. 400Gb/s");
  EXPECT_EQ(parse_error("    ports: 8\n    lane_rate: 400Gb/s\n    buffer: 4096\n"),
            "f.yaml:5:13: device_types.h100.buffer: a size needs a unit, got '4096'; e.g. 4096B");
}

TEST(Params, RangeErrorsStateTheRangeInUnits) {
  EXPECT_EQ(parse_error("    ports: 0\n    lane_rate: 400Gb/s\n"),
            "f.yaml:3:12: device_types.h100.ports: value 0 is below the minimum 1; allowed "
            "range: 1 to 1024");
  EXPECT_EQ(parse_error("    ports: 8\n    lane_rate: 400Gb/s\n    lanes: 17\n"),
            "f.yaml:5:12: device_types.h100.lanes: value 17 is above the maximum 16; allowed "
            "range: 1 to 16");
  EXPECT_EQ(parse_error("    ports: 8\n    lane_rate: 400Gb/s\n    buffer: 1KiB\n"),
            "f.yaml:5:13: device_types.h100.buffer: value 1KiB is below the minimum 4KiB; allowed "
            "range: 4KiB to 1GiB");
  EXPECT_EQ(parse_error("    ports: 8\n    lane_rate: 400Gb/s\n    efficiency: 1.5\n"),
            "f.yaml:5:17: device_types.h100.efficiency: value 1.5 is above the maximum 1; "
            "allowed range: 0 to 1");
}

TEST(Params, EnumListsChoicesAndNearest) {
  EXPECT_EQ(parse_error("    ports: 8\n    lane_rate: 400Gb/s\n    arbiter: wieghted\n"),
            "f.yaml:5:14: device_types.h100.arbiter: unknown value 'wieghted'; did you mean "
            "'weighted'? choices: round_robin, weighted, strict_priority");
  EXPECT_EQ(parse_error("    ports: 8\n    lane_rate: 400Gb/s\n    arbiter: lottery\n"),
            "f.yaml:5:14: device_types.h100.arbiter: unknown value 'lottery'; choices: "
            "round_robin, weighted, strict_priority");
}

TEST(Params, DuplicateKeyIsDetected) {
  EXPECT_EQ(parse_error("    ports: 8\n    lane_rate: 400Gb/s\n    ports: 9\n"),
            "f.yaml:5:5: device_types.h100: duplicate key 'ports'; it is first given at line 3; "
            "remove one of them");
}

TEST(Params, IntegersAreStrict) {
  const std::string base = "    lane_rate: 400Gb/s\n";
  EXPECT_EQ(parse_error(base + "    ports: 3.5\n"),
            "f.yaml:4:12: device_types.h100.ports: expected an integer, found '3.5'; this "
            "parameter takes whole numbers only");
  EXPECT_EQ(parse_error(base + "    ports: eight\n"),
            "f.yaml:4:12: device_types.h100.ports: expected an integer, found 'eight'");
  EXPECT_EQ(parse_error(base + "    ports: 0x10\n"),
            "f.yaml:4:12: device_types.h100.ports: expected an integer, found '0x10'");
  EXPECT_EQ(parse_error(base + "    ports: 99999999999999999999\n"),
            "f.yaml:4:12: device_types.h100.ports: integer '99999999999999999999' is out of the "
            "64-bit range; allowed range: 1 to 1024");
}

TEST(Params, BoolsAndRealsAreStrict) {
  const std::string base = "    lane_rate: 400Gb/s\n    ports: 8\n";
  EXPECT_EQ(parse_error(base + "    ecn: yes\n"),
            "f.yaml:5:10: device_types.h100.ecn: expected true or false, found 'yes'; write true "
            "or false");
  EXPECT_EQ(parse_error(base + "    efficiency: nan\n"),
            "f.yaml:5:17: device_types.h100.efficiency: expected a finite number, found 'nan'; "
            "e.g. 0.5 or 1e-3");
  EXPECT_EQ(parse_error(base + "    efficiency: 0.5x\n"),
            "f.yaml:5:17: device_types.h100.efficiency: expected a finite number, found '0.5x'; "
            "e.g. 0.5 or 1e-3");
}

TEST(Params, WrongShapes) {
  const std::string base = "    ports: 8\n";
  EXPECT_EQ(parse_error(base + "    lane_rate: {a: 1}\n"),
            "f.yaml:4:16: device_types.h100.lane_rate: expected a bandwidth like 400Gb/s, found a "
            "map");
  EXPECT_EQ(parse_error(base + "    lane_rate: 400Gb/s\n    name: [a]\n"),
            "f.yaml:5:11: device_types.h100.name: expected a string, found a sequence");
  EXPECT_EQ(parse_error(base + "    lane_rate: 400Gb/s\n    weights: 3\n"),
            "f.yaml:5:14: device_types.h100.weights: expected a list of integers like [1, 2], "
            "found '3'");
}

TEST(Params, EmptyValuePointsAtTheKey) {
  EXPECT_EQ(parse_error("    lanes:\n    lane_rate: 400Gb/s\n    ports: 8\n"),
            "f.yaml:3:5: device_types.h100.lanes: no value given; give an integer or remove the "
            "key to use the default 4");
  EXPECT_EQ(parse_error("    lane_rate:\n    ports: 8\n"),
            "f.yaml:3:5: device_types.h100.lane_rate: no value given; expected a bandwidth like "
            "400Gb/s");
}

TEST(Params, IntListElementsAreLocatedSeparately) {
  const std::string base = "    lane_rate: 400Gb/s\n    ports: 8\n";
  EXPECT_EQ(parse_error(base + "    weights: [1, x, 3]\n"),
            "f.yaml:5:18: device_types.h100.weights[1]: expected an integer, found 'x'");
  EXPECT_EQ(parse_error(base + "    weights:\n      - 1\n      - 101\n"),
            "f.yaml:7:9: device_types.h100.weights[1]: value 101 is above the maximum 100; "
            "allowed range: 0 to 100");
  EXPECT_EQ(parse_error(base + "    weights: [1, [2]]\n"),
            "f.yaml:5:18: device_types.h100.weights[1]: expected an integer, found a sequence");
  EXPECT_EQ(parse(base + "    weights: []\n").int_list("weights").size(), 0u);
}

TEST(Params, OverriddenValuesAreLocatedAsSet) {
  YAML::Node root = YAML::Load("device_types:\n  h100:\n    lane_rate: 400Gb/s\n    ports: 8\n");
  apply_override(root, "device_types.h100.ports=0");
  try {
    parse_params(device_spec(), root["device_types"]["h100"], kFile, kPath);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "f.yaml:<--set>: device_types.h100.ports: value 0 is below the minimum 1; allowed "
              "range: 1 to 1024");
  }
  apply_override(root, "device_types.h100.ports=8");
  apply_override(root, "device_types.h100.lane_rat=1Gb/s");
  try {
    parse_params(device_spec(), root["device_types"]["h100"], kFile, kPath);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("f.yaml:<--set>: device_types.h100.lane_rat: unknown key "
                                         "'lane_rat'; did you mean 'lane_rate'?"),
              std::string::npos);
  }
  YAML::Node h100 = root["device_types"]["h100"];
  h100.remove("lane_rat");
  apply_override(root, "device_types.h100.weights=[2,3]");
  apply_override(root, "device_types.h100.weights[1]=7");
  const Params p = parse_params(device_spec(), root["device_types"]["h100"], kFile, kPath);
  EXPECT_EQ(p.int_list("weights"), (std::vector<int64_t>{2, 7}));
  EXPECT_TRUE(p.was_set("weights"));
}

TEST(Params, FailPointsAtTheValueOrTheMap) {
  const Params p = parse("    lane_rate: 400Gb/s\n    ports: 8\n");
  try {
    p.fail("ports", "8 ports do not fit 3 switches", "use a multiple of 3");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "f.yaml:4:12: device_types.h100.ports: 8 ports do not fit 3 switches; use a "
              "multiple of 3");
  }
  try {
    p.fail("lanes", "too few lanes", "");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "f.yaml:3:5: device_types.h100.lanes: too few lanes");
  }
  EXPECT_EQ(where(kFile, p.node("ports")), "f.yaml:4:12");
  EXPECT_EQ(where(kFile, p.node("lanes")), "f.yaml:3:5");
}

// YAML::Node assignment writes through into the tree; Params must only rebind.
TEST(Params, AssigningParamsLeavesTheConfigTreesAlone) {
  const YAML::Node first = YAML::Load("h:\n  lane_rate: 400Gb/s\n  ports: 8\n");
  const YAML::Node second = YAML::Load("h:\n  lane_rate: 100Gb/s\n  ports: 2\n  lanes: 2\n");
  Params a = parse_params(device_spec(), first["h"], kFile, "h");
  const Params b = parse_params(device_spec(), second["h"], kFile, "h");
  a = b;
  EXPECT_EQ(a.integer("ports"), 2);
  EXPECT_EQ(first["h"]["ports"].Scalar(), "8");
  EXPECT_EQ(first["h"]["lane_rate"].Scalar(), "400Gb/s");
  EXPECT_EQ(first["h"].size(), 2u);
  EXPECT_EQ(where(kFile, a.node("lanes")), "f.yaml:4:10");
}

TEST(Params, MisuseIsAnInternalError) {
  const Params p = parse("    lane_rate: 400Gb/s\n    ports: 8\n");
  EXPECT_THROW(p.integer("nope"), InternalError);
  EXPECT_THROW(p.integer("lane_rate"), InternalError);
  EXPECT_THROW(p.bandwidth_bps("latency"), InternalError);
  EXPECT_THROW(p.str("lanes"), InternalError);
  EXPECT_THROW(p.was_set("nope"), InternalError);
  EXPECT_THROW(p.fail("nope", "x", ""), InternalError);
  EXPECT_NO_THROW(p.str("arbiter"));
}

TEST(Params, BadSpecsAreInternalErrors) {
  const YAML::Node empty = YAML::Load("{}");
  TypeSpec bad_default{"t", "", {{"lat", ParamKind::kTime, "150", "ns", "latency"}}};
  EXPECT_THROW(parse_params(bad_default, empty, kFile, "t"), InternalError);
  TypeSpec out_of_range{"t", "", {{"n", ParamKind::kInt, "0", "", "count", {}, 1, 4}}};
  EXPECT_THROW(parse_params(out_of_range, empty, kFile, "t"), InternalError);
  TypeSpec bad_choice{"t", "", {{"e", ParamKind::kEnum, "c", "", "enum", {"a", "b"}}}};
  EXPECT_THROW(parse_params(bad_choice, empty, kFile, "t"), InternalError);
  TypeSpec no_choices{"t", "", {{"e", ParamKind::kEnum, "", "", "enum"}}};
  EXPECT_THROW(parse_params(no_choices, empty, kFile, "t"), InternalError);
  TypeSpec twice{"t", "", {{"n", ParamKind::kInt, "1", "", ""}, {"n", ParamKind::kInt, "2", "", ""}}};
  EXPECT_THROW(parse_params(twice, empty, kFile, "t"), InternalError);
  TypeSpec bad_list{"t", "", {{"l", ParamKind::kIntList, "[1,", "", ""}}};
  EXPECT_THROW(parse_params(bad_list, empty, kFile, "t"), InternalError);
}

TEST(Params, ToJsonEchoesResolvedValues) {
  const Params p = parse("    lane_rate: 25GB/s\n    ports: 8\n    weights: [3, 4]\n");
  const nlohmann::json j = p.to_json();
  EXPECT_EQ(j.at("lane_rate"), "25GB/s");
  EXPECT_EQ(j.at("latency"), "150ns");
  EXPECT_EQ(j.at("buffer"), "64KiB");
  EXPECT_EQ(j.at("ports"), 8);
  EXPECT_EQ(j.at("lanes"), 4);
  EXPECT_DOUBLE_EQ(j.at("efficiency").get<double>(), 0.9);
  EXPECT_EQ(j.at("ecn"), false);
  EXPECT_EQ(j.at("name"), "gpu");
  EXPECT_EQ(j.at("arbiter"), "round_robin");
  EXPECT_EQ(j.at("weights"), nlohmann::json::array({3, 4}));
  EXPECT_EQ(j.size(), device_spec().params.size());
}

TEST(Params, DescribeTypeListsEveryParameter) {
  const std::string text = describe_type(device_spec());
  EXPECT_EQ(text.rfind("h100: a GPU endpoint\n", 0), 0u) << text;
  EXPECT_NE(text.find("KEY"), std::string::npos);
  EXPECT_NE(text.find("lane_rate   bandwidth  (required)"), std::string::npos) << text;
  EXPECT_NE(text.find("Gb/s or GB/s"), std::string::npos);
  EXPECT_NE(text.find("(choices: round_robin, weighted, strict_priority)"), std::string::npos);
  EXPECT_NE(text.find("(allowed range: 4KiB to 1GiB)"), std::string::npos);
  for (const ParamSpec& s : device_spec().params) {
    EXPECT_NE(text.find("  " + s.key + " "), std::string::npos) << s.key;
  }
}

}  // namespace
}  // namespace fabricsim::cfg
