// The fabric payload: one TLM-2.0 transaction on a link (protocol.h binds it to TLM).
// Plain C++: no SystemC here, so pure code (framing, tests) can use it. With aggregation off it is one
// protocol packet; with aggregation on it is a run of `npackets` back-to-back packets of
// one message, whose wire time, credits and statistics are still computed packet by
// packet (see docs/architecture.md, "Aggregation").
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>


namespace fabricsim {

// kData: payload; kAck/kNack: delivery responses; kFlag: a small completion flag a
// collective protocol writes after a fence; kReadReq: a read request (no payload; asks for `read_bytes`); kReadResp: the data a
// read returns (Endpoint::read).
// In-switch reduction and multicast (NVLS, see models/nvlink/nvls_unit.h):
//   kNvlsReq    endpoint -> switch: "reduce req_bytes at (msg_id, offset) over the group"
//               (header only: no payload on the wire)
//   kNvlsRead   switch -> every member: read req_bytes of your copy (header only)
//   kNvlsResp   member -> switch: the read data, consumed by the reduction engine
//   kNvlsResult switch -> requester: the reduced data
//   kNvlsMcast  endpoint -> switch: a multicast store, replicated by the switch
//   kNvlsData   switch -> every member: one replica of a multicast store
// kHead: a collective protocol's slot release, reader -> writer (NCCL's head update: the
// reader has consumed a buffer slot the writer may now fill again).
enum class PacketKind : uint8_t {
  kData,
  kAck,
  kNack,
  kFlag,
  kReadReq,
  kReadResp,
  kNvlsReq,
  kNvlsRead,
  kNvlsResp,
  kNvlsResult,
  kNvlsMcast,
  kNvlsData,
  kHead
};
constexpr size_t kPacketKinds = size_t(PacketKind::kHead) + 1;  // kHead is the last

inline bool is_nvls_switch_bound(PacketKind k) {
  return k == PacketKind::kNvlsReq || k == PacketKind::kNvlsResp || k == PacketKind::kNvlsMcast;
}

class PacketPool;

// Layout: the fields every hop reads or writes (ports, switch routing, credits) fill the
// first 64-byte cache line; the rest (message identity for the endpoints, NVLS requests)
// the second. A large fabric keeps ~10^5-10^6 packets in flight, far more than the caches
// hold, so a hop's cost is mostly the cache lines of its packet (docs/performance.md).
class alignas(64) Packet {
 public:
  // --- per-hop state (rewritten by every port that sends it) ---
  uint64_t head_ps = 0;        // absolute time its first packet is fully present here
  uint64_t tail_ps = 0;        // absolute time its last packet is fully present here
  // --- identity used on every hop (set once by the source) ---
  uint32_t src = 0;            // source endpoint id
  uint32_t dst = 0;            // destination endpoint id
  uint32_t payload_bytes = 0;  // payload bytes carried, summed over its packets
  uint32_t packet_payload = 0; // payload bytes of each full packet (the last may be shorter)
  uint32_t npackets = 0;       // protocol packets in this transaction
  uint32_t link_bytes = 0;     // per hop: wire bytes on the link it last crossed (= credits
                               // it holds)
  uint32_t hops = 0;           // per hop: links crossed so far
  int32_t route_port = -1;     // per hop: egress port chosen by the switch it is in
  PacketKind kind = PacketKind::kData;
  uint8_t vc = 0;              // virtual channel (credit class)
  uint16_t entropy = 0;        // spraying / ECMP selector (hash routing)
  // --- second cache line: the message, for the endpoints ---
  uint64_t msg_id = 0;         // globally unique message id
  uint64_t msg_bytes = 0;      // payload bytes of the whole message
  uint64_t offset = 0;         // byte offset of this transaction's first payload byte
  uint64_t seq = 0;            // per-source transaction sequence number
  uint64_t tag = 0;            // collective tag (matches a send with a receive)
  uint64_t inject_ps = 0;      // time the source handed it to its first port
  uint32_t read_bytes = 0;     // kReadReq: bytes the requester asks for
  // NVLS requests and reads carry no payload (payload_bytes = packet_payload = 0, so
  // they are framed as header-only packets); they name the data they ask for:
  uint32_t req_bytes = 0;          // payload bytes requested
  uint32_t req_packet_payload = 0; // payload per packet of the response
  uint32_t ctx = 0;                // the switch's reduction context (kNvlsRead/kNvlsResp)

  uint32_t last_packet_payload() const {
    uint32_t rem = payload_bytes - (npackets - 1) * packet_payload;
    return rem;
  }

 private:
  friend class PacketPool;
  Packet* next_free_ = nullptr;
};

static_assert(sizeof(Packet) == 128, "Packet: two cache lines (see the layout note)");

// Packets are preallocated in slabs and recycled: no heap allocation per packet in steady
// state. The pool counts outstanding packets; tests assert it is zero when a run ends.
class PacketPool {
 public:
  PacketPool() = default;
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  Packet* acquire() {
    if (!free_) grow();
    Packet* p = free_;
    free_ = p->next_free_;
    *p = Packet();
    ++outstanding_;
    ++acquired_;
    return p;
  }
  void release(Packet* p) {
    p->next_free_ = free_;
    free_ = p;
    --outstanding_;
  }
  uint64_t outstanding() const { return outstanding_; }
  uint64_t acquired() const { return acquired_; }

  static PacketPool& global();

 private:
  static constexpr size_t kSlab = 4096;
  void grow();
  std::vector<std::unique_ptr<Packet[]>> slabs_;
  Packet* free_ = nullptr;
  uint64_t outstanding_ = 0;
  uint64_t acquired_ = 0;
};

}  // namespace fabricsim
