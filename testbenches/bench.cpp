#include "testbenches/bench.h"

#include "models/link/link_type.h"
#include "models/nvlink/flit_framing.h"
#include "models/ualink/ualink_framing.h"

namespace fabricsim::tb {

LinkParams nvlink_like(uint64_t latency_ps, uint64_t rx_buffer_bytes) {
  LinkParams l;
  l.type_name = "nvlink_like";
  l.protocol = "nvlink";
  l.rate_bps = 200'000'000'000ull;
  FlitFramingParams f;
  f.flit_bytes = 16;
  f.overhead_flits = 2;
  l.framing = std::make_shared<const FlitFraming>(f);
  l.packet_payload = 128;
  l.latency_ps = latency_ps;
  l.vcs = 1;
  l.rx_buffer_bytes = rx_buffer_bytes;
  return l;
}

LinkParams ualink_x4(uint64_t latency_ps, uint64_t rx_buffer_bytes) {
  LinkParams l;
  l.type_name = "ualink_x4";
  l.protocol = "ualink";
  l.rate_bps = 4 * 212'500'000'000ull;
  // The declared defaults of framing: ualink (UALink 1.0: 64/16/8/640/12/680 B).
  l.framing = std::make_shared<const UALinkFraming>(
      defaults<UALinkFramingParams>(framings().at("ualink").params));
  l.packet_payload = 256;
  l.latency_ps = latency_ps;
  l.vcs = 1;
  l.rx_buffer_bytes = rx_buffer_bytes;
  return l;
}

StarBench::StarBench(int n, const SwitchParams& sp, const EndpointParams& ep,
                     const LinkParams& link, Switch::Features features) {
  std::vector<int> used;
  for (int i = 0; i < n; ++i) used.push_back(i);
  sw = std::make_unique<Switch>("sw", "sw", sp, used, std::move(features));
  std::vector<std::vector<int>> sw_routes(n);
  std::vector<SwitchPeer> peers(size_t(sp.ports));
  for (int i = 0; i < n; ++i) {
    eps.push_back(std::make_unique<Endpoint>(("ep" + std::to_string(i)).c_str(),
                                             "ep" + std::to_string(i), uint32_t(i), ep));
    bind_link(eps[i]->port(0), sw->port(i), link);
    sw_routes[i] = {i};
    peers[size_t(i)] = SwitchPeer{i, i, 0};
  }
  sw->set_routes(sw_routes);
  sw->set_peers(peers);
  for (int i = 0; i < n; ++i) {
    std::vector<std::vector<int>> r(n);
    for (int d = 0; d < n; ++d)
      if (d != i) r[d] = {0};
    eps[i]->set_routes(r);
  }
}

RingBench::RingBench(int n, const EndpointParams& ep, const LinkParams& link) {
  for (int i = 0; i < n; ++i)
    eps.push_back(std::make_unique<Endpoint>(("ep" + std::to_string(i)).c_str(),
                                             "ep" + std::to_string(i), uint32_t(i), ep));
  for (int i = 0; i < n; ++i) {
    bind_link(eps[i]->port(0), eps[(i + 1) % n]->port(1), link);
    std::vector<std::vector<int>> r(n);
    r[(i + 1) % n] = {0};
    if ((i + n - 1) % n != (i + 1) % n) r[(i + n - 1) % n] = {1};
    eps[i]->set_routes(r);
  }
}

UniformSource::UniformSource(sc_core::sc_module_name n, Endpoint& ep, int n_endpoints,
                             uint32_t bytes, uint64_t seed, int depth)
    : sc_module(n),
      ep_(ep), n_(n_endpoints), bytes_(bytes), rng_(seed, ep.display_name()), depth_(depth) {
  ep_.on_sent([this](uint64_t, PacketKind) {
    --queued_;
    refill();
  });
  refill();
}

void UniformSource::refill() {
  while (queued_ < depth_) {
    uint32_t d = uint32_t(rng_.below(uint64_t(n_ - 1)));
    if (d >= ep_.id()) ++d;
    ep_.send(d, bytes_, 0);
    ++queued_;
  }
}

ThroughputMonitor::ThroughputMonitor(sc_core::sc_module_name n, std::vector<Endpoint*> eps,
                                     uint64_t start_ps, uint64_t end_ps)
    : sc_module(n), start_ps_(start_ps), end_ps_(end_ps) {
  for (Endpoint* e : eps)
    e->on_delivery([this](const Endpoint::Delivery& d) {
      const uint64_t t = sc_core::sc_time_stamp().value();
      if (t >= start_ps_ && t < end_ps_) bytes_ += d.bytes;
    });
}

}  // namespace fabricsim::tb
