// Model tests: each test elaborates its own SystemC kernel, so ctest runs every test in
// its own process (gtest_discover_tests). Running this binary with several tests in one
// process is not supported by SystemC. The built-in plug-ins are registered first, as the
// command line does.
#include <cstdlib>

#include <gtest/gtest.h>
#include <systemc>

#include "fabrics/plugins.h"

int sc_main(int argc, char** argv) {
  fabricsim::register_builtin_plugins();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
