#include "fabrics/cli/app.h"

#include <sys/resource.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include <systemc>

#include "fabrics/cli/compare.h"
#include "fabrics/cli/flow_run.h"
#include "fabrics/cli/outcome.h"
#include "fabrics/cli/output.h"
#include "fabrics/cli/outputs.h"
#include "fabrics/cli/procs.h"
#include "fabrics/cli/progress.h"
#include "fabrics/cli/report.h"
#include "fabrics/cli/results.h"
#include "fabrics/cli/sweep.h"
#include "fabrics/cli/sweep_file.h"
#include "fabrics/cli/trace.h"
#include "fabrics/config/input_guard.h"
#include "fabrics/plugins.h"
#include "fabrics/sim/faults.h"
#include "fabrics/sim/system.h"
#include "fabrics/sim/traffic_run.h"
#include "fabrics/sim/training_run.h"
#include "fabrics/systems/catalog.h"
#include "fabrics/systems/ceiling.h"
#include "fabrics/systems/cost_model.h"
#include "fabrics/systems/estimate.h"
#include "fabrics/systems/system_spec.h"
#include "models/collectives/algorithms.h"
#include "models/collectives/job_runner.h"
#include "models/collectives/sweep.h"
#include "models/core/errors.h"
#include "models/core/packet.h"
#include "models/core/run_control.h"
#include "models/core/scheduler.h"
#include "models/core/types.h"
#include "models/core/units.h"

#if defined(__SANITIZE_ADDRESS__)
#define FABRICSIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FABRICSIM_ASAN 1
#endif
#endif

namespace fabricsim {

namespace {

const char* kUsage =
    "usage:\n"
    "  fabricsim run CONFIG [--set key.path=value]... [--out DIR] [--seed N] [--quiet]\n"
    "                [--series INTERVAL] [--series-samples N] [--ports GLOB[,GLOB]...]\n"
    "                [--histograms] [--trace FILE] [--trace-max-ops N] [--progress[=SECONDS]]\n"
    "  fabricsim check CONFIG|COMPARE_FILE|SWEEP_FILE [--set key.path=value]...\n"
    "  fabricsim compare FILE [--set key.path=value]... [--out DIR] [-j N] [--quiet]\n"
    "  fabricsim sweep SWEEP_FILE [--set key.path=value]... [--out DIR] [-j N] [--shard I/N]\n"
    "                 [--quiet] [--progress[=SECONDS]]\n"
    "  fabricsim report RESULTS.json... -o REPORT.html [--title TEXT]\n"
    "  fabricsim describe [TYPE]\n"
    "  fabricsim --version | --help\n"
    "exit codes: 0 success, 2 bad input (or a run that cannot finish within its limits),\n"
    "  3 internal error, 4 stopped by SIGINT or SIGTERM\n";

const char* kOutOfMemory =
    "fabricsim: error: out of memory: the run needed more than its memory limit "
    "(simulation.memory_limit, by default three quarters of this machine's memory, or a "
    "ulimit); `fabricsim check` prints the estimate; shrink the system or the workload\n";

struct Options {
  std::string command;
  std::string config;
  std::vector<std::string> sets;
  std::optional<std::string> out;
  std::optional<uint64_t> seed;
  bool quiet = false;
  std::string type;
  OutputOptions outputs;  // run: statistics, tables, series, trace, progress (outputs.h)
  int jobs = 1;           // compare: systems run at once
};

[[noreturn]] void usage_error(const std::string& problem) {
  throw InputError("command line: " + problem + "\n" + kUsage);
}

// --seed takes exactly the values the config's `seed` takes (its declared range).
uint64_t parse_seed(const std::string& v) {
  const cfg::TypeSpec top = config_top_spec();  // by value: keep it while `spec` is used
  const ParamSpec& spec = top.params.at(2);
  FABRICSIM_ASSERT(spec.key == "seed", "the top-level spec lists seed third");
  const auto max = uint64_t(spec.max);
  uint64_t seed = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seed);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || seed > max)
    usage_error("--seed takes an integer from 0 to " + std::to_string(max) +
                " (the range of the config's seed), got '" + cfg::printable(v) + "'");
  return seed;
}

Options parse_args(const std::vector<std::string>& args) {
  Options o;
  if (args.empty()) usage_error("missing command");
  o.command = args[0];
  if (o.command != "run" && o.command != "check" && o.command != "describe" &&
      o.command != "compare")
    usage_error("unknown command '" + o.command + "'");
  std::vector<std::string> positional;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& flag) -> std::string {
      if (i + 1 >= args.size()) usage_error(flag + " needs a value");
      return args[++i];
    };
    if (a == "--set") {
      o.sets.push_back(value(a));
    } else if (a.rfind("--set=", 0) == 0) {
      o.sets.push_back(a.substr(6));
    } else if (a == "--out" && (o.command == "run" || o.command == "compare")) {
      o.out = value(a);
    } else if (a == "--seed" && o.command == "run") {
      o.seed = parse_seed(value(a));
    } else if (a == "--quiet" && (o.command == "run" || o.command == "compare")) {
      o.quiet = true;
    } else if (o.command == "run" && parse_output_option(args, i, o.outputs)) {
    } else if ((a == "-j" || a == "--jobs") && o.command == "compare") {
      o.jobs = parse_jobs(a, value(a));
    } else if (a.size() > 1 && a[0] == '-') {
      usage_error("unknown option '" + a + "' for '" + o.command + "'");
    } else {
      positional.push_back(a);
    }
  }
  if (o.command == "describe") {
    if (positional.size() > 1) usage_error("describe takes at most one TYPE");
    if (!positional.empty()) o.type = positional[0];
  } else {
    if (positional.size() != 1)
      usage_error(o.command + " takes exactly one " +
                  (o.command == "compare" ? "FILE" : "CONFIG file"));
    o.config = positional[0];
  }
  return o;
}

std::string join_args(const std::vector<std::string>& args) {
  std::string s = "fabricsim";
  for (const auto& a : args) s += " " + a;
  return s;
}

// Caps the address space (address_space_cap: the memory limit plus a margin, within the
// machine's memory), so that a run the estimate got wrong fails its next allocation
// (std::bad_alloc: exit 2, below) instead of growing until the machine's OOM killer ends it,
// or others. Not under AddressSanitizer, which maps terabytes of shadow.
void limit_address_space(uint64_t memory_limit) {
#ifdef FABRICSIM_ASAN
  (void)memory_limit;
#else
  const rlim_t cap = rlim_t(address_space_cap(memory_limit, machine_memory()));
  struct rlimit rl {};
  // Only ever lowered: a tighter limit set by the caller (ulimit -v) stays.
  if (getrlimit(RLIMIT_AS, &rl) == 0 && (rl.rlim_cur == RLIM_INFINITY || cap < rl.rlim_cur) &&
      (rl.rlim_max == RLIM_INFINITY || cap <= rl.rlim_max)) {
    rl.rlim_cur = cap;
    setrlimit(RLIMIT_AS, &rl);
  }
#endif
}

// A finished run's system is not destroyed: the process ends next, and SystemC's module
// registry looks for each module it removes from its front, so destroying the ~42,500
// modules of the 576-GPU domain (41,472 ports) cost ~0.6 s, quadratic in the modules
// (docs/performance.md). Everything the run writes is written and flushed before this.
// The destructors of the models free memory only (no file or output is theirs). Under
// AddressSanitizer the system is destroyed as before, at the end of run(), after
// everything declared after it that refers to it (the observation, the sweep), so that
// the leak check sees every model freed. The observation (its series for every port,
// ~0.08 s to free on the 576-GPU domain) is left the same way.
void leave_to_exit(std::unique_ptr<System>& sys, std::unique_ptr<Observation>& obs) {
#ifdef FABRICSIM_ASAN
  (void)sys;
  (void)obs;
#else
  std::cout.flush();
  static std::vector<std::unique_ptr<System>>* kept = new std::vector<std::unique_ptr<System>>;
  static std::vector<std::unique_ptr<Observation>>* kept_obs =
      new std::vector<std::unique_ptr<Observation>>;
  kept_obs->push_back(std::move(obs));  // never destroyed: the process exits next
  kept->push_back(std::move(sys));
#endif
}

int run(const Options& o, const std::vector<std::string>& args) {
  const SystemSpec spec = load_system(o.config, o.sets, o.seed);
  limit_address_space(memory_limit(spec));
  // From here SIGINT, SIGTERM and the wall-clock limit stop the run cleanly (exit 4, or 2
  // for the limit) instead of killing it; the simulation reads the request between instants.
  const StopHandlers stop_handlers(double(spec.simulation.wall_limit_ps) * 1e-12);
  if (spec.simulation.flow()) return run_flow(spec, o.out, o.quiet, o.outputs, join_args(args));
  std::filesystem::path out_dir;
  if (o.out) {
    out_dir = *o.out;
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) throw InputError("--out " + *o.out + ": cannot create directory: " + ec.message());
  }

  // The busbw ceiling and elaboration read the routes the ring orders were found on
  // (SystemSpec::routes, computed once); they are freed before the packets take the
  // memory. The ceiling goes first, so that elaboration reuses what its scratch held.
  const Ceiling ceiling =
      spec.workload.is_training || spec.workload.is_traffic ? Ceiling{} : busbw_ceiling(spec);
  const auto wall0 = std::chrono::steady_clock::now();
  // On the heap so that a finished run can leave it to the process's exit (below).
  auto sys_owner = std::make_unique<System>(spec);
  System& sys = *sys_owner;
  spec.drop_routes();
  const WorkloadSpec& w = spec.workload;
  const int n = int(spec.ranks.size());
  sys.engine().set_sync(w.sync);
  const bool is_auto = w.algorithm == "auto";
  // auto, or a protocol chosen per size: the cost model picks (cost_model.h).
  const bool choose = !w.is_training && (is_auto || w.protocol == "auto");
  AutoChooser chooser;
  const double auto0 = user_cpu_s();
  if (choose) chooser = make_auto_chooser(spec);
  const double auto_cpu_s = choose ? user_cpu_s() - auto0 : -1.0;
  const bool training = w.is_training;
  // Training workloads (fabrics/sim/training_run.h): jobs back to back instead of a size sweep.
  std::unique_ptr<TrainingWorkload> train;
  std::unique_ptr<JobRunner> runner;
  std::vector<FaultWindow> job_windows;  // jobs as they end (fault reports)
  if (training) {
    train = std::make_unique<TrainingWorkload>(spec);
    runner = std::make_unique<JobRunner>(
        "jobs", sys.engine(), train->take_jobs(),
        [&](size_t i, uint64_t s, uint64_t e) {
          job_windows.push_back({"job " + std::to_string(i), s, e});
          train->job_done(i, s, e, sys.engine());
          if (runner->finished() && sys.faults()) sys.faults()->workload_done();
        });
    // Phased jobs (ocs_phases): a plan at phase boundaries (faults: ocs_phase_map) has the
    // OCS controller change the circuits before a phase starts.
    if (!w.phases.empty() && sys.faults() && !spec.faults.phase_maps.empty())
      runner->set_before([&w, &sys](size_t i, std::function<void()> go) {
        sys.faults()->phase_starts(w.phases[i % w.phases.size()].name, std::move(go));
      });
  }
  // Traffic workloads (fabrics/sim/traffic_run.h): their flows as one job.
  std::unique_ptr<TrafficWorkload> traffic;
  if (w.is_traffic) {
    traffic = std::make_unique<TrafficWorkload>(spec);
    runner = std::make_unique<JobRunner>(
        "jobs", sys.engine(), traffic->take_jobs(),
        [&](size_t, uint64_t s, uint64_t e) {
          job_windows.push_back({"the " + w.type + " flows", s, e});
          traffic->job_done(s, e, sys.engine());
          if (runner->finished() && sys.faults()) sys.faults()->workload_done();
        });
  }
  const bool jobs = training || traffic;
  const coll::AlgoInfo* algo =
      jobs ? nullptr : &coll::algo_info(w.collective, is_auto ? chooser.names.front() : w.algorithm);
  CollectiveSweep sweep("sweep", sys.engine(), n, jobs ? std::vector<uint64_t>{} : w.sizes(),
                        w.elem_bytes,
                        [&](uint64_t count) {
                          if (!choose) {
                            const coll::Protocol proto = coll::protocol_from_name(w.protocol);
                            coll::CollParams cp = w.coll_params(n, count, w.algorithm, proto);
                            cp.rings = &spec.rings;
                            coll::Schedule s = coll::make_schedule(w.collective, w.algorithm, cp,
                                                                   spec.domain_size);
                            s.protocol = proto;
                            if (w.protocol_model())
                              s.algorithm += std::string("/") + coll::protocol_name(proto);
                            return s;
                          }
                          // The cheapest candidate with its slices and protocol, and its
                          // label in the row ("hierarchical_nvls/4/simple").
                          const size_t c = chooser.pick(double(count) * w.elem_bytes);
                          coll::CollParams cp =
                              w.coll_params(n, count, chooser.names[c], chooser.protos[c]);
                          cp.slices = chooser.slices[c];
                          cp.rings = &spec.rings;
                          coll::Schedule s = coll::make_schedule(w.collective, chooser.names[c],
                                                                 cp, spec.domain_size);
                          s.protocol = chooser.protos[c];
                          s.algorithm = chooser.label(c);
                          return s;
                        },
                        spec.simulation.functional ? algo : nullptr, w.root,
                        CollectiveSweep::Fabric{
                            [&sys] {
                              return PacketPool::global().outstanding() > 0 ||
                                     sys.messages_in_flight() > 0;
                            },
                            [&sys] { return sys.idle_at(); },
                            [&sys] { sys.reset_dynamic_state(); }});
  if (FaultManager* f = sys.faults()) {
    f->set_done([&sweep, &runner] { return sweep.finished() && (!runner || runner->finished()); });
    if (!jobs) sweep.set_on_finished([f] { f->workload_done(); });
    // A size sweep's reports give the busbw ceiling with the failed links left out.
    if (!jobs)
      f->set_ceiling([&spec](const std::vector<char>& down) {
        SystemSpec without = spec;
        without.graph = topo::without_links(spec.graph, down);
        return busbw_ceiling(without).busbw_GBps;
      });
  }
  std::unique_ptr<Observation> obs = make_observation(sys, spec, o.outputs, o.out.has_value());
  const std::vector<uint64_t> sizes = jobs ? std::vector<uint64_t>{} : w.sizes();
  // Starvation ends the run early: with events left, the next one lies beyond the time
  // limit; with none, nothing can move any more (outcome.h tells which, and why).
  const double sim0 = user_cpu_s();
  if (!stop_requested())
    simulate(spec.simulation.time_limit_ps, progress_mode(o.quiet, o.outputs.progress_s), [&] {
      return runner ? job_progress(runner->started(), runner->finished(), runner->total())
                    : sweep_progress(sweep.rows(), sweep.finished(), sizes);
    });
  const double simulate_cpu_s = user_cpu_s() - sim0;
  const uint64_t now = Scheduler::time();
  if (obs) obs->finish(now);
  if (!sweep.finished() || (runner && !runner->finished()))
    report_unfinished(spec, sys, sweep, runner.get(), now, sc_core::sc_pending_activity());
  RunCost cost;
  cost.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  cost.auto_cost_cpu_s = auto_cpu_s;
  cost.simulate_cpu_s = simulate_cpu_s;
  cost.kernel_events = g_kernel_events;
  cost.delta_cycles = sc_core::sc_delta_count();
  cost.transaction_hops = sys.transaction_hops();
  cost.packet_hops = sys.packet_hops();
  cost.payload_bytes_moved = sys.payload_bytes_moved();
  cost.peak_rss_kib = peak_rss_kib();
  cost.estimated_memory_bytes = spec.estimate.memory_bytes;
  cost.estimated_transaction_hops = spec.estimate.transaction_hops;
  cost.estimated_wall_s = spec.estimate.wall_s;
  cost.memory_limit = memory_limit(spec);
  cost.wall_limit_ps = spec.simulation.wall_limit_ps;

  // Every packet injected was delivered or lost to a fault: the pool is empty and bytes
  // balance, sent = delivered + lost (devices that absorb data, e.g. an NVLS switch
  // reducing it, count it as sunk, and what they emit as sourced; a transaction sent
  // again after a loss counts as sent twice and lost once).
  const uint64_t sent = sys.payload_sourced(), received = sys.payload_sunk();
  const uint64_t lost = sys.faults() ? sys.faults()->lost_payload() : 0;
  const uint64_t outstanding = PacketPool::global().outstanding();
  if (outstanding != 0 || sent != received + lost)
    throw InternalError("packet accounting: " + std::to_string(outstanding) +
                        " transactions outstanding, " + std::to_string(sent) + " B sent vs " +
                        std::to_string(received) + " B received + " + std::to_string(lost) +
                        " B lost");
  // Every buffer is empty again: each port has all its credits back (or on their way), no
  // replay buffer holds anything (faults cut, hold and return transactions and credits).
  if (const std::string c = sys.credits_check(); !c.empty())
    throw InternalError("credit accounting at the end of the run: " + c);
  // Lossy fabrics: every packet a transport injected was received by one or dropped by a
  // switch with a counted reason (and the bytes balance above shows its data came again).
  const PacketLedger ledger = sys.ledger();
  if (ledger.injected != ledger.received + ledger.dropped_total())
    throw InternalError("packet ledger: " + std::to_string(ledger.injected) +
                        " packets injected vs " + std::to_string(ledger.received) +
                        " received + " + std::to_string(ledger.dropped_total()) + " dropped");
  const std::vector<RowResult> rows = make_rows(spec, sweep.rows());
  for (const RowResult& r : rows)
    if (r.checked && r.wrong)
      throw InternalError("functional check failed: " + std::to_string(r.wrong) +
                          " wrong elements at size " + std::to_string(r.bytes));
  nlohmann::json checks = {{"packets_outstanding", outstanding},
                           {"payload_bytes_sent", sent},
                           {"payload_bytes_delivered", received},
                           {"transactions_acquired", PacketPool::global().acquired()},
                           {"functional", spec.simulation.functional}};
  if (sys.faults()) checks["payload_bytes_lost"] = lost;
  if (ledger.injected)  // scale-out transports: the lossy fabric's packet ledger
    checks["packet_ledger"] = {{"injected", ledger.injected},
                               {"received", ledger.received},
                               {"dropped", ledger.dropped},
                               {"trimmed", ledger.trimmed},
                               {"retransmitted", ledger.retransmitted},
                               {"duplicates_received", ledger.duplicates}};
  const Port::Counters retry = sys.retry_totals();
  // The ledger in one line (scale-out transports only).
  const auto print_ledger = [&](std::ostream& os) {
    if (!ledger.injected) return;
    const auto list = [](const std::map<std::string, uint64_t>& m) {
      std::string s;
      for (const auto& kv : m) s += (s.empty() ? "" : ", ") + kv.first + " " + std::to_string(kv.second);
      return s.empty() ? std::string("none") : s;
    };
    os << "# packet ledger: " << ledger.injected << " injected = " << ledger.received
       << " received + " << ledger.dropped_total() << " dropped (" << list(ledger.dropped)
       << "); " << ledger.trimmed << " trimmed; " << ledger.retransmitted_total()
       << " retransmitted (" << list(ledger.retransmitted) << "); " << ledger.duplicates
       << " duplicates discarded\n";
  };
  // The rows or jobs a fault may have fallen into, and the fault lines under the table.
  std::vector<FaultWindow> windows = job_windows;
  if (!jobs)
    for (const SweepRow& r : sweep.rows())
      windows.push_back({"the " + format_bytes(r.bytes) + " " + w.collective, r.start_ps, r.end_ps});
  const auto print_faults = [&](std::ostream& os) {
    if (sys.faults())
      for (const std::string& line : sys.faults()->summary(windows)) os << line << "\n";
  };
  if (!o.quiet && train) {
    train->print(std::cout);
    print_faults(std::cout);
    print_cost(std::cout, cost);
  } else if (!o.quiet && traffic) {
    traffic->print(std::cout);
    print_ledger(std::cout);
    print_faults(std::cout);
    print_cost(std::cout, cost);
  } else if (!o.quiet) {
    print_table(std::cout, spec, rows);
    char line[256];
    if (ceiling.busbw_GBps > 0)
      std::snprintf(line, sizeof line, "# Ceiling busbw        : %.2f GB/s (limited by %s)\n",
                    ceiling.busbw_GBps, ceiling.limited_by.c_str());
    else
      std::snprintf(line, sizeof line, "# Ceiling busbw        : %s\n",
                    ceiling.limited_by.empty() ? "none (no traffic)" : ceiling.limited_by.c_str());
    std::cout << line;
    print_published(std::cout, compare_published(spec.published, spec.workload.collective, compared_rows(rows)));
    if (retry.crc_errors || retry.replay_stall_ps) {
      char buf[400];
      std::snprintf(buf, sizeof buf,
                    "# link retry (all ports): %llu CRC errors, %llu replays, %llu replayed wire "
                    "bytes (%.4f%% of %llu), %.3f us transmitter time lost to retry, %.3f us "
                    "replay-buffer stall\n",
                    (unsigned long long)retry.crc_errors, (unsigned long long)retry.replays,
                    (unsigned long long)retry.replay_wire_bytes,
                    retry.tx_wire_bytes ? 100.0 * double(retry.replay_wire_bytes) /
                                              double(retry.tx_wire_bytes)
                                        : 0.0,
                    (unsigned long long)retry.tx_wire_bytes, double(retry.retry_ps) * 1e-6,
                    double(retry.replay_stall_ps) * 1e-6);
      std::cout << buf;
    }
    print_ledger(std::cout);
    print_faults(std::cout);
    print_cost(std::cout, cost);
  }
  if (o.out) {
    // The statistics go in as results_text writes the file, one entry at a time.
    nlohmann::json j =
        results_json(spec, rows, nlohmann::json::object(), checks, cost, join_args(args));
    j["link_retry"] = {{"crc_errors", retry.crc_errors},
                       {"replays", retry.replays},
                       {"replay_wire_bytes", retry.replay_wire_bytes},
                       {"retry_ps", retry.retry_ps},
                       {"replay_stall_ps", retry.replay_stall_ps}};
    if (!jobs) j["ceiling"] = ceiling_json(ceiling);
    if (sys.faults()) j["faults"] = sys.faults()->json(windows);
    if (choose) j["auto_cost_model"] = chooser.to_json();
    if (train) {  // training rows replace the sweep's; units per column
      j["workload"] = w.type;
      j["collective"] = nullptr;  // several collectives; the table's notes name them
      j["algorithm"] = w.algorithm;
      j["rows"] = train->rows_json();
      j["units"] = train->units_json();
    }
    if (traffic) {  // one row per flow, and the summary
      j["workload"] = w.type;
      j["collective"] = nullptr;
      j["algorithm"] = nullptr;
      j["rows"] = traffic->rows_json();
      j["units"] = traffic->units_json();
      j["traffic"] = traffic->summary_json();
    }
    // Energy of every row (a size or a training step): the windows the rows ran in.
    if (!traffic && w.phases.empty())
      for (size_t r = 0; r < j["rows"].size() && r < obs->windows().size(); ++r)
        j["rows"][r]["energy"] = energy_json(spec, *obs, r);
    // ocs_phases: one window for the whole job (first start to last end, the waits for
    // the circuits included): the job's row.
    if (!w.phases.empty() && !obs->windows().empty())
      j["rows"][j["rows"].size() - 1]["energy"] = energy_json(spec, *obs, 0);
    const std::filesystem::path file = out_dir / "results.json";
    write_file_atomic(file.string(),
                      results_text(j, sys.stats_registry(), now, *obs, jobs));
    if (!o.quiet) std::cout << "# results: " << file.string() << "\n";
    write_tables(out_dir, rows, jobs ? &j["rows"] : nullptr, *obs);
  }
  if (o.outputs.trace) write_trace(*o.outputs.trace, spec, *obs);
  leave_to_exit(sys_owner, obs);
  return kExitOk;
}

}  // namespace

int app_main(const std::vector<std::string>& args) {
  try {
    register_builtin_plugins();
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
      std::cout << kUsage;
      return kExitOk;
    }
    if (!args.empty() && args[0] == "--version") {
      std::cout << "fabricsim " << FABRICSIM_VERSION << "\n";
      return kExitOk;
    }
    if (!args.empty() && args[0] == "sweep") return sweep_main(args);
    if (!args.empty() && args[0] == "report") return report_main(args);
    const Options o = parse_args(args);
    if (o.command == "describe") {
      std::cout << (o.type.empty() ? describe_all() : describe_one(o.type));
      return kExitOk;
    }
    if (o.command == "check" && is_sweep_file(o.config)) {
      const SweepSpec sw = load_sweep(o.config, o.sets);
      std::cout << sw.file << ": ok (sweep file, " << sw.points.size() << " points)\n";
      return kExitOk;
    }
    if (o.command == "check" && is_compare_file(o.config)) {
      const CompareSpec c = load_compare(o.config, o.sets);
      std::cout << c.file << ": ok (compare file, " << c.systems.size() << " systems)\n";
      return kExitOk;
    }
    if (o.command == "check") {
      const SystemSpec spec = load_system(o.config, o.sets, std::nullopt);
      std::cout << spec.file << ": ok (" << spec.graph.devices.size() << " devices, "
                << spec.graph.links.size() << " links, " << spec.ranks.size() << " ranks)\n"
                << "# estimate: " << spec.estimate.text << "\n";
      if (spec.workload.channels_auto) std::cout << "# " << spec.workload.channels_rule << "\n";
      return kExitOk;
    }
    if (o.command == "compare") {
      const CompareSpec c = load_compare(o.config, o.sets);
      const StopHandlers stop_handlers;  // SIGINT/SIGTERM: stop the running children, then us
      return run_compare(c, o.out, o.quiet, join_args(args), o.jobs);
    }
    return run(o, args);
  } catch (const InputError& e) {
    std::cerr << "fabricsim: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const Interrupted& e) {
    std::cerr << "fabricsim: interrupted: " << e.what() << "\n";
    return kExitInterrupted;
  } catch (const InternalError& e) {
    std::cerr << "fabricsim: internal error: " << e.what() << "\n";
    return kExitInternal;
  } catch (const std::bad_alloc&) {
    std::cerr << kOutOfMemory;
    return kExitBadInput;
  } catch (const sc_core::sc_report& e) {
    // The kernel reports an exception thrown inside a process as its own error.
    if (std::string(e.what()).find("std::bad_alloc") != std::string::npos) {
      std::cerr << kOutOfMemory;
      return kExitBadInput;
    }
    std::cerr << "fabricsim: internal error (SystemC): " << e.what() << "\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "fabricsim: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

}  // namespace fabricsim
