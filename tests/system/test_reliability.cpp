// How runs end when they cannot finish, are stopped or cannot write: the fabricsim binary
// as a user (or a batch system) drives it. Every case checks the exit code, the message
// and what is on disk afterwards.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "tests/system/system_util.h"

using namespace fabricsim::systest;
namespace fs = std::filesystem;

namespace {

// A child running `fabricsim ARGS` with stdout/stderr in files, and extra environment.
struct Child {
  pid_t pid = -1;
  std::string out, err;
};

Child spawn(const std::vector<std::string>& args, const std::string& tag,
            const std::vector<std::string>& env = {}) {
  Child c;
  c.out = "/tmp/fabricsim_rel_" + tag + "_" + std::to_string(::getpid()) + ".out";
  c.err = "/tmp/fabricsim_rel_" + tag + "_" + std::to_string(::getpid()) + ".err";
  std::vector<std::string> argv_s{FABRICSIM_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  c.pid = ::fork();
  if (c.pid == 0) {
    const int o = ::open(c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    for (const std::string& kv : env) ::putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return c;
}

// The child's exit code (128 + signal if it died by one); -1 if it ran past `seconds`.
int wait_exit(const Child& c, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    if (::waitpid(c.pid, &status, WNOHANG) == c.pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(c.pid, SIGKILL);
  ::waitpid(c.pid, &status, 0);
  return -1;
}

// Waits until `path` exists (true) or `seconds` pass (false).
bool wait_for_file(const std::string& path, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

// Names in `dir` other than results.json: temporary files left behind would be listed.
// Temporary files left behind (a complete run also writes rows.csv and ports.csv beside
// results.json; an interrupted one writes nothing but may leave no ".NAME.tmp.PID" either).
std::vector<std::string> leftovers(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.find(".tmp") != std::string::npos) names.push_back(n);
  }
  return names;
}

// Everything but results.json (an interrupted run writes no table either).
std::vector<std::string> others(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != "results.json") names.push_back(e.path().filename().string());
  return names;
}

const char* kOld = "{\"previous\": \"complete results of an earlier run\"}\n";

std::string out_dir_with_old_results(const std::string& tag) {
  const std::string d = fresh_dir(tag);
  fs::create_directories(d);
  std::ofstream(d + "/results.json") << kOld;
  return d;
}

}  // namespace

// The time limit is the user's to set: reaching it is exit 2 with what was done, even when
// the next event lies beyond it (the kernel then stops early, which used to be read as a
// deadlock, exit 3).
TEST(RunLimits, TimeLimitIsExit2WithWhatWasDone) {
  RunResult r = run_fabricsim({"run", source("configs/minimal.yaml"), "--set",
                               "simulation.time_limit=1ns"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("minimal.yaml:<--set>: simulation.time_limit: the workload did not "
                       "finish within 1ns of simulated time (0 of 4 sizes finished; the 64KiB "
                       "all_reduce started at 0.00 us was running)"),
            std::string::npos)
      << r.err;
  r = run_fabricsim({"run", source("configs/minimal.yaml"), "--set", "simulation.time_limit=100us"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("(3 of 4 sizes finished (64KiB in 2.62 us, 256KiB in 9.99 us, 1MiB in "
                       "39.48 us); the 4MiB all_reduce started at "),
            std::string::npos)
      << r.err;
  r = run_fabricsim({"run", source("configs/gb200_nvl72.yaml"), "--set",
                     "simulation.time_limit=10us"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("simulation.time_limit: the workload did not finish within 10us"),
            std::string::npos)
      << r.err;
  // A launch latency beyond the limit: nothing can start before it.
  r = run_fabricsim({"run", source("configs/minimal.yaml"), "--set", "workload.launch_latency=1s",
                     "--set", "simulation.time_limit=100ms"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("within 100ms of simulated time (0 of 4 sizes finished"), std::string::npos)
      << r.err;
}

// A launch latency delays every collective of a sweep by exactly itself, the first one
// included (it used to abort the run: SystemC refused the timer created while running).
TEST(RunLimits, LaunchLatencyDelaysEveryCollectiveByItself) {
  const std::vector<std::string> base{"run", source("configs/minimal.yaml"), "--quiet"};
  RunResult a = run_fabricsim(base, fresh_dir("launch0"));
  std::vector<std::string> with = base;
  with.insert(with.end(), {"--set", "workload.launch_latency=1us"});
  RunResult b = run_fabricsim(with, fresh_dir("launch1"));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  ASSERT_EQ(a.results["rows"].size(), b.results["rows"].size());
  for (size_t i = 0; i < a.results["rows"].size(); ++i)
    EXPECT_NEAR(b.results["rows"][i]["time_us"].get<double>() -
                    a.results["rows"][i]["time_us"].get<double>(),
                1.0, 1e-6)
        << "row " << i;
}

// The state letter of /proc/PID/stat ('R', 'S', 'T' stopped, 'Z' exited, ...).
char proc_state(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(f, line);
  const size_t paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() ? '?' : line[paren + 2];
}

// Stops `pid` (SIGSTOP) and waits until it is stopped or gone.
void freeze(pid_t pid) {
  ::kill(pid, SIGSTOP);
  for (char st = proc_state(pid); st != 'T' && st != 't' && st != 'Z' && st != '?';
       st = proc_state(pid))
    std::this_thread::sleep_for(std::chrono::microseconds(100));
}

// True if `pid` catches `sig` (its handler is installed): /proc/PID/status, SigCgt.
bool catching(pid_t pid, int sig) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("SigCgt:", 0) == 0)
      return std::stoull(line.substr(7), nullptr, 16) >> (sig - 1) & 1;
  return false;
}

// True once `pid` catches `sig`; false if it does not within `seconds`.
bool wait_catching(pid_t pid, int sig, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (catching(pid, sig)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

// True once `pid` catches `sig`, with `pid` left stopped. The child runs in slices of about
// a millisecond between checks, so it is frozen at most one slice after installing the
// handler however busy the machine is (a stop lands at the child's next return to user
// space, often right after a system call).
bool frozen_once_catching(pid_t pid, int sig, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  freeze(pid);
  while (std::chrono::steady_clock::now() < end) {
    if (catching(pid, sig)) return true;
    ::kill(pid, SIGCONT);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    freeze(pid);
  }
  return false;
}

// A run whose estimate fits the wall-clock limit but which takes longer anyway (here it is
// frozen by SIGSTOP past the limit, as a machine overloaded by other jobs would freeze it)
// stops at the limit with exit 2 and what it did. One whose estimate does not fit is
// refused before it starts. The run is sized so that its estimate (2.1e6 transaction-hops,
// about 4.2 s at the estimate's rate) fits 5 s while it takes about 0.7 s of wall time here,
// so that the freeze, a slice after the timer's arming, comes well before its end even on
// a busy machine (minimal.yaml as shipped runs for a few milliseconds).
TEST(RunLimits, WallLimitStopsTheRunWithWhatWasDone) {
  const auto t0 = std::chrono::steady_clock::now();
  const Child c = spawn({"run", source("configs/minimal.yaml"), "--set", "simulation.wall_limit=5s",
                         "--set", "workload.max_bytes=16MiB"},
                        "wall");
  // The limit's timer is armed (StopHandlers installs the handler after arming it) and the
  // run is frozen.
  const bool frozen = frozen_once_catching(c.pid, SIGALRM, 30);
  if (!frozen) ::kill(c.pid, SIGKILL);  // never leave a stopped child behind
  ASSERT_TRUE(frozen) << slurp(c.err);
  std::this_thread::sleep_for(std::chrono::milliseconds(5500));
  ::kill(c.pid, SIGCONT);
  EXPECT_EQ(wait_exit(c, 30), 2) << slurp(c.err) << slurp(c.out);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string err = slurp(c.err);
  EXPECT_NE(err.find("minimal.yaml:<--set>: simulation.wall_limit: the run did not finish "
                     "within 5s of wall-clock time ("),
            std::string::npos)
      << err;
  EXPECT_NE(err.find(" sizes finished"), std::string::npos) << err;
  EXPECT_GE(wall, 5.0);
  RunResult r = run_fabricsim({"run", source("configs/dgx_h100.yaml"), "--set",
                               "simulation.wall_limit=1s"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("dgx_h100.yaml:<--set>: simulation.wall_limit: the workload needs an "
                       "estimated "),
            std::string::npos)
      << r.err;
}

// SIGINT and SIGTERM stop a run cleanly: exit 4, a message with what was done, the
// previous complete results.json untouched and nothing else left in --out.
TEST(Interruption, SignalDuringTheRunKeepsThePreviousResults) {
  for (int sig : {SIGINT, SIGTERM}) {
    const std::string out = out_dir_with_old_results("sig" + std::to_string(sig));
    const Child c = spawn({"run", source("configs/dgx_h100.yaml"), "--out", out}, "sig");
    // The run (about 12 s) has installed its handlers and simulated a while: a fixed delay
    // alone would kill a run still loading on a busy machine.
    const bool handled = wait_catching(c.pid, sig, 60);
    if (!handled) ::kill(c.pid, SIGKILL);
    ASSERT_TRUE(handled) << slurp(c.err);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::kill(c.pid, sig);
    EXPECT_EQ(wait_exit(c, 30), 4) << slurp(c.err);
    const std::string err = slurp(c.err);
    EXPECT_NE(err.find(std::string("fabricsim: interrupted: stopped by ") +
                       (sig == SIGINT ? "SIGINT" : "SIGTERM") + " at simulated time "),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("sizes finished"), std::string::npos) << err;
    EXPECT_EQ(slurp(out + "/results.json"), kOld);
    EXPECT_TRUE(others(out).empty());
  }
}

// A signal while results.json is being written: the writer is paused half-way (test hook
// FABRICSIM_TEST_WRITE_PAUSE_MS) with half a file on disk in its temporary file; the stop
// removes it and the previous complete results.json stays.
TEST(Interruption, SignalWhileWritingKeepsThePreviousCompleteFile) {
  const std::string out = out_dir_with_old_results("midwrite");
  const Child c = spawn({"run", source("configs/minimal.yaml"), "--out", out, "--quiet"},
                        "midwrite", {"FABRICSIM_TEST_WRITE_PAUSE_MS=20000"});
  // The temporary file is ".results.json.tmp.<pid>" next to results.json.
  const std::string tmp = out + "/.results.json.tmp." + std::to_string(c.pid);
  ASSERT_TRUE(wait_for_file(tmp, 60)) << slurp(c.err);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string half = slurp(tmp);
  EXPECT_GT(half.size(), 1000u);
  EXPECT_THROW(
      {
        const nlohmann::json j = nlohmann::json::parse(half);
        (void)j;
      },
      nlohmann::json::parse_error);  // truly half a file
  ::kill(c.pid, SIGINT);
  EXPECT_EQ(wait_exit(c, 30), 4) << slurp(c.err);
  EXPECT_NE(slurp(c.err).find("stopped by SIGINT while writing"), std::string::npos)
      << slurp(c.err);
  EXPECT_EQ(slurp(out + "/results.json"), kOld);
  EXPECT_TRUE(others(out).empty());
  // Without a signal the same pause ends in the new complete file.
  const Child d = spawn({"run", source("configs/minimal.yaml"), "--out", out, "--quiet"},
                        "midwrite2", {"FABRICSIM_TEST_WRITE_PAUSE_MS=200"});
  EXPECT_EQ(wait_exit(d, 60), 0) << slurp(d.err);
  const nlohmann::json j = nlohmann::json::parse(slurp(out + "/results.json"));
  EXPECT_EQ(j["rows"].size(), 4u);
  EXPECT_TRUE(leftovers(out).empty());
}

// A write that fails (here the file-size limit, as a full disk would) is exit 2, names the
// reason, and leaves the previous results.json and no temporary file.
TEST(Interruption, FailedWriteKeepsThePreviousFile) {
  const std::string out = out_dir_with_old_results("fsize");
  const std::string cmd = "ulimit -f 8; exec '" + std::string(FABRICSIM_BINARY) + "' run '" +
                          source("configs/minimal.yaml") + "' --quiet --out '" + out +
                          "' 2>'" + out + ".err'";
  const int status = std::system(("bash -c \"" + cmd + "\"").c_str());
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2);
  const std::string err = slurp(out + ".err");
  EXPECT_NE(err.find("--out: cannot write " + out + "/results.json: File too large; nothing was "
                     "replaced (a previous results.json is kept)"),
            std::string::npos)
      << err;
  EXPECT_EQ(slurp(out + "/results.json"), kOld);
  EXPECT_TRUE(leftovers(out).empty());
}

// Hostile compare labels are refused before anything runs, with or without --out: no byte
// is written outside --out (nor anywhere: --out itself is not even created).
TEST(Compare, HostileLabelsWriteNothingAnywhere) {
  const std::string root = fresh_dir("labels");
  fs::create_directories(root + "/cwd");
  const std::string victim = root + "/victim";
  for (const std::string& label : {std::string(".."), std::string("a/../../../escaped"),
                                   victim, std::string("ok/../..")}) {
    const std::string file = root + "/compare.yaml";
    std::ofstream(file) << "systems:\n  - {config: " << source("configs/minimal.yaml")
                        << ", label: '" << label << "'}\n";
    for (bool with_out : {true, false}) {
      std::string cmd = "cd '" + root + "/cwd' && '" + std::string(FABRICSIM_BINARY) +
                        "' compare '" + file + "' --quiet" +
                        (with_out ? " --out '" + root + "/cwd/out'" : "") + " 2>'" + root +
                        "/err'";
      const int status = std::system(cmd.c_str());
      EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2) << label;
      EXPECT_NE(slurp(root + "/err").find("systems[0].label: label '" + label +
                                          "' is not a plain name"),
                std::string::npos)
          << slurp(root + "/err");
      EXPECT_TRUE(fs::is_empty(root + "/cwd")) << label;
      EXPECT_FALSE(fs::exists(victim));
      EXPECT_FALSE(fs::exists(root + "/escaped"));
    }
  }
}

// The resource estimate `check` prints and results.json keeps is on the safe side of what
// runs measure, and close enough to be useful: memory between 0.8x and 6x the peak RSS
// (the estimate fills every receive buffer with packets, the bound no ring reaches: GB200
// at 4 MiB is the widest, 5.4x), transaction-hops between 0.5x and 10x (it counts every
// message's pieces at the chunk size). The two NVLS runs per packet hold packets no buffer
// bounds (each reduce request fans out to a read per member, each store to a replica per
// member); before the estimate counted them it was 0.14x (DGX H100 nvls 64 MiB: 40 MiB
// against 292 MiB) and 0.43x (two nodes, hierarchical_nvls 32 MiB: 68 against 158 MiB).
// Aggregated, the NVLS pieces of hierarchical_nvls are cut over a GPU's 18 NVLink ports
// (~14 packets a transaction), and one packet per turn with aggregate_round_robin_packets;
// before the estimate counted that it was 0.20x and 0.02x of the transaction-hops, and
// GB200's 58 KiB ring messages on 16 GPUs 0.39x.
TEST(Estimate, IsOnTheSafeSideOfMeasuredRuns) {
  const std::vector<std::vector<std::string>> cases = {
      {"configs/minimal.yaml"},
      {"configs/dgx_h100.yaml", "--set", "workload.max_bytes=4MiB"},
      {"configs/2x_dgx_h100_ib.yaml", "--set", "workload.max_bytes=4MiB"},
      {"configs/pcie_8gpu.yaml", "--set", "workload.max_bytes=4MiB"},
      {"configs/gb200_nvl72.yaml", "--set", "workload.min_bytes=4MiB", "--set",
       "workload.max_bytes=4MiB"},
      {"configs/moe_dgx_h100.yaml"},
      {"configs/dgx_h100.yaml", "--set", "workload.algorithm=nvls", "--set",
       "simulation.aggregate_bytes=0B", "--set", "workload.min_bytes=64MiB", "--set",
       "workload.max_bytes=64MiB"},
      {"configs/16x_dgx_h100_ib.yaml", "--set", "workload.algorithm=hierarchical_nvls", "--set",
       "topology.nodes=2", "--set", "topology.spines=0", "--set", "topology.uplinks_per_rail=0",
       "--set", "simulation.aggregate_bytes=0B", "--set", "workload.min_bytes=32MiB", "--set",
       "workload.max_bytes=32MiB"},
      {"configs/16x_dgx_h100_ib.yaml", "--set", "workload.algorithm=hierarchical_nvls", "--set",
       "topology.nodes=2", "--set", "topology.spines=0", "--set", "topology.uplinks_per_rail=0",
       "--set", "workload.min_bytes=32MiB", "--set", "workload.max_bytes=32MiB"},
      {"configs/16x_dgx_h100_ib.yaml", "--set", "workload.algorithm=hierarchical_nvls", "--set",
       "topology.nodes=2", "--set", "topology.spines=0", "--set", "topology.uplinks_per_rail=0",
       "--set", "simulation.aggregate_round_robin_packets=false", "--set",
       "workload.min_bytes=32MiB", "--set", "workload.max_bytes=32MiB"},
      {"configs/gb200_nvl72.yaml", "--set", "topology.endpoints=16", "--set",
       "workload.min_bytes=64MiB", "--set", "workload.max_bytes=64MiB"}};
  for (const std::vector<std::string>& c : cases) {
    std::vector<std::string> args{"run", source(c[0]), "--quiet"};
    args.insert(args.end(), c.begin() + 1, c.end());
    RunResult r = run_fabricsim(args, fresh_dir("estimate"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json& cost = r.results["run_cost"];
    const double rss = cost["peak_rss_kib"].get<double>() * 1024;
    const double mem = cost["estimate"]["memory_bytes"].get<double>();
    const double hops = cost["transaction_hops"].get<double>();
    const double est_hops = cost["estimate"]["transaction_hops"].get<double>();
    EXPECT_GE(mem, 0.8 * rss) << c[0];
    EXPECT_LE(mem, 6.0 * rss) << c[0];
    EXPECT_GE(est_hops, 0.5 * hops) << c[0];
    EXPECT_LE(est_hops, 10.0 * hops) << c[0];
  }
}
