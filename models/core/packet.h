// The fabric payload: one TLM-2.0 transaction on a link (protocol.h binds it to TLM).
// Plain C++: no SystemC here, so pure code (framing, tests) can use it. With aggregation off it is one
// protocol packet; with aggregation on it is a run of `npackets` back-to-back packets of
// one message, whose wire time, credits and statistics are still computed packet by
// packet (see docs/architecture.md, "Aggregation").
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
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
// Scale-out transports (NICs, models/nic/): the data they carry keeps the kind the
// accelerator gave it; their own control packets are
//   kXportAck   receiver -> sender: cumulative + selective acknowledgement (SACK)
//   kXportNack  receiver -> sender: this PSN must be sent again (a trimmed packet
//               arrived, or go-back-N found a gap)
//   kCnp        receiver -> sender: congestion notification (RoCEv2 DCQCN)
//   kCredit     receiver -> sender: credit to send (receiver-driven congestion control)
//   kCreditReq  sender -> receiver: a credit request (RTS): the sender is out of credit
//               with data queued and nothing in flight that would announce it
// and an Ethernet switch's link-level control frame:
//   kPause      PFC (802.1Qbb) pause frame: stop priority `tc` for `pause_quanta`
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
  kHead,
  kXportAck,
  kXportNack,
  kCnp,
  kCredit,
  kCreditReq,
  kPause
};
constexpr size_t kPacketKinds = size_t(PacketKind::kPause) + 1;  // kPause is the last

// Packet::flags bits.
enum PacketFlag : uint8_t {
  kEct = 1u << 0,      // ECN-capable transport: a switch may mark it instead of dropping
  kCe = 1u << 1,       // congestion experienced: marked by a switch (ECN)
  kTrimmed = 1u << 2,  // a switch cut its payload (packet trimming); its header travels on
  kUrgent = 1u << 3,   // control traffic: the switch's strict-priority control queue
                       // (acks, NACKs, CNPs, pause frames, trimmed headers); never paused
  kTrimOk = 1u << 4,   // its transport handles trimmed packets (a switch may trim it)
  kAckReq = 1u << 5,   // ack request: the receiver acknowledges it at once (the sender's
                       // window is full, or it has nothing more queued)
  kRouted = 1u << 6,   // a routing feature decided its path at its first switch
  kVia = 1u << 7,      // it travels to its intermediate destination `via` first (Valiant)
};

// A collective protocol's control message (an endpoint's control queue): acknowledgements,
// flags, read requests. An endpoint's port, or a switch's egress, sends such a packet
// between the packets of an aggregated transaction on its wire (Port::kick_between).
inline bool is_protocol_control(PacketKind k) {
  return k == PacketKind::kAck || k == PacketKind::kNack || k == PacketKind::kFlag ||
         k == PacketKind::kReadReq;
}

inline bool is_nvls_switch_bound(PacketKind k) {
  return k == PacketKind::kNvlsReq || k == PacketKind::kNvlsResp || k == PacketKind::kNvlsMcast;
}

class PacketPool;

// The scale-out transport's fields of a packet (sequence numbers, acknowledgements,
// echoes), which only NICs and Ethernet switch features touch: one cache line, kept
// beside the packet only in runs that have such devices (PacketPool::enable_transport).
// Not initialised by PacketPool::acquire() (they keep a recycled packet's values, so that
// the many packets that never meet a NIC cost no stores): whoever starts using them on a
// packet calls Packet::clear_transport() first.
struct alignas(64) PacketTransport {
  uint64_t tx_ps;          // data: when the NIC put this copy on the wire
  uint64_t echo_tx_ps;     // ack/NACK: tx_ps of the data packet that triggered it
  uint64_t sack_bits;      // ack: bit i set = PSN sack_base + i received
  uint32_t psn;            // data: sequence number in its connection; NACK: the PSN
                           // to send again
  uint32_t ack_psn;        // ack/NACK: cumulative, every PSN below it was received;
                           // kCreditReq: the credit (bytes) the sender holds
  uint32_t sack_base;      // ack: PSN of sack_bits bit 0
  uint32_t echo_psn;       // ack: the data PSN that triggered it
  uint32_t credit_bytes;   // kCredit: bytes the sender may send; data, kCreditReq:
                           // bytes of backlog the sender still has (credit request)
  uint16_t echo_entropy;   // ack/NACK: entropy of the data packet that triggered it
  uint16_t pause_quanta;   // kPause: 512-bit times to pause (0 = resume)
  uint8_t echo_flags;      // ack/NACK: flags of the data packet that triggered it
  uint8_t pend;            // ack: receiver penalty (NSCC: cwnd -= newly x pend >> 7)
  uint8_t retransmits;     // data: times this PSN was sent before (0: first copy)
  uint32_t via;            // kVia: the intermediate group a routing feature chose

  void clear() {
    tx_ps = echo_tx_ps = sack_bits = 0;
    psn = ack_psn = sack_base = echo_psn = credit_bytes = 0;
    echo_entropy = pause_quanta = 0;
    echo_flags = pend = retransmits = 0;
    via = 0;
  }
};
static_assert(sizeof(PacketTransport) == 64, "PacketTransport: one cache line");

// Layout: the fields every hop reads or writes (ports, switch routing, credits) fill the
// first 64-byte cache line; the message identity for the endpoints and NVLS requests the
// second. The scale-out transport's line (PacketTransport) is not a member: in a run with
// NICs or Ethernet switch features the pool places it right after each packet (a stride of
// three lines), elsewhere packets are two lines apart and have none. A large fabric keeps
// ~10^5-10^6 packets in flight, far more than the caches hold, so a hop's cost is mostly
// the cache lines of its packet, and the memory they take is most of the run's
// (docs/performance.md).
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
  uint32_t next_due_delta = 0; // per hop, while on a link: the due time of the transaction
                               // sent after it on that link minus its own (kFarDue: too far
                               // or earlier; read it from that packet). The receiving port
                               // holds the first arrival's due time and learns the next one
                               // here, in the line it reads to deliver this one
                               // (models/link/port.h, "Arrivals").
  int32_t route_port = -1;     // per hop: egress port chosen by the switch it is in
  PacketKind kind = PacketKind::kData;
  uint8_t vc = 0;              // virtual channel (credit class)
  uint16_t entropy = 0;        // spraying / ECMP selector (hash routing)
  uint8_t tc = 0;              // traffic class = PFC priority (0..7; egress queue of a
                               // switch with traffic classes)
  uint8_t flags = 0;           // PacketFlag bits (ECN, trimmed, urgent)
  uint16_t in_port = 0;        // per hop: ingress port at the switch it is in (set by an
                               // output-queued switch frame for its features)
  Packet* queue_next = nullptr; // per hop: the next packet of the switch queue it waits in
                                // (PacketQueue, models/core/packet_queue.h) or, while on a
                                // link, of that link's arrivals (Port)
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

  // The transport line: the one the pool keeps right after this packet, or a
  // PacketWithTransport's own. Only where transport lines exist
  // (PacketPool::transport_enabled(); checked: anything else would be the next packet's
  // first line).
  PacketTransport& tr() { return *transport_line(this); }
  const PacketTransport& tr() const { return *transport_line(const_cast<Packet*>(this)); }
  // Zeroes the transport line's fields.
  void clear_transport() { tr().clear(); }

  uint32_t last_packet_payload() const {
    uint32_t rem = payload_bytes - (npackets - 1) * packet_payload;
    return rem;
  }

 private:
  static PacketTransport* transport_line(Packet* p);
};

// Packet::next_due_delta's value when the next arrival's due time is not this one's plus
// a 32-bit delta (2^32 ps = 4.3 ms later or more, or earlier): the port reads it from
// that packet.
constexpr uint32_t kFarDue = UINT32_MAX;

// A data packet of one that ends a message of several: per packet one packet among the
// others at every hop (first in, first out at a switch). Aggregated, it is the held last
// packet of a message (Endpoint::cut_from) or the last packet of one sent packet by
// packet; it goes between a transaction's packets as control packets do (Port::kick_between).
inline bool ends_message(const Packet& p) {
  return p.kind == PacketKind::kData && p.npackets == 1 && p.offset > 0 &&
         p.offset + p.payload_bytes == p.msg_bytes;
}
// A packet that may go between the packets of a transaction (aggregated runs only).
inline bool goes_between(const Packet& p) {
  return p.npackets == 1 && (is_protocol_control(p.kind) || ends_message(p));
}

static_assert(sizeof(Packet) == 128, "Packet: two cache lines (see the layout note)");
static_assert(offsetof(Packet, queue_next) + sizeof(Packet*) <= 64,
              "Packet: the per-hop fields fill the first cache line");
static_assert(std::is_trivially_destructible_v<Packet>,
              "Packet: the pool's slabs are raw memory, never destroyed packet by packet");

// A packet with its transport line inline, for the copies a transport keeps (the UEC and
// RoCE retransmission buffers) and for tests. assign() and copy_to() copy both parts to and
// from a pool packet; a plain Packet assignment copies the packet's two lines only. Its
// holder reads the line as `transport` (tr() returns the same, through the pool's check).
struct PacketWithTransport : Packet {
  PacketTransport transport;

  PacketWithTransport() : transport() {}
  void assign(const Packet& p) {
    static_cast<Packet&>(*this) = p;
    transport = p.tr();
  }
  void copy_to(Packet* p) const {
    *p = static_cast<const Packet&>(*this);
    p->tr() = transport;
  }
};
static_assert(sizeof(PacketWithTransport) == sizeof(Packet) + sizeof(PacketTransport),
              "PacketWithTransport: its transport line right after the packet, where "
              "Packet::tr() looks");

// Packets are preallocated in slabs and recycled: no heap allocation per packet in steady
// state. The pool counts outstanding packets; tests assert it is zero when a run ends.
// Each packet has a transport line right after it once enable_transport() was called,
// which the models that use those fields (NICs, their transports, Ethernet switch
// features) do when they are built, before the first packet exists. Elsewhere a packet
// takes two lines instead of three: on a 576-GPU all-to-all, whose ~3.6M packets in
// flight are half of the run's memory, that is 220 MiB less to fault in and zero
// (docs/performance.md).
class PacketPool {
 public:
  PacketPool() = default;
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;
  ~PacketPool();

  // Gives every packet a transport line from now on. Throws std::logic_error if packets
  // without one exist already (a model enabled it after the simulation started).
  void enable_transport();
  static bool transport_enabled() { return transport_; }

  Packet* acquire() {
    if (free_.empty()) grow();
    Packet* p = free_.back();
    free_.pop_back();
    // The free packets are a stack of pointers (not a list linked through the packets):
    // the next acquires take the packets just below the top unless releases come first,
    // and after a burst of sends those are cold (released long ago); start fetching the
    // one kAhead down now, both lines the acquire rewrites, without reading any packet.
    // A linked list could only fetch the next one, whose link the very next acquire reads.
    const size_t n = free_.size();
    if (n >= kAhead) {
      const char* q = reinterpret_cast<const char*>(free_[n - kAhead]);
      __builtin_prefetch(q, 1);
      __builtin_prefetch(q + 64, 1);
    }
    // Default-initialised in place: its two cache lines take their initialisers; a
    // transport line keeps its recycled values (clear_transport()).
    p = new (p) Packet;
    ++outstanding_;
    ++acquired_;
    return p;
  }
  // Touches no packet line: the stack holds every packet's pointer room (grow() reserves
  // it), so this never allocates.
  void release(Packet* p) {
    free_.push_back(p);
    --outstanding_;
  }
  uint64_t outstanding() const { return outstanding_; }
  uint64_t acquired() const { return acquired_; }

  static PacketPool& global();

 private:
  static constexpr size_t kSlab = 4096;
  static constexpr size_t kAhead = 4;  // acquires between a packet's prefetch and its use
  void grow();
  static inline bool transport_ = false;  // one pool per process (global())
  std::vector<void*> slabs_;  // raw, 64-byte aligned: kSlab packets each
  std::vector<Packet*> free_;  // last released (or newest slab's last packet) on top
  uint64_t outstanding_ = 0;
  uint64_t acquired_ = 0;
};

[[noreturn]] void transport_line_missing();

inline PacketTransport* Packet::transport_line(Packet* p) {
  if (__builtin_expect(!PacketPool::transport_enabled(), 0)) transport_line_missing();
  return reinterpret_cast<PacketTransport*>(reinterpret_cast<char*>(p) + sizeof(Packet));
}

}  // namespace fabricsim
