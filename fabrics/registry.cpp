#include "fabrics/registry.h"

#include <sstream>

#include "fabrics/config.h"
#include "models/core/errors.h"

namespace fabricsim::cfg {

namespace {

constexpr double kNoMin = -std::numeric_limits<double>::infinity();

ParamSpec P(std::string key, Kind kind, std::string def, std::string unit, std::string desc,
            double min = kNoMin, double max = std::numeric_limits<double>::infinity(),
            std::vector<std::string> choices = {}) {
  ParamSpec s;
  s.key = std::move(key);
  s.kind = kind;
  s.default_value = std::move(def);
  s.unit_doc = std::move(unit);
  s.description = std::move(desc);
  s.min = min;
  s.max = max;
  s.choices = std::move(choices);
  return s;
}

ParamSpec E(std::string key, std::vector<std::string> choices, std::string def,
            std::string desc) {
  return P(std::move(key), Kind::kEnum, std::move(def), "", std::move(desc), kNoMin,
           std::numeric_limits<double>::infinity(), std::move(choices));
}

const std::vector<std::string> kProtocols{"nvlink", "ualink", "ethernet", "infiniband", "pcie",
                                          "generic"};

std::vector<TypeEntry> build() {
  std::vector<TypeEntry> r;
  r.push_back(
      {Category::kSection,
       {"simulation",
        "Run-wide simulation settings (the `simulation:` section).",
        {P("aggregate_bytes", Kind::kBytes, "0B", "bytes",
           "Largest payload moved as one simulated transaction: a run of back-to-back packets "
           "of one message whose wire time, credits and statistics stay byte-exact. 0B or one "
           "packet's payload = per-packet simulation. Every link's rx_buffer must hold one "
           "such transaction.",
           0),
         P("aggregate_min_message", Kind::kBytes, "0B", "bytes",
           "Messages smaller than this always move packet by packet, so latency-bound "
           "traffic (small collectives, acks, flags) keeps per-packet interleaving; larger "
           "ones are aggregated (bandwidth-bound, where aggregation converges). 0B: "
           "aggregate every message.",
           0),
         P("time_limit", Kind::kTime, "60s", "simulated time",
           "Stop with an error if the workload has not finished by this simulated time.", 1),
         P("functional", Kind::kBool, "false", "",
           "Carry real numbers through the collectives and check every rank's result exactly "
           "(for sizes up to 64MiB).")}}});
  r.push_back(
      {Category::kLink,
       {"link",
        "A link type (the `link_types:` section): both directions alike, rate per direction.",
        {E("protocol", kProtocols, "",
           "Protocol the link carries; both ends' devices must speak it."),
         P("lanes", Kind::kInt, "", "lanes", "Lanes per direction.", 1, 64),
         P("lane_rate", Kind::kBandwidth, "", "Gb/s (per lane, per direction)",
           "Data rate of one lane after line coding.", 1),
         P("encoding_efficiency", Kind::kReal, "1.0", "ratio",
           "Line-code efficiency applied to lanes x lane_rate, as a decimal (e.g. 0.984615 for "
           "PCIe Gen5's 128b/130b).",
           0.01, 1.0),
         E("framing", {"flit", "frame"}, "flit",
           "flit: whole flits, with overhead flits per packet (NVLink). frame: header+FCS, "
           "minimum frame, preamble and gap (Ethernet)."),
         P("flit_bytes", Kind::kBytes, "16B", "bytes", "Flit size (framing: flit).", 1),
         P("overhead_flits", Kind::kInt, "1", "flits",
           "Non-data flits per packet: header with CRC, address/byte-enable (framing: flit).",
           0, 16),
         P("request_flits", Kind::kInt, "0", "flits",
           "Flits of a header-only packet: a read request, e.g. the NVLS reads a switch "
           "sends (framing: flit); 0 = overhead_flits.",
           0, 16),
         P("header_bytes", Kind::kBytes, "0B", "bytes",
           "Per-packet header and trailer incl. FCS (framing: frame).", 0),
         P("min_frame_bytes", Kind::kBytes, "0B", "bytes",
           "Frames shorter than this are padded (framing: frame).", 0),
         P("gap_bytes", Kind::kBytes, "0B", "bytes",
           "Preamble + SFD + inter-frame gap per packet (framing: frame).", 0),
         P("packet_payload", Kind::kBytes, "", "bytes",
           "Payload bytes per packet that the traffic uses (e.g. 128B for SM-issued NVLink "
           "stores, 256B for copy engines).",
           1, 65536),
         P("latency", Kind::kTime, "", "ns (one way)",
           "Propagation + PHY/FEC latency of one direction.", 0),
         P("vcs", Kind::kInt, "1", "", "Virtual channels, each with its own credits.", 1, 16),
         P("rx_buffer", Kind::kBytes, "", "bytes (per VC, counted in wire bytes)",
           "Receive buffer per virtual channel at each end; credits = its size.", 1)}}});
  r.push_back(
      {Category::kDevice,
       {"endpoint",
        "An accelerator's fabric interface: DMA engine striping over ports, reassembly, "
        "reduction engine (in `device_types:`).",
        {E("protocol", kProtocols, "", "Protocol of its ports."),
         P("ports", Kind::kInt, "", "ports", "Fabric ports; every one must be linked.", 1, 4096),
         P("memory_bandwidth", Kind::kBandwidth, "", "GB/s",
           "Local memory bandwidth; a reduction of B bytes moves 3B (two reads, one write).",
           1)}}});
  r.push_back(
      {Category::kDevice,
       {"switch",
        "The switch frame: ingress pipeline, routing, input queues, crossbar arbiter, "
        "egress queues (in `device_types:`).",
        {E("protocol", kProtocols, "", "Protocol of its ports."),
         P("ports", Kind::kInt, "", "ports", "Switch ports; unlinked ones stay unused.", 2, 4096),
         P("pipeline_latency", Kind::kTime, "", "ns",
           "Ingress pipeline: arrival of a packet's head to eligible for the crossbar.", 0),
         E("input_queues", {"voq", "fifo"}, "voq",
           "voq: one virtual output queue per output at every input; fifo: one queue per "
           "input (head-of-line blocking)."),
         E("arbiter", {"islip", "round_robin"}, "islip", "Crossbar allocator."),
         P("islip_iterations", Kind::kInt, "1", "", "iSLIP request-grant-accept iterations.", 1,
           16),
         P("speedup", Kind::kReal, "1.0", "ratio", "Crossbar rate / output link rate.", 1.0,
           8.0),
         P("egress_buffer", Kind::kBytes, "", "bytes (payload, per output)",
           "Egress queue; the crossbar starts a transfer into it while it holds less than "
           "this, so it may overshoot by one transaction.",
           1),
         E("route_select", {"adaptive", "hash"}, "adaptive",
           "Choice among equal-cost outputs: least queued bytes, or a hash of the packet's "
           "source, destination and entropy."),
         P("nvls", Kind::kBool, "false", "",
           "In-switch reduction and multicast (NVLink SHARP, NVSwitch3 and later): the "
           "switch reads a range from every endpoint linked to it, reduces it and returns "
           "the sum, and replicates multicast stores (models/switch/switch.h). Needed by "
           "the nvls algorithms."),
         P("nvls_reduce_bandwidth", Kind::kString, "none", "GB/s (input bytes, per chip)",
           "Reduction engine throughput: input bytes it consumes per second, shared by the "
           "chip's ports (a bandwidth such as 2000GB/s). Required when nvls is true."),
         P("nvls_multicast_bandwidth", Kind::kString, "none", "GB/s (input bytes, per chip)",
           "Multicast engine throughput: stored bytes it replicates per second (a "
           "bandwidth); none = not a bottleneck (replicas still serialise on every output "
           "link)."),
         P("nvls_datatypes", Kind::kString, "float,half,bfloat16", "",
           "Comma-separated element types the reduction engine supports; an nvls "
           "reduction of another type is a config error.")}}});
  r.push_back(
      {Category::kTopology,
       {"switched_node",
        "N endpoints, S switches, links_per_switch[s] links from every endpoint to switch s "
        "(DGX H100: 8 GPUs, 4 NVSwitch3, 5/4/4/5).",
        {P("endpoint_type", Kind::kString, "", "", "A device type of type endpoint."),
         P("endpoints", Kind::kInt, "", "", "Number of endpoints (ranks, in order).", 1, 4096),
         P("endpoint_prefix", Kind::kString, "gpu", "", "Endpoint names: prefix + index."),
         P("switch_type", Kind::kString, "", "", "A device type of type switch."),
         P("switches", Kind::kInt, "", "", "Number of switches.", 1, 4096),
         P("switch_prefix", Kind::kString, "sw", "", "Switch names: prefix + index."),
         P("links_per_switch", Kind::kIntList, "", "links",
           "Links from every endpoint to switch s; sums to the endpoint's ports.", 0, 4096),
         P("link_type", Kind::kString, "", "", "A link type from link_types.")}}});
  r.push_back(
      {Category::kTopology,
       {"explicit",
        "Devices and links listed one by one: `devices: {name: device_type}`, `links: - {a: "
        "\"gpu0.port[0]\", b: \"sw0.port[3]\", type: link_type}` (quote port names inside "
        "{...}: '[' is YAML syntax there), optional `ranks: [names]` (default: every "
        "endpoint in declaration order).",
        {}}});
  // Sweep parameters shared by both workload types.
  const std::vector<ParamSpec> sweep_params{
      P("min_bytes", Kind::kBytes, "", "bytes", "First message size (nccl-tests size).", 1),
      P("max_bytes", Kind::kBytes, "", "bytes", "Last message size (inclusive).", 1),
      P("step_factor", Kind::kInt, "2", "", "Size multiplier between rows.", 2, 1024),
      E("datatype", {"float", "half", "bfloat16", "double", "int32", "int8"}, "float",
        "Element type (sets count = size / element size)."),
      P("channels", Kind::kInt, "1", "",
        "Independent streams over disjoint parts of the buffer (NCCL channels).", 1, 64),
      P("chunk_bytes", Kind::kBytes, "512KiB", "bytes",
        "Pipelining granularity: messages are cut into pieces of this size.", 1),
      E("sync", {"data", "fence_flag"}, "data",
        "How a receiver learns a chunk is complete. data: when its last byte arrives "
        "(ideal). fence_flag (NCCL Simple-like): the receiver acks the writes, the "
        "sender's fence completes on the ack, then it writes a flag; the chunk is "
        "complete when the flag arrives. All of it is fabric traffic."),
      P("ack_bytes", Kind::kBytes, "16B", "bytes",
        "Payload of a write acknowledgement (sync: fence_flag).", 1),
      P("flag_bytes", Kind::kBytes, "8B", "bytes",
        "Payload of a completion flag (sync: fence_flag).", 1),
      P("launch_latency", Kind::kTime, "0ns", "us",
        "Time from a collective's start until its first operation may run (kernel "
        "launch); counted in the measured time.",
        0)};
  {
    std::vector<ParamSpec> ps{E("algorithm", {"ring", "tree", "halving_doubling", "direct", "nvls"},
                                "ring",
                                "All-reduce algorithm (models/collectives/algorithms.h).")};
    ps.insert(ps.end(), sweep_params.begin(), sweep_params.end());
    r.push_back({Category::kWorkload,
                 {"allreduce_sweep",
                  "An nccl-tests style all-reduce size sweep (sum), one collective per size.",
                  ps}});
  }
  {
    std::vector<ParamSpec> ps{
        E("collective",
          {"all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "alltoall",
           "sendrecv"},
          "", "Collective operation (nccl-tests names; reductions are sums)."),
        P("algorithm", Kind::kString, "default", "",
          "Algorithm for the collective; 'default' takes the first one listed. all_reduce: "
          "ring, tree, halving_doubling, direct, nvls; reduce_scatter, all_gather: ring, "
          "nvls; broadcast, reduce: ring; alltoall: pairwise, direct; sendrecv: direct. "
          "nvls needs switches with nvls: true linked to every rank."),
        P("root", Kind::kInt, "0", "rank", "Root rank of broadcast and reduce.", 0, 65535)};
    ps.insert(ps.end(), sweep_params.begin(), sweep_params.end());
    r.push_back({Category::kWorkload,
                 {"collective_sweep",
                  "An nccl-tests style size sweep of any collective, one per size.", ps}});
  }
  return r;
}

}  // namespace

const std::vector<TypeEntry>& registry() {
  static const std::vector<TypeEntry> r = build();
  return r;
}

const TypeEntry* find_type(Category category, const std::string& type) {
  for (const TypeEntry& e : registry())
    if (e.category == category && e.spec.type == type) return &e;
  return nullptr;
}

std::vector<std::string> type_names(Category category) {
  std::vector<std::string> out;
  for (const TypeEntry& e : registry())
    if (e.category == category) out.push_back(e.spec.type);
  return out;
}

const char* category_name(Category category) {
  switch (category) {
    case Category::kLink: return "link type";
    case Category::kDevice: return "device type";
    case Category::kTopology: return "topology";
    case Category::kWorkload: return "workload";
    case Category::kSection: return "section";
  }
  return "";
}

std::string describe_all() {
  std::ostringstream os;
  os << "fabricsim component types (fabricsim describe TYPE for parameters):\n";
  for (const TypeEntry& e : registry())
    os << "  " << e.spec.type << std::string(e.spec.type.size() < 18 ? 18 - e.spec.type.size() : 1, ' ')
       << "[" << category_name(e.category) << "] " << e.spec.summary << "\n";
  return os.str();
}

std::string describe_one(const std::string& type) {
  std::vector<std::string> names;
  for (const TypeEntry& e : registry()) {
    if (e.spec.type == type) return describe_type(e.spec);
    names.push_back(e.spec.type);
  }
  std::string hint = "known types: ";
  for (size_t i = 0; i < names.size(); ++i) hint += (i ? ", " : "") + names[i];
  const std::string near = nearest(type, names);
  if (!near.empty()) hint = "did you mean '" + near + "'? " + hint;
  throw InputError("describe: unknown type '" + type + "'; " + hint);
}

}  // namespace fabricsim::cfg
