#include "fabrics/sim/training_run.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "models/collectives/algorithms.h"

#include "fabrics/workloads/chakra.h"
#include "models/collectives/training.h"
#include "models/core/errors.h"
#include "models/core/units.h"

namespace fabricsim {

namespace {

double us(uint64_t ps) { return double(ps) * 1e-6; }

// Compute time of `flops` at `tflops` TFLOP/s: FLOPs / (tflops x 1e12) s = FLOPs / tflops ps.
uint64_t flops_ps(double flops, double tflops) { return uint64_t(flops / tflops + 0.5); }

}  // namespace

TrainingWorkload::TrainingWorkload(const SystemSpec& spec) {
  const WorkloadSpec& w = spec.workload;
  const TrainingSpec& t = w.training;
  n_ = int(spec.ranks.size());
  const int n = n_;
  coll::CommParams comm;
  comm.algorithm = w.algorithm;
  comm.elem_bytes = w.elem_bytes;
  comm.channels = w.channels;
  comm.chunk_bytes = w.chunk_bytes;
  comm.launch_ps = t.launch_ps;
  // Per-layer compute times of the dense workloads.
  std::vector<uint64_t> fwd, bwd;
  for (uint64_t p : t.layer_params) {
    const double flops = 2.0 * double(p) * double(t.tokens);
    fwd.push_back(t.forward_ps ? t.forward_ps : flops_ps(flops, t.device_tflops));
    bwd.push_back(t.backward_ps ? t.backward_ps : flops_ps(2 * flops, t.device_tflops));
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "# fabricsim: %s, %s, %d ranks, seed %llu", spec.name.c_str(),
                w.type.c_str(), n, (unsigned long long)spec.seed);
  title_ = buf;
  auto model_note = [&]() {
    uint64_t params = 0;
    for (uint64_t p : t.layer_params) params += p;
    std::snprintf(buf, sizeof buf,
                  "# model: %zu layers, %llu parameters (%s %s), %llu tokens per rank; layer 0 "
                  "forward %.2f us, backward %.2f us",
                  t.layer_params.size(), (unsigned long long)params,
                  format_bytes(params * w.elem_bytes).c_str(), w.datatype.c_str(),
                  (unsigned long long)t.tokens, us(fwd[0]), us(bwd[0]));
    notes_.push_back(buf);
  };
  const std::string kinds =
      w.type == "fsdp_step"   ? std::string("ring all-gather and reduce-scatter")
      : w.type == "moe_layer" ? std::string("direct all-to-all (per-pair sizes)")
                              : w.algorithm + " all-reduce";
  std::snprintf(buf, sizeof buf,
                "# collectives: %s, %d channels, %s chunks, sync %s, launch %s each",
                kinds.c_str(), w.channels, format_bytes(w.chunk_bytes).c_str(),
                w.sync.fence_flag ? "fence_flag" : "data", format_time_ps(t.launch_ps).c_str());
  const std::string comm_note = buf;

  if (w.type == "ddp_step") {
    model_note();
    notes_.push_back(comm_note);
    notes_.push_back(
        "# step = forward + backward with bucket all-reduces overlapped (comm stream, bucket "
        "order); exposed = step - compute; no_overlap: every bucket after the backward pass; "
        "overlap = 1 - exposed / no_overlap exposed");
    columns_ = {{"bucket_bytes", "(B)", 12},    {"buckets", "", 7},
                {"compute_us", "(us)", 11},      {"step_us", "(us)", 11},
                {"exposed_us", "(us)", 11},      {"overlap", "(ratio)", 8},
                {"no_overlap_step_us", "(us)", 11}, {"no_overlap_exposed_us", "(us)", 11}};
    std::vector<uint64_t> sizes = t.bucket_sweep_bytes;
    if (sizes.empty()) sizes.push_back(t.bucket_bytes);
    std::vector<uint64_t> elems;
    for (uint64_t p : t.layer_params) elems.push_back(p);
    for (uint64_t size : sizes) {
      const size_t row = rows_.size();
      rows_.push_back(nlohmann::json::object());
      for (bool overlap : {true, false}) {
        coll::DdpParams d;
        d.ranks = n;
        d.layer_elems = elems;
        d.forward_ps = fwd;
        d.backward_ps = bwd;
        d.bucket_bytes = size;
        d.first_bucket_bytes = t.first_bucket_bytes;
        d.overlap = overlap;
        d.comm = comm;
        coll::DdpStep step = coll::ddp_step(d);
        const uint64_t compute = step.compute_ps;
        const size_t buckets = step.buckets.size();
        jobs_.push_back(std::move(step.schedule));
        measure_.push_back([this, row, overlap, compute, buckets, size](
                               uint64_t s, uint64_t e, const CollectiveEngine&) {
          nlohmann::json& r = rows_[row];
          const double step_us = us(e - s), compute_us = us(compute);
          if (overlap) {
            r["bucket_bytes"] = size;
            r["buckets"] = buckets;
            r["compute_us"] = compute_us;
            r["step_us"] = step_us;
            r["exposed_us"] = step_us - compute_us;
          } else {
            r["no_overlap_step_us"] = step_us;
            r["no_overlap_exposed_us"] = step_us - compute_us;
            const double base = step_us - compute_us;
            r["overlap"] = base > 0 ? 1.0 - r["exposed_us"].get<double>() / base : 1.0;
          }
        });
      }
    }
  } else if (w.type == "fsdp_step") {
    model_note();
    notes_.push_back(comm_note);
    notes_.push_back(
        "# per layer: all-gather (ring) before forward and again before backward, prefetched "
        "`depth` layers ahead; reduce-scatter (ring) of gradients after each backward layer; "
        "peak_extra = most gathered parameter bytes held at once beyond the rank's shard");
    columns_ = {{"prefetch_depth", "", 8},      {"compute_us", "(us)", 11},
                {"step_us", "(us)", 11},        {"exposed_us", "(us)", 11},
                {"allgather_us", "(us, mean)", 11}, {"peak_extra_bytes", "(B)", 12}};
    for (int depth : t.prefetch_depths) {
      coll::FsdpParams f;
      f.ranks = n;
      f.layer_elems = t.layer_params;
      f.forward_ps = fwd;
      f.backward_ps = bwd;
      f.prefetch_depth = depth;
      f.comm = comm;
      auto step = std::make_shared<coll::FsdpStep>(coll::fsdp_step(f));
      jobs_.push_back(std::move(step->schedule));
      const size_t row = rows_.size();
      rows_.push_back(nlohmann::json::object());
      measure_.push_back([this, row, depth, step, n](uint64_t s, uint64_t e,
                                                     const CollectiveEngine& eng) {
        uint64_t peak = 0;
        for (int r = 0; r < n; ++r) {
          std::vector<coll::HeldBuffer> held;
          for (size_t k = 0; k < step->compute_op[size_t(r)].size(); ++k)
            held.push_back({eng.op_done_ps(r, step->gather_launch_op[size_t(r)][k]),
                            eng.op_done_ps(r, step->compute_op[size_t(r)][k]),
                            step->gathered_bytes[size_t(r)][k]});
          peak = std::max(peak, coll::peak_held_bytes(held));
        }
        uint64_t ag = 0;
        const size_t K = step->compute_op[0].size();
        for (size_t k = 0; k < K; ++k)
          ag += eng.op_done_ps(0, step->gather_join_op[0][k]) -
                eng.op_done_ps(0, step->gather_launch_op[0][k]);
        nlohmann::json& r = rows_[row];
        r["prefetch_depth"] = depth;
        r["compute_us"] = us(step->compute_ps);
        r["step_us"] = us(e - s);
        r["exposed_us"] = us(e - s) - us(step->compute_ps);
        r["allgather_us"] = us(ag) / double(K);
        r["peak_extra_bytes"] = peak;
      });
    }
  } else if (w.type == "moe_layer") {
    const uint64_t per_token =
        t.expert_ps_per_token
            ? t.expert_ps_per_token
            : flops_ps(4.0 * double(t.hidden) * double(t.ffn_hidden), t.device_tflops);
    std::snprintf(buf, sizeof buf,
                  "# %llu tokens per rank x top-%d over %d experts (%d per rank), %llu x %s per "
                  "token, expert compute %.3f ns per routed token",
                  (unsigned long long)t.tokens, t.top_k, n * t.experts_per_rank,
                  t.experts_per_rank, (unsigned long long)t.hidden, w.datatype.c_str(),
                  double(per_token) * 1e-3);
    notes_.push_back(buf);
    notes_.push_back(comm_note);
    notes_.push_back(
        "# dispatch: all-to-all with per-pair sizes (direct); expert compute of the tokens a "
        "rank received; combine: the transposed all-to-all. load = tokens per expert / rank; "
        "dispatch_us = until the last rank has all its tokens");
    const int ep = t.ep == 0 ? n : t.ep;
    std::snprintf(buf, sizeof buf,
                  "# expert-parallel groups of %d ranks (%d groups), each with all experts; "
                  "ep_inside: consecutive ranks, ep_across: strided",
                  ep, n / ep);
    notes_.push_back(buf);
    columns_ = {{"placement", "", 10},        {"skew", "", 6},
                {"time_us", "(us)", 11},      {"dispatch_us", "(us)", 11},
                {"expert_max_us", "(us)", 11}, {"expert_load_max_mean", "(ratio)", 9},
                {"rank_load_max_mean", "(ratio)", 9}, {"max_pair_bytes", "(B)", 12}};
    std::vector<bool> inside;
    if (ep == n || t.placement != "ep_across") inside.push_back(true);
    if (ep != n && t.placement != "ep_inside") inside.push_back(false);
    std::vector<double> skews{0.0};
    if (t.skew > 0) skews.push_back(t.skew);
    for (bool ep_inside : inside)
    for (double skew : skews) {
      coll::MoeParams m;
      m.ranks = n;
      m.experts_per_rank = t.experts_per_rank;
      m.top_k = t.top_k;
      m.tokens_per_rank = t.tokens;
      m.token_elems = t.hidden;
      m.skew = skew;
      m.seed = spec.seed;
      m.expert_ps_per_token = per_token;
      m.ep = ep;
      m.ep_inside = ep_inside;
      m.comm = comm;
      const coll::MoeRouting routing = coll::moe_route(m);
      auto step = std::make_shared<coll::MoeStep>(coll::moe_layer(m, routing));
      jobs_.push_back(std::move(step->schedule));
      auto max_mean = [](const std::vector<uint64_t>& v) {
        uint64_t mx = 0, sum = 0;
        for (uint64_t x : v) {
          mx = std::max(mx, x);
          sum += x;
        }
        return sum ? double(mx) * double(v.size()) / double(sum) : 0.0;
      };
      uint64_t max_pair = 0;  // bytes from one rank to another member of its group
      for (const std::vector<int>& group : coll::moe_groups(m))
        for (int r : group) {
          std::vector<uint64_t> to(group.size(), 0);
          for (size_t e = 0; e < routing.tokens[size_t(r)].size(); ++e)
            to[e / size_t(t.experts_per_rank)] += routing.tokens[size_t(r)][e];
          for (size_t j = 0; j < group.size(); ++j)
            if (group[j] != r) max_pair = std::max(max_pair, to[j] * t.hidden * w.elem_bytes);
        }
      uint64_t max_load = 0;
      for (uint64_t l : routing.rank_load) max_load = std::max(max_load, l);
      nlohmann::json row = {{"placement", ep == n ? "all" : ep_inside ? "ep_inside" : "ep_across"},
                            {"skew", skew},
                            {"expert_load_max_mean", max_mean(routing.expert_load)},
                            {"rank_load_max_mean", max_mean(routing.rank_load)},
                            {"max_pair_bytes", max_pair},
                            {"expert_max_us", us(max_load * per_token)}};
      const size_t index = rows_.size();
      rows_.push_back(row);
      measure_.push_back([this, index, step, n](uint64_t s, uint64_t e,
                                                const CollectiveEngine& eng) {
        uint64_t disp = 0;
        for (int r = 0; r < n; ++r)
          disp = std::max(disp, eng.op_done_ps(r, step->dispatch_join[size_t(r)]));
        rows_[index]["time_us"] = us(e - s);
        rows_[index]["dispatch_us"] = us(disp - s);
      });
    }
  } else if (w.type == "tp_layer") {
    model_note();
    notes_.push_back(comm_note);
    std::snprintf(buf, sizeof buf,
                  "# TP groups of %d, DP groups of %d; per layer 2 TP all-reduces of %s forward "
                  "and 2 backward, DP all-reduce of the layer's gradient shard after its "
                  "backward; compute per rank = layer FLOPs / tp",
                  t.tp, n / t.tp, format_bytes(t.tokens * t.hidden * w.elem_bytes).c_str());
    notes_.push_back(buf);
    notes_.push_back(
        "# tp_inside: TP groups = consecutive ranks (a scale-up domain when domains are "
        "consecutive rank blocks); dp_inside: DP groups consecutive, TP strided");
    columns_ = {{"placement", "", 10}, {"tp", "", 4}, {"dp", "", 4},
                {"compute_us", "(us)", 11}, {"step_us", "(us)", 11},
                {"exposed_us", "(us)", 11}};
    std::vector<bool> inside;
    if (t.placement != "dp_inside") inside.push_back(true);
    if (t.placement != "tp_inside") inside.push_back(false);
    for (bool tp_inside : inside) {
      coll::TpParams p;
      p.ranks = n;
      p.tp = t.tp;
      p.tp_inside = tp_inside;
      p.layers = int(t.layer_params.size());
      p.act_elems = t.tokens * t.hidden;
      p.grad_elems = t.layer_params[0] / uint64_t(t.tp);
      p.forward_ps = fwd[0] / uint64_t(t.tp);
      p.backward_ps = bwd[0] / uint64_t(t.tp);
      p.comm = comm;
      coll::Schedule s = coll::tp_step(p);
      const uint64_t compute = coll::compute_ps(s, 0);
      jobs_.push_back(std::move(s));
      const size_t index = rows_.size();
      rows_.push_back({{"placement", tp_inside ? "tp_inside" : "dp_inside"},
                       {"tp", t.tp},
                       {"dp", n / t.tp},
                       {"compute_us", us(compute)}});
      measure_.push_back([this, index, compute](uint64_t t0, uint64_t e, const CollectiveEngine&) {
        rows_[index]["step_us"] = us(e - t0);
        rows_[index]["exposed_us"] = us(e - t0) - us(compute);
      });
    }
  } else if (w.type == "chakra") {
    // One job: the trace. One row per node, with when it could start (its dependencies
    // done; a compute node: when its compute unit started it) and when it completed.
    const ChakraJob& cj = *t.chakra;
    notes_.push_back("# chakra trace: " + std::to_string(cj.nodes.size()) + " nodes on " +
                     std::to_string(n) + " ranks, " + std::to_string(cj.collectives) +
                     " collectives (" + w.algorithm + " all-reduce)");
    notes_.push_back(comm_note);
    notes_.push_back("# start: dependencies done (compute: started on the rank's compute unit); "
                     "end: completed");
    columns_ = {{"rank", "", 5},        {"node", "", 6},         {"name", "", 12},
                {"type", "", 10},       {"start_us", "(us)", 10}, {"end_us", "(us)", 10}};
    jobs_.push_back(cj.schedule);
    measure_.push_back([this, &cj](uint64_t t0, uint64_t, const CollectiveEngine& e) {
      std::vector<uint64_t> end(cj.nodes.size());
      for (size_t i = 0; i < cj.nodes.size(); ++i) {
        const ChakraJob::NodeRef& x = cj.nodes[i];
        end[i] = e.op_done_ps(x.rank, x.join);
        uint64_t start = t0;
        for (size_t d : x.deps) start = std::max(start, end[d]);
        if (x.type == "compute") start = end[i] - x.duration_ps;
        rows_.push_back({{"rank", x.rank},          {"node", x.id},
                         {"name", x.name},          {"type", x.type},
                         {"start_us", us(start - t0)}, {"end_us", us(end[i] - t0)}});
      }
    });
  } else if (w.type == "ocs_phases") {
    // One job per phase, A then B, `steps` times; rows per phase (all its runs added up)
    // and one for the whole job. wait: from the previous phase's end (or 0) to this one's
    // start: the reconfiguration a plan put at the boundary (faults: ocs_phase_map).
    std::string list;
    for (const PhaseSpec& ph : w.phases)
      list += (list.empty() ? "" : ", ") + ph.name + " = " + ph.collective + " " + ph.algorithm +
              " of " + format_bytes(ph.bytes);
    notes_.push_back("# phases, one after the other, " + std::to_string(w.steps) +
                     " times: " + list);
    notes_.push_back("# per phase: its runs added up; wait = from the previous phase's end to "
                     "its start (the circuits reconfigured at the boundary)");
    columns_ = {{"phase", "", 6},          {"collective", "", 11}, {"bytes", "(B)", 11},
                {"runs", "", 7},           {"phase_us", "(us)", 12}, {"mean_phase_us", "(us)", 12},
                {"wait_us", "(us)", 12},   {"end_us", "(us)", 12}};
    const size_t np = w.phases.size();
    for (const PhaseSpec& ph : w.phases)
      rows_.push_back({{"phase", ph.name},  {"collective", ph.collective},
                       {"algorithm", ph.algorithm}, {"bytes", ph.bytes},
                       {"runs", 0},         {"phase_ps", uint64_t(0)},
                       {"wait_ps", uint64_t(0)}, {"first_start_ps", uint64_t(0)},
                       {"end_ps", uint64_t(0)}});
    rows_.push_back({{"phase", "job"}, {"runs", 0}, {"phase_ps", uint64_t(0)},
                     {"wait_ps", uint64_t(0)}, {"end_ps", uint64_t(0)}});
    phase_prev_end_ = std::make_shared<uint64_t>(0);
    for (int step = 0; step < w.steps; ++step)
      for (size_t k = 0; k < np; ++k) {
        const PhaseSpec& ph = w.phases[k];
        coll::CollParams cp = w.coll_params(n, ph.bytes / w.elem_bytes);
        cp.rings = &spec.rings;
        jobs_.push_back(coll::make_schedule(ph.collective, ph.algorithm, cp, spec.domain_size));
        std::shared_ptr<uint64_t> prev = phase_prev_end_;
        measure_.push_back([this, k, np, prev](uint64_t t0, uint64_t e, const CollectiveEngine&) {
          for (nlohmann::json* r : {&rows_[k], &rows_[np]}) {
            nlohmann::json& x = *r;
            if (x["runs"].get<int>() == 0) x["first_start_ps"] = t0;
            x["runs"] = x["runs"].get<int>() + 1;
            x["phase_ps"] = x["phase_ps"].get<uint64_t>() + (e - t0);
            x["wait_ps"] = x["wait_ps"].get<uint64_t>() + (t0 - *prev);
            x["end_ps"] = e;
            const double runs = x["runs"].get<int>();
            x["phase_us"] = us(x["phase_ps"].get<uint64_t>());
            x["mean_phase_us"] = us(x["phase_ps"].get<uint64_t>()) / runs;
            x["wait_us"] = us(x["wait_ps"].get<uint64_t>());
            x["end_us"] = us(e);
          }
          *prev = e;
        });
      }
  } else {
    throw InternalError("training: unknown workload " + w.type);
  }
  n_jobs_ = jobs_.size();
}

std::vector<coll::Schedule> TrainingWorkload::take_jobs() { return std::move(jobs_); }

void TrainingWorkload::job_done(size_t index, uint64_t start_ps, uint64_t end_ps,
                                const CollectiveEngine& e) {
  measure_.at(index)(start_ps, end_ps, e);
}

void TrainingWorkload::print(std::ostream& os) const {
  os << title_ << "\n";
  for (const std::string& n : notes_) os << n << "\n";
  os << "#\n";
  std::string head = "#", units = "#";
  for (const TrainingColumn& c : columns_) {
    const int w = std::max<int>(c.width, int(c.key.size()));
    char buf[128];
    std::snprintf(buf, sizeof buf, " %*s", w, c.key.c_str());
    head += buf;
    std::snprintf(buf, sizeof buf, " %*s", w, c.unit.c_str());
    units += buf;
  }
  os << head << "\n" << units << "\n";
  for (const nlohmann::json& r : rows_) {
    std::string line = " ";
    for (const TrainingColumn& c : columns_) {
      const int w = std::max<int>(c.width, int(c.key.size()));
      char buf[128];
      const nlohmann::json v = r.value(c.key, nlohmann::json());
      if (v.is_string())
        std::snprintf(buf, sizeof buf, " %*s", w, v.get<std::string>().c_str());
      else if (v.is_number_unsigned() || v.is_number_integer())
        std::snprintf(buf, sizeof buf, " %*lld", w, (long long)v.get<int64_t>());
      else if (v.is_number())
        std::snprintf(buf, sizeof buf, " %*.2f", w, v.get<double>());
      else
        std::snprintf(buf, sizeof buf, " %*s", w, "-");
      line += buf;
    }
    os << line << "\n";
  }
}

nlohmann::json TrainingWorkload::rows_json() const {
  nlohmann::json j = nlohmann::json::array();
  for (const nlohmann::json& r : rows_) j.push_back(r);
  return j;
}

nlohmann::json TrainingWorkload::units_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const TrainingColumn& c : columns_) j[c.key] = c.unit.empty() ? "" : c.unit;
  j["time"] = "us";
  j["bytes"] = "bytes";
  return j;
}

}  // namespace fabricsim
