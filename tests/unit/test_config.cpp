#include "fabrics/config/document.h"
#include "fabrics/config/input_guard.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "models/core/errors.h"

namespace fabricsim::cfg {
namespace {

namespace fs = std::filesystem;

// Writes config texts into a fresh directory that is removed afterwards.
class ConfigFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("fabricsim_test_config_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  // Where load_error writes its text.
  std::string path() const { return (dir_ / "c.yaml").string(); }

  // The InputError message of loading text from path(), or "" if it loaded.
  std::string load_error(const std::string& text) {
    write("c.yaml", text);
    try {
      load_yaml_file(path());
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

std::string override_error(YAML::Node root, const std::string& assignment) {
  try {
    apply_override(root, assignment);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST_F(ConfigFiles, LoadsAMap) {
  const YAML::Node root = load_yaml_file(write("ok.yaml", "topology:\n  ports: 8\nname: x\n"));
  ASSERT_TRUE(root.IsMap());
  EXPECT_EQ(root["topology"]["ports"].as<int>(), 8);
  EXPECT_EQ(root["name"].Scalar(), "x");
}

TEST_F(ConfigFiles, MissingFile) {
  const std::string missing = (dir_ / "nope.yaml").string();
  try {
    load_yaml_file(missing);
    FAIL() << "loaded a missing file";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              missing + ": cannot read file: No such file or directory; check the path");
  }
}

TEST_F(ConfigFiles, DirectoryIsNotReadable) {
  try {
    load_yaml_file(dir_.string());
    FAIL() << "loaded a directory";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), dir_.string() + ": cannot read file: Is a directory; check the path");
  }
}

TEST_F(ConfigFiles, BinaryContentIsRejectedAtItsLineAndColumn) {
  const std::string not_utf8 =
      "; a config is YAML text in UTF-8: save it as UTF-8 (e.g. not Latin-1), or pass the "
      "config file instead of a binary one";
  EXPECT_EQ(load_error(std::string("a: 1\n\0b", 7)),
            path() + ":2:1: a control character (U+0000, a NUL byte); a config is text: pass the "
                     "YAML file, not a binary one");
  EXPECT_EQ(load_error("a: \xff\n"), path() + ":1:4: not UTF-8 text (byte 0xFF)" + not_utf8);
  // Overlong encoding of '/', a UTF-16 surrogate, and a truncated sequence inside the file.
  EXPECT_EQ(load_error("a: \xC0\xAF\n"), path() + ":1:4: not UTF-8 text (byte 0xC0)" + not_utf8);
  EXPECT_EQ(load_error("a: \xED\xA0\x80\n"), path() + ":1:4: not UTF-8 text (byte 0xED)" + not_utf8);
  EXPECT_EQ(load_error("a: \xE2\x82\n"), path() + ":1:4: not UTF-8 text (byte 0xE2)" + not_utf8);
  EXPECT_EQ(load_error("\x89PNG\r\n\x1a\n"), path() + ":1:1: not UTF-8 text (byte 0x89)" + not_utf8);
}

TEST_F(ConfigFiles, Utf8TextIsAccepted) {
  EXPECT_EQ(load_error("name: \"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"\n"), "");
  EXPECT_EQ(load_error("\xEF\xBB\xBFname: x\r\nseed: 1\r\n"), "");  // BOM and CRLF
}

// The whole file is checked, not only its start: a Latin-1 byte far down used to reach
// results.json (nlohmann throws on it: exit 3) or the table raw.
TEST_F(ConfigFiles, BadTextAnywhereIsRejectedWhereItIs) {
  std::string text = "a: 1\n";
  for (int i = 0; i < 100; ++i) text += "# " + std::string(60, 'x') + "\n";
  EXPECT_NE(load_error(text + "name: caf\xE9\n").find(path() + ":102:10: not UTF-8 text (byte 0xE9)"),
            std::string::npos);
  EXPECT_NE(load_error(text + "name: a\x1b[31mred\n").find(path() + ":102:8: a control character "
                                                          "(U+001B, an escape"),
            std::string::npos);
  EXPECT_NE(load_error(text + "name: \xEF\xBB\xBFx\n")
                .find(path() + ":102:7: a byte-order mark (U+FEFF) inside the text"),
            std::string::npos);
  EXPECT_NE(load_error("a: 1\rb: 2\r").find(path() + ":1:5: a carriage return without a line "
                                                    "feed (CR-only line endings)"),
            std::string::npos);
}

// Escapes and block scalars put control characters into values without a raw control byte.
TEST_F(ConfigFiles, ControlCharactersInKeysAndValuesAreRejected) {
  EXPECT_EQ(load_error("name: \"a\\nb\"\n"),
            path() + ":1:7: name: contains a control character (U+000A, a line break); names "
                     "and values are one line of printable text");
  EXPECT_NE(load_error("name: \"\\e[31mred\"\n").find(":1:7: name: contains a control "
                                                       "character (U+001B"),
            std::string::npos);
  EXPECT_NE(load_error("a:\n  \"x\\ty\": 1\n").find(":2:3: a: contains a control character "
                                                      "(U+0009, a tab)"),
            std::string::npos);
  EXPECT_NE(load_error("name: |\n  two\n  lines\n").find(":1:7: name: contains a control"),
            std::string::npos);
}

TEST_F(ConfigFiles, SizeAndShapeLimits) {
  // More nodes than kMaxYamlNodes, located where the limit is crossed.
  std::string list = "layer_params: [";
  for (size_t i = 0; i <= kMaxYamlNodes; ++i) list += "1,";
  EXPECT_NE(load_error(list + "1]\n").find("the YAML document has more than 250000 nodes"),
            std::string::npos);
  // A billion laughs: 10^11 nodes once expanded, refused after reading it once.
  std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'k'; ++c) {
    laughs += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) laughs += std::string(i ? ", *" : "*") + char(c - 1);
    laughs += "]\n";
  }
  EXPECT_NE(load_error(laughs).find(path() + ":6:"), std::string::npos) << load_error(laughs);
  EXPECT_EQ(load_error(std::string(70, '[') + std::string(70, ']') + "\n"),
            path() + ":1:65: the YAML nests deeper than 64 levels; a config nests a few levels "
                     "(section, entry, value); check for unclosed '[' or '{'");
  EXPECT_NE(load_error(std::string(1100, 'k') + ": 1\n").find(":1:1101: YAML syntax error: illegal "
                                                            "map value; a key may be at most 1024 "
                                                            "characters long"),
            std::string::npos);
  EXPECT_NE(load_error("a: &a {x: 1}\nb:\n  <<: *a\n").find(":3:3: b: merge keys ('<<: *name') are "
                                                         "not supported"),
            std::string::npos);
}

TEST_F(ConfigFiles, EndlessOrHugeFilesAreRefusedAfterBoundedReading) {
  EXPECT_EQ(load_error(std::string(kMaxConfigBytes + 10, '#')),
            path() + ": the file is larger than 16MiB, the most a config may hold; pass a YAML "
                     "config (the shipped ones are a few KiB)");
  // /dev/zero fails on its first byte. /dev/urandom fails on its first byte that is not
  // text, which is on line 1 only most of the time: a random line feed (0x0A) comes before
  // the first bad byte about once in a hundred reads, so the line is any number here.
  const std::pair<const char*, const char*> devices[] = {
      {"/dev/zero", "^/dev/zero:1:1: a control character \\(U\\+0000"},
      {"/dev/urandom",
       "^/dev/urandom:[1-9][0-9]*:[1-9][0-9]*: (not UTF-8 text|a control character|a carriage "
       "return without a line feed|a byte-order mark)"}};
  for (const auto& [dev, expected] : devices) {
    try {
      load_yaml_file(dev);
      FAIL() << dev << " loaded";
    } catch (const InputError& e) {
      EXPECT_TRUE(std::regex_search(e.what(), std::regex(expected))) << e.what();
    }
  }
}

TEST_F(ConfigFiles, SyntaxErrorHasOneBasedLocation) {
  EXPECT_EQ(load_error("a: [1,\nb: c: d\n"),
            path() + ":2:5: YAML syntax error: end of sequence flow not found; close every '[' with "
                   "']' and every '{' with '}'");
  EXPECT_EQ(load_error("a:\n\tb: 1\n"),
            path() + ":2:3: YAML syntax error: illegal map value; indent with spaces, not tabs");
  EXPECT_EQ(load_error("a: *nope\n"),
            path() + ":1:4: YAML syntax error: the referenced anchor is not defined; define '&name' "
                   "before using '*name'");
}

TEST_F(ConfigFiles, EmptyOrNonMapTopLevel) {
  const std::string empty =
      ":1:1: the config is empty; expected a map of settings ('key: value' lines)";
  EXPECT_EQ(load_error(""), path() + empty);
  EXPECT_EQ(load_error("# only a comment\n"), path() + empty);
  EXPECT_EQ(load_error("\n\n- a\n- b\n"),
            path() + ":3:1: expected a map of settings at the top level, found a sequence; write "
                   "'key: value' lines");
  EXPECT_EQ(load_error("  just text\n"),
            path() + ":1:3: expected a map of settings at the top level, found 'just text'; write "
                   "'key: value' lines");
}

TEST_F(ConfigFiles, SeveralDocumentsAreRejected) {
  EXPECT_EQ(load_error("a: 1\n---\nb: 2\n"),
            path() + ":3:1: found 2 YAML documents; a config is one document; remove the '---' "
                   "separators");
}

TEST_F(ConfigFiles, DuplicateKeysAnywhereAreRejected) {
  EXPECT_EQ(load_error("top:\n  x: 1\n  y: 2\n  x: 3\n"),
            path() + ":4:3: top: duplicate key 'x'; it is first given at line 2; remove one of them");
  EXPECT_EQ(load_error("a: 1\na: 2\n"),
            path() + ":2:1: duplicate key 'a'; it is first given at line 1; remove one of them");
  EXPECT_EQ(load_error("l:\n  - ok: 1\n  - {p: 1, p: 2}\n"),
            path() + ":3:12: l[1]: duplicate key 'p'; it is first given at line 3; remove one of them");
}

TEST_F(ConfigFiles, SelfReferencingAliasIsRejected) {
  EXPECT_EQ(load_error("a: &x [1, *x]\n"),
            path() + ":1:4: a[1]: an alias refers to a node that contains it; a '*name' cannot "
                     "appear inside the node marked '&name'");
  EXPECT_EQ(load_error("b: &m {k: {up: *m}}\n"),
            path() + ":1:4: b.k.up: an alias refers to a node that contains it; a '*name' cannot "
                     "appear inside the node marked '&name'");
  // An alias to a node elsewhere is fine.
  EXPECT_EQ(load_error("a: &x [1, 2]\nb: *x\nc: {d: *x}\n"), "");
}

TEST(Config, WhereIsOneBased) {
  const YAML::Node root = YAML::Load("a: 1\nb:\n  c: [x, y]\n");
  EXPECT_EQ(where("f.yaml", root), "f.yaml:1:1");
  EXPECT_EQ(where("f.yaml", root["a"]), "f.yaml:1:4");
  EXPECT_EQ(where("f.yaml", root["b"]["c"][1]), "f.yaml:3:10");
}

TEST(Config, WhereWithoutSourcePosition) {
  EXPECT_EQ(where("f.yaml", YAML::Node("made in code")), "f.yaml:<--set>");
  const YAML::Node root = YAML::Load("a: 1\n");
  EXPECT_EQ(where("f.yaml", root["missing"]), "f.yaml");
}

TEST(Config, FailFormats) {
  const YAML::Node root = YAML::Load("a:\n  b: 3\n");
  try {
    fail("f.yaml", root["a"]["b"], "a.b", "value 3 is too big", "use 2");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "f.yaml:2:6: a.b: value 3 is too big; use 2");
  }
  try {
    fail("f.yaml", root["a"], "a", "bad", "");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "f.yaml:2:3: a: bad");
  }
  try {
    fail("f.yaml", root, "", "bad", "fix it");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "f.yaml:1:1: bad; fix it");
  }
}

TEST(Config, CheckUniqueKeys) {
  const YAML::Node ok = YAML::Load("a: 1\nb: 2\n");
  EXPECT_NO_THROW(check_unique_keys("f.yaml", ok, "p"));
  const YAML::Node dup = YAML::Load("a: 1\nb: 2\na: 3\n");
  try {
    check_unique_keys("f.yaml", dup, "sec");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "f.yaml:3:1: sec: duplicate key 'a'; it is first given at line 1; remove one of them");
  }
}

TEST(Override, ReplacesAMapValue) {
  YAML::Node root = YAML::Load("workload:\n  max_bytes: 1MiB\n  ranks: 8\n");
  apply_override(root, "workload.max_bytes=8GiB");
  EXPECT_TRUE(root["workload"]["max_bytes"].IsScalar());
  EXPECT_EQ(root["workload"]["max_bytes"].Scalar(), "8GiB");
  EXPECT_EQ(root["workload"]["ranks"].Scalar(), "8");
  EXPECT_EQ(root["workload"].size(), 2u);
  EXPECT_EQ(where("f.yaml", root["workload"]["max_bytes"]), "f.yaml:<--set>");
}

TEST(Override, ValueIsParsedAsYaml) {
  YAML::Node root = YAML::Load("topology:\n  links_per_switch: [1, 1]\n");
  apply_override(root, "topology.links_per_switch=[5,4,4,5]");
  const YAML::Node list = root["topology"]["links_per_switch"];
  ASSERT_TRUE(list.IsSequence());
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[0].Scalar(), "5");
  EXPECT_EQ(list[3].Scalar(), "5");
  EXPECT_EQ(where("f.yaml", list[2]), "f.yaml:<--set>");

  apply_override(root, "topology.extra={a: 1, b: [2]}");
  EXPECT_EQ(root["topology"]["extra"]["b"][0].Scalar(), "2");
}

TEST(Override, IndexesASequence) {
  YAML::Node root = YAML::Load("topology:\n  links_per_switch: [1, 2, 3]\n  groups:\n    - {n: 1}\n");
  apply_override(root, "topology.links_per_switch[2]=5");
  EXPECT_EQ(root["topology"]["links_per_switch"][2].Scalar(), "5");
  EXPECT_EQ(root["topology"]["links_per_switch"][0].Scalar(), "1");
  EXPECT_EQ(root["topology"]["links_per_switch"].size(), 3u);
  apply_override(root, "topology.groups[0].n=7");
  EXPECT_EQ(root["topology"]["groups"][0]["n"].Scalar(), "7");
}

TEST(Override, CreatesMissingKeys) {
  YAML::Node root = YAML::Load("a: 1\nempty:\n");
  apply_override(root, "a_typo=2");
  EXPECT_EQ(root["a_typo"].Scalar(), "2");
  EXPECT_EQ(root["a"].Scalar(), "1");
  apply_override(root, "workload.max_bytes=1GiB");
  EXPECT_EQ(root["workload"]["max_bytes"].Scalar(), "1GiB");
  apply_override(root, "empty.x=3");
  EXPECT_EQ(root["empty"]["x"].Scalar(), "3");
}

TEST(Override, EmptyValueIsNull) {
  YAML::Node root = YAML::Load("a: 1\n");
  apply_override(root, "a=");
  EXPECT_TRUE(root["a"].IsNull());
}

TEST(Override, MalformedAssignments) {
  YAML::Node root = YAML::Load("a: {b: 1}\n");
  const std::string usage = ": expected key.path=value; e.g. --set workload.max_bytes=1GiB";
  EXPECT_EQ(override_error(root, "a.b"), "--set a.b" + usage);
  EXPECT_EQ(override_error(root, "=5"), "--set =5" + usage);
  EXPECT_EQ(override_error(root, "a..b=5"), "--set a..b=5" + usage);
  EXPECT_EQ(override_error(root, "a.=5"), "--set a.=5" + usage);
  EXPECT_EQ(override_error(root, "a[x]=5"), "--set a[x]=5" + usage);
  EXPECT_EQ(override_error(root, "a[1=5"), "--set a[1=5" + usage);
  EXPECT_EQ(override_error(root, "[0]=5"), "--set [0]=5" + usage);
}

TEST(Override, NavigationErrors) {
  YAML::Node root = YAML::Load("t:\n  l: [1, 2, 3, 4]\n  s: text\n  m: {k: 1}\n");
  EXPECT_EQ(override_error(root, "t.l[7]=5"),
            "--set t.l[7]=5: index 7 is out of range: 't.l' has 4 elements; use an index from 0 "
            "to 3");
  EXPECT_EQ(override_error(root, "t.l.x=5"),
            "--set t.l.x=5: 't.l' is a sequence, not a map, so it has no key 'x'; index a list "
            "with [N], e.g. t.l[0]");
  EXPECT_EQ(override_error(root, "t.s.x=5"),
            "--set t.s.x=5: 't.s' is 'text', not a map, so it has no key 'x'; check the key path");
  EXPECT_EQ(override_error(root, "t.m[0]=5"),
            "--set t.m[0]=5: 't.m' is a map, not a sequence; use [index] only on lists");
  EXPECT_EQ(override_error(root, "t.nope[0]=5"),
            "--set t.nope[0]=5: 't.nope' is not set, so it has no index 0; set the whole list, "
            "e.g. --set t.nope=[1,2]");
  EXPECT_EQ(override_error(root, "t.m={a: 1, a: 2}"),
            "--set t.m={a: 1, a: 2}: duplicate key 'a' in the value; remove one of them");
  EXPECT_EQ(override_error(root, "t.m=&x [*x]"),
            "--set t.m=&x [*x]: the value nests deeper than 64 levels; a '*name' cannot appear "
            "inside the node marked '&name'");
  EXPECT_NE(override_error(root, "t.m=[1, 2").find("cannot parse the value '[1, 2' as YAML"),
            std::string::npos);
  // Nothing was changed by the failed assignments.
  EXPECT_EQ(root["t"]["l"].size(), 4u);
  EXPECT_EQ(root["t"]["m"]["k"].Scalar(), "1");
  EXPECT_FALSE(root["t"]["nope"].IsDefined());
}

// Command-line text is checked as file text is: nothing unprintable reaches a message,
// the table or results.json, and a value cannot expand without bound.
TEST(Override, UnprintableOrExplodingValuesAreRejected) {
  YAML::Node root = YAML::Load("name: x\n");
  EXPECT_EQ(override_error(root, "name=a\x1b[31mred"),
            "--set name=a\\x1b[31mred: contains a control character or invalid UTF-8 (U+001B, an "
            "escape (terminal colour codes start with it)); write key.path=value as printable "
            "UTF-8 text");
  EXPECT_EQ(override_error(root, "name=caf\xe9"),
            "--set name=caf\\xe9: contains a control character or invalid UTF-8 (byte 0xE9 (not "
            "UTF-8)); write key.path=value as printable UTF-8 text");
  EXPECT_EQ(override_error(root, "name=\"a\\nb\""),
            "--set name=\"a\\nb\": the value contains a control character (U+000A, a line "
            "break); names and values are one line of printable text");
  std::string laughs = "name=[";
  for (int level = 0; level < 6; ++level) laughs += "&l" + std::to_string(level) + " [";
  laughs += "x, x, x, x, x, x, x, x, x, x";
  for (int level = 5; level >= 0; --level) {
    laughs += "]";
    for (int k = 0; k < 9; ++k) laughs += ", *l" + std::to_string(level);
  }
  laughs += "]";
  EXPECT_NE(override_error(root, laughs).find("the YAML document has more than 250000 nodes"),
            std::string::npos);
  EXPECT_EQ(root["name"].Scalar(), "x");
}

TEST(Nearest, FindsCloseCandidates) {
  const std::vector<std::string> keys = {"lane_rate", "lanes", "ports", "latency"};
  EXPECT_EQ(nearest("lane_rte", keys), "lane_rate");
  EXPECT_EQ(nearest("prots", keys), "ports");
  EXPECT_EQ(nearest("latncy", keys), "latency");
  EXPECT_EQ(nearest("ports", keys), "ports");
  EXPECT_EQ(nearest("buffer_size", keys), "");
  EXPECT_EQ(nearest("x", {}), "");
}

TEST(Nearest, ThresholdGrowsWithLength) {
  // len 12 allows distance 4 (12 / 3); len 6 allows only 2.
  EXPECT_EQ(nearest("abcdefghijkl", {"abcdefghWXYZ"}), "abcdefghWXYZ");
  EXPECT_EQ(nearest("abcdefghijkl", {"abcdefgVWXYZ"}), "");
  EXPECT_EQ(nearest("abcdef", {"abcdXY"}), "abcdXY");
  EXPECT_EQ(nearest("abcdef", {"abcXYZ"}), "");
}

TEST(Nearest, TiesGoToTheFirstCandidate) {
  EXPECT_EQ(nearest("cat", {"bat", "hat"}), "bat");
  EXPECT_EQ(nearest("cat", {"hat", "bat"}), "hat");
}

TEST(Config, DescribeAndJoin) {
  EXPECT_EQ(describe_node(YAML::Load("[1]")), "a sequence");
  EXPECT_EQ(describe_node(YAML::Load("{a: 1}")), "a map");
  EXPECT_EQ(describe_node(YAML::Load("~")), "an empty value");
  EXPECT_EQ(describe_node(YAML::Load("hi")), "'hi'");
  EXPECT_EQ(join_key("", "a"), "a");
  EXPECT_EQ(join_key("a.b", "c"), "a.b.c");
  EXPECT_EQ(join_key("a.b", "[2]"), "a.b[2]");
}

}  // namespace
}  // namespace fabricsim::cfg
