// Training workloads: one step (or layer) of ddp_step, fsdp_step, moe_layer or tp_layer, as
// compute ops and collectives with the framework's stream dependencies
// (models/collectives/training.h builds them; fabrics/sim/training_run.cpp runs them).
#include <functional>

#include "fabrics/systems/system_spec.h"
#include "fabrics/workloads/training_common.h"
#include "fabrics/workloads/workload.h"
#include "models/core/datatype.h"
#include "models/core/units.h"

namespace fabricsim {

using K = ParamKind;

std::vector<ParamSpec> comm_params() {
  return {
      choice("algorithm", coll::flat_algorithms_for("all_reduce"), "ring",
             "All-reduce algorithm (ddp_step buckets, tp_layer); all-gather and "
             "reduce-scatter use ring, all-to-all direct."),
      choice("datatype", datatype_names(), "bfloat16",
             "Element type of parameters, gradients and activations."),
      param("channels", K::kInt, "1", "", "NCCL channels of every collective.", 1, 64),
      param("chunk_bytes", K::kBytes, "512KiB", "bytes",
            "Pipelining granularity: messages are cut into pieces of this size.", 1),
      choice("sync", {"data", "fence_flag"}, "data",
             "Chunk completion protocol, as in collective_sweep."),
      param("ack_bytes", K::kBytes, "16B", "bytes",
            "Payload of a write acknowledgement (sync: fence_flag).", 1),
      param("flag_bytes", K::kBytes, "8B", "bytes",
            "Payload of a completion flag (sync: fence_flag).", 1),
      param("launch_latency", K::kTime, "0ns", "us",
            "Fixed cost of EVERY collective on its stream (kernel launch, framework "
            "bookkeeping; an assumption), paid after its inputs are ready and the previous "
            "collective on the stream is done.",
            0),
      param("ranks", K::kInt, "0", "ranks",
            "Run on the first N ranks of the config (scaling runs, scripts/scaling.sh); 0: "
            "every rank.",
            0, 65536),
      param("device_tflops", K::kReal, "400", "TFLOP/s (per accelerator)",
            "Achieved dense throughput that turns FLOPs into compute time when no time is "
            "given (an assumption: H100 SXM bf16 dense peak is 989 TFLOP/s).",
            0.001, 1e6)};
}

namespace {

// The transformer layers ddp_step, fsdp_step and tp_layer run.
std::vector<ParamSpec> model_params() {
  return {
      param("layers", K::kInt, "24", "layers", "Transformer layers.", 1, 100000),
      param("layer_params", K::kIntList, "[12582912]", "parameters",
            "Parameters per layer: one value for every layer, or one per layer (layer 0 "
            "first). Default 12 x 1024^2 (a GPT-2-medium-like layer).",
            1, 1e12),
      param("tokens", K::kInt, "8192", "tokens (per rank per step)",
            "Tokens one rank processes per step (micro-batch x sequence length).", 1, 1e12),
      param("forward_time", K::kTime, "0ns", "us (per layer)",
            "Forward compute of one layer; 0: 2 x params x tokens FLOPs / device_tflops.", 0),
      param("backward_time", K::kTime, "0ns", "us (per layer)",
            "Backward compute of one layer; 0: 4 x params x tokens FLOPs / device_tflops.", 0)};
}

}  // namespace

void parse_common(const cfg::Params& p, const cfg::Params& sim, SystemSpec& s, bool with_model) {
  WorkloadSpec& ws = s.workload;
  TrainingSpec& t = ws.training;
  ws.collective = "all_reduce";
  ws.algorithm = p.str("algorithm");
  ws.datatype = p.str("datatype");
  ws.elem_bytes = datatype_bytes(ws.datatype);
  ws.channels = int(p.integer("channels"));
  ws.chunk_bytes = p.bytes("chunk_bytes");
  ws.slices = 1;
  ws.sync.fence_flag = p.str("sync") == "fence_flag";
  ws.sync.ack_bytes = p.bytes("ack_bytes");
  ws.sync.flag_bytes = p.bytes("flag_bytes");
  t.launch_ps = p.time_ps("launch_latency");  // per collective, not per job
  t.device_tflops = p.real("device_tflops");
  if (ws.chunk_bytes < ws.elem_bytes)
    p.fail("chunk_bytes",
           "chunk_bytes " + format_bytes(ws.chunk_bytes) + " is smaller than one " + ws.datatype,
           "use at least " + std::to_string(ws.elem_bytes) + "B");
  if (s.simulation.functional)
    sim.fail("functional",
             "training workloads run timing only; functional mode checks the size sweeps",
             "set simulation.functional: false (e.g. --set simulation.functional=false)");
  const int64_t want = p.integer("ranks");
  if (want > int64_t(s.ranks.size()))
    p.fail("ranks",
           "ranks " + std::to_string(want) + " is more than the config's " +
               std::to_string(s.ranks.size()) + " ranks",
           "use 0 (all) or at most " + std::to_string(s.ranks.size()));
  if (want > 0) s.ranks.resize(size_t(want));
  if (!with_model) return;
  const int64_t layers = p.integer("layers");
  const std::vector<int64_t>& lp = p.int_list("layer_params");
  if (lp.size() != 1 && int64_t(lp.size()) != layers)
    p.fail("layer_params",
           "layer_params has " + std::to_string(lp.size()) + " values for " +
               std::to_string(layers) + " layers",
           "give one value (every layer) or one per layer");
  for (int64_t l = 0; l < layers; ++l)
    t.layer_params.push_back(uint64_t(lp.size() == 1 ? lp[0] : lp[size_t(l)]));
  t.tokens = uint64_t(p.integer("tokens"));
  t.forward_ps = p.time_ps("forward_time");
  t.backward_ps = p.time_ps("backward_time");
}

namespace {

using Parse = std::function<void(const cfg::Params&, TrainingSpec&, int ranks)>;

WorkloadKind training_kind(std::string name, std::string summary, std::vector<ParamSpec> own,
                           bool with_model, Parse parse) {
  WorkloadKind k;
  k.name = std::move(name);
  k.summary = std::move(summary);
  k.training = true;
  k.params = std::move(own);
  if (with_model) {
    const std::vector<ParamSpec> m = model_params();
    k.params.insert(k.params.end(), m.begin(), m.end());
  }
  const std::vector<ParamSpec> c = comm_params();
  k.params.insert(k.params.end(), c.begin(), c.end());
  k.parse = [with_model, parse](const cfg::Params& p, const cfg::Params& sim, SystemSpec& s) {
    parse_common(p, sim, s, with_model);
    parse(p, s.workload.training, int(s.ranks.size()));
  };
  return k;
}

}  // namespace

WorkloadKind ddp_step_workload() {
  return training_kind(
      "ddp_step",
      "One data-parallel training step (PyTorch DDP): gradient buckets all-reduced on the "
      "comm stream while the backward pass runs; also the no-overlap baseline.",
      {param("bucket_bytes", K::kBytes, "25MiB", "bytes",
             "Bucket cap (PyTorch bucket_cap_mb default 25 MiB); a bucket closes once it holds "
             "at least this much; layers are not split.",
             1),
       param("first_bucket_bytes", K::kBytes, "0B", "bytes",
             "Cap of the first bucket (PyTorch uses 1 MiB); 0B: bucket_bytes.", 0),
       param("bucket_sweep_kib", K::kIntList, "[]", "KiB",
             "Bucket caps to sweep, one row each (in KiB = 1024 B); empty: only bucket_bytes.",
             1, 1e9)},
      true, [](const cfg::Params& p, TrainingSpec& t, int) {
        t.bucket_bytes = p.bytes("bucket_bytes");
        t.first_bucket_bytes = p.bytes("first_bucket_bytes");
        for (int64_t kib : p.int_list("bucket_sweep_kib"))
          t.bucket_sweep_bytes.push_back(uint64_t(kib) << 10);
      });
}

WorkloadKind fsdp_step_workload() {
  return training_kind(
      "fsdp_step",
      "One fully sharded data-parallel step (FSDP): per-layer all-gather of parameters with "
      "prefetch, reduce-scatter of gradients; one row per prefetch depth.",
      {param("prefetch_depths", K::kIntList, "[0, 1, 2]", "layers",
             "Prefetch depths to run, one row each: all-gathers in flight ahead of the layer "
             "computing.",
             0, 16)},
      true, [](const cfg::Params& p, TrainingSpec& t, int) {
        for (int64_t d : p.int_list("prefetch_depths")) t.prefetch_depths.push_back(int(d));
        if (t.prefetch_depths.empty())
          p.fail("prefetch_depths", "no prefetch depth given", "e.g. prefetch_depths: [0, 1, 2]");
      });
}

WorkloadKind moe_layer_workload() {
  return training_kind(
      "moe_layer",
      "One mixture-of-experts layer: top-k routing with skewed expert popularity, all-to-all "
      "dispatch, expert compute, all-to-all combine; uniform and skewed rows.",
      {param("tokens", K::kInt, "4096", "tokens (per rank)", "Tokens routed from every rank.", 1,
             1e9),
       param("hidden", K::kInt, "4096", "elements", "Hidden size (elements per token).", 1, 1e6),
       param("ffn_hidden", K::kInt, "14336", "elements",
             "Expert FFN inner size: 4 x hidden x ffn_hidden FLOPs per routed token.", 1, 1e7),
       param("experts_per_rank", K::kInt, "1", "experts", "Experts on every rank.", 1, 1024),
       param("top_k", K::kInt, "2", "experts", "Experts every token goes to.", 1, 64),
       param("skew", K::kReal, "1.0", "",
             "Zipf exponent of expert popularity (weight 1/rank^skew over a seeded permutation "
             "of the experts); 0 = uniform.",
             0, 8),
       param("expert_time_per_token", K::kTime, "0ns", "ns",
             "Expert compute per routed token; 0: from ffn_hidden and device_tflops.", 0),
       param("ep", K::kInt, "0", "ranks",
             "Expert-parallel group size (divides ranks): every group holds all experts and "
             "routes its own tokens; 0: one group of every rank.",
             0, 4096),
       choice("placement", {"ep_inside", "ep_across", "both"}, "both",
              "ep_inside: EP groups are consecutive ranks (a scale-up domain when domains are "
              "consecutive rank blocks); ep_across: strided; both: rows for each. Ignored when "
              "one group holds every rank.")},
      false, [](const cfg::Params& p, TrainingSpec& t, int n) {
        t.tokens = uint64_t(p.integer("tokens"));
        t.hidden = uint64_t(p.integer("hidden"));
        t.ffn_hidden = uint64_t(p.integer("ffn_hidden"));
        t.experts_per_rank = int(p.integer("experts_per_rank"));
        t.top_k = int(p.integer("top_k"));
        t.skew = p.real("skew");
        t.expert_ps_per_token = p.time_ps("expert_time_per_token");
        t.ep = int(p.integer("ep"));
        t.placement = p.str("placement");
        if (t.ep > 0 && n % t.ep != 0)
          p.fail("ep",
                 "ep " + std::to_string(t.ep) + " does not divide the " + std::to_string(n) +
                     " ranks",
                 "use a divisor of the rank count, or 0 (all ranks)");
        const int group = t.ep > 0 ? t.ep : n;
        if (int64_t(t.top_k) > int64_t(group) * t.experts_per_rank)
          p.fail("top_k",
                 "top_k " + std::to_string(t.top_k) + " is more than the " +
                     std::to_string(group * t.experts_per_rank) + " experts of a group",
                 "lower top_k or raise experts_per_rank");
      });
}

WorkloadKind tp_layer_workload() {
  return training_kind(
      "tp_layer",
      "Tensor parallel (Megatron-style, 2 all-reduces per layer forward and backward) with "
      "data-parallel gradient all-reduce per layer; placement of TP groups inside or across "
      "scale-up domains.",
      {param("tp", K::kInt, "4", "ranks", "Tensor-parallel group size; divides ranks.", 1, 4096),
       choice("placement", {"tp_inside", "dp_inside", "both"}, "both",
              "tp_inside: TP groups are consecutive ranks (inside a scale-up domain when "
              "domains are consecutive rank blocks), DP strided; dp_inside: the reverse; both: "
              "one row each."),
       param("hidden", K::kInt, "4096", "elements",
             "Hidden size: a TP all-reduce moves tokens x hidden elements.", 1, 1e6)},
      true, [](const cfg::Params& p, TrainingSpec& t, int n) {
        t.tp = int(p.integer("tp"));
        t.placement = p.str("placement");
        t.hidden = uint64_t(p.integer("hidden"));
        if (std::adjacent_find(t.layer_params.begin(), t.layer_params.end(),
                               std::not_equal_to<uint64_t>()) != t.layer_params.end())
          p.fail("layer_params", "tp_layer takes one layer size for every layer",
                 "give a single value, e.g. layer_params: [" +
                     std::to_string(t.layer_params[0]) + "]");
        if (n % t.tp != 0)
          p.fail("tp",
                 "tp " + std::to_string(t.tp) + " does not divide the " + std::to_string(n) +
                     " ranks",
                 "use a divisor of the rank count");
      });
}

}  // namespace fabricsim
