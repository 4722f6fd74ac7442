#include "models/switch/switch.h"

#include <algorithm>

#include "models/core/errors.h"

namespace fabricsim {

using sc_core::sc_time;

Switch::Switch(sc_core::sc_module_name n, std::string display_name, const SwitchParams& p,
               const std::vector<int>& used_ports)
    : sc_module(n),
      display_name_(std::move(display_name)),
      params_(p),
      n_(p.ports),
      ports_(p.ports),
      voq_mode_(p.input_queues == "voq"),
      adaptive_(p.route_select == "adaptive"),
      rows_(p.ports, PortSet(p.ports)),
      cols_(p.ports, PortSet(p.ports)),
      free_in_(p.ports),
      free_out_(p.ports),
      pending_in_(p.ports),
      requested_out_(p.ports),
      in_busy_(p.ports, 0),
      out_busy_(p.ports, 0),
      xbar_rate_bps_(p.ports, 0),
      egress_(p.ports),
      egress_bytes_(p.ports, 0),
      out_load_(p.ports, 0),
      rr_(p.ports, 0),
      rx_freed_(p.ports, 0) {
  FABRICSIM_ASSERT(p.input_queues == "voq" || p.input_queues == "fifo", "bad input_queues");
  for (int i : used_ports) {
    FABRICSIM_ASSERT(i >= 0 && i < n_ && !ports_[i], display_name_ + ": bad used port list");
    ports_[i] = std::make_unique<Port>(("port_" + std::to_string(i)).c_str(),
                                       display_name_ + ".port[" + std::to_string(i) + "]", this,
                                       i, /*rx_at_head=*/true, p.pipeline_latency_ps);
  }
  arbiter_ = make_arbiter(p.arbiter, n_, n_, p.islip_iterations);
  if (p.host.enabled) host_ = std::make_unique<HostPath>(p.host);
  if (voq_mode_)
    voq_.resize(size_t(n_) * n_);
  else
    inq_.resize(n_);
  xbar_alarm_ = Alarm{this, 0};
}

void Switch::end_of_elaboration() {
  for (int o = 0; o < n_; ++o)
    if (ports_[o])
      xbar_rate_bps_[o] = uint64_t(double(ports_[o]->link().rate_bps) * params_.speedup);
}

uint64_t Switch::xbar_ps(int out, uint64_t bytes) const {
  return transfer_ps(bytes, xbar_rate_bps_[out]);
}

int Switch::select_route(int in, const Packet& p) {
  FABRICSIM_ASSERT(p.dst < routes_.size() && !routes_[p.dst].empty(),
                   display_name_ + ": no route to endpoint " + std::to_string(p.dst));
  const std::vector<int>& c = routes_[p.dst];
  if (c.size() == 1) return c[0];
  if (!adaptive_) {
    uint64_t h = (uint64_t(p.src) * 0x9E3779B97F4A7C15ull) ^ (uint64_t(p.dst) << 32) ^ p.entropy;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return c[h % c.size()];
  }
  // Least queued output; ties rotate per input so equal loads spread evenly.
  const size_t k = c.size();
  const size_t start = rr_[in]++ % k;
  int best = c[start];
  for (size_t j = 1; j < k; ++j) {
    int o = c[(start + j) % k];
    if (out_load_[o] < out_load_[best]) best = o;
  }
  return best;
}

void Switch::rx_arrive(int in, Packet* p) {
  p->route_port = select_route(in, *p);
  out_load_[p->route_port] += p->payload_bytes;
  enqueue(in, p);
  ++pending_;
  Scheduler::instance().set(xbar_alarm_, Port::now());
}

void Switch::enqueue(int in, Packet* p) {
  const int o = p->route_port;
  if (voq_mode_) {
    voq_[size_t(in) * n_ + o].push(p);
    rows_[in].set(o);
    cols_[o].set(in);
  } else {
    inq_[in].push(p);
    if (inq_[in].size() == 1) {
      rows_[in].set(o);
      cols_[o].set(in);
    }
  }
  pending_in_.set(in);
  if (cols_[o].any()) requested_out_.set(o);
}

void Switch::xbar_method() {
  ++g_kernel_events;
  const uint64_t t = Port::now();
  if (pending_ == 0) return;
  ++arbitrations_;
  free_in_.clear();
  free_out_.clear();
  pending_in_.for_each([&](int i) {
    if (in_busy_[i] <= t) free_in_.set(i);
  });
  requested_out_.for_each([&](int o) {
    if (out_busy_[o] <= t && egress_bytes_[o] < params_.egress_buffer_bytes) free_out_.set(o);
  });
  if (free_in_.any() && free_out_.any()) {
    arbiter_->match(rows_, cols_, free_in_, free_out_, match_);
    free_in_.for_each([&](int i) {
      if (match_[i] >= 0) transfer(i, match_[i], t);
    });
  }
  if (pending_ == 0) return;
  // Wake at the first moment a busy input with traffic, or a busy output that traffic is
  // waiting for, becomes free. Outputs blocked by a full egress queue wake us on tx_pop.
  uint64_t next = UINT64_MAX;
  pending_in_.for_each([&](int i) {
    if (in_busy_[i] > t) next = std::min(next, in_busy_[i]);
  });
  requested_out_.for_each([&](int o) {
    if (out_busy_[o] > t) next = std::min(next, out_busy_[o]);
  });
  if (next != UINT64_MAX) Scheduler::instance().set(xbar_alarm_, next);
}

void Switch::transfer(int in, int out, uint64_t t) {
  Packet* p;
  if (voq_mode_) {
    Fifo<Packet*>& q = voq_[size_t(in) * n_ + out];
    p = q.pop();
    if (q.empty()) {
      rows_[in].reset(out);
      cols_[out].reset(in);
    }
  } else {
    p = inq_[in].pop();
    rows_[in].reset(out);
    cols_[out].reset(in);
    if (!inq_[in].empty()) {
      const int nh = inq_[in].front()->route_port;
      rows_[in].set(nh);
      cols_[nh].set(in);
      requested_out_.set(nh);
    }
  }
  FABRICSIM_ASSERT(p->route_port == out, display_name_ + ": crossbar matched a wrong output");
  if (!rows_[in].any()) pending_in_.reset(in);
  if (!cols_[out].any()) requested_out_.reset(out);
  --pending_;
  ++transfers_;

  // The crossbar moves the ingress wire bytes; a transaction of several packets may
  // cut through, but its tail cannot cross before it has arrived.
  const Framing& f = ports_[in]->link().framing;
  const uint64_t xs = xbar_ps(out, p->link_bytes);
  uint64_t end = t + xs;
  if (p->npackets > 1) {
    const uint64_t xlast = xbar_ps(out, f.packet_wire_bytes(p->last_packet_payload(), p->kind));
    end = std::max(end, p->tail_ps + xlast);
    p->head_ps = t + xbar_ps(out, f.packet_wire_bytes(p->packet_payload, p->kind));
  } else {
    p->head_ps = end;
  }
  p->tail_ps = end;
  if (host_) {
    // A root complex: the transaction goes up to the host (and, p2p off, through host
    // memory) and comes back down before its egress port may send it, whole
    // (store-and-forward per transaction). The crossbar itself is free at `end`; the
    // egress queue, bounded by egress_buffer, holds it meanwhile.
    p->head_ps = p->tail_ps = std::max(end, host_->forward(t, p->payload_bytes));
  }
  // Input and output are held for the crossbar time only. A multi-packet transaction
  // arriving at line rate would otherwise hold both until its tail has arrived, i.e. for
  // its whole length whatever the speedup, and a short packet (an ack) waiting for that
  // input and output could starve while two such streams alternate (docs/scaleup.md,
  // "Aggregation on a two-level switch path"). The tail constraint travels in tail_ps; the
  // ingress buffer is freed when the tail has crossed, and credits go back in time order.
  in_busy_[in] = t + xs;
  out_busy_[out] = t + xs;
  const uint64_t freed = std::max(end, rx_freed_[in]);
  rx_freed_[in] = freed;

  egress_[out].push(p);
  egress_bytes_[out] += p->payload_bytes;
  ports_[out]->queue_stat().set(t, egress_bytes_[out]);
  ports_[in]->release_rx(p, freed - t);
  ports_[out]->kick();
}

Packet* Switch::tx_peek(int port) { return egress_[port].empty() ? nullptr : egress_[port].front(); }

void Switch::tx_pop(int port, Packet* p) {
  egress_[port].pop();
  egress_bytes_[port] -= p->payload_bytes;
  out_load_[port] -= p->payload_bytes;
  ports_[port]->queue_stat().set(Port::now(), egress_bytes_[port]);
  if (pending_ > 0) Scheduler::instance().set(xbar_alarm_, Port::now());
}

nlohmann::json Switch::stats_json(uint64_t now_ps) const {
  nlohmann::json j;
  if (host_) j["host_path"] = host_->stats_json(now_ps);
  j["crossbar_transfers"] = transfers_;
  j["arbitrations"] = arbitrations_;
  j["input_queues"] = params_.input_queues;
  j["arbiter"] = params_.arbiter;
  return j;
}

}  // namespace fabricsim
