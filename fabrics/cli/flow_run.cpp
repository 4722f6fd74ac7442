#include "fabrics/cli/flow_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <systemc>

#include "fabrics/cli/outcome.h"
#include "fabrics/cli/output.h"
#include "fabrics/cli/progress.h"
#include "fabrics/cli/results.h"
#include "fabrics/sim/flow_system.h"
#include "fabrics/sim/traffic_run.h"
#include "fabrics/sim/training_run.h"
#include "fabrics/systems/cost_model.h"
#include "models/collectives/algorithms.h"
#include "models/collectives/job_runner.h"
#include "models/collectives/sweep.h"
#include "models/core/errors.h"
#include "models/core/scheduler.h"
#include "models/core/types.h"

namespace fabricsim {

int run_flow(const SystemSpec& spec, const std::optional<std::string>& out, bool quiet,
             const OutputOptions& outputs, const std::string& command_line) {
  const WorkloadSpec& w = spec.workload;
  if (outputs.trace || outputs.observe.series_interval_ps || outputs.observe.histograms ||
      !outputs.observe.ports.empty())
    throw InputError(spec.file + ": simulation.fidelity: flow keeps no per-port state: "
                     "--series, --ports, --histograms and --trace need fidelity packet or "
                     "transaction");
  if (coll::uses_nvls_switches(w.algorithm))
    throw InputError(spec.file + ": workload.algorithm: " + w.algorithm +
                     " uses in-switch reduction (NVLS), which the flow level does not model; "
                     "use a ring, tree, hierarchical or direct algorithm, or fidelity packet "
                     "or transaction");
  if (spec.simulation.functional)
    throw InputError(spec.file + ": simulation.functional: the flow level moves no data; use "
                     "fidelity packet or transaction to check results");
  std::filesystem::path out_dir;
  if (out) {
    out_dir = *out;
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) throw InputError("--out " + *out + ": cannot create directory: " + ec.message());
  }
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = user_cpu_s();
  FlowSystem sys("flow", spec);
  const int n = int(spec.ranks.size());
  sys.engine().set_sync(w.sync);
  const bool is_auto = w.algorithm == "auto";
  // auto, or a protocol chosen per size: the cost model picks, as at the packet level
  // (app.cpp).
  const bool choose = !w.is_training && (is_auto || w.protocol == "auto");
  AutoChooser chooser;
  const double auto0 = user_cpu_s();
  if (choose && spec.auto_in_switch.empty()) chooser = make_auto_chooser(spec);
  if (choose && !spec.auto_in_switch.empty()) {
    // auto chooses among what the flow level models: no in-switch (NVLS) candidates.
    SystemSpec flat = spec;
    flat.auto_in_switch.clear();
    chooser = make_auto_chooser(flat);
  }
  const double auto_cpu_s = choose ? user_cpu_s() - auto0 : -1.0;
  std::unique_ptr<TrainingWorkload> train;
  std::unique_ptr<TrafficWorkload> traffic;
  std::unique_ptr<JobRunner> runner;
  if (sys.active_ranks() != n && (w.is_training || w.is_traffic))
    throw InputError(spec.file + ": simulation.flow_fold: folding runs collective sweeps only "
                     "(a " + w.type + " job is not checked for symmetry)");
  if (w.is_training) {
    train = std::make_unique<TrainingWorkload>(spec);
    runner = std::make_unique<JobRunner>(
        "jobs", sys.engine(), train->take_jobs(),
        [&](size_t i, uint64_t s, uint64_t e) { train->job_done(i, s, e, sys.engine()); });
  }
  if (w.is_traffic) {
    traffic = std::make_unique<TrafficWorkload>(spec);
    runner = std::make_unique<JobRunner>(
        "jobs", sys.engine(), traffic->take_jobs(),
        [&](size_t, uint64_t s, uint64_t e) { traffic->job_done(s, e, sys.engine()); });
  }
  const bool jobs = train || traffic;
  const std::vector<uint64_t> sizes = jobs ? std::vector<uint64_t>{} : w.sizes();
  const int folded = sys.active_ranks();
  std::vector<int> folds(chooser.names.size(), -1);  // auto, folded: candidate folds (-1: unknown)
  const auto schedule = [&](uint64_t count) -> coll::Schedule {
        // The packet level's schedule (app.cpp): the channels and pieces the library uses
        // at this size under protocol `proto` (WorkloadSpec::coll_params), its rings.
        const auto build = [&](const std::string& algo, coll::Protocol proto, int slices,
                               const std::string& label) {
          coll::CollParams cp = w.coll_params(n, count, algo, proto);
          if (slices >= 0) cp.slices = slices;
          cp.rings = &spec.rings;
          // Folded: one period of ranks plus the first rank of the next, to check the shift.
          if (folded != n) cp.rank_limit = folded + 1;
          coll::Schedule s = coll::make_schedule(w.collective, algo, cp, spec.domain_size);
          s.protocol = proto;
          if (!label.empty()) s.algorithm = label;
          if (folded != n) sys.fold_schedule(s);
          return s;
        };
        if (!choose) {
          const coll::Protocol proto = coll::protocol_from_name(w.protocol);
          return build(w.algorithm, proto, -1,
                       w.protocol_model()
                           ? w.algorithm + "/" + coll::protocol_name(proto)
                           : std::string());
        }
        if (!is_auto || folded == n) {
          const size_t c = chooser.pick(double(count) * w.elem_bytes);
          return build(chooser.names[c], chooser.protos[c], chooser.slices[c], chooser.label(c));
        }
        // auto, folded: the cheapest candidate whose schedule folds. A probe (one channel,
        // one piece per block) filters out the generators that build every rank (tree,
        // halving-doubling: their shape differs from node to node, and a whole schedule of
        // the unfolded system is what folding avoids) and the schedules that do not repeat.
        const std::vector<size_t> order = chooser.ranked(double(count) * w.elem_bytes);
        std::optional<InputError> first;
        for (const size_t c : order) {
          if (folds[c] < 0) {
            coll::CollParams probe = w.coll_params(n, 8 * uint64_t(n));
            probe.channels = 1;
            probe.slices = chooser.slices[c];
            probe.rank_limit = folded + 1;
            coll::Schedule s = coll::make_schedule(w.collective, chooser.names[c], probe,
                                                   spec.domain_size);
            bool ok = true;
            for (size_t r = size_t(folded) + 1; r < s.programs.size() && ok; ++r)
              ok = s.programs[r].ops.empty();
            try {
              if (ok) sys.fold_schedule(s);
            } catch (const InputError&) {
              ok = false;
            }
            folds[c] = ok ? 1 : 0;
          }
          if (!folds[c]) continue;
          try {
            return build(chooser.names[c], chooser.protos[c], chooser.slices[c],
                         chooser.label(c));
          } catch (const InputError& e) {
            if (!first) first = e;
          }
        }
        if (first) throw *first;
        throw InputError(spec.file + ": simulation.flow_fold: no candidate of algorithm auto "
                         "folds (" + std::to_string(order.size()) + " tried); hint: set "
                         "simulation.flow_fold: false, or name an algorithm that repeats "
                         "from node to node (ring, hierarchical)");
      };
  // Folded: every size's schedule is checked for the fold's symmetry before the run (a bad
  // input, exit 2), then built again when its row starts.
  if (folded != n)
    for (uint64_t bytes : sizes) schedule(bytes / w.elem_bytes);
  // Between rows, as at the packet level: the last steps' protocol messages (slot
  // releases) arrive and the reduction engines finish before the next row starts, so a
  // row's messages never meet the next row's (docs/collectives.md, "Independent rows").
  CollectiveSweep sweep("sweep", sys.engine(), n, sizes, w.elem_bytes, schedule, nullptr, w.root,
                        CollectiveSweep::Fabric{[&sys] { return sys.messages_in_flight() > 0; },
                                                [&sys] { return sys.idle_at(); }, [] {}});
  const double sim0 = user_cpu_s();
  simulate(spec.simulation.time_limit_ps, progress_mode(quiet, outputs.progress_s), [&] {
    return runner ? job_progress(runner->started(), runner->finished(), runner->total())
                  : sweep_progress(sweep.rows(), sweep.finished(), sizes);
  });
  const double simulate_cpu_s = user_cpu_s() - sim0;
  const uint64_t now = Scheduler::time();
  if (!sweep.finished() || (runner && !runner->finished())) {
    report_stop(spec, progress_text(spec, sweep, runner.get()), now);  // SIGINT, wall limit
    if (now >= spec.simulation.time_limit_ps)
      throw InputError(spec.file + ": simulation.time_limit: the workload did not finish within " +
                       std::to_string(double(spec.simulation.time_limit_ps) * 1e-12) +
                       " s of simulated time; raise simulation.time_limit or shrink the workload");
    throw InternalError("flow level: the simulation ran out of events before the workload "
                        "finished (deadlock): " +
                        std::to_string(sys.engine().ops_completed()) + " ops completed, " +
                        std::to_string(sys.messages_in_flight()) + " messages in flight");
  }
  RunCost cost;
  cost.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  cost.auto_cost_cpu_s = auto_cpu_s;
  cost.simulate_cpu_s = simulate_cpu_s;
  cost.kernel_events = g_kernel_events;
  cost.delta_cycles = sc_core::sc_delta_count();
  cost.peak_rss_kib = peak_rss_kib();
  const double cpu = user_cpu_s() - cpu0;
  const double sent = sys.payload_sent(), delivered = sys.payload_delivered();
  if (sys.messages_in_flight() != 0 || sent != delivered)
    throw InternalError("flow level accounting: " + std::to_string(sys.messages_in_flight()) +
                        " messages in flight, " + std::to_string(sent) + " B sent vs " +
                        std::to_string(delivered) + " B delivered");
  const std::vector<RowResult> rows = make_rows(spec, sweep.rows());
  char line[400];
  std::snprintf(line, sizeof line,
                "# flow level: %llu messages (%llu control), %llu flows, %llu flow rates "
                "recomputed, %llu paths, %zu link classes; ranks simulated %d of %d%s; "
                "%.2f s CPU\n",
                (unsigned long long)sys.messages(), (unsigned long long)sys.control_messages(),
                (unsigned long long)sys.flows_started(),
                (unsigned long long)sys.flows_recomputed(),
                (unsigned long long)sys.paths_computed(), sys.link_classes(), sys.active_ranks(),
                n,
                sys.fold_nodes() ? (" (folded: a period of " + std::to_string(sys.fold_nodes()) +
                                    " nodes)").c_str()
                                 : "",
                cpu);
  if (!quiet) {
    if (train) train->print(std::cout);
    else if (traffic) traffic->print(std::cout);
    else {
      print_table(std::cout, spec, rows);
      print_published(std::cout, compare_published(spec.published, w.collective, compared_rows(rows)));
    }
    std::cout << line;
    print_cost(std::cout, cost);
  }
  if (out) {
    nlohmann::json checks = {{"messages_in_flight", sys.messages_in_flight()},
                             {"payload_bytes_sent", sent},
                             {"payload_bytes_delivered", delivered}};
    nlohmann::json j =
        results_json(spec, rows, nlohmann::json::object(), checks, cost, command_line);
    j["flow"] = sys.stats_json();
    j["flow"]["cpu_s"] = cpu;
    if (is_auto) j["auto_cost_model"] = chooser.to_json();
    if (train) {
      j["workload"] = w.type;
      j["collective"] = nullptr;
      j["algorithm"] = w.algorithm;
      j["rows"] = train->rows_json();
      j["units"] = train->units_json();
    }
    if (traffic) {
      j["workload"] = w.type;
      j["collective"] = nullptr;
      j["algorithm"] = nullptr;
      j["rows"] = traffic->rows_json();
      j["units"] = traffic->units_json();
      j["traffic"] = traffic->summary_json();
    }
    const std::filesystem::path file = out_dir / "results.json";
    write_file_atomic(file.string(), json_text(j));
    if (!quiet) std::cout << "# results: " << file.string() << "\n";
  }
  return kExitOk;
}

}  // namespace fabricsim
