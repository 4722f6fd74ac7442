// Error types and the process exit codes they map to.
#pragma once
#include <stdexcept>
#include <string>

namespace fabricsim {

// Exit codes: 0 success, 2 bad input (including a run that cannot finish within its limits),
// 3 internal model assertion, 4 stopped by SIGINT or SIGTERM (nothing half-written).
enum ExitCode : int { kExitOk = 0, kExitBadInput = 2, kExitInternal = 3, kExitInterrupted = 4 };

// Bad input from the user (config, command line, file). The message is complete and
// user-facing: "file:line:col: key.path: problem; hint" where a location is known.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& msg) : std::runtime_error(msg) {}
};

// The run was stopped by SIGINT or SIGTERM: the message says what was done and what was
// kept (exit 4).
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(const std::string& msg) : std::runtime_error(msg) {}
};

// A broken invariant inside a model: a bug, never the user's fault.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& msg) : std::logic_error(msg) {}
};

}  // namespace fabricsim

// Model invariant check that stays on in Release builds; throws InternalError (exit 3).
#define FABRICSIM_ASSERT(cond, msg)                                                          \
  do {                                                                                      \
    if (!(cond))                                                                            \
      throw ::fabricsim::InternalError(std::string(__FILE__) + ":" +                        \
                                       std::to_string(__LINE__) + ": assertion '" #cond     \
                                       "' failed: " + std::string(msg));                    \
  } while (0)
