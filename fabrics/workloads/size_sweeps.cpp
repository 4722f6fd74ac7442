// allreduce_sweep and collective_sweep: nccl-tests style size sweeps, one collective per
// size.
#include <stdexcept>
#include <string>

#include "fabrics/systems/system_spec.h"
#include "fabrics/workloads/workload.h"
#include "models/core/datatype.h"
#include "models/core/errors.h"
#include "models/core/limits.h"
#include "models/core/text.h"
#include "models/core/units.h"
#include "models/endpoint/endpoint_params.h"

namespace fabricsim {

namespace {

using K = ParamKind;

// Sweep parameters shared by both sweep types.
std::vector<ParamSpec> sweep_params() {
  return {
      param("min_bytes", K::kBytes, "", "bytes", "First message size (nccl-tests size).", 1,
            limits::kMaxMessageBytes),
      param("max_bytes", K::kBytes, "", "bytes", "Last message size (inclusive).", 1,
            limits::kMaxMessageBytes),
      param("step_factor", K::kInt, "2", "", "Size multiplier between rows.", 2, 1024),
      choice("datatype", datatype_names(), "float",
             "Element type (sets count = size / element size)."),
      param("channels", K::kString, "1", "1..64 or auto",
            "Independent streams over disjoint parts of the buffer (NCCL channels). auto: "
            "the count NCCL's graph search builds for this topology (NVLink switches in a "
            "node, NICs across nodes; docs/collectives.md, \"channels: auto\"); with auto, "
            "tree runs half of them, each split over its two trees, and nvls / "
            "hierarchical_nvls nvls_channels."),
      param("nccl_compute_capability", K::kInt, "90", "x10",
            "channels: auto only: the GPU generation whose search speeds NCCL uses (80 "
            "Ampere, 90 Hopper, 100 Blackwell) and its NVLink figure per link (20, 20.6, "
            "40 GB/s). Assumption: the model's endpoint has no generation.",
            60, 200),
      param("chunk_bytes", K::kBytes, "512KiB", "bytes",
            "Pipelining granularity: messages are cut into pieces of this size.", 1,
            limits::kMaxMessageBytes),
      param("slices", K::kInt, "1", "",
            "all_reduce hierarchical and hierarchical_nvls only: every channel's data is cut "
            "into this many slices that run the three phases as a pipeline, so the domain "
            "links and the NICs work at the same time (docs/collectives.md). 1: phases in "
            "turn. auto chooses 1, 2, 4 or 8 itself (its row shows hierarchical/M or "
            "hierarchical_nvls/M).",
            1, 64),
      choice("sync", {"data", "fence_flag"}, "data",
             "How a receiver learns a chunk is complete. data: when its last byte arrives "
             "(ideal). fence_flag (NCCL Simple-like): the receiver acks the writes, the "
             "sender's fence completes on the ack, then it writes a flag; the chunk is "
             "complete when the flag arrives. All of it is fabric traffic."),
      param("ack_bytes", K::kBytes, "16B", "bytes",
            "Payload of a write acknowledgement (sync: fence_flag).", 1, 4096),
      param("flag_bytes", K::kBytes, "8B", "bytes",
            "Payload of a completion flag (sync: fence_flag).", 1, 4096),
      param("launch_latency", K::kTime, "0ns", "us",
            "Time from a collective's start until its first operation may run (kernel "
            "launch); counted in the measured time.",
            0, 1e12),
      param("completion_latency", K::kTime, "0ns", "us",
            "Time from a collective's last operation to its completion being seen (kernel "
            "exit and the host's event); counted in the measured time.",
            0, 1e12),
      choice("protocol", {"simple", "ll", "ll128", "auto"}, "simple",
             "NCCL protocol (docs/collectives.md, \"Protocols\"). simple: bulk data, a fence "
             "and a flag per step (sync: fence_flag; with sync: data the idealised "
             "transport). ll: 8 B lines of 4 B data + 4 B flag, no flag message. ll128: "
             "128 B lines of 120 B data + 8 B flag, where every rank's endpoint allows it "
             "(ll128: true). auto: per size with the algorithm, from the cost model "
             "(rows show algo/proto). ll, ll128 and auto need sync: fence_flag."),
      param("slots", K::kInt, "8", "",
            "Buffer slots per connection (NCCL_STEPS): a sender has at most this many "
            "steps in its reader's buffer not yet consumed; 0: unbounded. Protocol model "
            "only (sync: fence_flag).",
            0, 1024),
      param("ll_chunk_bytes", K::kBytes, "32KiB", "bytes",
            "Data per step of protocol ll (NCCL: 512 KiB of lines / 8 steps / 2).", 1),
      param("ll128_chunk_bytes", K::kBytes, "576000B", "bytes",
            "Data per step of protocol ll128 (NCCL: 4,915,200 B of lines / 8 steps x "
            "120/128).",
            1),
      param("simple_channel_threshold", K::kBytes, "32KiB", "bytes",
            "Protocol model: channels at size S are the most (up to channels) with S >= "
            "channels x this (NCCL: 512 threads x 64 B for simple).",
            0),
      param("ll_channel_threshold", K::kBytes, "4KiB", "bytes (x ranks for rings)",
            "As simple_channel_threshold for ll (NCCL: 512 threads x 8 B, times the ranks "
            "for rings).",
            0),
      param("ll128_channel_threshold", K::kBytes, "5KiB", "bytes",
            "As simple_channel_threshold for ll128 (NCCL: 640 threads x 8 B).", 0),
      param("nvls_channels", K::kInt, "16", "",
            "Protocol model: channels of the in-switch algorithms (nvls, hierarchical_nvls), "
            "at most channels (NCCL_NVLS_NCHANNELS).",
            1, 64),
      param("tree_chunk_halving", K::kBool, "true", "",
            "Protocol model, tree with protocol simple: halve the piece while a (channel, "
            "tree) part holds fewer than 8, 4, 1 x depth pieces (down to 128, 64, 32 KiB; "
            "NCCL 2.19 and older); false: whole chunk_bytes steps at every size (NCCL 2.20 "
            "and later)."),
      param("nvls_chunk_bytes", K::kBytes, "128KiB", "bytes",
            "Protocol model: the largest piece of the in-switch algorithms; NCCL halves it "
            "for small sizes (to 64, 32, 16 KiB below 64, 8 and 2 x channels x ranks x "
            "chunk).",
            1)};
}

// What both sweeps share after the collective and algorithm are known.
void parse_sweep(const cfg::Params& p, SystemSpec& s) {
  WorkloadSpec& ws = s.workload;
  ws.min_bytes = p.bytes("min_bytes");
  ws.max_bytes = p.bytes("max_bytes");
  ws.step_factor = uint64_t(p.integer("step_factor"));
  ws.datatype = p.str("datatype");
  ws.elem_bytes = datatype_bytes(ws.datatype);
  const std::string& channels = p.str("channels");
  ws.channels_auto = channels == "auto";
  ws.nccl_compute_capability = int(p.integer("nccl_compute_capability"));
  if (!ws.channels_auto) {
    size_t used = 0;
    long value = 0;
    try {
      value = std::stol(channels, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != channels.size() || value < 1 || value > 64)
      p.fail("channels", "channels '" + channels + "' is neither an integer in 1..64 nor auto",
             "write a number of channels (e.g. 16), or auto for NCCL's count on this topology");
    ws.channels = int(value);
  }
  ws.chunk_bytes = p.bytes("chunk_bytes");
  ws.slices = int(p.integer("slices"));
  ws.sync.fence_flag = p.str("sync") == "fence_flag";
  ws.sync.ack_bytes = p.bytes("ack_bytes");
  ws.sync.flag_bytes = p.bytes("flag_bytes");
  ws.sync.launch_latency_ps = p.time_ps("launch_latency");
  ws.sync.completion_latency_ps = p.time_ps("completion_latency");
  ws.protocol = p.str("protocol");
  // auto chooses among the protocols the transport runs: with sync: data (the idealised
  // transport, no GPU protocol model) that is Simple alone.
  if (ws.protocol == "auto" && !ws.sync.fence_flag) ws.protocol = "simple";
  ws.sync.slots = uint32_t(p.integer("slots"));
  coll::ProtocolConfig& pc = ws.proto;
  pc.step_bytes[int(coll::Protocol::kSimple)] = ws.chunk_bytes;
  pc.step_bytes[int(coll::Protocol::kLL)] = p.bytes("ll_chunk_bytes");
  pc.step_bytes[int(coll::Protocol::kLL128)] = p.bytes("ll128_chunk_bytes");
  pc.channel_threshold[int(coll::Protocol::kSimple)] = p.bytes("simple_channel_threshold");
  pc.channel_threshold[int(coll::Protocol::kLL)] = p.bytes("ll_channel_threshold");
  pc.channel_threshold[int(coll::Protocol::kLL128)] = p.bytes("ll128_channel_threshold");
  pc.slots = ws.sync.slots;
  pc.nvls_channels = int(p.integer("nvls_channels"));
  pc.nvls_chunk_bytes = p.bytes("nvls_chunk_bytes");
  pc.tree_chunk_halving = p.boolean("tree_chunk_halving");
  if (ws.protocol != "simple" && !ws.sync.fence_flag)
    p.fail("protocol",
           "protocol " + ws.protocol + " with sync: data: the protocols run on the GPU "
               "protocol model, and sync: data is the idealised transport",
           "set sync: fence_flag (or protocol: simple)");
  for (const char* key : {"ll_chunk_bytes", "ll128_chunk_bytes", "nvls_chunk_bytes"})
    if (p.bytes(key) < ws.elem_bytes)
      p.fail(key,
             std::string(key) + " " + format_bytes(p.bytes(key)) + " is smaller than one " +
                 ws.datatype + " (" + std::to_string(ws.elem_bytes) + " B)",
             "use at least " + std::to_string(ws.elem_bytes) + "B");
  if (ws.slices > 1 && ws.algorithm == "auto")
    p.fail("slices",
           "slices " + std::to_string(ws.slices) + " with algorithm auto: auto chooses the "
               "slices itself (1, 2, 4 or 8 for hierarchical, from its cost model)",
           "remove slices, or name the algorithm (e.g. algorithm: hierarchical)");
  if (ws.slices > 1 && !coll::has_levels(ws.collective, ws.algorithm))
    p.fail("slices",
           "slices " + std::to_string(ws.slices) + " pipelines the levels of the hierarchical "
               "all-reduce; " + ws.collective + " " + ws.algorithm + " has no levels to overlap",
           "remove slices (or set it to 1), or use all_reduce with algorithm: hierarchical");
  if (ws.min_bytes > ws.max_bytes)
    p.fail("min_bytes",
           "min_bytes " + format_bytes(ws.min_bytes) + " > max_bytes " + format_bytes(ws.max_bytes),
           "swap them");
  if (ws.min_bytes < ws.elem_bytes)
    p.fail("min_bytes",
           "min_bytes " + format_bytes(ws.min_bytes) + " is smaller than one " + ws.datatype +
               " (" + std::to_string(ws.elem_bytes) + " B)",
           "use at least " + std::to_string(ws.elem_bytes) + "B");
  if (ws.chunk_bytes < ws.elem_bytes)
    p.fail("chunk_bytes",
           "chunk_bytes " + format_bytes(ws.chunk_bytes) + " is smaller than one " + ws.datatype +
               " (" + std::to_string(ws.elem_bytes) + " B)",
           "use at least " + std::to_string(ws.elem_bytes) + "B");
  if (s.simulation.functional && ws.max_bytes > (64ull << 20))
    p.fail("max_bytes",
           "functional mode carries real numbers and is limited to 64MiB, max_bytes is " +
               format_bytes(ws.max_bytes),
           "lower max_bytes or set simulation.functional: false");
}

// One collective per size, one schedule in memory at a time (the largest); every size's
// traffic adds up. `auto` may pick any candidate: the costliest is counted.
WorkloadCost sweep_cost(const SystemSpec& s) {
  const WorkloadSpec& w = s.workload;
  const int n = int(s.ranks.size());
  std::vector<std::string> algos{w.algorithm};
  if (w.algorithm == "auto") {
    algos = coll::flat_algorithms_for(w.collective);
    algos.insert(algos.end(), s.auto_in_switch.begin(), s.auto_in_switch.end());
  }
  std::map<std::string, ScheduleShape> shapes;
  WorkloadCost total;
  uint64_t largest = 0;
  // protocol: auto: simple, and ll and ll128 where the ranks' endpoints model them as NCCL
  // runs them (LL stores of their own size; 128-byte stores arriving whole).
  std::vector<coll::Protocol> protos{coll::Protocol::kSimple};
  if (!s.ranks.empty())
    if (const EndpointParams* ep =
            s.type_of(s.graph.endpoints[size_t(s.ranks[0])]).find<EndpointParams>("endpoint")) {
      if (ep->ll_store_bytes) protos.push_back(coll::Protocol::kLL);
      if (ep->ll128) protos.push_back(coll::Protocol::kLL128);
    }
  for (uint64_t size : w.sizes()) {
    WorkloadCost worst;
    for (const std::string& a : algos) {
      WorkloadCost c;
      try {
        c = collective_cost(w, w.collective, a, n, s.domain_size, double(size),
                            s.simulation.aggregate_min_message, shapes, protos);
      } catch (const InternalError&) {
        continue;  // a candidate of auto that does not apply to this shape
      }
      worst.schedule_ops = std::max(worst.schedule_ops, c.schedule_ops);
      worst.payload_bytes = std::max(worst.payload_bytes, c.payload_bytes);
      worst.messages = std::max(worst.messages, c.messages);
      worst.aggregated_bytes = std::max(worst.aggregated_bytes, c.aggregated_bytes);
      worst.ll_bytes = std::max(worst.ll_bytes, c.ll_bytes);
      worst.piece_bytes = std::max(worst.piece_bytes, c.piece_bytes);
      worst.nvls_request_bytes = std::max(worst.nvls_request_bytes, c.nvls_request_bytes);
      worst.nvls_group = std::max(worst.nvls_group, c.nvls_group);
    }
    const double ops = std::max(total.schedule_ops, worst.schedule_ops);
    add_cost(total, worst);
    total.schedule_ops = ops;  // one collective's schedule at a time
    largest = std::max(largest, size);
  }
  // Functional mode: every rank's buffer of doubles, and the copies messages carry.
  if (s.simulation.functional && n > 0)
    total.data_bytes = 2.0 * n * 8.0 *
                       double(coll::buffer_elems(coll::algo_info(w.collective, algos.front())
                                                     .collective,
                                                 n, largest / w.elem_bytes));
  return total;
}

}  // namespace

WorkloadKind allreduce_sweep_workload() {
  WorkloadKind k;
  k.name = "allreduce_sweep";
  k.summary = "An nccl-tests style all-reduce size sweep (sum), one collective per size.";
  std::vector<std::string> algos = coll::algorithms_for("all_reduce");
  algos.push_back("auto");
  k.params = {choice(
      "algorithm", algos, "ring",
      "All-reduce algorithm (models/collectives/algorithms.h); auto: chosen per size by "
      "the topology-derived cost model (docs/collectives.md; nvls and hierarchical_nvls "
      "are candidates where the system runs them; any rank count, costed by rank classes). nvls needs switches "
      "with nvls: true linked to every rank; hierarchical_nvls needs them linked to "
      "exactly the ranks of each node.")};
  const std::vector<ParamSpec> shared = sweep_params();
  k.params.insert(k.params.end(), shared.begin(), shared.end());
  k.parse = [](const cfg::Params& p, const cfg::Params&, SystemSpec& s) {
    s.workload.collective = "all_reduce";
    s.workload.algorithm = p.str("algorithm");
    parse_sweep(p, s);
  };
  k.estimate = sweep_cost;
  return k;
}

WorkloadKind collective_sweep_workload() {
  WorkloadKind k;
  k.name = "collective_sweep";
  k.summary = "An nccl-tests style size sweep of any collective, one per size.";
  std::vector<std::string> collectives;
  for (const coll::AlgoInfo& a : coll::algorithm_table())
    if (std::find(collectives.begin(), collectives.end(), a.collective_name) == collectives.end())
      collectives.push_back(a.collective_name);
  std::string per_collective;
  for (const std::string& c : collectives)
    per_collective += (per_collective.empty() ? "" : "; ") + c + ": " +
                      join_list(coll::algorithms_for(c));
  k.params = {
      choice("collective", collectives, "",
             "Collective operation (nccl-tests names; reductions are sums)."),
      param("algorithm", K::kString, "default", "",
            "Algorithm for the collective; 'default' takes the first one listed, 'auto' "
            "chooses per size with the topology-derived cost model (docs/collectives.md; "
            "nvls and hierarchical_nvls are candidates where the system runs them; any rank "
            "count). " + per_collective + ". nvls needs switches with nvls: true linked to "
            "every rank; hierarchical_nvls needs them linked to exactly the ranks of each node."),
      param("root", K::kInt, "0", "rank", "Root rank of broadcast and reduce.", 0, 65535)};
  const std::vector<ParamSpec> shared = sweep_params();
  k.params.insert(k.params.end(), shared.begin(), shared.end());
  k.parse = [](const cfg::Params& p, const cfg::Params&, SystemSpec& s) {
    WorkloadSpec& ws = s.workload;
    ws.collective = p.str("collective");
    ws.root = int(p.integer("root"));
    const std::vector<std::string> algos = coll::algorithms_for(ws.collective);
    ws.algorithm = p.str("algorithm") == "default" ? algos.front() : p.str("algorithm");
    if (ws.algorithm != "auto" && std::find(algos.begin(), algos.end(), ws.algorithm) == algos.end())
      p.fail("algorithm", "'" + ws.algorithm + "' is not an algorithm of " + ws.collective,
             did_you_mean(ws.algorithm, algos));
    parse_sweep(p, s);
  };
  k.estimate = sweep_cost;
  return k;
}

}  // namespace fabricsim
