// The fabricsim executable. SystemC's own main() would print a banner and hide our exit
// codes, so we provide main() and run everything inside sc_main.
#include <cstdlib>
#include <string>
#include <vector>

#include <systemc>

#include "fabrics/cli/app.h"

int sc_main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return fabricsim::app_main(args);
}

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
