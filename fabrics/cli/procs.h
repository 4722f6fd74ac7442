// Child processes of this binary (/proc/self/exe), at most `jobs` at a time: each point of
// a sweep and each system of a compare is its own process, because a SystemC kernel can
// be elaborated only once per process.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace fabricsim {

struct Child {
  std::vector<std::string> args;  // after the program name, e.g. {"run", "a.yaml", ...}
  std::string stderr_file;        // the child's stderr; stdin and stdout are /dev/null
};

// Starts children in order, at most `jobs` at once; `started(i)` before child i starts,
// `done(i, exit code)` as each one ends (128 + signal if it died). `tick()` runs about
// every 100 ms while children run. Throws InternalError if a child cannot be started.
void run_children(const std::vector<Child>& children, int jobs,
                  const std::function<void(size_t)>& started,
                  const std::function<void(size_t, int)>& done,
                  const std::function<void()>& tick = nullptr);

// The -j value of a command line: a positive count of processes.
int parse_jobs(const std::string& flag, const std::string& value);

}  // namespace fabricsim
