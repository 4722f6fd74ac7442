// The fabricsim command line: run, check, describe. Returns the process exit code
// (0 success, 2 bad input, 3 internal error); never exits on its own.
#pragma once
#include <string>
#include <vector>

namespace fabricsim {

int app_main(const std::vector<std::string>& args);

}  // namespace fabricsim
