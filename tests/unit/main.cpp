// Unit tests: plain C++, many tests per process. The built-in plug-ins are registered once,
// as the command line does; a test may add plug-ins of its own.
#include <gtest/gtest.h>

#include "fabrics/plugins.h"

// libsystemc comes in with the models' factories (which unit tests never call) and asks for
// the sc_main its own main() would run; this binary has its own main and elaborates nothing.
extern "C" int sc_main(int, char**) { return 2; }

int main(int argc, char** argv) {
  fabricsim::register_builtin_plugins();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
