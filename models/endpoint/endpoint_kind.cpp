// The accelerator's fabric interface as a device kind: a terminal device (a rank) with
// fabric ports and optional scale-out NIC ports.
#include <algorithm>
#include <map>

#include "models/core/device_kind.h"
#include "models/core/limits.h"
#include "models/endpoint/endpoint.h"
#include "models/link/link_type.h"

namespace fabricsim {

DeviceKind endpoint_kind() {
  using K = ParamKind;
  using E = EndpointParams;
  DeviceKind k;
  k.name = "endpoint";
  k.summary =
      "An accelerator's fabric interface: DMA engine striping over ports, reassembly, "
      "reduction engine (in `device_types:`).";
  k.terminal = true;
  k.params.push_back(param_block<E>(
      "endpoint",
      {bind(choice("protocol", link_protocols(), "", "Protocol of its ports."), &E::protocol),
       bind(param("ports", K::kInt, "", "ports", "Fabric ports; every one must be linked.", 1,
                  4096),
            &E::ports),
       bind(param("memory_bandwidth", K::kBandwidth, "", "GB/s",
                  "Local memory bandwidth; a reduction of B bytes moves 3B (two reads, one "
                  "write).",
                  limits::kMinDeviceBandwidthBps, limits::kMaxDeviceBandwidthBps),
            &E::memory_bandwidth_bps),
       bind(param("read_turnaround", K::kTime, "0ns", "ns",
                  "Read target: from a read request's arrival to its response data being "
                  "handed to the DMA (memory access latency).",
                  0, limits::kMaxLatencyPs),
            &E::read_turnaround_ps),
       bind(param("nic_ports", K::kInt, "0", "ports",
                  "Scale-out NIC ports (one NIC per GPU: 1), numbered after the fabric ports "
                  "(port[ports] .. port[ports + nic_ports - 1]); they speak nic_protocol. The "
                  "DMA uses whichever ports reach a destination: in multi_node systems NVLink "
                  "inside the node, the NIC across nodes.",
                  0, 64),
            &E::nic_ports),
       bind(choice("nic_protocol", link_protocols(), "infiniband", "Protocol of the NIC ports."),
            &E::nic_protocol),
       bind(param("flag_latency", K::kTime, "0ns", "ns",
                  "Collective protocol model (sync: fence_flag, protocol ll): from a flag "
                  "(Simple) or an 8-byte LL line landing in this GPU's memory to the thread "
                  "block polling it seeing it.",
                  0),
            &E::flag_latency_ps),
       bind(param("ll128_flag_latency", K::kTime, "0ns", "ns",
                  "The same for protocol ll128: a step's 128-byte lines are polled by the "
                  "warps of a 640-thread block, each line's flag in its last 8 bytes.",
                  0),
            &E::ll128_flag_latency_ps),
       bind(param("fence_latency", K::kTime, "0ns", "ns",
                  "Collective protocol model, Simple: from the acknowledgements of a step's "
                  "writes being back to its fence retiring and the flag being written.",
                  0),
            &E::fence_latency_ps),
       bind(param("proxy_post_latency", K::kTime, "0ns", "ns",
                  "Collective protocol model, steps over a scale-out NIC port (NCCL's network "
                  "transport; every protocol): from a step's data and tail being in the "
                  "sender's buffer to the CPU proxy having posted its RDMA write (the proxy's "
                  "poll of the tail, the post, the doorbell); the step then crosses the NIC "
                  "whole (store and forward per step). Also from a receiver's slot being "
                  "consumed to its proxy having posted the receive that frees it for the "
                  "sender.",
                  0, limits::kMaxLatencyPs),
            &E::proxy_post_latency_ps),
       bind(param("proxy_poll_latency", K::kTime, "0ns", "ns",
                  "The same, receiver, protocol simple: from a step's last byte landing to "
                  "the receiving proxy's completion-queue poll seeing it.",
                  0, limits::kMaxLatencyPs),
            &E::proxy_poll_latency_ps),
       bind(param("proxy_flush_latency", K::kTime, "0ns", "ns",
                  "The same, receiver, protocol simple: the GPUDirect flush (a read through "
                  "the NIC that orders the step's writes before the GPU may read them) "
                  "until the proxy has written the GPU's tail; the GPU then sees it its "
                  "flag_latency later. Steps of one connection become visible in order.",
                  0, limits::kMaxLatencyPs),
            &E::proxy_flush_latency_ps),
       param("channel_bandwidth", K::kString, "none", "GB/s",
             "Collective protocol model: the rate at which the thread block one channel runs "
             "on passes a step's data (reads, reduces and stores it; a bandwidth such as "
             "40GB/s), protocol simple; none: unlimited."),
       bind(param("ll_store_bytes", K::kBytes, "0B", "bytes",
                  "Protocol ll: the GPU's LL stores (a 16-byte line of data and flags per "
                  "thread, volatile) reach the link unmerged in packets of at most this "
                  "payload; 0B: merged into the link's packet_payload like any store.",
                  0),
            &E::ll_store_bytes),
       param("ll_channel_bandwidth", K::kString, "none", "GB/s",
             "The same for protocol ll, in bytes of LL lines (data and flags) per second."),
       param("ll128_channel_bandwidth", K::kString, "none", "GB/s",
             "The same for protocol ll128, in bytes of LL128 lines per second."),
       bind(param("ll128", K::kBool, "false", "",
                  "128-byte stores from this GPU arrive whole and in order (NCCL enables "
                  "LL128 only on NVLink-attached Volta, Ampere and Hopper GPUs): protocol "
                  "ll128 is allowed."),
            &E::ll128)},
      [](E& e, const ParamReader& r) {
        e.memory_bandwidth_Bps = e.memory_bandwidth_bps / 8;
        e.channel_bps[0] = optional_bandwidth_Bps(r, "channel_bandwidth") * 8;
        e.channel_bps[1] = optional_bandwidth_Bps(r, "ll_channel_bandwidth") * 8;
        e.channel_bps[2] = optional_bandwidth_Bps(r, "ll128_channel_bandwidth") * 8;
      }));
  k.ports = [](const DeviceType& t) {
    const E& e = t.get<E>();
    return std::vector<PortGroup>{{"fabric", e.ports, e.protocol},
                                  {"NIC", e.nic_ports, e.nic_protocol}};
  };
  // Its DMA cuts one packet size per protocol: every link of one protocol (its fabric
  // ports, its NIC ports) must agree on packet_payload.
  k.check = [](const DeviceCheck& c) {
    std::map<std::string, uint32_t> payload;
    for (size_t i = 0; i < c.links().size(); ++i) {
      const DeviceCheck::Attached& a = c.links()[i];
      const std::string& proto = c.type().port_protocol(a.port);
      const uint32_t x = a.link.packet_payload;
      const auto it = payload.find(proto);
      if (it != payload.end() && it->second != x)
        c.fail_link(i,
                    c.device() + " has links with different packet_payload (" +
                        std::to_string(it->second) + " B and " + std::to_string(x) +
                        " B) on its " + proto + " ports",
                    "an endpoint's DMA cuts one packet size per protocol: use link types that "
                    "agree");
      payload[proto] = x;
    }
  };
  k.create = [](const DeviceBuild& b) -> std::unique_ptr<DeviceModel> {
    E e = b.type.get<E>();
    e.aggregate_bytes = b.run.aggregate_bytes;
    e.aggregate_min_message = b.run.aggregate_min_message;
    e.aggregate_min_group_message =
        std::min(b.run.aggregate_min_message, b.run.aggregate_min_group_message);
    e.aggregate_round_robin_packets = b.run.aggregate_round_robin_packets;
    e.aggregate_fair_completion = b.run.aggregate_fair_completion;
    e.seed = b.run.seed;
    return std::make_unique<Endpoint>(b.name.c_str(), b.name, uint32_t(b.endpoint_id), e);
  };
  return k;
}

}  // namespace fabricsim
