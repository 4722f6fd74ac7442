// Parameters of an accelerator's fabric interface (models/endpoint/endpoint.h), plain C++
// so that the config and system layers (the cost model) read them without SystemC.
#pragma once
#include <cstdint>
#include <string>

#include "models/core/types.h"

namespace fabricsim {

// Declared in models/endpoint/endpoint_kind.cpp (defaults there).
struct EndpointParams {
  std::string protocol;               // of its fabric ports
  int ports = 0;                      // fabric ports: port[0] .. port[ports - 1]
  int nic_ports = 0;                  // scale-out NIC ports, numbered after the fabric ports
  std::string nic_protocol;
  uint64_t memory_bandwidth_bps = 0;  // local memory, bits/s
  uint64_t memory_bandwidth_Bps = 0;  // the same in whole bytes/s; a reduction of B bytes
                                      // moves 3B (2 reads, 1 write)
  uint64_t read_turnaround_ps = 0;    // read request arrived -> its response handed to the DMA
  // The GPU side of a collective protocol (the engine's protocol model, engine.h):
  uint64_t flag_latency_ps = 0;       // a flag (Simple) or an LL line landed in memory ->
                                      // the polling thread block sees it
  uint64_t ll128_flag_latency_ps = 0; // the same for an LL128 step's lines
  uint64_t fence_latency_ps = 0;      // a fence: its writes' acks are back -> it retires
  // The network transport's CPU proxy (engine.h, "Proxy"): steps to and from peers reached
  // through a scale-out NIC port go through it, store and forward per step.
  uint64_t proxy_post_latency_ps = 0;   // a step's tail written -> its RDMA write posted
                                        // (also: a slot consumed -> its receive posted)
  uint64_t proxy_poll_latency_ps = 0;   // a step landed -> the receiving proxy's CQ poll
                                        // sees it
  uint64_t proxy_flush_latency_ps = 0;  // Simple: the GPUDirect flush (a read through the
                                        // NIC) until the receiver's tail is written
  // Throughput of one channel's thread block passing a step's data, per protocol (simple,
  // ll, ll128, as coll::Protocol), in bits/s of the protocol's bytes; 0: unlimited.
  uint64_t channel_bps[3] = {0, 0, 0};
  uint32_t ll_store_bytes = 0;        // LL stores reach the link in packets this small; 0:
                                      // merged into full packets
  bool ll128 = false;                 // 128-byte stores arrive whole and in order: LL128 is
                                      // allowed
  // Run-wide settings (the `simulation:` section and the seed).
  uint64_t aggregate_bytes = 0;       // max payload per transaction; 0 = one packet each
  uint64_t aggregate_min_message = 0; // messages smaller than this always go packet by packet
  uint64_t aggregate_min_group_message = 0;  // the same for in-switch group messages (NVLS)
  // Under interleave (set_interleave), while two or more data messages take turns on a
  // port, each turn is one packet (as per packet); aggregated transactions only for a
  // message that has the port to itself. false: each turn is one transaction.
  // kGroupOnly: only in-switch group messages (NVLS reduce requests, multicast stores)
  // take turns of one packet; the others' turns stay whole transactions.
  PacketTurns aggregate_round_robin_packets = PacketTurns::kNone;
  // Under interleave, an aggregated message's last packet waits until the processor sharing
  // of its port class (the ports of its reach) would have finished it, as per packet
  // concurrent messages finish late together (Endpoint::fair_serve).
  bool aggregate_fair_completion = false;
  uint64_t seed = 1;                  // global seed; the endpoint's stream is Rng(seed, name)

  int total_ports() const { return ports + nic_ports; }
};

}  // namespace fabricsim
