#include "models/endpoint/endpoint.h"

#include <algorithm>
#include <cmath>

#include "models/core/errors.h"

namespace fabricsim {

Endpoint::Endpoint(sc_core::sc_module_name n, std::string display_name, uint32_t id,
                   const EndpointParams& p)
    : sc_module(n),
      display_name_(std::move(display_name)),
      id_(id),
      params_(p),
      rng_(p.seed, display_name_) {
  const int nports = p.total_ports();
  for (int i = 0; i < nports; ++i)
    ports_.push_back(std::make_unique<Port>(("port_" + std::to_string(i)).c_str(),
                                            display_name_ + ".port[" + std::to_string(i) + "]",
                                            this, i, /*rx_at_head=*/false));
  // An NVLS read is answered as it arrives (cut-through: rx_arrive).
  for (auto& port : ports_) port->deliver_at_head(PacketKind::kNvlsRead);
  staged_.assign(nports, nullptr);
  staged_msg_.assign(nports, nullptr);
  staged_count_.assign(nports, 0);
  rr_last_.assign(nports, kNoneServed);
  port_uncut_.assign(size_t(nports), 0);
  turnaround_ = std::make_unique<TimerQueue>("read_turnaround",
                                             [this](uint64_t slot) { serve_read(slot); });
  resp_q_.resize(nports);
  control_.port_start.assign(size_t(nports), 0);
  data_.port_start.assign(size_t(nports), 0);
  resp_turn_.assign(nports, 0);
  nvls_reach_ = PortSet(nports);
  fair_.resize(size_t(nports));
  fair_pending_.resize(size_t(nports));
}

void Endpoint::fair_join(Msg& m) {
  // Every data message with payload to one endpoint that takes round-robin turns joins,
  // aggregated or not: per packet each takes its turns. NVLS group messages do not: a
  // reduce request is a header whose bytes cross other GPUs' ports as answers, and the
  // multicast stores share the ports mostly with this GPU's answers to other GPUs' reads,
  // which are not counted here (with the stores in, NVLS all-reduce at 1 GiB moved within
  // its spread and 2 x DGX H100 hierarchical_nvls at 256 MiB went from +0.31% to +0.60%
  // against per packet: docs/architecture.md, "Fair completion").
  if (!params_.aggregate_fair_completion || !interleave_ || m.dst == kGroupDst ||
      m.bytes == 0 || m.dst >= reach_.size())
    return;
  const PortSet& reach = reach_of(m);
  int key = -1;
  reach.for_each([&](int port) {
    if (key < 0) key = port;
  });
  if (key < 0) return;
  fair_advance(uint32_t(key));  // the virtual time now
  Fair& f = fair_[size_t(key)];
  if (f.ports.size() == 0) f.ports = reach;
  m.fair = true;
  m.fair_key = uint32_t(key);
  m.vfinish = f.v + (m.bytes << 16);
  f.heap.emplace_back(m.vfinish, m.id);
  std::push_heap(f.heap.begin(), f.heap.end(), std::greater<>());
}

void Endpoint::fair_serve(uint32_t key, uint64_t bytes) {
  Fair& f = fair_[key];
  if (f.heap.empty()) return;
  f.v += (bytes << 16) / f.heap.size();
  while (!f.heap.empty() && f.heap.front().first <= f.v) fair_finish(fair_pop(f));
}

void Endpoint::fair_advance(uint32_t key) {
  const uint64_t now = Port::now();
  uint64_t served = 0;
  for (FairPending& fp : fair_pending_) {
    if (fp.bytes == 0 || fp.key != key) continue;
    // (bytes <= a transaction, now - t0 < t1 - t0: the product fits in 64 bits)
    const uint64_t upto = now >= fp.t1 ? fp.bytes : fp.bytes * (now - fp.t0) / (fp.t1 - fp.t0);
    if (upto > fp.credited) {
      served += upto - fp.credited;
      fp.credited = upto;
    }
  }
  if (served > 0) fair_serve(key, served);
}

void Endpoint::fair_credit(int port) {
  FairPending& fp = fair_pending_[size_t(port)];
  if (fp.bytes == 0) return;
  const uint64_t rest = fp.bytes - fp.credited;
  fp.bytes = fp.credited = 0;
  if (rest > 0) fair_serve(fp.key, rest);
}

uint64_t Endpoint::fair_pop(Fair& f) {
  std::pop_heap(f.heap.begin(), f.heap.end(), std::greater<>());
  const auto [vf, id] = f.heap.back();
  f.heap.pop_back();
  f.v = std::max(f.v, vf);
  return id;
}

Endpoint::Msg* Endpoint::fair_finish(uint64_t id) {
  const size_t k = uncut_index(data_, id);
  if (k == data_.msgs.size()) return nullptr;  // fully cut (its tail was not held), or abandoned
  Msg& m = data_.msgs[k];
  m.fair_done = true;
  if (!m.fair_held) return nullptr;
  // Its tail may go now (or at not_before): among the released tails, between the
  // packets of a transaction on the wire as a control packet would.
  m.fair_held = false;
  --fair_[m.fair_key].held;
  --fair_held_;
  if (std::find(held_tails_.begin(), held_tails_.end(), m.id) == held_tails_.end())
    held_tails_.push_back(m.id);
  if (m.not_before <= Port::now()) offer_between(reach_of(m), true);
  return &m;
}

bool Endpoint::fair_fast_forward(int port) {
  // `port` has nothing to send while tails wait for their virtual finish. Per packet a
  // port idles only once every message it can carry is cut to its last packets, which
  // then go in one round: so the class's processor sharing finishes every message whose
  // tail is held now (and those before them). Finishing only the earliest let the others
  // wait behind the next messages' service (GB200 NVL72, 1 GiB ring: 1.36 us later).
  const uint64_t now = Port::now();
  bool any = false;
  for (Fair& f : fair_) {
    // (No ports known: routes changed since the class formed; any port may serve it.)
    if (f.held == 0 || (f.ports.size() > 0 && !f.ports.test(port))) continue;
    while (f.held > 0 && !f.heap.empty())
      if (const Msg* m = fair_finish(fair_pop(f)))
        any = any || (m->not_before <= now && reach_of(*m).test(port));
  }
  return any;
}

void Endpoint::connected(const std::vector<Peer>& peers) { peers_ = peers; }

void Endpoint::set_group_ports(const std::vector<int>& ports) {
  nvls_reach_ = PortSet(int(ports_.size()));
  group_index_.assign(ports_.size(), -1);
  for (int port : ports) nvls_reach_.set(port);
  nvls_count_ = 0;
  nvls_reach_.for_each([&](int port) { group_index_[size_t(port)] = int(nvls_count_++); });
  recount_uncut();
}

void Endpoint::count_uncut(const Msg& m, int delta) {
  if (m.dst != kGroupDst && m.dst >= reach_.size()) return;
  reach_of(m).for_each([&](int port) { port_uncut_[size_t(port)] += uint32_t(delta); });
}

void Endpoint::recount_uncut() {
  port_uncut_.assign(ports_.size(), 0);
  for (const Msg& m : data_.msgs)
    if (m.next_offset < m.bytes) count_uncut(m, 1);
}

bool Endpoint::uncut_counts_agree() const {
  for (size_t port = 0; port < ports_.size(); ++port) {
    uint32_t n = 0;
    for (const Msg& m : data_.msgs)
      if (m.next_offset < m.bytes && (m.dst == kGroupDst || m.dst < reach_.size()) &&
          reach_of(m).test(int(port)))
        ++n;
    if (n != port_uncut_[port]) return false;
  }
  return true;
}

uint64_t Endpoint::send_group(PacketKind kind, uint64_t bytes, uint64_t tag) {
  FABRICSIM_ASSERT(bytes > 0, display_name_ + ": empty message");
  FABRICSIM_ASSERT(kind == PacketKind::kNvlsReq || kind == PacketKind::kNvlsMcast,
                   display_name_ + ": send_group takes kNvlsReq or kNvlsMcast");
  FABRICSIM_ASSERT(nvls_count_ > 0, display_name_ + ": no port into an NVLS switch");
  Msg m;
  m.id = (uint64_t(id_) << 40) | next_msg_++;
  m.dst = kGroupDst;
  m.vc = 0;
  m.kind = kind;
  m.bytes = bytes;
  m.tag = tag;
  data_.msgs.push_back(m);
  count_uncut(m, 1);
  fair_join(data_.msgs.back());
  ++active_;
  // Requests carry no payload: only multicast data is DMA backlog.
  if (kind == PacketKind::kNvlsMcast) backlog_.set(Port::now(), backlog_.level() + bytes);
  kick_group(nvls_reach_);
  return m.id;
}

void Endpoint::set_routes(const std::vector<std::vector<int>>& routes) {
  // Routes recomputed after a fault: a transaction staged for a port that no longer
  // reaches its destination goes back to be sent by another port.
  const bool again = !reach_.empty();
  rerouted_ = rerouted_ || again;
  reach_.assign(routes.size(), PortSet(int(ports_.size())));
  reach_count_.assign(routes.size(), 0);
  for (size_t d = 0; d < routes.size(); ++d) {
    for (int port : routes[d]) reach_[d].set(port);
    reach_count_[d] = uint32_t(routes[d].size());
  }
  recount_uncut();
  if (!again) return;
  for (Fair& f : fair_) f.ports = PortSet(0);  // the next message to join names them again
  // A port's reach changed: messages its search skipped may be its own now.
  for (Queue* q : {&control_, &data_}) std::fill(q->port_start.begin(), q->port_start.end(), 0);
  for (size_t port = 0; port < staged_.size(); ++port) {
    Packet* p = staged_[port];
    if (!p || p->dst == kGroupDst || reach_[p->dst].test(int(port))) continue;
    resend_.push_back(Resend{p, staged_msg_[port], staged_count_[port] != 0});
    staged_[port] = nullptr;
    staged_msg_[port] = nullptr;
    staged_count_[port] = 0;
  }
  for (size_t d = 0; d < reach_.size(); ++d)
    reach_[d].for_each([&](int port) { ports_[size_t(port)]->kick(); });
}

void Endpoint::end_of_elaboration() {
  packet_payload_.clear();
  txn_payload_.clear();
  for (auto& port : ports_) {
    FABRICSIM_ASSERT(port->attached(), port->display_name() + " is not bound to a link");
    const uint32_t pp = port->link().packet_payload;
    FABRICSIM_ASSERT(pp > 0, port->display_name() + ": no packet payload size");
    packet_payload_.push_back(pp);
    // At most what keeps the credit loop covered (aggregate_txn_packets, link_type.cpp).
    const uint64_t txn = aggregate_txn_packets(port->link(), params_.aggregate_bytes);
    txn_payload_.push_back(uint32_t(txn * pp));
  }
  resp_part_.assign(ports_.size(), nullptr);
  // Every peer has learned its own peers by now: ask which ports lead into in-network
  // collectives.
  std::vector<int> group;
  for (const Peer& p : peers_)
    if (p.model && p.model->in_network_collectives(p.peer_port)) group.push_back(p.port);
  if (!group.empty()) set_group_ports(group);
}

uint64_t Endpoint::send(uint32_t dst, uint64_t bytes, uint64_t tag, PacketKind kind,
                        uint8_t vc, uint64_t not_before, uint32_t packet_cap) {
  FABRICSIM_ASSERT(bytes > 0 || kind == PacketKind::kReadReq, display_name_ + ": empty message");
  // After a fault a destination may be cut off: the message waits for a route.
  FABRICSIM_ASSERT(reaches(dst) || rerouted_,
                   display_name_ + ": no route to endpoint " + std::to_string(dst));
  Msg m;
  m.id = (uint64_t(id_) << 40) | next_msg_++;
  m.dst = dst;
  m.vc = vc;
  m.kind = kind;
  m.bytes = bytes;
  m.tag = tag;
  m.not_before = not_before;
  m.packet_cap = packet_cap;
  // Acks, flags and read requests are control; payload data and read responses are data.
  const bool data = kind == PacketKind::kData || kind == PacketKind::kReadResp;
  (data ? data_ : control_).msgs.push_back(m);
  if (data) {
    count_uncut(m, 1);
    fair_join(data_.msgs.back());
  }
  ++active_;
  backlog_.set(Port::now(), backlog_.level() + bytes);
  if (data) {
    reach_[dst].for_each([&](int port) { ports_[port]->kick(); });
    return m.id;
  }
  // Control, served first: per packet it waits for the packet on the wire, not a
  // transaction (Port::kick_between). If a port that reaches dst is idle, every one is
  // kicked and the first to wake takes it. If all are busy, it goes at the earliest
  // boundary between a transaction's packets among the ports with none pending (the
  // lowest index on a tie): only that port is woken for it. Waking every port at its own
  // boundary, the first took it and the others woke to find it gone: 28.4M of GB200
  // NVL72's 99.8M wake-ups at 1 GiB (docs/performance.md). Per packet no port has a
  // boundary (no transaction of several packets), so nothing changes there.
  offer_between(reach_[dst]);
  return m.id;
}

// A group message may go out on any of the ports into the NVLS switches: every idle one
// is kicked, and the first to wake takes its next packet. The kicks start one port further
// on for each message, round robin: always from the lowest port, link 0 of every GPU took
// the first packet whenever several ports were idle, and since a member's j-th link also
// carries the replicas of the stores that came in on j-th links, switch plane 0 carried
// ~2% more than the others on DGX H100 at 1 GiB (docs/architecture.md, "The NVLS unit's
// pipeline"). The hardware spreads a multicast object over the links by address.
void Endpoint::kick_group(const PortSet& s) {
  const int first = s.next_cyclic(group_kick_next_);
  if (first < 0) return;
  group_kick_next_ = first + 1 < s.size() ? first + 1 : 0;
  s.for_each([&](int port) {
    if (port >= first) ports_[size_t(port)]->kick();
  });
  s.for_each([&](int port) {
    if (port < first) ports_[size_t(port)]->kick();
  });
}

void Endpoint::offer_between(const PortSet& ports, bool one) {
  bool idle = false;
  int first = -1;
  uint64_t first_at = UINT64_MAX;
  ports.for_each([&](int port) {
    uint64_t b = UINT64_MAX;
    if (ports_[port]->offer_between(&b))
      idle = true;
    else if (b < first_at) {
      first_at = b;
      first = port;
    }
  });
  if (idle && one) {  // the first idle port
    int i = -1;
    ports.for_each([&](int port) {
      uint64_t b = UINT64_MAX;
      if (i < 0 && ports_[port]->offer_between(&b)) i = port;
    });
    ports_[size_t(i)]->kick_between(false, 0);
  } else if (idle)
    ports.for_each([&](int port) { ports_[port]->kick_between(false, 0); });
  else if (first >= 0)
    ports_[size_t(first)]->kick_between(false, 0);
}

Packet* Endpoint::tx_peek(int port) {
  if (staged_[port]) return staged_[port];
  // The port's wire is free: what it cut last has been served (fair completion).
  if (params_.aggregate_fair_completion) fair_credit(port);
  if (!resend_.empty() && stage_resend(port)) return staged_[port];  // faults only
  // Read responses and the DMA's traffic share the port in turn (one transaction each):
  // the GPU's link interface serves its memory system's answers and its own stores
  // alike. (Serving responses first starves the stores that carry NVLS results out.)
  // Aggregated with aggregate_round_robin_packets, the DMA's shared turns are one packet
  // each, and an answer as a whole transaction (up to 128 NVLink packets) in every other
  // turn would give a reduce request's header packet one turn in 129 where per packet it
  // has one in two: the requests starve behind the answers (two DGX H100 nodes,
  // hierarchical_nvls 16 MiB: +17.5% against per packet). So while the DMA has data for
  // the port, an answer goes a packet per turn there, as per packet (answer_part).
  const bool in_packets = answers_in_packets(port);
  if (in_packets && resp_part_[port]) return resp_part_[port];  // cut before, not sent yet
  if (!resp_q_[port].empty() && (resp_turn_[port] ^= 1)) {
    Packet* a = resp_q_[port].front();
    if (in_packets && a->npackets > 1 && port_uncut_[size_t(port)] > 0)
      return resp_part_[port] = answer_part(a);
    return a;
  }
  if (Packet* p = cut(control_, port)) return p;
  if (Packet* p = cut(data_, port)) return p;
  if (!resp_q_[port].empty()) return resp_q_[port].front();
  if (fair_held_ > 0 && fair_fast_forward(port))
    if (Packet* p = cut(data_, port)) return p;
  return nullptr;
}

Packet* Endpoint::tx_peek_between(int port, uint32_t* skip) {
  // A held last packet whose pass has ended (cut_released_tail): per packet it waits for
  // its round-robin turn, one packet of each message sharing the port whose turn comes
  // first, not for a whole transaction.
  auto tail_turns = [&](const Msg& m) {
    const size_t k = uncut_index(data_, m.id);
    if (k < data_.msgs.size()) *skip = turns_before(data_, k, port);
  };
  if (Packet* p = staged_[port]) {  // cut before and declined (credits): still first
    const Msg* m = staged_msg_[port];
    if (!m) return nullptr;
    if (is_protocol_control(p->kind)) return p;
    if (!(m->tail_held && ends_message(*p))) return nullptr;
    tail_turns(*m);
    return p;
  }
  if (!resend_.empty()) return nullptr;  // faults: tx_peek's order
  if (Packet* p = cut(control_, port)) return p;
  if (held_tails_.empty()) return nullptr;
  Packet* p = cut_released_tail(data_, port);
  if (p) tail_turns(*staged_msg_[port]);
  return p;
}

size_t Endpoint::uncut_index(const Queue& q, uint64_t id) {
  // Ids grow in queue order, so the queue is sorted by id.
  const auto it = std::lower_bound(q.msgs.begin() + std::ptrdiff_t(q.first_uncut), q.msgs.end(),
                                   id, [](const Msg& m, uint64_t x) { return m.id < x; });
  return it != q.msgs.end() && it->id == id ? size_t(it - q.msgs.begin()) : q.msgs.size();
}

uint32_t Endpoint::turns_before(const Queue& q, size_t k, int port) const {
  const uint64_t last = rr_last_[size_t(port)];
  if (last == kNoneServed || last < q.retired) return 0;
  const size_t l = size_t(last - q.retired);  // the message served last (on the wire)
  uint32_t n = 0;
  auto count = [&](size_t from, size_t to) {
    for (size_t i = std::max(from, q.first_uncut); i < to && i < q.msgs.size(); ++i) {
      const Msg& m = q.msgs[i];
      if (m.next_offset < m.bytes && reach_of(m).test(port)) ++n;
    }
  };
  if (l < k) {
    count(l + 1, k);
  } else {
    count(l + 1, q.msgs.size());
    count(0, k);
  }
  return n;
}

// Cuts the next transaction for `port` from `q`: from the oldest message the port can
// carry that still has bytes to cut, or, with interleave on (data queue), from the next
// such message after the one this port served last, round robin: concurrent senders
// (the thread blocks of a GPU) share its links packet by packet instead of in turn.
Packet* Endpoint::cut(Queue& q, int port) {
  if (!interleave_ || &q != &data_) {
    // port_start: everything before it is cut or not this port's (the first message this
    // port could carry that a scan met), so a port does not rescan a long queue.
    size_t& start = q.port_start[size_t(port)];
    bool first = true;
    for (size_t k = std::max(q.first_uncut, start); k < q.msgs.size(); ++k) {
      const Msg& m = q.msgs[k];
      if (first && !(m.next_offset == m.bytes && (m.bytes > 0 || m.cut_once)) &&
          (m.dst == kGroupDst ? nvls_reach_ : reach_[m.dst]).test(port)) {
        start = k;
        first = false;
      }
      if (Packet* p = cut_from(q, k, port)) return p;
    }
    return nullptr;
  }
  if (!held_tails_.empty())
    if (Packet* p = cut_released_tail(q, port)) return p;
  // The turn goes to the first message after the one this port served last, at least
  // first_uncut (every message is queued at the back and leaves from the front, so the
  // position is the order of the messages' ids); none served yet: from the oldest.
  const uint64_t last = rr_last_[port];
  size_t start = q.msgs.size();  // none served yet: only the second loop, from the oldest
  if (last != kNoneServed) {
    // (The message served last may have left the queue: then the turn is first_uncut's.)
    const uint64_t after = last + 1 > q.retired ? last + 1 - q.retired : 0;
    start = std::max(q.first_uncut, size_t(after));
  }
  for (size_t k = start; k < q.msgs.size(); ++k)
    if (Packet* p = cut_from(q, k, port, true)) {
      rr_last_[port] = q.retired + k;
      return p;
    }
  for (size_t k = q.first_uncut; k < start && k < q.msgs.size(); ++k)
    if (Packet* p = cut_from(q, k, port, true)) {
      rr_last_[port] = q.retired + k;
      return p;
    }
  return nullptr;
}

Packet* Endpoint::cut_released_tail(Queue& q, int port) {
  const uint64_t now = Port::now();
  for (size_t i = 0; i < held_tails_.size();) {
    const size_t k = uncut_index(q, held_tails_[i]);
    if (k == q.msgs.size() || q.msgs[k].next_offset == q.msgs[k].bytes) {
      held_tails_.erase(held_tails_.begin() + std::ptrdiff_t(i));  // cut, or abandoned
      continue;
    }
    if (q.msgs[k].not_before <= now && !q.msgs[k].fair_held)
      if (Packet* p = cut_from(q, k, port, true)) {
        held_tails_.erase(held_tails_.begin() + std::ptrdiff_t(i));  // it was the last packet
        return p;
      }
    ++i;
  }
  return nullptr;
}

// The next transaction of message k for `port`, or nullptr if the port cannot carry it or
// it has nothing left to cut (a fully cut oldest message moves first_uncut on).
// `turns`: k is cut in its round-robin turn (interleave on, data queue).
Packet* Endpoint::cut_from(Queue& q, size_t k, int port, bool turns) {
  {
    Msg& m = q.msgs[k];
    if (m.next_offset == m.bytes && (m.bytes > 0 || m.cut_once)) {
      if (k == q.first_uncut) ++q.first_uncut;
      return nullptr;
    }
    const bool group = m.dst == kGroupDst;
    if (!(group ? nvls_reach_ : reach_[m.dst]).test(port)) return nullptr;
    // Small messages, and every message when aggregation is off, go packet by packet.
    // With aggregation on, a large message is cut into a multiple of k equal transactions
    // (k = ports reaching the destination), each at most txn_payload_ and in whole
    // packets, so that every message is striped evenly over every port as it would be
    // packet by packet.
    // A message of small stores (packet_cap) goes packet by packet in packets that small.
    const uint64_t pkt = m.packet_cap ? std::min<uint64_t>(m.packet_cap, packet_payload_[port])
                                      : packet_payload_[port];
    const uint64_t txn = m.packet_cap ? pkt : txn_payload_[port];
    const uint64_t left = m.bytes - m.next_offset;
    uint64_t bytes = std::min<uint64_t>(left, pkt);
    // (A read request has no bytes to stripe: one header packet.)
    const bool aggregated =
        txn > pkt && m.bytes > 0 &&
        m.bytes >= (group ? params_.aggregate_min_group_message : params_.aggregate_min_message);
    const uint64_t ways = !aggregated ? 1 : group ? nvls_count_ : reach_count_[m.dst];
    // With aggregate_round_robin_packets, a turn shared with other messages is one packet,
    // as per packet: per packet, concurrent messages progress together and finish late
    // together, while whole transactions per turn let them finish one after another
    // (docs/architecture.md, "Aggregation under round robin"). Shared: another data
    // message with bytes to cut reaches the port too (port_uncut_ counts this one and it).
    // With its value nvls, only a group message's shared turn is one packet.
    bool whole = false;  // cut as a transaction
    if (aggregated) {
      const uint64_t rounds = (m.bytes + ways * txn - 1) / (ways * txn);
      const uint64_t pieces = ways * rounds;
      const uint64_t share = ((m.bytes + pieces - 1) / pieces + pkt - 1) / pkt * pkt;
      const PacketTurns in_packets = params_.aggregate_round_robin_packets;
      whole = !(turns && port_uncut_[size_t(port)] > 1 &&
                (in_packets == PacketTurns::kAll ||
                 (in_packets == PacketTurns::kGroupOnly && group)));
      if (whole) bytes = std::min({left, txn, share});
    }
    // An aggregated NVLS reduce request goes over its ports as a multicast object's
    // address interleave sends it: the requests of this endpoint are one stream of
    // packets, packet j on group port j mod k, and a port cuts whole transactions of a
    // request only up to its packets (group_quota), whichever port is free first. A
    // request is a header on its own port but commits the same port index of every
    // member to answer it (a piece of 114 packets: 0.7 us of answers on each), so letting
    // free ports pull whole pieces would load those indices unevenly; per packet the
    // pull is even to a packet. A store's data is carried by the port that pulls it,
    // which balances itself as any data does. Under round robin (turns) every port takes
    // its turn of every message, which spreads a request over the ports by itself, and a
    // share held by one port would make the message wait for that port's turn (DGX H100
    // NVLS all-reduce, 1 GiB: +10.9% against per packet with shares, +0.13% without;
    // docs/architecture.md, "Aggregation of NVLS").
    uint64_t* group_cut = nullptr;
    if (m.kind == PacketKind::kNvlsReq && whole && !turns) {
      const size_t g = size_t(group_index_[size_t(port)]);
      const uint64_t packets = (m.bytes + pkt - 1) / pkt;
      if (m.group_cut.empty()) {  // its first cut places it in the stream
        m.group_start = uint32_t(group_req_packets_ % ways);
        group_req_packets_ += packets;
        m.group_cut.assign(ways, 0);
      }
      group_cut = &m.group_cut[g];
      const uint64_t quota = pkt * group_quota(packets, ways, m.group_start, g);
      if (*group_cut >= quota) return nullptr;  // this port's packets are all cut
      bytes = std::min(bytes, quota - *group_cut);
    }
    // The thread block writes the message's data as its pass goes, the last of it no
    // earlier than the pass's end (not_before): per packet only the last packet waits
    // for it, so here too the transaction that would end the message leaves without its
    // last packet, which waits alone (and under round robin goes first once it may
    // leave: cut_released_tail). Holding a whole transaction held kilobytes that per
    // packet are on the wire already: GB200 NVL72 (32 channels) 256 MiB ring was 18.6%
    // slow against per packet, 0.7% after both changes.
    // Fair completion: per packet, messages that share a port finish late together; a
    // whole transaction would end this one early, so its last packet also waits until
    // the port class's processor sharing has finished it (fair_serve, fair_finish, which
    // lists it in held_tails_ then).
    if (m.next_offset + bytes == m.bytes) {
      const bool pass_wait = m.not_before > Port::now();
      bool fair_wait = false;
      if (whole && turns && m.fair && !m.fair_done) {
        fair_advance(m.fair_key);  // the virtual time now: may finish m (fair_finish)
        if (!m.fair_done) {
          Fair& f = fair_[m.fair_key];
          fair_wait = f.v + (bytes << 16) / std::max<uint64_t>(f.heap.size(), 1) < m.vfinish;
          if (fair_wait && !m.fair_held) {
            ++f.held;
            ++fair_held_;
          } else if (!fair_wait && m.fair_held) {  // a held tail this cut finishes
            --f.held;
            --fair_held_;
          }
          m.fair_held = fair_wait;
        }
      }
      if (pass_wait || fair_wait) {
        const uint64_t last = m.bytes % pkt ? m.bytes % pkt : pkt;
        const bool newly = whole && turns && !m.tail_held;
        if (newly) {
          m.tail_held = true;
          if (!fair_wait) held_tails_.push_back(m.id);
        }
        if (pass_wait && (newly || fair_wait)) ports_[port]->kick_between_at(m.not_before);
        if (whole && bytes > last) {
          bytes -= last;
        } else {
          if (pass_wait) ports_[port]->kick_at(m.not_before);  // the data is not all written yet
          return nullptr;
        }
      }
    }
    Packet* p = PacketPool::global().acquire();
    p->src = id_;
    p->dst = m.dst;
    p->msg_id = m.id;
    p->msg_bytes = m.bytes;
    p->offset = m.next_offset;
    p->seq = next_seq_++;
    p->tag = m.tag;
    p->kind = m.kind;
    p->payload_bytes = uint32_t(bytes);
    p->packet_payload = uint32_t(pkt);
    p->npackets = uint32_t((bytes + pkt - 1) / pkt);
    p->vc = m.vc;
    p->read_bytes = m.read_bytes;
    if (m.bytes == 0) p->npackets = 1;  // a read request: one packet without payload
    m.cut_once = true;
    if (m.kind == PacketKind::kNvlsReq) {  // header only: names the bytes it asks for
      p->req_bytes = p->payload_bytes;
      p->req_packet_payload = p->packet_payload;
      p->payload_bytes = 0;
      p->packet_payload = 0;
    }
    p->entropy = uint16_t(rng_.next());
    p->head_ps = p->tail_ps = p->inject_ps = Port::now();
    m.next_offset += bytes;
    if (&q == &data_ && m.next_offset == m.bytes) count_uncut(m, -1);
    if (m.fair) {
      // Served as the wire carries it (fair_advance); a packet cut between the packets of
      // the port's transaction, or on a link that times its own transactions, at once.
      FairPending& fp = fair_pending_[size_t(port)];
      const uint64_t ser = ports_[port]->serialise_ps(*p);
      if (fp.bytes > 0 || ser == 0) {
        fair_advance(m.fair_key);
        fair_serve(m.fair_key, bytes);
      } else {
        fp = FairPending{m.fair_key, bytes, 0, Port::now(), Port::now() + ser};
      }
    }
    if (group_cut) *group_cut += bytes;
    ++m.unsent;
    staged_[port] = p;
    staged_msg_[port] = &m;
    return p;
  }
}

// The first packet of answer `a` (more than one packet), as an answer of its own; `a`
// keeps the rest. The NVLS unit counts a member's answer by packets (NvlsUnit::reduced),
// so the parts reduce as the whole would.
Packet* Endpoint::answer_part(Packet* a) {
  Packet* part = PacketPool::global().acquire();
  *part = *a;
  const uint32_t first = a->packet_payload;  // a full packet: a has more than one
  part->npackets = 1;
  part->payload_bytes = first;
  part->tail_ps = part->head_ps;
  // The rest's first packet is ready as the answer's packets are: evenly from its first
  // to its last (rx_arrive).
  if (a->tail_ps > a->head_ps) a->head_ps += (a->tail_ps - a->head_ps) / (a->npackets - 1);
  a->npackets -= 1;
  a->payload_bytes -= first;
  a->offset += first;
  ++nvls_answer_parts_;
  return part;
}

// Packets of a group message of `packets` packets that group port g of `ways` carries
// when its packet i goes over port (start + i) mod ways.
uint64_t Endpoint::group_quota(uint64_t packets, uint64_t ways, uint64_t start, uint64_t g) {
  return packets / ways + ((g + ways - start) % ways < packets % ways ? 1 : 0);
}

void Endpoint::retire(Queue& q) {
  while (!q.msgs.empty() && q.msgs.front().done) {
    q.msgs.pop_front();
    ++q.retired;
    if (q.first_uncut > 0) --q.first_uncut;
    for (size_t& s : q.port_start)
      if (s > 0) --s;
  }
}

void Endpoint::tx_pop(int port, Packet* p) {
  if (!staged_[port]) {  // a read response, or its first packet (answer_part)
    if (p == resp_part_[port]) {
      resp_part_[port] = nullptr;
    } else {
      FABRICSIM_ASSERT(!resp_q_[port].empty() && resp_q_[port].front() == p,
                       display_name_ + ": popped a packet that was not offered");
      resp_q_[port].pop();
    }
    bytes_sent_ += p->payload_bytes;
    return;
  }
  staged_[port] = nullptr;
  Msg* const mp = staged_msg_[port];
  staged_msg_[port] = nullptr;
  if (!mp) {  // a transaction sent again after a fault (its message's bookkeeping is done)
    if (staged_count_[port]) bytes_sent_ += p->payload_bytes;
    staged_count_[port] = 0;
    return;
  }
  Msg& m = *mp;
  --m.unsent;
  bytes_sent_ += p->payload_bytes;
  backlog_.set(Port::now(), backlog_.level() - p->payload_bytes);
  if (m.next_offset == m.bytes && m.unsent == 0) {
    --active_;
    m.done = true;
    const uint64_t id = m.id;
    const PacketKind kind = m.kind;
    retire(control_);
    retire(data_);
    if (on_sent_) on_sent_(id, kind);
  }
}

void Endpoint::rx_arrive(int port, Packet* p) {
  if (p->kind == PacketKind::kNvlsRead) {
    // Delivered at its head (deliver_at_head): a read of several packets asks for its
    // bytes packet by packet, and the answer streams out as they arrive (cut-through, as
    // a switch forwards a transaction). Its buffer is freed when its tail is in.
    const uint64_t now = Port::now();
    const uint64_t read_tail = std::max(now, p->tail_ps);
    ports_[port]->release_rx(p, read_tail - now);
    // Answer with our copy of the requested bytes, on the port the read came in on; the
    // response names the switch's reduction context.
    p->kind = PacketKind::kNvlsResp;
    p->payload_bytes = p->req_bytes;
    p->packet_payload = p->req_packet_payload;
    // The answer is read from local memory, the resource reductions use too, a FIFO
    // server: one packet is ready when the memory has streamed it out (its port waits
    // until then). An answer of several packets takes the memory for all its bytes now
    // (the FIFO bounds its tail, as does the read's last packet), but its first packet
    // is ready when that packet is read: per packet the memory, faster than the links
    // that ask, serves each packet as its read arrives, not after other ports' answers.
    const uint64_t done = memory_read(p->payload_bytes);
    if (p->npackets > 1) {
      const uint64_t first = std::min<uint64_t>(p->payload_bytes, p->packet_payload);
      p->head_ps = now + memory_ps(first);
      p->tail_ps = std::max(done, read_tail + memory_ps(p->last_packet_payload()));
    } else {
      p->head_ps = p->tail_ps = done;
    }
    ++nvls_reads_served_;
    nvls_read_bytes_ += p->payload_bytes;
    resp_q_[port].push(p);
    ports_[port]->kick();
    return;
  }
  ports_[port]->release_rx(p, 0);  // the sink drains at line rate
  const uint64_t now = Port::now();
  const uint64_t lat = now - p->inject_ps;
  latency_sum_ps_ += lat;
  latency_max_ps_ = std::max(latency_max_ps_, lat);
  ++rx_txns_;
  bytes_received_ += p->payload_bytes;
  uint64_t& got = rx_msgs_[p->msg_id];
  got += p->payload_bytes;
  FABRICSIM_ASSERT(got <= p->msg_bytes, display_name_ + ": more bytes than the message holds");
  if (got == p->msg_bytes) {
    Delivery d{p->src, p->kind, p->tag, p->msg_bytes, p->msg_id};
    const uint32_t read_bytes = p->read_bytes;
    rx_msgs_.erase(rx_msgs_.find(p->msg_id));
    ++msgs_delivered_;
    PacketPool::global().release(p);
    if (d.kind == PacketKind::kReadReq) {
      // The target side of a read: the memory access takes read_turnaround, then the
      // DMA returns the data.
      pending_resp_.push(PendingResp{d.src, read_bytes, d.tag});
      turnaround_->at(now + params_.read_turnaround_ps, 0);
      return;
    }
    if (d.kind == PacketKind::kReadResp) {
      auto it = reads_issued_.find((uint64_t(d.src) << 40) | d.tag);
      FABRICSIM_ASSERT(it != reads_issued_.end(),
                       display_name_ + ": read response without a request");
      const uint64_t rtt = now - it->second;
      reads_issued_.erase(it);
      ++reads_done_;
      if (on_read_done_) on_read_done_(d.src, d.tag, d.bytes, rtt);
      return;
    }
    if (on_delivery_) on_delivery_(d);
    return;
  }
  PacketPool::global().release(p);
}

uint64_t Endpoint::abandon_queued() {
  uint64_t bytes = 0;
  for (Queue* q : {&control_, &data_}) {
    for (Msg& m : q->msgs) {
      if (m.done || m.next_offset == m.bytes) continue;
      if (q == &data_) count_uncut(m, -1);
      if (m.fair_held) {  // its tail is abandoned with the rest
        m.fair_held = false;
        --fair_[m.fair_key].held;
        --fair_held_;
      }
      bytes += m.bytes - m.next_offset;
      backlog_.set(Port::now(), backlog_.level() - (m.bytes - m.next_offset));
      m.bytes = m.next_offset;  // what is cut still goes out; the rest never will
      m.cut_once = true;
      if (m.unsent == 0) {  // nothing of it is waiting for a port: it is over
        m.done = true;
        --active_;
      }
    }
    retire(*q);
  }
  return bytes;
}

uint64_t Endpoint::discard_partial() {
  uint64_t bytes = 0;
  rx_msgs_.for_each([&bytes](uint64_t, uint64_t got) { bytes += got; });
  rx_msgs_.clear();
  return bytes;
}

bool Endpoint::stage_resend(int port) {
  for (auto it = resend_.begin(); it != resend_.end(); ++it) {
    if (it->p->dst == kGroupDst || !reach_[it->p->dst].test(port)) continue;
    staged_[port] = it->p;
    staged_msg_[port] = it->m;
    staged_count_[port] = it->count;
    resend_.erase(it);
    return true;
  }
  return false;
}

void Endpoint::tx_recover(int, Packet* p) {
  resend_.push_back(Resend{p, nullptr, false});
  if (p->dst < reach_.size()) reach_[p->dst].for_each([&](int port) { ports_[port]->kick(); });
}

void Endpoint::retransmit(Packet* p) {
  p->head_ps = p->tail_ps = Port::now();
  p->route_port = -1;
  resend_.push_back(Resend{p, nullptr, true});
  if (p->dst < reach_.size()) reach_[p->dst].for_each([&](int port) { ports_[port]->kick(); });
}

uint64_t Endpoint::read(uint32_t target, uint64_t bytes, uint64_t tag) {
  FABRICSIM_ASSERT(bytes > 0 && bytes <= UINT32_MAX, display_name_ + ": bad read size");
  FABRICSIM_ASSERT(tag < (1ull << 40), display_name_ + ": read tag too large");
  const bool fresh = reads_issued_.emplace((uint64_t(target) << 40) | tag, Port::now()).second;
  FABRICSIM_ASSERT(fresh, display_name_ + ": read tag already in flight to that target");
  const uint64_t id = send(target, 0, tag, PacketKind::kReadReq);
  control_.msgs.back().read_bytes = uint32_t(bytes);
  return id;
}

void Endpoint::serve_read(uint64_t) {
  // Turnarounds are equal for every request, so responses leave in arrival order.
  const PendingResp r = pending_resp_.pop();
  ++reads_served_;
  send(r.dst, r.bytes, r.tag, PacketKind::kReadResp);
}

uint64_t Endpoint::memory_read(uint64_t bytes) {
  const uint64_t now = Port::now();
  if (!params_.memory_bandwidth_Bps) return now;
  reduce_busy_ps_ = std::max(now, reduce_busy_ps_) + memory_ps(bytes);
  return reduce_busy_ps_;
}

uint64_t Endpoint::memory_ps(uint64_t bytes) const {
  return params_.memory_bandwidth_Bps ? transfer_ps(bytes, params_.memory_bandwidth_Bps * 8) : 0;
}

uint64_t Endpoint::reduce(uint64_t bytes) {
  const uint64_t now = Port::now();
  const uint64_t start = std::max(now, reduce_busy_ps_);
  uint64_t dur = 0;
  // A reduction reads two operands and writes the result: 3 bytes of memory traffic
  // per output byte.
  if (params_.memory_bandwidth_Bps) dur = transfer_ps(3 * bytes, params_.memory_bandwidth_Bps * 8);
  reduce_busy_ps_ = start + dur;
  reduce_bytes_ += bytes;
  return reduce_busy_ps_;
}

bool Endpoint::via_nic(uint32_t dst) const {
  bool nic = false;
  if (dst < reach_.size())
    reach_[dst].for_each([&](int port) { nic = nic || port >= params_.ports; });
  return nic;
}

uint64_t Endpoint::idle_at() const {
  uint64_t t = reduce_busy_ps_;
  for (const auto& port : ports_) t = std::max(t, port->idle_at());
  return t;
}

void Endpoint::reset_dynamic_state() {
  FABRICSIM_ASSERT(active_ == 0 && rx_msgs_.empty(), display_name_ + ": reset with messages in flight");
  FABRICSIM_ASSERT(std::all_of(port_uncut_.begin(), port_uncut_.end(),
                               [](uint32_t n) { return n == 0; }),
                   display_name_ + ": reset with data left to cut");
  for (auto& port : ports_) port->reset();
  rng_ = Rng(params_.seed, display_name_);
  std::fill(resp_turn_.begin(), resp_turn_.end(), uint8_t(0));
  FABRICSIM_ASSERT(std::all_of(resp_part_.begin(), resp_part_.end(),
                               [](const Packet* p) { return p == nullptr; }),
                   display_name_ + ": reset with an answer's packet waiting");
  std::fill(rr_last_.begin(), rr_last_.end(), kNoneServed);
  group_kick_next_ = 0;
  group_req_packets_ = 0;
  for (Fair& f : fair_) f = Fair{};
  for (FairPending& fp : fair_pending_) fp = FairPending{};
  fair_held_ = 0;
  for (Queue* q : {&control_, &data_}) std::fill(q->port_start.begin(), q->port_start.end(), size_t(0));
}

nlohmann::json Endpoint::stats_json(uint64_t now_ps) const {
  nlohmann::json j;
  j["dma_backlog_max_bytes"] = backlog_.max();
  j["dma_backlog_avg_bytes"] = backlog_.average(now_ps);
  j["bytes_sent"] = bytes_sent_;
  j["bytes_received"] = bytes_received_;
  j["messages_delivered"] = msgs_delivered_;
  j["bytes_reduced"] = reduce_bytes_;
  if (nvls_count_) {
    j["nvls_reads_served"] = nvls_reads_served_;
    j["nvls_read_bytes"] = nvls_read_bytes_;
    // Answers sent a packet at a time while the port was shared (answer_part).
    if (nvls_answer_parts_) j["nvls_answer_parts"] = nvls_answer_parts_;
  }
  j["transaction_latency_avg_ps"] = rx_txns_ ? latency_sum_ps_ / rx_txns_ : 0;
  j["transaction_latency_max_ps"] = latency_max_ps_;
  if (reads_done_ || reads_served_) {
    j["reads_completed"] = reads_done_;
    j["reads_served"] = reads_served_;
  }
  return j;
}

}  // namespace fabricsim
