#include "models/optics/ocs.h"

#include <algorithm>

#include "models/core/errors.h"
#include "models/core/protocol.h"

namespace fabricsim {

int circuit_map(const std::vector<int64_t>& pairs, int ports, std::vector<int>& map) {
  map.assign(size_t(ports), -1);
  for (size_t k = 0; k < pairs.size(); ++k) {
    const int64_t x = pairs[k];
    if (x < 0 || x >= ports || map[size_t(x)] != -1) return int(k);
    if (k % 2 == 0) {
      map[size_t(x)] = ports;  // named; its partner follows
    } else {
      const int a = int(pairs[k - 1]);
      map[size_t(a)] = int(x);
      map[size_t(x)] = a;
    }
  }
  return -1;
}

Ocs::Ocs(sc_core::sc_module_name n, std::string name, const OcsParams& p,
         const std::vector<int>& used, std::vector<int> map)
    : sc_module(n), name_(std::move(name)), params_(p), map_(std::move(map)) {
  ports_.resize(size_t(p.ports));
  far_credit_free_.assign(size_t(p.ports), 0);
  passed_.resize(size_t(p.ports));
  last_light_.assign(size_t(p.ports), 0);
  owed_.resize(size_t(p.ports));
  for (int i : used)
    ports_[size_t(i)] = std::make_unique<LightPort>(("port_" + std::to_string(i)).c_str(),
                                                    name_ + ".port[" + std::to_string(i) + "]",
                                                    this, i);
}

void Ocs::connected(const std::vector<Peer>& peers) {
  for (const Peer& pr : peers)
    far_credit_free_[size_t(pr.port)] = pr.model->port(pr.peer_port).credit_free_rx();
}

int Ocs::lit_circuits() const {
  int n = 0;
  for (size_t p = 0; p < map_.size(); ++p)
    if (map_[p] > int(p) && ports_[p] && ports_[size_t(map_[p])]) ++n;
  return n;
}

// Light in on `in` at the sender's head/tail times + `d` (the fibre): out on the joined
// port after the pass latency, into the next fibre. No event, no queue: the OCS adds
// only latency.
void Ocs::pass(int in, Packet& p, tlm::tlm_phase& ph, sc_core::sc_time& d) {
  const int out = map_[size_t(in)];
  FABRICSIM_ASSERT(out >= 0 && ports_[size_t(out)],
                   name_ + ".port[" + std::to_string(in) + "]: light into a dark port");
  const uint64_t add = d.value() + params_.pass_latency_ps;
  last_light_[size_t(in)] = std::max<uint64_t>(last_light_[size_t(in)], p.tail_ps + d.value());
  p.head_ps += add;
  p.tail_ps += add;
  passed_[size_t(in)].bytes += p.payload_bytes;
  passed_[size_t(in)].packets += p.npackets;
  LightPort& o = *ports_[size_t(out)];
  LightPort& i = *ports_[size_t(in)];
  if (far_credit_free_[size_t(out)]) {
    // The receiver keeps no credit accounting (its buffer covers the loop): the sender's
    // credits come back as the frame passes, as a credit-free receiver would give them.
    tlm::tlm_phase cr = CREDIT_RETURN;
    sc_core::sc_time back = sc_core::sc_time::from_value(add + i.link().latency_ps);
    i.rx->nb_transport_bw(p, cr, back);
  } else {
    Fifo<Run>& owed = owed_[size_t(out)];
    if (!owed.empty() && owed.back().in == in)
      ++owed.back().count;
    else
      owed.push(Run{in, 1});
  }
  sc_core::sc_time next = sc_core::sc_time::from_value(o.link().latency_ps);
  o.tx->nb_transport_fw(p, ph, next);
}

// The receiver behind `out` returned credits: they travel back through the circuit to the
// sender behind the joined port, whose credits count the receiver's buffer.
void Ocs::relay_credit(int out, Packet& p, tlm::tlm_phase& ph, sc_core::sc_time& d) {
  Fifo<Run>& owed = owed_[size_t(out)];
  FABRICSIM_ASSERT(!owed.empty(), name_ + ".port[" + std::to_string(out) +
                                      "]: credits for no transaction that left by it");
  const int in = owed.front().in;
  if (--owed.front().count == 0) owed.pop();
  LightPort& i = *ports_[size_t(in)];
  sc_core::sc_time back =
      sc_core::sc_time::from_value(d.value() + params_.pass_latency_ps + i.link().latency_ps);
  i.rx->nb_transport_bw(p, ph, back);
}

void Ocs::forget_owed(int out, uint64_t n) {
  Fifo<Run>& owed = owed_[size_t(out)];
  while (n > 0) {
    FABRICSIM_ASSERT(!owed.empty(), name_ + ".port[" + std::to_string(out) +
                                        "]: more transactions cut than left by it");
    Run& r = owed.back();
    const uint64_t k = std::min(n, r.count);
    r.count -= k;
    n -= k;
    if (r.count == 0) owed.pop_back();
  }
}

void Ocs::go_dark(const std::vector<int>& ports) {
  for (int p : ports) map_[size_t(p)] = -1;
}

void Ocs::set_map(const std::vector<int>& map) {
  map_ = map;
  ++reconfigurations_;
}

nlohmann::json Ocs::stats_json(uint64_t) const {
  nlohmann::json j;
  int used = 0;
  for (const auto& p : ports_) used += p ? 1 : 0;
  uint64_t bytes = 0, packets = 0;
  for (const Passed& x : passed_) {
    bytes += x.bytes;
    packets += x.packets;
  }
  j["ports"] = params_.ports;
  j["ports_used"] = used;
  j["circuits_lit"] = lit_circuits();
  j["passed_payload_bytes"] = bytes;
  j["passed_packets"] = packets;
  j["path_loss_db"] = params_.path_loss_db();
  j["received_power_dbm"] = params_.received_dbm();
  j["power_w"] = params_.power_w();
  if (reconfigurations_) j["reconfigurations"] = reconfigurations_;
  return j;
}

}  // namespace fabricsim
