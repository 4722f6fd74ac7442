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
         E("framing", {"flit", "frame", "ualink"}, "flit",
           "flit: whole flits, with overhead flits per packet (NVLink). frame: header+FCS, "
           "minimum frame, preamble and gap (Ethernet). ualink: UALink 1.0 stream: a TL "
           "field + data half-flits per packet, packed back to back into DL flits, each "
           "sent as one FEC codeword (set lane_rate to the signalling rate, 212.5Gb/s: the "
           "codeword bytes already count the FEC)."),
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
         P("tl_flit_bytes", Kind::kBytes, "64B", "bytes",
           "UALink TL flit; data travels in its half-flits (framing: ualink).", 2, 4096),
         P("tl_request_bytes", Kind::kBytes, "16B", "bytes",
           "TL request field per write, flag or read request (uncompressed; framing: "
           "ualink).",
           1, 4096),
         P("tl_response_bytes", Kind::kBytes, "8B", "bytes",
           "TL response field per read response or write completion (ack) (framing: "
           "ualink).",
           1, 4096),
         P("dl_flit_bytes", Kind::kBytes, "640B", "bytes", "UALink DL flit (framing: ualink).",
           1, 65536),
         P("dl_overhead_bytes", Kind::kBytes, "12B", "bytes",
           "DL flit header + segment headers + CRC; the rest of a DL flit carries the TL "
           "stream (framing: ualink).",
           0, 65536),
         P("fec_codeword_bytes", Kind::kBytes, "680B", "bytes",
           "Wire bytes of the FEC codeword that carries one DL flit (RS(544,514): 680B) "
           "(framing: ualink).",
           1, 65536),
         P("packet_payload", Kind::kBytes, "", "bytes",
           "Payload bytes per packet that the traffic uses (e.g. 128B for SM-issued NVLink "
           "stores, 256B for copy engines).",
           1, 65536),
         P("latency", Kind::kTime, "", "ns (one way)",
           "Propagation + PHY/FEC latency of one direction.", 0),
         P("vcs", Kind::kInt, "1", "", "Virtual channels, each with its own credits.", 1, 16),
         P("rx_buffer", Kind::kBytes, "", "bytes (per VC, counted in wire bytes)",
           "Receive buffer per virtual channel at each end; credits = its size.", 1),
         P("ber", Kind::kReal, "0", "errors per wire bit",
           "Bit error rate of each direction, after FEC. > 0 turns on link-level retry: "
           "CRC errors drawn per wire bit, NAK and go-back-N replay from the replay buffer; "
           "the unit that is NAKed and replayed is the packet, or on framing: ualink the "
           "FEC codeword (one DL flit). 0: an ideal link, the retry machinery idle.",
           0.0, 1e-3),
         P("replay_buffer", Kind::kBytes, "64KiB", "bytes (wire bytes, per direction)",
           "Sender's replay buffer: wire bytes kept until acknowledged. A transaction starts "
           "only when it fits. Used only when ber > 0, and then it must hold one transaction + "
           "the bytes of an ack round trip (rate x (2 x latency + ack_delay), + one codeword "
           "on framing: ualink).",
           1),
         P("ack_delay", Kind::kTime, "20ns", "ns",
           "Receiver's ack coalescing: a good packet is acknowledged this long after its tail "
           "arrives (PCIe's AckNak latency timer). Sets when the replay buffer frees. Used only "
           "when ber > 0.",
           0),
         P("retry_latency", Kind::kTime, "30ns", "ns",
           "NAK turnaround: from a bad packet's tail at the receiver to the NAK leaving, plus "
           "the sender's time to start the replay. A replay starts 2 x latency + "
           "retry_latency after the bad packet's tail left the sender. Used only when ber > 0.",
           0)}}});
  r.push_back(
      {Category::kDevice,
       {"endpoint",
        "An accelerator's fabric interface: DMA engine striping over ports, reassembly, "
        "reduction engine (in `device_types:`).",
        {E("protocol", kProtocols, "", "Protocol of its ports."),
         P("ports", Kind::kInt, "", "ports", "Fabric ports; every one must be linked.", 1, 4096),
         P("memory_bandwidth", Kind::kBandwidth, "", "GB/s",
           "Local memory bandwidth; a reduction of B bytes moves 3B (two reads, one write).",
           1),
         P("read_turnaround", Kind::kTime, "0ns", "ns",
           "Read target: from a read request's arrival to its response data being handed "
           "to the DMA (memory access latency).",
           0),
         P("nic_ports", Kind::kInt, "0", "ports",
           "Scale-out NIC ports (one NIC per GPU: 1), numbered after the fabric ports "
           "(port[ports] .. port[ports + nic_ports - 1]); they speak nic_protocol. The DMA "
           "uses whichever ports reach a destination: in multi_node systems NVLink inside "
           "the node, the NIC across nodes.",
           0, 64),
         E("nic_protocol", kProtocols, "infiniband", "Protocol of the NIC ports.")}}});
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
         E("ualink_class", {"none", "25.6T", "51.2T", "102.4T"}, "none",
           "UALink switch class: its published port-to-port latency limit (<=150ns, "
           "<200ns, <250ns) is checked against codeword + pipeline_latency + crossbar time "
           "on every attached link (docs/models.md \"UALink 1.0\")."),
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
       {"multi_node",
        "Two-level system: `nodes` switched nodes (each as switched_node: endpoints_per_node "
        "endpoints, switches_per_node switches, links_per_switch) whose endpoints' NIC "
        "ports go to rail switches (NIC j of local endpoint l on every node -> rail "
        "l * nic_ports + j), optionally with a spine tier above the rails. Names: "
        "node<k>_<endpoint_prefix><l>, node<k>_<switch_prefix><s>, rail<i>, spine<s>; ranks "
        "node-major (rank = node * endpoints_per_node + l).",
        {P("nodes", Kind::kInt, "", "", "Number of nodes.", 1, 1024),
         P("endpoint_type", Kind::kString, "", "",
           "A device type of type endpoint with nic_ports >= 1."),
         P("endpoints_per_node", Kind::kInt, "", "", "Endpoints per node (the domain size).",
           1, 4096),
         P("endpoint_prefix", Kind::kString, "gpu", "", "Endpoint names inside a node."),
         P("switch_type", Kind::kString, "", "", "The scale-up switch type inside a node."),
         P("switches_per_node", Kind::kInt, "", "", "Scale-up switches per node.", 1, 4096),
         P("switch_prefix", Kind::kString, "sw", "", "Scale-up switch names inside a node."),
         P("links_per_switch", Kind::kIntList, "", "links",
           "Links from every endpoint to scale-up switch s; sums to the endpoint's ports.", 0,
           4096),
         P("link_type", Kind::kString, "", "", "Scale-up link type (endpoint - switch)."),
         P("nic_link_type", Kind::kString, "", "", "Link type from a NIC port to its rail switch."),
         P("rail_switch_type", Kind::kString, "", "",
           "Rail (leaf) switch type; needs nodes ports for the NICs plus uplinks_per_rail."),
         P("spines", Kind::kInt, "0", "",
           "Spine switches above the rails (0: rails only; traffic between different "
           "local indices of different nodes then has no path).",
           0, 4096),
         P("spine_switch_type", Kind::kString, "none", "", "Spine switch type (when spines > 0)."),
         P("uplinks_per_rail", Kind::kInt, "0", "links",
           "Links from every rail switch to the spine tier, dealt round-robin over the "
           "spines (a multiple of spines).",
           0, 4096),
         P("spine_link_type", Kind::kString, "none", "",
           "Link type rail - spine (none: nic_link_type).")}}});
  r.push_back(
      {Category::kTopology,
       {"two_tier",
        "A two-tier scale-up domain (e.g. 576 NVLink GPUs in 8 racks), one plane per "
        "endpoint port: port p of every endpoint goes to a leaf (L1) switch of plane p in its "
        "rack, leaf_down endpoints per leaf, and each plane's spine (L2) switches join its "
        "leaves, every leaf's leaf_up uplinks dealt round-robin over them. One domain: all "
        "endpoints are one node. Names: <endpoint_prefix><g> (g = 0..endpoints-1, rack-major), "
        "<leaf_prefix>_r<rack>_p<plane>_<k>, <spine_prefix>_p<plane>_<s>; ranks in endpoint "
        "order.",
        {P("endpoint_type", Kind::kString, "", "",
           "A device type of type endpoint without NIC ports; its ports are the planes."),
         P("endpoints", Kind::kInt, "", "", "Number of endpoints (ranks, in order).", 1, 65536),
         P("endpoint_prefix", Kind::kString, "gpu", "", "Endpoint names: prefix + index."),
         P("racks", Kind::kInt, "1", "", "Racks; endpoints / racks endpoints each.", 1, 4096),
         P("leaf_switch_type", Kind::kString, "", "", "Leaf (L1) switch type."),
         P("leaf_prefix", Kind::kString, "l1", "", "Leaf switch names."),
         P("leaf_down", Kind::kInt, "", "links",
           "Endpoint links per leaf (its ports 0..leaf_down-1); divides endpoints / racks.", 1,
           4096),
         P("leaf_up", Kind::kInt, "", "links",
           "Uplinks per leaf (ports leaf_down..); leaf_up < leaf_down oversubscribes the "
           "spine tier by leaf_down : leaf_up.",
           1, 4096),
         P("spine_switch_type", Kind::kString, "", "", "Spine (L2) switch type."),
         P("spine_prefix", Kind::kString, "l2", "", "Spine switch names."),
         P("spines_per_plane", Kind::kInt, "", "",
           "Spine switches per plane; divides leaf_up (every leaf has leaf_up / "
           "spines_per_plane links to each spine of its plane).",
           1, 4096),
         P("link_type", Kind::kString, "", "", "Link type endpoint - leaf."),
         P("uplink_type", Kind::kString, "", "", "Link type leaf - spine.")}}});
  r.push_back(
      {Category::kTopology,
       {"explicit",
        "Devices and links listed one by one: `devices: {name: device_type}`, `links: - {a: "
        "\"gpu0.port[0]\", b: \"sw0.port[3]\", type: link_type}` (quote port names inside "
        "{...}: '[' is YAML syntax there), optional `ranks: [names]` (default: every "
        "endpoint in declaration order).",
        {}}});
  {
    // A PCIe root complex: the switch frame plus the host path (models/switch/host_path.h).
    std::vector<ParamSpec> ps;
    for (const TypeEntry& e : r)
      if (e.spec.type == "switch") ps = e.spec.params;
    ps.push_back(P("p2p", Kind::kBool, "false", "",
                   "true: peer traffic is forwarded port to port through the root complex "
                   "(up and down its data path once). false: it bounces through host memory "
                   "(up, written to memory, read back, down), as when GPUs cannot write to "
                   "each other."));
    ps.push_back(P("root_complex_bandwidth", Kind::kBandwidth, "", "GB/s (per direction)",
                   "Data path between the root ports and the host, per direction (ports -> "
                   "host, host -> ports); every forwarded byte crosses it once each way.",
                   1));
    ps.push_back(P("host_memory_bandwidth", Kind::kBandwidth, "", "GB/s (reads + writes)",
                   "Host memory (DRAM) bandwidth shared by reads and writes, e.g. 12 DDR5-4800 "
                   "channels x 38.4 GB/s = 460.8GB/s; a bounced byte is written once and read "
                   "once (p2p: false).",
                   1));
    ps.push_back(P("memory_latency", Kind::kTime, "100ns", "ns",
                   "Host memory read latency added to every bounced transaction (p2p: false).",
                   0));
    r.push_back({Category::kDevice,
                 {"root_complex",
                  "A PCIe root complex (in `device_types:`): the switch frame whose every "
                  "transfer also crosses the host data path and, with p2p: false, host "
                  "memory (write + read).",
                  ps}});
  }
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
      P("slices", Kind::kInt, "1", "",
        "all_reduce hierarchical and hierarchical_nvls only: every channel's data is cut "
        "into this many slices that run the three phases as a pipeline, so the domain links "
        "and the NICs work at the same time (docs/collectives.md). 1: phases in turn. "
        "auto chooses 1, 2, 4 or 8 itself (its row shows hierarchical/M or "
        "hierarchical_nvls/M).",
        1, 64),
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
    std::vector<ParamSpec> ps{
        E("algorithm", {"ring", "tree", "halving_doubling", "direct", "hierarchical", "nvls",
                        "hierarchical_nvls", "auto"},
          "ring",
          "All-reduce algorithm (models/collectives/algorithms.h); auto: chosen per size by "
          "the topology-derived cost model (docs/collectives.md; nvls and hierarchical_nvls "
          "are candidates where the system runs them; up to 256 ranks). nvls needs switches "
          "with nvls: true linked to every rank; hierarchical_nvls needs them linked to "
          "exactly the ranks of each node.")};
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
          "Algorithm for the collective; 'default' takes the first one listed, 'auto' "
          "chooses per size with the topology-derived cost model (docs/collectives.md; "
          "nvls and hierarchical_nvls are candidates where the system runs them; up to 256 "
          "ranks). all_reduce: ring, tree, halving_doubling, "
          "direct, hierarchical, nvls, hierarchical_nvls; reduce_scatter, all_gather: ring, "
          "nvls; broadcast, reduce: ring; alltoall: pairwise, direct; sendrecv: direct. nvls "
          "needs switches with nvls: true linked to every rank; hierarchical_nvls needs "
          "them linked to exactly the ranks of each node."),
        P("root", Kind::kInt, "0", "rank", "Root rank of broadcast and reduce.", 0, 65535)};
    ps.insert(ps.end(), sweep_params.begin(), sweep_params.end());
    r.push_back({Category::kWorkload,
                 {"collective_sweep",
                  "An nccl-tests style size sweep of any collective, one per size.", ps}});
  }
  // Training workloads (fabrics/training.cpp, models/collectives/training.h): one step
  // (or layer) as compute ops and collectives with the framework's stream dependencies.
  {
    const std::vector<ParamSpec> comm{
        E("algorithm", {"ring", "tree", "halving_doubling", "direct"}, "ring",
          "All-reduce algorithm (ddp_step buckets, tp_layer); all-gather and "
          "reduce-scatter use ring, all-to-all direct."),
        E("datatype", {"float", "half", "bfloat16", "double", "int32", "int8"}, "bfloat16",
          "Element type of parameters, gradients and activations."),
        P("channels", Kind::kInt, "1", "", "NCCL channels of every collective.", 1, 64),
        P("chunk_bytes", Kind::kBytes, "512KiB", "bytes",
          "Pipelining granularity: messages are cut into pieces of this size.", 1),
        E("sync", {"data", "fence_flag"}, "data",
          "Chunk completion protocol, as in collective_sweep."),
        P("ack_bytes", Kind::kBytes, "16B", "bytes",
          "Payload of a write acknowledgement (sync: fence_flag).", 1),
        P("flag_bytes", Kind::kBytes, "8B", "bytes",
          "Payload of a completion flag (sync: fence_flag).", 1),
        P("launch_latency", Kind::kTime, "0ns", "us",
          "Fixed cost of EVERY collective on its stream (kernel launch, framework "
          "bookkeeping; an assumption), paid after its inputs are ready and the previous "
          "collective on the stream is done.",
          0),
        P("ranks", Kind::kInt, "0", "ranks",
          "Run on the first N ranks of the config (scaling runs, scripts/scaling.sh); 0: "
          "every rank.",
          0, 65536),
        P("device_tflops", Kind::kReal, "400", "TFLOP/s (per accelerator)",
          "Achieved dense throughput that turns FLOPs into compute time when no time is "
          "given (an assumption: H100 SXM bf16 dense peak is 989 TFLOP/s).",
          0.001, 1e6)};
    const std::vector<ParamSpec> model{
        P("layers", Kind::kInt, "24", "layers", "Transformer layers.", 1, 100000),
        P("layer_params", Kind::kIntList, "[12582912]", "parameters",
          "Parameters per layer: one value for every layer, or one per layer (layer 0 "
          "first). Default 12 x 1024^2 (a GPT-2-medium-like layer).",
          1, 1e12),
        P("tokens", Kind::kInt, "8192", "tokens (per rank per step)",
          "Tokens one rank processes per step (micro-batch x sequence length).", 1, 1e12),
        P("forward_time", Kind::kTime, "0ns", "us (per layer)",
          "Forward compute of one layer; 0: 2 x params x tokens FLOPs / device_tflops.", 0),
        P("backward_time", Kind::kTime, "0ns", "us (per layer)",
          "Backward compute of one layer; 0: 4 x params x tokens FLOPs / device_tflops.",
          0)};
    auto with = [&](std::vector<ParamSpec> own, bool with_model) {
      if (with_model) own.insert(own.end(), model.begin(), model.end());
      own.insert(own.end(), comm.begin(), comm.end());
      return own;
    };
    r.push_back(
        {Category::kWorkload,
         {"ddp_step",
          "One data-parallel training step (PyTorch DDP): gradient buckets all-reduced on "
          "the comm stream while the backward pass runs; also the no-overlap baseline.",
          with({P("bucket_bytes", Kind::kBytes, "25MiB", "bytes",
                  "Bucket cap (PyTorch bucket_cap_mb default 25 MiB); a bucket closes once "
                  "it holds at least this much; layers are not split.",
                  1),
                P("first_bucket_bytes", Kind::kBytes, "0B", "bytes",
                  "Cap of the first bucket (PyTorch uses 1 MiB); 0B: bucket_bytes.", 0),
                P("bucket_sweep_kib", Kind::kIntList, "[]", "KiB",
                  "Bucket caps to sweep, one row each (in KiB = 1024 B); empty: only "
                  "bucket_bytes.",
                  1, 1e9)},
               true)}});
    r.push_back(
        {Category::kWorkload,
         {"fsdp_step",
          "One fully sharded data-parallel step (FSDP): per-layer all-gather of parameters "
          "with prefetch, reduce-scatter of gradients; one row per prefetch depth.",
          with({P("prefetch_depths", Kind::kIntList, "[0, 1, 2]", "layers",
                  "Prefetch depths to run, one row each: all-gathers in flight ahead of "
                  "the layer computing.",
                  0, 16)},
               true)}});
    r.push_back(
        {Category::kWorkload,
         {"moe_layer",
          "One mixture-of-experts layer: top-k routing with skewed expert popularity, "
          "all-to-all dispatch, expert compute, all-to-all combine; uniform and skewed "
          "rows.",
          with({P("tokens", Kind::kInt, "4096", "tokens (per rank)",
                  "Tokens routed from every rank.", 1, 1e9),
                P("hidden", Kind::kInt, "4096", "elements", "Hidden size (elements per token).",
                  1, 1e6),
                P("ffn_hidden", Kind::kInt, "14336", "elements",
                  "Expert FFN inner size: 4 x hidden x ffn_hidden FLOPs per routed token.", 1,
                  1e7),
                P("experts_per_rank", Kind::kInt, "1", "experts", "Experts on every rank.", 1,
                  1024),
                P("top_k", Kind::kInt, "2", "experts", "Experts every token goes to.", 1, 64),
                P("skew", Kind::kReal, "1.0", "",
                  "Zipf exponent of expert popularity (weight 1/rank^skew over a seeded "
                  "permutation of the experts); 0 = uniform.",
                  0, 8),
                P("expert_time_per_token", Kind::kTime, "0ns", "ns",
                  "Expert compute per routed token; 0: from ffn_hidden and device_tflops.",
                  0),
                P("ep", Kind::kInt, "0", "ranks",
                  "Expert-parallel group size (divides ranks): every group holds all "
                  "experts and routes its own tokens; 0: one group of every rank.",
                  0, 4096),
                E("placement", {"ep_inside", "ep_across", "both"}, "both",
                  "ep_inside: EP groups are consecutive ranks (a scale-up domain when domains "
                  "are consecutive rank blocks); ep_across: strided; both: rows for each. "
                  "Ignored when one group holds every rank.")},
               false)}});
    r.push_back(
        {Category::kWorkload,
         {"tp_layer",
          "Tensor parallel (Megatron-style, 2 all-reduces per layer forward and backward) "
          "with data-parallel gradient all-reduce per layer; placement of TP groups inside "
          "or across scale-up domains.",
          with({P("tp", Kind::kInt, "4", "ranks", "Tensor-parallel group size; divides ranks.",
                  1, 4096),
                E("placement", {"tp_inside", "dp_inside", "both"}, "both",
                  "tp_inside: TP groups are consecutive ranks (inside a scale-up domain when "
                  "domains are consecutive rank blocks), DP strided; dp_inside: the reverse; "
                  "both: one row each."),
                P("hidden", Kind::kInt, "4096", "elements",
                  "Hidden size: a TP all-reduce moves tokens x hidden elements.", 1, 1e6)},
               true)}});
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
