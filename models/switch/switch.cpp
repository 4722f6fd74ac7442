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
  xbar_alarm_ = Alarm{this, kXbar};
  member_of_port_.assign(n_, -1);
  link_index_.assign(n_, -1);
  reduce_.rate_Bps = p.nvls_reduce_Bps;
  mcast_.rate_Bps = p.nvls_multicast_Bps;
  reduce_.alarm = Alarm{this, kReduceEngine};
  mcast_.alarm = Alarm{this, kMcastEngine};
}

void Switch::wake(uint32_t what) {
  switch (what) {
    case kXbar: xbar_method(); break;
    case kReduceEngine: engine_wake(reduce_, true); break;
    case kMcastEngine: engine_wake(mcast_, false); break;
    default: FABRICSIM_ASSERT(false, display_name_ + ": bad wake-up");
  }
}

void Switch::add_nvls_member(uint32_t endpoint, std::vector<int> ports) {
  FABRICSIM_ASSERT(params_.nvls, display_name_ + ": NVLS member on a switch without NVLS");
  FABRICSIM_ASSERT(!ports.empty(), display_name_ + ": NVLS member without links");
  const int m = int(members_.size());
  for (size_t j = 0; j < ports.size(); ++j) {
    const int port = ports[j];
    FABRICSIM_ASSERT(port >= 0 && port < n_ && ports_[port] && member_of_port_[port] < 0,
                     display_name_ + ": bad NVLS member port");
    member_of_port_[port] = m;
    link_index_[port] = int(j);
  }
  members_.push_back(Member{endpoint, std::move(ports)});
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
  if (is_nvls_switch_bound(p->kind)) {
    nvls_arrive(in, p);
    return;
  }
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
  const Framing& f = *ports_[in]->link().framing;
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

// ---------------------------------------------------------------------------------------
// NVLS unit

void Switch::nvls_arrive(int in, Packet* p) {
  FABRICSIM_ASSERT(params_.nvls, display_name_ + ": NVLS packet at a switch without NVLS");
  FABRICSIM_ASSERT(member_of_port_[in] >= 0,
                   display_name_ + ": NVLS packet on a port that is not a member's link");
  p->route_port = in;  // remembered: the engines return its credits on this port
  switch (p->kind) {
    case PacketKind::kNvlsReq: nvls_request(in, p); break;
    case PacketKind::kNvlsResp: engine_push(reduce_, p); break;
    case PacketKind::kNvlsMcast: engine_push(mcast_, p); break;
    default: FABRICSIM_ASSERT(false, display_name_ + ": unexpected NVLS packet");
  }
}

void Switch::emit(int out, Packet* p) {
  const uint64_t t = Port::now();
  p->head_ps = p->tail_ps = t;
  egress_[out].push(p);
  egress_bytes_[out] += p->payload_bytes;
  out_load_[out] += p->payload_bytes;
  ports_[out]->queue_stat().set(t, egress_bytes_[out]);
  ports_[out]->kick();
}

void Switch::nvls_request(int in, Packet* req) {
  ++nvls_requests_;
  uint32_t c;
  if (free_ctx_.empty()) {
    c = uint32_t(ctx_.size());
    ctx_.emplace_back();
  } else {
    c = free_ctx_.back();
    free_ctx_.pop_back();
  }
  ReduceCtx& ctx = ctx_[c];
  ctx.req = req;
  ctx.remaining = uint32_t(members_.size());
  ctx.out = in;
  ports_[in]->release_rx(req, 0);
  const int j = link_index_[in];
  for (const Member& m : members_) {
    Packet* r = PacketPool::global().acquire();
    r->src = req->src;
    r->dst = m.endpoint;
    r->msg_id = req->msg_id;
    r->msg_bytes = req->msg_bytes;
    r->offset = req->offset;
    r->seq = req->seq;
    r->tag = req->tag;
    r->kind = PacketKind::kNvlsRead;
    r->npackets = req->npackets;
    r->req_bytes = req->req_bytes;
    r->req_packet_payload = req->req_packet_payload;
    r->ctx = c;
    r->vc = req->vc;
    r->entropy = req->entropy;
    r->inject_ps = Port::now();
    emit(m.ports[size_t(j) % m.ports.size()], r);
  }
}

void Switch::engine_push(Engine& e, Packet* p) {
  const uint64_t t = Port::now();
  e.q.push(p);
  e.queued += p->payload_bytes;
  e.depth.set(t, e.queued);
  if (e.q.size() == 1) engine_start(e, t);
}

// The head of `e` starts now: it is done when its input bytes have streamed through.
void Switch::engine_start(Engine& e, uint64_t t) {
  const Packet* p = e.q.front();
  const uint64_t dur = e.rate_Bps ? transfer_ps(p->payload_bytes, e.rate_Bps * 8) : 0;
  e.done_at = t + dur;
  e.busy_ps += dur;
  Scheduler::instance().set(e.alarm, e.done_at);
}

void Switch::engine_wake(Engine& e, bool reduce) {
  ++g_kernel_events;
  const uint64_t t = Port::now();
  while (!e.q.empty() && e.done_at <= t) {
    Packet* p = e.q.pop();
    e.queued -= p->payload_bytes;
    e.busy_bytes += p->payload_bytes;
    e.depth.set(t, e.queued);
    ports_[p->route_port]->release_rx(p, 0);
    nvls_consumed_ += p->payload_bytes;
    if (reduce)
      nvls_reduced(p);
    else
      nvls_replicate(p);
    if (!e.q.empty()) engine_start(e, t);
  }
}

void Switch::nvls_reduced(Packet* p) {
  FABRICSIM_ASSERT(p->ctx < ctx_.size() && ctx_[p->ctx].req,
                   display_name_ + ": NVLS response for no open reduction");
  ReduceCtx& ctx = ctx_[p->ctx];
  if (--ctx.remaining > 0) {
    PacketPool::global().release(p);
    return;
  }
  // Every member's input is in: the reduced bytes go back to the requester.
  Packet* req = ctx.req;
  p->src = req->src;
  p->dst = req->src;
  p->msg_id = req->msg_id;
  p->msg_bytes = req->msg_bytes;
  p->offset = req->offset;
  p->tag = req->tag;
  p->kind = PacketKind::kNvlsResult;
  p->payload_bytes = req->req_bytes;
  p->packet_payload = req->req_packet_payload;
  p->npackets = req->npackets;
  p->inject_ps = req->inject_ps;
  nvls_emitted_ += p->payload_bytes;
  const int out = ctx.out;
  PacketPool::global().release(req);
  ctx = ReduceCtx{};
  free_ctx_.push_back(p->ctx);
  emit(out, p);
}

void Switch::nvls_replicate(Packet* p) {
  ++nvls_stores_;
  const int j = link_index_[p->route_port];
  for (size_t k = 0; k < members_.size(); ++k) {
    const Member& m = members_[k];
    Packet* r = p;
    if (k + 1 < members_.size()) {
      r = PacketPool::global().acquire();
      *r = *p;
    }
    r->dst = m.endpoint;
    r->kind = PacketKind::kNvlsData;
    nvls_emitted_ += r->payload_bytes;
    emit(m.ports[size_t(j) % m.ports.size()], r);
  }
}

nlohmann::json Switch::stats_json(uint64_t now_ps) const {
  nlohmann::json j;
  if (host_) j["host_path"] = host_->stats_json(now_ps);
  j["crossbar_transfers"] = transfers_;
  j["arbitrations"] = arbitrations_;
  j["input_queues"] = params_.input_queues;
  j["arbiter"] = params_.arbiter;
  if (params_.nvls) {
    j["nvls_reductions"] = nvls_requests_;
    j["nvls_multicast_stores"] = nvls_stores_;
    j["nvls_reduce_input_bytes"] = reduce_.busy_bytes;
    j["nvls_reduce_engine_utilisation"] = now_ps ? double(reduce_.busy_ps) / double(now_ps) : 0.0;
    j["nvls_reduce_queue_max_bytes"] = reduce_.depth.max();
    j["nvls_multicast_input_bytes"] = mcast_.busy_bytes;
    j["nvls_multicast_engine_utilisation"] =
        now_ps ? double(mcast_.busy_ps) / double(now_ps) : 0.0;
    j["nvls_bytes_emitted"] = nvls_emitted_;
  }
  return j;
}

}  // namespace fabricsim
