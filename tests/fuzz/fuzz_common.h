// Shared by the libFuzzer harnesses (fuzz_config.cpp, fuzz_set.cpp; docs/reliability.md,
// "The fuzzed loader"): what `fabricsim check` does with a file and --set assignments,
// and the properties every outcome must have.
//
// Bad input must end in an InputError whose message is printable text (valid UTF-8, no
// control characters: it goes to a terminal). Anything else (an InternalError, another
// exception, a signal, a sanitizer report, a leak, a hang past -timeout, memory past
// -rss_limit_mb) is a finding: the harness aborts and libFuzzer saves the input.
#pragma once
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "fabrics/cli/compare.h"
#include "fabrics/cli/sweep_file.h"
#include "fabrics/plugins.h"
#include "fabrics/systems/estimate.h"
#include "fabrics/systems/system_spec.h"
#include "models/core/errors.h"

namespace fabricsim::fuzz {

// Once per process: the plug-ins, a memory cap (a config may ask for terabytes: it is
// refused at the cap instead of built), a scratch directory for the input file. At
// 128 MiB the DGX, HGX, minimal, DDP and FSDP configs pass the estimate (the checks after
// it are fuzzed too) while a topology far beyond it is refused while it is built. What the cap
// still admits can take seconds under the sanitizers (a 16k-GPU flow-level rail cluster,
// 311,808 links at 256 B each): scripts/fuzz.sh allows 30 s per input.
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    register_builtin_plugins();
    set_memory_cap(128ull << 20);
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/fabricsim_fuzz.XXXXXX";
    if (!::mkdtemp(tmpl.data())) {
      std::perror("fuzz: mkdtemp");
      std::abort();
    }
    return tmpl;
  }();
  return dir;
}

inline std::string write_input(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  return path;
}

// Valid UTF-8 without C0/C1 control characters or DEL.
inline bool printable(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c < 0x80) {
      ++i;
      continue;
    }
    const size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (n == 0 || c > 0xf4 || i + n > s.size()) return false;
    uint32_t cp = c & (0x7f >> n);
    for (size_t k = 1; k < n; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp < 0xa0))
      return false;
    i += n;
  }
  return true;
}

[[noreturn]] inline void finding(const char* what, const std::string& message) {
  std::fprintf(stderr, "fuzz finding: %s: %s\n", what, message.c_str());
  std::fflush(stderr);
  std::abort();
}

// `fabricsim check FILE --set S...`: a sweep file, a compare file or a system config.
inline void check(const std::string& path, const std::vector<std::string>& sets) {
  try {
    if (is_sweep_file(path))
      load_sweep(path, sets);
    else if (is_compare_file(path))
      load_compare(path, sets);
    else
      load_system(path, sets, std::nullopt);
  } catch (const InputError& e) {
    const std::string m = e.what();
    if (m.empty()) finding("empty error message", m);
    if (!printable(m)) finding("error message with control characters or bad UTF-8", m);
  } catch (const InternalError& e) {
    finding("internal error (exit 3) on input", e.what());
  } catch (const std::bad_alloc&) {
    finding("out of memory", "std::bad_alloc");
  } catch (const std::exception& e) {
    finding("unexpected exception", e.what());
  }
}

}  // namespace fabricsim::fuzz
