// Embeds fabricsim: loads a shipped config through the library (plain C++), checks a
// collective schedule, then runs the command line's entry point on the same config.
#include <iostream>

#include <systemc>  // declares sc_main, which SystemC's own main() calls

#include "fabrics/cli/app.h"
#include "fabrics/plugins.h"
#include "fabrics/systems/system_spec.h"
#include "models/collectives/algorithms.h"

int sc_main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer CONFIG\n";
    return 2;
  }
  fabricsim::register_builtin_plugins();
  const fabricsim::SystemSpec spec = fabricsim::load_system(argv[1], {}, std::nullopt);
  const fabricsim::coll::Schedule s = fabricsim::coll::make_schedule(
      "all_reduce", "ring", spec.workload.coll_params(int(spec.ranks.size()), 1024), 0);
  std::cout << "consumer: " << spec.name << ", " << spec.ranks.size() << " ranks, ring program of "
            << s.programs[0].ops.size() << " ops on rank 0\n";
  return fabricsim::app_main({"run", argv[1], "--quiet"});
}
