// In-switch reduction and multicast (NVLS, NVSwitch3 and later), a switch feature
// (models/switch/feature.h). When enabled, NVLS packets leave the pipeline for the
// switch's NVLS unit instead of the crossbar.
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
// Packets the unit sends go to egress queues (they may overshoot egress_buffer); the
// crossbar keeps arbitrating other traffic. Results and replicas first pass the unit's
// own pipeline (`nvls_latency`): they join their egress queue when their head is due, so
// a packet still in the pipeline never holds a port that has ready packets behind it.
//
// The group: every endpoint directly linked to this switch is a member, in the order of
// the endpoints' device indices, with its links to this switch sorted by the endpoint's
// port number (peers_known()). Those ports offer in-network collectives.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/fifo.h"
#include "models/core/stats.h"
#include "models/nvlink/nvls_params.h"
#include "models/switch/feature.h"

namespace fabricsim {

class NvlsUnit : public SwitchFeature {
 public:
  explicit NvlsUnit(const NvlsParams& p);

  const char* name() const override { return "NVLS unit"; }
  std::vector<PacketKind> claims() const override;
  void attached() override;
  void arrive(int in, Packet* p) override;
  void peers_known(const std::vector<SwitchPeer>& peers) override;
  bool offers_collectives(int port) const override { return member_of_port_.at(port) >= 0; }
  void add_stats(nlohmann::json& j, uint64_t now_ps) const override;
  // Payload bytes the unit absorbed (responses reduced, stores replicated) and sent
  // (results, replicas).
  uint64_t payload_absorbed() const override { return consumed_; }
  uint64_t payload_emitted() const override { return emitted_; }
  void wake(uint32_t what) override;
  void reset_dynamic_state() override;

 private:
  enum : uint32_t { kReduceEngine, kMcastEngine, kPipeline };
  // A group member: an endpoint with its links (ports of this switch, in a fixed order).
  void add_member(uint32_t endpoint, std::vector<int> ports);
  void request(int in, Packet* p);
  void reduced(Packet* p);
  void replicate(Packet* p);
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
  // When `p`'s last packet has arrived and passed through `e` (its tail bound; a
  // transaction of several packets is taken in at its head, cut-through). 0 for one packet.
  static uint64_t tail_through(const Engine& e, const Packet* p);
  // The unit's pipeline: `p` joins egress queue `out` at p->head_ps (at once if due).
  void leave(int out, Packet* p);
  void pipeline_wake();
  struct InPipeline {
    uint64_t head_ps;
    uint64_t seq;  // ties in head time leave in the order they entered
    int out;
    Packet* p;
    bool operator>(const InPipeline& o) const {
      return head_ps != o.head_ps ? head_ps > o.head_ps : seq > o.seq;
    }
  };

  struct Member {
    uint32_t endpoint;
    std::vector<int> ports;
  };
  struct ReduceCtx {
    Packet* req = nullptr;  // the request, kept to address the result
    uint32_t remaining = 0; // members whose input the engine has not consumed yet
    int out = -1;           // port the request came in on
    uint64_t head_ps = 0;   // transactions of several packets: every member's first
                            // packet is in and reduced (0: one packet each)
    uint64_t tail_ps = 0;   // every member's last packet is in and reduced, and the
                            // engine has done every member's work before it
  };
  NvlsParams params_;
  std::vector<Member> members_;
  std::vector<int> member_of_port_;     // [port] -> index in members_, -1
  std::vector<int> link_index_;         // [port] -> index among its member's ports
  std::vector<ReduceCtx> ctx_;
  std::vector<uint32_t> free_ctx_;
  Engine reduce_, mcast_;
  std::vector<InPipeline> pipeline_;  // a min-heap on (head_ps, seq)
  uint64_t pipeline_seq_ = 0;
  Alarm pipeline_alarm_;
  uint64_t consumed_ = 0, emitted_ = 0, requests_ = 0, stores_ = 0;
};

}  // namespace fabricsim
