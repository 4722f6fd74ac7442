// libFuzzer harness: the config loader as `fabricsim check FILE` drives it (a system
// config, a compare file or a sweep file), on arbitrary bytes. Seed corpus: configs/ and
// tests/configs/bad*/ (scripts/fuzz.sh). docs/reliability.md, "The fuzzed loader".
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_common.h"

// libsystemc defines main() and wants sc_main(); libFuzzer's main() is the one that runs.
extern "C" int sc_main(int, char**) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fabricsim::fuzz::write_input("fuzz.yaml", data, size);
  fabricsim::fuzz::check(path, {});
  return 0;
}
