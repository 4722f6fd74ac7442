// Every config check, in process: each file of the bad-config corpus (tests/configs/bad,
// which the system test bad_configs also runs through the binary) is loaded with
// load_system, the function `fabricsim check` calls, and must throw InputError whose
// message holds every `# expect:` fragment of its header (@FILE@ = the path passed).
// A check that stopped firing, fired at another place or changed its hint fails here,
// without a binary or a SystemC kernel.
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fabrics/systems/estimate.h"
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

namespace fabricsim {
namespace {

// The default memory limit is three quarters of what this machine (or its container) has.
TEST(Resources, DefaultMemoryLimitIsThreeQuartersOfTheMachine) {
  const double ram = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGE_SIZE));
  const double limit = double(default_memory_limit());
  EXPECT_LE(limit, 0.75 * ram + 1);
  EXPECT_GT(limit, 0.0);
}

// The address space a run is given stays within the machine's memory, so that a run the
// estimate got wrong fails an allocation (exit 2) before the OOM killer is reached; only a
// limit raised past the machine on purpose takes it beyond.
TEST(Resources, AddressSpaceCapStaysWithinTheMachine) {
  constexpr uint64_t GiB = 1ull << 30;
  EXPECT_EQ(address_space_cap(18 * GiB, 24 * GiB), 24 * GiB);  // the default limit on 24 GiB
  EXPECT_EQ(address_space_cap(4 * GiB, 24 * GiB), 8 * GiB);    // 4 + 2 + 2: within the machine
  EXPECT_EQ(address_space_cap(23 * GiB, 24 * GiB), 25 * GiB);  // never below the limit + 2 GiB
  EXPECT_EQ(address_space_cap(100 * GiB, 24 * GiB), 102 * GiB);
  const uint64_t m = machine_memory(), limit = default_memory_limit();
  EXPECT_LE(address_space_cap(limit, m), std::max(m, limit + 2 * GiB));
  EXPECT_GE(address_space_cap(limit, m), limit + 2 * GiB);
}

// `check` refuses what would not fit, with the estimate and its parts, and accepts the same
// system under a limit that holds it.
TEST(Resources, EstimateOverTheLimitIsRefusedWithItsParts) {
  const std::string cfg = std::string(FABRICSIM_SOURCE_DIR) + "/configs/minimal.yaml";
  const std::vector<std::string> big{"topology.endpoints=512", "device_types.sw.ports=1024",
                                     "simulation.functional=false"};
  std::vector<std::string> small_limit = big;
  small_limit.push_back("simulation.memory_limit=256MiB");
  try {
    load_system(cfg, small_limit, std::nullopt);
    FAIL() << "512 endpoints fit in 256MiB";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(cfg + ":<--set>: simulation.memory_limit: this run needs an estimated "),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("schedules "), std::string::npos) << m;
    EXPECT_NE(m.find("513 devices, 1024 links, 512 endpoints"), std::string::npos) << m;
  }
  std::vector<std::string> enough = big;
  enough.push_back("simulation.memory_limit=16GiB");
  const SystemSpec s = load_system(cfg, enough, std::nullopt);
  EXPECT_GT(s.estimate.memory_bytes, 256.0 * (1 << 20));
  EXPECT_NE(s.estimate.text.find("transaction-hops"), std::string::npos);
}

}  // namespace
}  // namespace fabricsim
