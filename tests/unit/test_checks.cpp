// Every config check, in process: each file of the bad-config corpus (tests/configs/bad,
// which the system test bad_configs also runs through the binary) is loaded with
// load_system, the function `fabricsim check` calls, and must throw InputError whose
// message holds every `# expect:` fragment of its header (@FILE@ = the path passed).
// A check that stopped firing, fired at another place or changed its hint fails here,
// without a binary or a SystemC kernel.
#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fabrics/systems/system_spec.h"
#include "models/core/errors.h"

namespace fabricsim {
namespace {

const std::string kDir = std::string(FABRICSIM_SOURCE_DIR) + "/tests/configs/bad";

std::vector<std::string> bad_configs() {
  std::vector<std::string> names;
  if (DIR* d = opendir(kDir.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 5 && n.compare(n.size() - 5, 5, ".yaml") == 0) names.push_back(n);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

class BadConfig : public testing::TestWithParam<std::string> {};

TEST_P(BadConfig, IsRefusedWithItsExpectedMessage) {
  const std::string file = kDir + "/" + GetParam();
  std::vector<std::string> expect;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line) && line.rfind("#", 0) == 0;) {
    if (line.rfind("# expect: ", 0) != 0) continue;
    std::string e = line.substr(10);
    for (size_t at; (at = e.find("@FILE@")) != std::string::npos;) e.replace(at, 6, file);
    expect.push_back(e);
  }
  ASSERT_FALSE(expect.empty()) << "no '# expect:' line in " << file;
  try {
    load_system(file, {}, std::nullopt);
    FAIL() << file << " loaded without an error";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    for (const std::string& x : expect) EXPECT_NE(msg.find(x), std::string::npos) << x << "\nin: " << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadConfig, testing::ValuesIn(bad_configs()),
                         [](const testing::TestParamInfo<std::string>& i) {
                           return i.param.substr(0, i.param.size() - 5);
                         });

// The corpus is there: an empty directory would make the suite vacuous.
TEST(BadConfigCorpus, HasOneFileForEveryCheckFamily) { EXPECT_GE(bad_configs().size(), 90u); }

}  // namespace
}  // namespace fabricsim
