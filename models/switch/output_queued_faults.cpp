// The output-queued frame under faults (output_queued.h; docs/architecture.md, "Faults").
// Nothing here runs in a run without faults.
#include "models/core/errors.h"
#include "models/switch/output_queued.h"

namespace fabricsim {

void OutputQueuedSwitch::discard(int out, Packet* p, bool admitted, LossCause cause) {
  if (admitted) {
    out_load_[size_t(out)] -= p->payload_bytes;
    // The admission features let it go as if it had left (shared buffer, PFC counters).
    for (SwitchFeature* f : departure_) f->departed(out, *p);
  }
  ports_[size_t(out)]->lose(p, cause);
}

// Admitted into the egress queue of a port whose link is down: dropped (a black hole until
// routes are recomputed).
void OutputQueuedSwitch::push_down(int out, Packet* p) { discard(out, p, true, LossCause::kLinkDown); }

void OutputQueuedSwitch::link_changed(int port, bool down) {
  if (down) drop_queued(port, LossCause::kLinkDown);
}

// Drops everything queued for egress on `port`, counted with `cause`.
void OutputQueuedSwitch::drop_queued(int port, LossCause cause) {
  const size_t base = size_t(port) * nq_;
  for (int c = 0; c < nq_; ++c) {
    Fifo<Packet*>& q = q_[base + size_t(c)];
    while (!q.empty()) {
      Packet* p = q.pop();
      qbytes_[base + size_t(c)] -= p->payload_bytes;
      egress_bytes_[size_t(port)] -= p->payload_bytes;
      discard(port, p, true, cause);
    }
    deficit_[base + size_t(c)] = 0;
  }
  nonempty_[size_t(port)] = 0;
  sel_[size_t(port)] = -1;
  set_level(port, Port::now());
}

// A transaction a link-level replay kept (an output-queued switch on a link with replay):
// routed again from here.
void OutputQueuedSwitch::tx_recover(int port, Packet* p) {
  const int r = select_route(port, *p);
  if (r < 0) {
    ports_[size_t(port)]->lose(p, LossCause::kNoRoute);
    return;
  }
  p->route_port = r;
  p->head_ps = p->tail_ps = Port::now();
  out_load_[size_t(r)] += p->payload_bytes;
  if (!admission_.empty() && !admit(r, p, true)) return;
  push(r, p, Port::now());
}

void OutputQueuedSwitch::fail(LossHandler&) {
  for (int port = 0; port < n_; ++port) {
    if (!ports_[size_t(port)]) continue;
    ports_[size_t(port)]->drop_arrivals();
    ports_[size_t(port)]->drop_held();
    drop_queued(port, LossCause::kDeviceDown);
  }
  failed_ = true;
}

}  // namespace fabricsim
