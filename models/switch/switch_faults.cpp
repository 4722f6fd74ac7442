// The switch frame under faults (switch.h; docs/architecture.md, "Faults"): new routes move
// queued traffic off failed ports, traffic without a route waits for one, and a failed
// switch loses what it holds. Nothing here runs in a run without faults.
#include <algorithm>
#include <map>

#include "models/core/errors.h"
#include "models/switch/switch.h"

namespace fabricsim {

namespace {

bool on_route(const SwitchFrame::PortList& routes, int port) {
  return std::find(routes.begin(), routes.end(), port) != routes.end();
}

}  // namespace

void Switch::set_routes(const std::vector<std::vector<int>>& routes) {
  const bool again = !route_span_.empty();  // a table was set before
  route_span_.assign(routes.size(), RouteSpan{0, 0});
  route_ports_.clear();
  std::map<std::vector<int>, uint32_t> stored;  // each distinct list once: its first index
  for (size_t d = 0; d < routes.size(); ++d) {
    const std::vector<int>& r = routes[d];
    // Consecutive destinations mostly share a list (the endpoints behind one switch).
    if (d > 0 && r == routes[d - 1]) {
      route_span_[d] = route_span_[d - 1];
      continue;
    }
    auto [it, fresh] = stored.try_emplace(r, uint32_t(route_ports_.size()));
    if (fresh) route_ports_.insert(route_ports_.end(), r.begin(), r.end());
    route_span_[d] = RouteSpan{it->second, uint32_t(r.size())};
  }
  route_ports_.shrink_to_fit();
  if (again) reroute();
}

void Switch::push_egress(int from, Packet* p) {
  const int r = select_route(from, *p);
  if (r < 0 || ports_[size_t(r)]->link_is_down()) {
    parked_out_.push_back(p);
    return;
  }
  p->route_port = r;
  out_load_[size_t(r)] += p->payload_bytes;
  if (!admission_.empty() && !admit(r, p, true)) return;
  egress_[size_t(r)].q.push(p);
  egress_bytes_[size_t(r)] += p->payload_bytes;
  set_level(r, Port::now());
  ports_[size_t(r)]->kick();
}

void Switch::tx_recover(int port, Packet* p) { push_egress(port, p); }

// Every queued transaction whose output is no longer on a route to its destination moves
// to one that is (or parks); the crossbar's request sets are then rebuilt.
void Switch::reroute() {
  flush_arrivals();  // the queues as an immediate enqueue would have left them
  const auto valid = [&](const Packet* p) {
    return p->route_port >= 0 && on_route(routes_to(p->dst), p->route_port) &&
           !ports_[size_t(p->route_port)]->link_is_down();
  };
  const auto route_in = [&](int in, Packet* p) {  // ingress traffic: true if it has a route
    out_load_[size_t(p->route_port)] -= p->payload_bytes;
    p->route_port = select_route(in, *p);
    if (p->route_port < 0 || ports_[size_t(p->route_port)]->link_is_down()) {
      parked_in_.push_back(Parked{in, p});
      --pending_;
      return false;
    }
    out_load_[size_t(p->route_port)] += p->payload_bytes;
    return true;
  };
  for (int in = 0; in < n_; ++in) {
    if (voq_mode_) {
      for (int out = 0; out < n_; ++out) {
        PacketQueue& q = voq_[size_t(in) * n_ + out];
        for (size_t k = q.size(); k > 0; --k) {
          Packet* p = q.pop();
          if (valid(p)) {
            q.push(p);
          } else if (route_in(in, p)) {
            voq_[size_t(in) * n_ + p->route_port].push(p);
          }
        }
      }
    } else {
      PacketQueue& q = inq_[size_t(in)];
      for (size_t k = q.size(); k > 0; --k) {
        Packet* p = q.pop();
        if (valid(p) || route_in(in, p)) q.push(p);
      }
    }
  }
  // Parked ingress traffic that has a route now.
  std::vector<Parked> still;
  for (const Parked& w : parked_in_) {
    w.p->route_port = select_route(w.in, *w.p);
    if (w.p->route_port < 0 || ports_[size_t(w.p->route_port)]->link_is_down()) {
      still.push_back(w);
      continue;
    }
    out_load_[size_t(w.p->route_port)] += w.p->payload_bytes;
    (voq_mode_ ? voq_[size_t(w.in) * n_ + w.p->route_port] : inq_[size_t(w.in)]).push(w.p);
    ++pending_;
  }
  parked_in_.swap(still);
  // The crossbar's view of the input queues, from scratch.
  for (int i = 0; i < n_; ++i) {
    rows_[size_t(i)].clear();
    cols_[size_t(i)].clear();
  }
  pending_in_.clear();
  requested_out_.clear();
  for (int in = 0; in < n_; ++in)
    for (int out = 0; out < n_; ++out) {
      const bool queued = voq_mode_ ? !voq_[size_t(in) * n_ + out].empty()
                                    : (!inq_[size_t(in)].empty() &&
                                       inq_[size_t(in)].front()->route_port == out);
      if (!queued) continue;
      rows_[size_t(in)].set(out);
      cols_[size_t(out)].set(in);
      pending_in_.set(in);
      requested_out_.set(out);
    }
  // Egress queues of outputs no longer on the way: their traffic takes another output.
  std::vector<Packet*> moved;
  for (int out = 0; out < n_; ++out) {
    PacketQueue& q = egress_[size_t(out)].q;
    for (size_t k = q.size(); k > 0; --k) {
      Packet* p = q.pop();
      if (valid(p)) {
        q.push(p);
        continue;
      }
      egress_bytes_[size_t(out)] -= p->payload_bytes;
      out_load_[size_t(out)] -= p->payload_bytes;
      moved.push_back(p);
    }
    if (ports_[size_t(out)]) set_level(out, Port::now());
  }
  std::vector<Packet*> waiting;
  waiting.swap(parked_out_);
  for (Packet* p : moved) push_egress(p->route_port, p);
  for (Packet* p : waiting) push_egress(p->route_port < 0 ? 0 : p->route_port, p);
  if (pending_ > 0) Scheduler::instance().set(xbar_alarm_, Port::now());
}

void Switch::fail(LossHandler& loss) {
  flush_arrivals();
  // Every port of a switch speaks one protocol: what recovers what it held.
  LossRecovery r = LossRecovery::kNone;
  const Port* any = nullptr;
  for (const std::unique_ptr<Port>& port : ports_)
    if (port) {
      r = after_device_failure(port->link().recovery);
      any = port.get();
    }
  if (!any) return;
  const auto lose_queued = [&](int in, Packet* p) {
    ports_[size_t(in)]->release_rx(p, 0);  // its ingress credits go back upstream
    loss.lost(*ports_[size_t(in)], r, p, LossCause::kDeviceDown);
  };
  for (int in = 0; in < n_; ++in) {
    if (!ports_[size_t(in)]) continue;
    ports_[size_t(in)]->drop_arrivals();
    ports_[size_t(in)]->drop_held();
    if (voq_mode_) {
      for (int out = 0; out < n_; ++out)
        for (PacketQueue& q = voq_[size_t(in) * n_ + out]; !q.empty();) lose_queued(in, q.pop());
    } else if (!inq_.empty()) {
      for (PacketQueue& q = inq_[size_t(in)]; !q.empty();) lose_queued(in, q.pop());
    }
  }
  for (const Parked& w : parked_in_) lose_queued(w.in, w.p);
  parked_in_.clear();
  for (int out = 0; out < n_; ++out) {
    for (PacketQueue& q = egress_[size_t(out)].q; !q.empty();)
      loss.lost(*ports_[size_t(out)], r, q.pop(), LossCause::kDeviceDown);
    egress_bytes_[size_t(out)] = 0;
    out_load_[size_t(out)] = 0;
    if (ports_[size_t(out)]) set_level(out, Port::now());  // egress_bytes_ is 0
  }
  for (Packet* p : parked_out_) loss.lost(*any, r, p, LossCause::kDeviceDown);
  parked_out_.clear();
  for (int i = 0; i < n_; ++i) {
    rows_[size_t(i)].clear();
    cols_[size_t(i)].clear();
  }
  pending_in_.clear();
  requested_out_.clear();
  pending_ = 0;
  failed_ = true;
}

}  // namespace fabricsim
