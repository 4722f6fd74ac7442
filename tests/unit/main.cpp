// Unit tests: plain C++, many tests per process. The built-in plug-ins are registered once,
// as the command line does; a test may add plug-ins of its own.
#include <gtest/gtest.h>

#include "fabrics/plugins.h"

int main(int argc, char** argv) {
  fabricsim::register_builtin_plugins();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
