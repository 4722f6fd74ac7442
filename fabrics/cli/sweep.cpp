#include "fabrics/cli/sweep.h"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fabrics/cli/outputs.h"
#include "fabrics/cli/procs.h"
#include "fabrics/cli/progress.h"
#include "fabrics/cli/sweep_file.h"
#include "models/core/errors.h"

namespace fabricsim {

namespace fs = std::filesystem;

namespace {

const char* kSweepUsage =
    "usage: fabricsim sweep SWEEP_FILE [--set key.path=value]... [--out DIR] [-j N]\n"
    "                       [--shard I/N] [--quiet] [--progress[=SECONDS]] [run outputs]\n";

struct SweepOptions {
  std::string file;
  std::vector<std::string> sets;
  std::optional<std::string> out;
  int jobs = 1;
  int shard = 0, shards = 1;
  bool quiet = false;
  double progress_s = 0;
  std::vector<std::string> run_args;  // output options passed to every point's run
};

[[noreturn]] void usage_error(const std::string& problem) {
  throw InputError("command line: " + problem + "\n" + kSweepUsage);
}

SweepOptions parse(const std::vector<std::string>& args) {
  SweepOptions o;
  std::vector<std::string> positional;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) usage_error(a + " needs a value");
      return args[++i];
    };
    OutputOptions unused;
    const size_t before = i;
    if (a == "--set") {
      o.sets.push_back(value());
    } else if (a.rfind("--set=", 0) == 0) {
      o.sets.push_back(a.substr(6));
    } else if (a == "--out") {
      o.out = value();
    } else if (a == "-j" || a == "--jobs") {
      o.jobs = parse_jobs(a, value());
    } else if (a.rfind("-j", 0) == 0 && a.size() > 2 && a[2] != '-') {
      o.jobs = parse_jobs("-j", a.substr(2));
    } else if (a == "--shard") {
      const std::string v = value();
      const size_t slash = v.find('/');
      try {
        if (slash == std::string::npos) throw std::invalid_argument(v);
        size_t used = 0;
        o.shard = std::stoi(v.substr(0, slash), &used);
        if (used != slash) throw std::invalid_argument(v);
        o.shards = std::stoi(v.substr(slash + 1), &used);
        if (used != v.size() - slash - 1) throw std::invalid_argument(v);
      } catch (const std::exception&) {
        usage_error("--shard takes I/N (e.g. 0/8), got '" + v + "'");
      }
      if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards)
        usage_error("--shard " + v + ": need 0 <= I < N");
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--progress" || a.rfind("--progress=", 0) == 0) {
      OutputOptions p;
      (void)parse_output_option(args, i, p);
      o.progress_s = p.progress_s;
    } else if (a.size() > 1 && a[0] == '-' && parse_output_option(args, i, unused)) {
      if (unused.trace) usage_error("--trace is per run; trace one point with fabricsim run");
      o.run_args.insert(o.run_args.end(), args.begin() + long(before), args.begin() + long(i) + 1);
    } else if (a.size() > 1 && a[0] == '-') {
      usage_error("unknown option '" + a + "' for 'sweep'");
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 1) usage_error("sweep takes exactly one SWEEP_FILE");
  o.file = positional[0];
  return o;
}

// The MPI plug-in (fabrics/mpi/), when this process runs under an MPI launcher.
struct Mpi {
  int rank = 0, size = 1;
  int (*max)(int) = nullptr;
  int (*finalize)() = nullptr;
  bool on() const { return max != nullptr; }
};

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : -1;
}

Mpi start_mpi() {
  Mpi m;
  const int size = std::max(env_int("OMPI_COMM_WORLD_SIZE"), env_int("PMI_SIZE"));
  if (size <= 1) return m;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec).parent_path();
  void* h = nullptr;
  for (const fs::path& p : {exe / "libfabricsim_mpi.so", exe / "../lib/fabricsim/libfabricsim_mpi.so"})
    if (!h) h = ::dlopen(p.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!h)
    throw InputError("sweep: running under an MPI launcher (" + std::to_string(size) +
                     " ranks) but this fabricsim was built without MPI; install "
                     "libopenmpi-dev and rebuild, or run without mpirun (-j N, --shard I/N)");
  auto init = reinterpret_cast<int (*)(int*, int*)>(::dlsym(h, "fabricsim_mpi_init"));
  m.max = reinterpret_cast<int (*)(int)>(::dlsym(h, "fabricsim_mpi_max"));
  m.finalize = reinterpret_cast<int (*)()>(::dlsym(h, "fabricsim_mpi_finalize"));
  if (!init || !m.max || !m.finalize || init(&m.rank, &m.size) != 0)
    throw InternalError("sweep: the MPI plug-in failed to start");
  return m;
}

// One CSV line (fields quoted by csv_field) into its fields.
std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// Merges every done point into sweep.csv and sweep.json, prints the summary (`how`: what
// ran); returns the number of points not done.
size_t merge(const SweepSpec& spec, const fs::path& dir, const SweepOptions& o,
             const std::string& how) {
  std::vector<std::string> cols;  // the points' rows.csv columns, first seen first
  std::vector<std::vector<std::pair<std::string, std::string>>> lines;  // per point row
  std::vector<size_t> line_point;
  nlohmann::json points = nlohmann::json::array();
  std::vector<std::string> missing;
  for (const SweepPoint& pt : spec.points) {
    const fs::path pd = dir / "points" / pt.id;
    nlohmann::json jp = {{"index", pt.index}, {"id", pt.id}, {"config", pt.config}};
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [k, v] : pt.values) values[k] = v;
    jp["values"] = values;
    if (!fs::exists(pd / "results.json")) {
      jp["status"] = "missing";
      missing.push_back(pt.id);
      points.push_back(jp);
      continue;
    }
    jp["status"] = "done";
    const nlohmann::json r = nlohmann::json::parse(read_file(pd / "results.json"));
    for (const char* k : {"rows", "ceiling", "checks", "collective", "algorithm", "units"})
      if (r.contains(k)) jp[k] = r[k];
    points.push_back(jp);
    std::istringstream csv(read_file(pd / "rows.csv"));
    std::string line;
    std::vector<std::string> head;
    while (std::getline(csv, line)) {
      if (head.empty()) {
        head = csv_split(line);
        for (const std::string& h : head)
          if (std::find(cols.begin(), cols.end(), h) == cols.end()) cols.push_back(h);
        continue;
      }
      const std::vector<std::string> f = csv_split(line);
      std::vector<std::pair<std::string, std::string>> row;
      for (size_t c = 0; c < head.size() && c < f.size(); ++c) row.emplace_back(head[c], f[c]);
      lines.push_back(row);
      line_point.push_back(pt.index);
    }
  }
  std::ostringstream out;
  out << "point,point_id";
  for (const std::string& k : spec.keys) out << "," << csv_field(k);
  for (const std::string& c : cols) out << "," << csv_field(c);
  out << "\n";
  for (size_t l = 0; l < lines.size(); ++l) {
    const SweepPoint& pt = spec.points[line_point[l]];
    out << pt.index << "," << pt.id;
    for (const auto& kv : pt.values) out << "," << csv_field(kv.second);
    for (const std::string& c : cols) {
      std::string v;
      for (const auto& [k, x] : lines[l])
        if (k == c) v = x;
      out << "," << csv_field(v);
    }
    out << "\n";
  }
  write_file(dir / "sweep.csv", out.str());
  nlohmann::json j = {{"schema_version", 1},  {"kind", "sweep"},   {"name", spec.name},
                      {"sweep_file", spec.file}, {"keys", spec.keys}, {"points", points}};
  write_file(dir / "sweep.json", j.dump(2) + "\n");

  if (!o.quiet) {
    std::cout << "# fabricsim sweep: " << spec.name << " (" << spec.file << "), "
              << spec.points.size() << " points: " << how << ", " << missing.size()
              << " missing\n";
    std::cout << "# point";
    for (const std::string& k : spec.keys) std::cout << "  " << k;
    std::cout << "  rows  last_time_us  last_busbw_GBps\n";
    for (const nlohmann::json& p : points) {
      std::cout << "  " << p["id"].get<std::string>();
      for (const std::string& k : spec.keys) std::cout << "  " << p["values"][k].get<std::string>();
      if (p["status"] != "done") {
        std::cout << "  missing\n";
        continue;
      }
      const nlohmann::json& rows = p["rows"];
      char b[96] = "";
      if (!rows.empty() && rows.back().contains("time_us"))
        std::snprintf(b, sizeof b, "  %zu  %.2f  %.2f", rows.size(),
                      rows.back()["time_us"].get<double>(),
                      rows.back().value("busbw_GBps", 0.0));
      else
        std::snprintf(b, sizeof b, "  %zu", rows.size());
      std::cout << b << "\n";
    }
    std::cout << "# merged: " << (dir / "sweep.csv").string() << ", "
              << (dir / "sweep.json").string() << "\n";
  }
  for (const std::string& m : missing)
    std::cerr << "fabricsim: sweep: point " << m << " has no results (see "
              << (dir / "points" / (m + ".stderr")).string() << ")\n";
  return missing.size();
}

}  // namespace

int sweep_main(const std::vector<std::string>& args) {
  const SweepOptions o = parse(args);
  const SweepSpec spec = load_sweep(o.file, o.sets);
  Mpi mpi = start_mpi();
  const int shard = mpi.on() ? mpi.rank : o.shard, shards = mpi.on() ? mpi.size : o.shards;
  const fs::path dir = o.out ? fs::path(*o.out) : fs::path("out") / spec.name;
  std::error_code ec;
  fs::create_directories(dir / "points", ec);
  if (ec) throw InputError("--out " + dir.string() + ": cannot create directory: " + ec.message());

  // This process's points that are not done yet.
  std::vector<const SweepPoint*> todo;
  size_t skipped = 0;
  for (const SweepPoint& pt : spec.points) {
    if (int(pt.index % size_t(shards)) != shard) continue;
    if (fs::exists(dir / "points" / pt.id / "results.json"))
      ++skipped;
    else
      todo.push_back(&pt);
  }
  std::vector<Child> children;
  std::vector<fs::path> part;
  for (const SweepPoint* pt : todo) {
    const fs::path tmp = dir / "points" / (pt->id + ".part");
    fs::remove_all(tmp, ec);  // left by an interrupted run
    Child c;
    c.args = {"run", pt->config};
    for (const std::string& s : pt->sets) c.args.insert(c.args.end(), {"--set", s});
    c.args.insert(c.args.end(), {"--out", tmp.string(), "--quiet"});
    c.args.insert(c.args.end(), o.run_args.begin(), o.run_args.end());
    c.stderr_file = (dir / "points" / (pt->id + ".stderr")).string();
    children.push_back(c);
    part.push_back(tmp);
  }
  const ProgressMode mode = progress_mode(o.quiet, o.progress_s);
  const auto t0 = std::chrono::steady_clock::now();
  auto last = t0;
  size_t finished = 0, failed = 0;
  int worst = kExitOk;
  auto show = [&]() {
    if (!mode.on()) return;
    const auto now = std::chrono::steady_clock::now();
    const double since = std::chrono::duration<double>(now - last).count();
    if (since < (mode.live ? 0.5 : mode.every_s)) return;
    last = now;
    const double el = std::chrono::duration<double>(now - t0).count();
    char b[200];
    std::snprintf(b, sizeof b, "# sweep: %zu/%zu points done here, %zu failed, ETA %s", finished,
                  todo.size(), failed,
                  finished ? (std::to_string(int(el * double(todo.size() - finished) /
                                                 double(finished))) + " s").c_str()
                           : "?");
    if (mode.live)
      std::fprintf(stderr, "\r%s\033[K", b);
    else
      std::fprintf(stderr, "%s\n", b);
    std::fflush(stderr);
  };
  run_children(
      children, o.jobs, nullptr,
      [&](size_t i, int rc) {
        ++finished;
        const fs::path done = dir / "points" / todo[i]->id;
        if (rc == 0) {
          nlohmann::json values = nlohmann::json::object();
          for (const auto& [k, v] : todo[i]->values) values[k] = v;
          write_file(part[i] / "point.json",
                     nlohmann::json({{"id", todo[i]->id}, {"config", todo[i]->config},
                                     {"values", values}, {"sets", todo[i]->sets}})
                             .dump(2) + "\n");
          std::error_code e;
          fs::rename(part[i], done, e);  // a point is done when its directory exists
          if (e) fs::remove_all(part[i], e);
        } else {
          ++failed;
          worst = std::max(worst, int(rc == kExitBadInput ? kExitBadInput : kExitInternal));
          std::cerr << "fabricsim: sweep: point " << todo[i]->id << " failed with exit " << rc
                    << ": " << read_file(children[i].stderr_file);
        }
        show();
      },
      show);
  if (mode.live && finished) std::fprintf(stderr, "\r\033[K");

  if (mpi.on()) {
    // Every rank has finished its points; rank 0 merges.
    worst = mpi.max(worst);
    const int r = mpi.rank;
    mpi.finalize();
    if (r != 0) return worst;
  } else if (shards > 1) {
    if (!o.quiet)
      std::cout << "# fabricsim sweep: shard " << shard << "/" << shards << ": " << todo.size()
                << " run, " << skipped << " already done; rerun without --shard to merge\n";
    return worst;
  }
  const size_t missing =
      merge(spec, dir, o,
            mpi.on() ? "run over " + std::to_string(mpi.size) + " MPI ranks"
                     : std::to_string(todo.size()) + " run, " + std::to_string(skipped) +
                           " already done");
  if (worst != kExitOk) return worst;
  return missing ? kExitBadInput : kExitOk;
}

}  // namespace fabricsim
