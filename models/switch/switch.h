// The switch frame shared by every switched fabric (NVSwitch first; UALink and Ethernet
// switches plug into the same frame). Pipeline, in order:
//   ingress port (credits to upstream, pipeline latency added to arrival)
//   -> routing lookup (equal-cost set; adaptive or hash selection)
//   -> input queue: virtual output queues, or one FIFO per input (head-of-line blocking)
//   -> crossbar: an arbiter matches free inputs to free outputs; a transfer takes
//      wire bytes / (output rate x speedup); upstream credits return when its tail has
//      crossed
//   -> [root complex only: host path, host_path.h: up, host memory (p2p off), down]
//   -> egress queue (bounded, bytes) -> egress port (serialiser, downstream credits).
// The crossbar is event driven: it runs when work arrives or a transfer ends, never on a
// free-running clock. With equal-size packets it is exactly a slotted crossbar.
//
// In-switch reduction and multicast (NVLS, NVSwitch3 and later), when enabled: NVLS
// packets leave the pipeline for the switch's NVLS unit instead of the crossbar.
//   kNvlsReq from member i (reduce B bytes of a buffer over the group): the unit opens a
//     reduction context and sends a header-only kNvlsRead to every member k, on k's j-th
//     link to this switch, j being the request's link index among i's links (links pair
//     up as in the address interleaving of a multicast object). The request's credits
//     return at once.
//   kNvlsResp from member k (the data read): queued for the reduction engine, which
//     consumes input at `nvls_reduce_bandwidth` (bytes of input per second, shared by the
//     whole chip); its credits return when the engine has consumed it, so a slow engine
//     back-pressures the links. When the last member's input is consumed, the reduced
//     B bytes go back to i as kNvlsResult on the link the request came in on.
//   kNvlsMcast from member i (a multicast store): queued for the multicast engine
//     (`nvls_multicast_bandwidth`, input bytes per second; 0 = not a bottleneck), then
//     replicated as kNvlsData to every member k on k's j-th link.
// Packets the unit sends go straight to egress queues (they may overshoot
// egress_buffer); the crossbar keeps arbitrating other traffic.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "models/core/fifo.h"
#include "models/link/port.h"
#include "models/core/stats.h"
#include "models/switch/arbiter.h"
#include "models/switch/host_path.h"

namespace fabricsim {

struct SwitchParams {
  int ports = 0;
  uint64_t pipeline_latency_ps = 0;   // ingress: arrival to eligible for the crossbar
  std::string input_queues = "voq";   // "voq" | "fifo"
  std::string arbiter = "islip";      // see arbiter_names()
  int islip_iterations = 1;
  double speedup = 1.0;               // crossbar rate / output link rate
  uint64_t egress_buffer_bytes = 0;   // per output; the crossbar fills it while below this
  std::string route_select = "adaptive";  // "adaptive" (least queued) | "hash" (entropy)
  HostPathParams host;                // root complex: every transfer also crosses the host
  bool nvls = false;                    // in-switch reduction and multicast
  uint64_t nvls_reduce_Bps = 0;         // reduction engine: input bytes per second
  uint64_t nvls_multicast_Bps = 0;      // multicast engine: input bytes per second (0: no limit)
};

class Switch : public sc_core::sc_module, public PortOwner, public Wakeable {
 public:
  // `used_ports`: indices that will be bound; the others exist but are unconnected.
  Switch(sc_core::sc_module_name n, std::string display_name, const SwitchParams& p,
         const std::vector<int>& used_ports);

  Port& port(int i) { return *ports_.at(i); }
  const std::string& display_name() const { return display_name_; }
  // routes[dst endpoint id] = egress ports on a shortest path to it.
  void set_routes(std::vector<std::vector<int>> routes) { routes_ = std::move(routes); }
  // NVLS group: every endpoint directly linked to this switch, with its links (ports of
  // this switch, in a fixed order). Called at elaboration when params.nvls is set.
  void add_nvls_member(uint32_t endpoint, std::vector<int> ports);
  // Payload bytes the NVLS unit absorbed (responses reduced, stores replicated) and sent
  // (results, replicas): endpoints' sent + emitted == endpoints' received + consumed.
  uint64_t nvls_bytes_consumed() const { return nvls_consumed_; }
  uint64_t nvls_bytes_emitted() const { return nvls_emitted_; }
  nlohmann::json stats_json(uint64_t now_ps) const;

  Packet* tx_peek(int port) override;
  void tx_pop(int port, Packet* p) override;
  void rx_arrive(int port, Packet* p) override;
  void wake(uint32_t what) override;

 private:
  void end_of_elaboration() override;
  void xbar_method();
  void transfer(int in, int out, uint64_t t);
  uint64_t xbar_ps(int out, uint64_t bytes) const;
  int select_route(int in, const Packet& p);
  void enqueue(int in, Packet* p);
  enum : uint32_t { kXbar, kReduceEngine, kMcastEngine };
  void nvls_arrive(int in, Packet* p);
  void nvls_request(int in, Packet* p);
  void nvls_reduced(Packet* p);
  void nvls_replicate(Packet* p);
  void emit(int out, Packet* p);
  // The reduction and multicast engines: FIFO servers, one pending wake-up each.
  struct Engine {
    Fifo<Packet*> q;
    uint64_t rate_Bps = 0;   // 0: no limit
    uint64_t busy_bytes = 0; // input bytes consumed
    uint64_t busy_ps = 0;
    uint64_t done_at = 0;    // completion time of the head
    LevelStat depth;         // bytes queued
    uint64_t queued = 0;
    Alarm alarm;
  };
  void engine_push(Engine& e, Packet* p);
  void engine_wake(Engine& e, bool reduce);
  void engine_start(Engine& e, uint64_t t);

  std::string display_name_;
  SwitchParams params_;
  int n_;
  std::vector<std::unique_ptr<Port>> ports_;
  std::vector<std::vector<int>> routes_;
  std::unique_ptr<Arbiter> arbiter_;
  std::unique_ptr<HostPath> host_;    // root complex only
  bool voq_mode_;
  bool adaptive_;
  std::vector<Fifo<Packet*>> voq_;   // [in * n + out] (voq mode)
  std::vector<Fifo<Packet*>> inq_;   // [in] (fifo mode)
  std::vector<PortSet> rows_, cols_;
  PortSet free_in_, free_out_;
  PortSet pending_in_;     // inputs with queued traffic
  PortSet requested_out_;  // outputs that queued traffic waits for
  std::vector<int> match_;
  std::vector<uint64_t> in_busy_, out_busy_, xbar_rate_bps_;
  std::vector<Fifo<Packet*>> egress_;
  std::vector<uint64_t> egress_bytes_;
  std::vector<uint64_t> out_load_;    // payload bytes routed to an output, not yet sent
  std::vector<uint32_t> rr_;          // per input: tie-break rotation for adaptive routing
  std::vector<uint64_t> rx_freed_;    // per input: when its last transaction's buffer frees
  uint64_t pending_ = 0;              // transactions in input queues
  uint64_t transfers_ = 0, arbitrations_ = 0;
  Alarm xbar_alarm_;

  struct Member {
    uint32_t endpoint;
    std::vector<int> ports;
  };
  struct ReduceCtx {
    Packet* req = nullptr;  // the request, kept to address the result
    uint32_t remaining = 0; // members whose input the engine has not consumed yet
    int out = -1;           // port the request came in on
  };
  std::vector<Member> members_;
  std::vector<int> member_of_port_;     // [port] -> index in members_, -1
  std::vector<int> link_index_;         // [port] -> index among its member's ports
  std::vector<ReduceCtx> ctx_;
  std::vector<uint32_t> free_ctx_;
  Engine reduce_, mcast_;
  uint64_t nvls_consumed_ = 0, nvls_emitted_ = 0, nvls_requests_ = 0, nvls_stores_ = 0;
};

}  // namespace fabricsim
