#include "models/ethernet/mmu.h"

#include "models/core/packet.h"
#include "models/core/units.h"
#include "models/link/link_type.h"
#include "models/switch/switch_params.h"
#include "models/switch/switch_kind.h"

namespace fabricsim {

namespace {

const char* verdict_name(SharedBuffer::Verdict v) {
  switch (v) {
    case SharedBuffer::Verdict::kDtThreshold: return "dt_threshold";
    case SharedBuffer::Verdict::kBufferFull: return "buffer_full";
    case SharedBuffer::Verdict::kQueueLimit: return "queue_limit";
    default: return "accepted";
  }
}

}  // namespace

EthernetMmu::EthernetMmu(const EthernetMmuParams& p)
    : p_(p), buffer_(p.buffer_bytes, p.dt_alpha, p.queue_limit_bytes) {
  PacketPool::global().enable_transport();  // PFC pause frames carry pause_quanta
}

void EthernetMmu::attached() {
  const int n = frame().ports();
  FABRICSIM_ASSERT(frame().traffic_classes() > 0,
                   frame().display_name() + ": the ethernet feature needs traffic classes");
  rng_ = Rng(frame().seed(), frame().display_name() + ".ecn");
  pfc_.assign(size_t(n) * 8, PfcIngress());
  refresh_at_.assign(size_t(n) * 8, UINT64_MAX);
  refresh_alarm_.clear();
  for (int i = 0; i < n; ++i) refresh_alarm_.push_back(Alarm{this, uint32_t(i)});
  port_.assign(size_t(n), PortCounters());
}

// A link partner's pause frame: this switch's transmitter on `in` stops that priority. (The
// output-queued frame's ports are credit-free: nothing to release.)
void EthernetMmu::arrive(int in, Packet* p) {
  frame().pause_port(in, p->tc, frame().now() + pause_ps(in, p->tr().pause_quanta));
  PacketPool::global().release(p);
}

uint64_t EthernetMmu::pause_ps(int port, uint16_t quanta) const {
  // One quantum is 512 bit times at the link's rate.
  return transfer_ps(uint64_t(quanta) * 512 / 8, frame().port_rate_bps(port));
}

void EthernetMmu::send_pause(int port, uint8_t prio, uint16_t quanta) {
  Packet* f = PacketPool::global().acquire();
  f->clear_transport();
  f->kind = PacketKind::kPause;
  f->tc = prio;
  f->flags = kUrgent;
  f->tr().pause_quanta = quanta;
  f->npackets = 1;
  f->route_port = port;
  frame().emit(port, f);
  if (quanta) {
    ++pauses_sent_;
    ++port_[size_t(port)].pauses_sent;
  } else {
    ++resumes_sent_;
  }
}

SwitchFeature::Admission EthernetMmu::admit(int out, Packet& p) {
  if (p.kind == PacketKind::kPause) return Admission::kAccept;  // link control, not buffered
  const bool urgent = p.flags & kUrgent;
  const bool lossless = lossless_of(p);
  const int q = frame().queue_of(p);
  const uint64_t qlen = frame().queue_bytes(out, q);
  SharedBuffer::Verdict v = buffer_.admit(qlen, p.payload_bytes, urgent || lossless);
  const bool trimmable = p_.trimming && (p.flags & kTrimOk) && !urgent && !lossless;
  // UEC-style early trimming: above trim_threshold a trimmable packet is cut even if the
  // buffer could take it (its transport recovers at once, and the queue stays short).
  if (trimmable && v == SharedBuffer::Verdict::kAccept && p_.trim_threshold_bytes &&
      qlen + p.payload_bytes > p_.trim_threshold_bytes)
    v = SharedBuffer::Verdict::kQueueLimit;
  if (v != SharedBuffer::Verdict::kAccept && trimmable) {
    // Trim instead of dropping: keep the header and trim_bytes of payload, send it on in the
    // control queue (ahead of the congested data).
    const uint32_t keep = std::min(p.payload_bytes, p_.trim_bytes);
    const SharedBuffer::Verdict tv =
        buffer_.admit(frame().queue_bytes(out, frame().traffic_classes()), keep, true);
    if (tv == SharedBuffer::Verdict::kAccept) {
      const uint32_t cut = p.payload_bytes - keep;
      absorbed_ += cut;
      trimmed_bytes_ += cut;
      ++trims_;
      ++port_[size_t(out)].trims;
      p.payload_bytes = keep;
      p.packet_payload = keep;
      p.npackets = 1;
      p.flags |= kTrimmed | kUrgent;
      v = SharedBuffer::Verdict::kAccept;
    }
  }
  if (v != SharedBuffer::Verdict::kAccept) {
    ++drops_[size_t(v)];
    ++port_[size_t(out)].drops;
    drop_bytes_ += p.payload_bytes;
    absorbed_ += p.payload_bytes;
    return Admission::kDrop;
  }
  buffer_.add(p.payload_bytes);
  if (lossless) {
    const size_t k = size_t(p.in_port) * 8 + (p.tc & 7);
    if (pfc_[k].add(p.payload_bytes, p_.pfc_xoff_bytes)) {
      ++xoff_events_;
      ++port_[p.in_port].xoff_events;
      send_pause(p.in_port, p.tc & 7, uint16_t(p_.pfc_quanta));
      // Refresh before the partner's pause runs out, while still above XON.
      refresh_at_[k] = frame().now() + pause_ps(p.in_port, uint16_t(p_.pfc_quanta)) / 2;
      SwitchFrame::wake_at(refresh_alarm_[p.in_port], refresh_at_[k]);
    }
  }
  return Admission::kAccept;
}

void EthernetMmu::departed(int out, Packet& p) {
  if (p.kind == PacketKind::kPause) return;
  buffer_.remove(p.payload_bytes);
  const bool lossless = lossless_of(p);
  if (lossless) {
    const size_t k = size_t(p.in_port) * 8 + (p.tc & 7);
    if (pfc_[k].remove(p.payload_bytes, p_.pfc_xon_bytes)) {
      refresh_at_[k] = UINT64_MAX;
      send_pause(p.in_port, p.tc & 7, 0);
    }
  }
  if (p_.ecn && (p.flags & kEct) && !(p.flags & kUrgent)) {
    // RED on the queue it leaves, as it is now (this packet no longer counted).
    const uint64_t qlen = frame().queue_bytes(out, frame().queue_of(p));
    // The lossless classes' own profile (DCQCN's thresholds), the lossy classes' otherwise.
    const double prob =
        lossless ? red_probability(qlen, p_.pfc_ecn_kmin_bytes, p_.pfc_ecn_kmax_bytes, p_.pfc_ecn_pmax)
                 : red_probability(qlen, p_.ecn_kmin_bytes, p_.ecn_kmax_bytes, p_.ecn_pmax);
    if (prob > 0 && (prob >= 1.0 || rng_.uniform01() < prob) && !(p.flags & kCe)) {
      p.flags |= kCe;
      ++marks_;
      ++port_[size_t(out)].marks;
    }
  }
}

// Pause refresh on ingress port `port`: every priority still in XOFF whose refresh is due
// sends another pause frame.
void EthernetMmu::wake(uint32_t port) {
  const uint64_t t = frame().now();
  uint64_t next = UINT64_MAX;
  for (uint8_t prio = 0; prio < 8; ++prio) {
    const size_t k = size_t(port) * 8 + prio;
    if (!pfc_[k].xoff()) continue;
    if (refresh_at_[k] <= t) {
      send_pause(int(port), prio, uint16_t(p_.pfc_quanta));
      refresh_at_[k] = t + pause_ps(int(port), uint16_t(p_.pfc_quanta)) / 2;
    }
    next = std::min(next, refresh_at_[k]);
  }
  if (next != UINT64_MAX) SwitchFrame::wake_at(refresh_alarm_[port], next);
}

// Kept: the parameters and every counter (drops by reason, trims, marks, pause frames,
// the buffer's peak). Reset: the ECN marking stream (Rng(seed, "<switch>.ecn") drawn
// again: a row marks as it would alone) and the PFC refresh schedule; the buffer and the
// PFC ingress counters are empty when the switch is (asserted).
void EthernetMmu::reset_dynamic_state() {
  FABRICSIM_ASSERT(buffer_.used() == 0, frame().display_name() + ": reset with a full buffer");
  for (const PfcIngress& f : pfc_)
    FABRICSIM_ASSERT(f.bytes() == 0 && !f.xoff(),
                     frame().display_name() + ": reset with PFC bytes in the buffer");
  rng_ = Rng(frame().seed(), frame().display_name() + ".ecn");
  std::fill(refresh_at_.begin(), refresh_at_.end(), UINT64_MAX);
  for (Alarm& a : refresh_alarm_) Scheduler::instance().cancel(a);
}

void EthernetMmu::add_stats(nlohmann::json& j, uint64_t) const {
  nlohmann::json d = nlohmann::json::object();
  for (int v = 1; v < SharedBuffer::kVerdicts; ++v)
    d[verdict_name(SharedBuffer::Verdict(v))] = drops_[size_t(v)];
  j["drops"] = d;
  j["drop_bytes"] = drop_bytes_;
  j["trims"] = trims_;
  j["trimmed_bytes"] = trimmed_bytes_;
  j["ecn_marks"] = marks_;
  j["pause_frames_sent"] = pauses_sent_;
  j["resume_frames_sent"] = resumes_sent_;
  j["xoff_events"] = xoff_events_;
  j["buffer_bytes"] = buffer_.total();
  j["buffer_used_max_bytes"] = buffer_.peak();
  nlohmann::json per = nlohmann::json::object();
  for (size_t i = 0; i < port_.size(); ++i) {
    const PortCounters& c = port_[i];
    if (!c.drops && !c.trims && !c.marks && !c.pauses_sent) continue;
    per[std::to_string(i)] = {{"drops", c.drops},
                              {"trims", c.trims},
                              {"ecn_marks", c.marks},
                              {"pause_frames_sent", c.pauses_sent},
                              {"xoff_events", c.xoff_events}};
  }
  j["ports"] = per;
}

void EthernetMmu::add_losses(PacketLedger& l) const {
  for (int v = 1; v < SharedBuffer::kVerdicts; ++v)
    if (drops_[size_t(v)]) l.dropped[verdict_name(SharedBuffer::Verdict(v))] += drops_[size_t(v)];
  l.trimmed += trims_;
}

// ---------------------------------------------------------------------------------------
// The feature kind: its keys in an ethernet_switch device type.

namespace {

void resolve(EthernetMmuParams& m, const ParamReader& r) {
  for (int64_t c : r.int_list("pfc_classes")) m.pfc_mask |= uint8_t(1u << c);
  if (!m.pfc) m.pfc_mask = 0;
  m.pfc_ecn_kmin_bytes = r.bytes("pfc_ecn_kmin");
  m.pfc_ecn_kmax_bytes = r.bytes("pfc_ecn_kmax");
  m.pfc_ecn_pmax = r.real("pfc_ecn_pmax");
  if (m.pfc_ecn_kmin_bytes > m.pfc_ecn_kmax_bytes)
    r.fail("pfc_ecn_kmin",
           "pfc_ecn_kmin " + format_bytes(m.pfc_ecn_kmin_bytes) + " > pfc_ecn_kmax " +
               format_bytes(m.pfc_ecn_kmax_bytes),
           "RED marks from Kmin rising to Kmax: make pfc_ecn_kmin <= pfc_ecn_kmax");
  if (m.ecn_kmin_bytes > m.ecn_kmax_bytes)
    r.fail("ecn_kmin",
           "ecn_kmin " + format_bytes(m.ecn_kmin_bytes) + " > ecn_kmax " +
               format_bytes(m.ecn_kmax_bytes),
           "RED marks from Kmin rising to Kmax: make ecn_kmin <= ecn_kmax");
  for (const char* key : {"ecn_kmax", "pfc_ecn_kmax"}) {
    const uint64_t kmax = std::string(key) == "ecn_kmax" ? m.ecn_kmax_bytes : m.pfc_ecn_kmax_bytes;
    if (m.ecn && kmax > m.buffer_bytes && (std::string(key) == "ecn_kmax" || m.pfc_mask))
      r.fail(key,
             std::string(key) + " " + format_bytes(kmax) + " is above the buffer (" +
                 format_bytes(m.buffer_bytes) + ")",
             "a queue never grows past the buffer: lower " + std::string(key));
  }
  if (m.pfc && m.pfc_xoff_bytes > m.buffer_bytes)
    r.fail("pfc_xoff",
           "pfc_xoff " + format_bytes(m.pfc_xoff_bytes) + " is above the buffer (" +
               format_bytes(m.buffer_bytes) + ")",
           "pause before the buffer is full: lower pfc_xoff, leaving headroom for what is in "
           "flight");
  if (m.pfc && m.pfc_xon_bytes >= m.pfc_xoff_bytes)
    r.fail("pfc_xon",
           "pfc_xon " + format_bytes(m.pfc_xon_bytes) + " is not below pfc_xoff " +
               format_bytes(m.pfc_xoff_bytes),
           "resume below the pause threshold: pfc_xon < pfc_xoff");
  if (m.queue_limit_bytes > m.buffer_bytes)
    r.fail("queue_limit",
           "queue_limit " + format_bytes(m.queue_limit_bytes) + " is above the buffer (" +
               format_bytes(m.buffer_bytes) + ")",
           "0 for no static limit, or at most the buffer");
}

}  // namespace

namespace {

// Every link into the switch must not be stopped by the port's credits (Ethernet pauses
// with PFC instead).
void check_links(const DeviceCheck& c, const std::any&) {
  const SwitchParams& sw = c.type().get<SwitchParams>();
  for (size_t i = 0; i < c.links().size(); ++i) {
    const DeviceCheck::Attached& a = c.links()[i];
    const uint64_t need = credit_free_rx_buffer(a.link, sw.pipeline_latency_ps);
    if (a.link.rx_buffer_bytes < need)
      c.fail_link(i,
                  "link type '" + a.link_type + "' has rx_buffer " +
                      format_bytes(a.link.rx_buffer_bytes) + ", less than its credit round trip "
                      "into " + c.device() + " (2 x latency + pipeline_latency at the link rate, "
                      "plus two packets: " + format_bytes(need) + "); Ethernet has no link "
                      "credits, the port's must never stop the sender",
                  "raise link_types." + a.link_type + ".rx_buffer to at least " + format_bytes(need));
  }
}

}  // namespace

SwitchFeatureKind ethernet_mmu_feature() {
  using K = ParamKind;
  using M = EthernetMmuParams;
  SwitchFeatureKind f;
  f.name = "ethernet";
  f.params = param_block<M>(
      "ethernet",
      {bind(param("buffer", K::kBytes, "64MiB", "bytes (payload, whole switch)",
                  "Shared packet buffer of the switch. ASSUMPTION: 64 MiB for a 51.2 Tb/s "
                  "Tomahawk-5-class chip (vendors publish 'shallow'; a per-port share of "
                  "512 KiB at 128 x 400G, ~10 us of line rate).",
                  1),
            &M::buffer_bytes),
       bind(param("dt_alpha", K::kReal, "1.0", "ratio",
                  "Dynamic threshold: an egress queue may hold alpha x the free buffer. "
                  "ASSUMPTION: 1 (common Tomahawk default class; 1/64..8 on the chips).",
                  1.0 / 128, 64),
            &M::dt_alpha),
       bind(param("queue_limit", K::kBytes, "0B", "bytes (payload)",
                  "Static cap on one egress queue besides the dynamic threshold; 0: none (set "
                  "it to compare with simulators that model per-port FIFOs, e.g. htsim).",
                  0),
            &M::queue_limit_bytes),
       bind(param("ecn", K::kBool, "false", "",
                  "RED/WRED ECN marking of ECN-capable packets as they leave an egress queue, "
                  "on the queue's instantaneous length (payload bytes)."),
            &M::ecn),
       bind(param("ecn_kmin", K::kBytes, "120KB", "bytes",
                  "Marking starts above this queue length (ecn: true). Default: 0.2 x the "
                  "bandwidth-delay product of 400 Gb/s x 12 us, as htsim's UEC default.",
                  0),
            &M::ecn_kmin_bytes),
       bind(param("ecn_kmax", K::kBytes, "480KB", "bytes",
                  "Marking probability reaches ecn_pmax here; every packet is marked from "
                  "here on (0.8 x BDP by default).",
                  0),
            &M::ecn_kmax_bytes),
       bind(param("ecn_pmax", K::kReal, "1.0", "probability",
                  "Marking probability at ecn_kmax (DCQCN's RED: 0.2).", 0.0, 1.0),
            &M::ecn_pmax),
       bind(param("pfc", K::kBool, "false", "",
                  "Priority flow control (802.1Qbb) on the pfc_classes: lossless, paused "
                  "instead of dropped or trimmed."),
            &M::pfc),
       param("pfc_classes", K::kIntList, "[3]", "priorities",
             "Lossless priorities when pfc is on (RoCE's usual 3); the others stay lossy.", 0,
             7),
       param("pfc_ecn_kmin", K::kBytes, "1600KB", "bytes",
             "ECN profile of the lossless classes (ecn: true): marking starts here. Default: "
             "DCQCN's RED of the HPCC reference configuration at 400 Gb/s (400 KB per 100G, "
             "scaled).",
             0),
       param("pfc_ecn_kmax", K::kBytes, "6400KB", "bytes",
             "ECN profile of the lossless classes: pfc_ecn_pmax is reached here (1600 KB per "
             "100G, scaled to 400G).",
             0),
       param("pfc_ecn_pmax", K::kReal, "0.2", "probability",
             "ECN profile of the lossless classes: marking probability at pfc_ecn_kmax.", 0.0,
             1.0),
       bind(param("pfc_xoff", K::kBytes, "512KiB", "bytes (per ingress port and priority)",
                  "A pause frame goes upstream when the bytes an ingress port's priority has "
                  "in the buffer exceed this.",
                  1),
            &M::pfc_xoff_bytes),
       bind(param("pfc_xon", K::kBytes, "256KiB", "bytes (per ingress port and priority)",
                  "A resume frame (quanta 0) goes upstream when they fall to this.", 0),
            &M::pfc_xon_bytes),
       bind(param("pfc_quanta", K::kInt, "65535", "512-bit times",
                  "Pause time carried by a pause frame (refreshed every half of it while "
                  "above pfc_xon).",
                  1, 65535),
            &M::pfc_quanta),
       bind(param("trimming", K::kBool, "false", "",
                  "Packet trimming: a data packet of a transport that handles trims, which "
                  "would be dropped, keeps its header and trim_bytes of payload and goes on in "
                  "the control queue."),
            &M::trimming),
       bind(param("trim_threshold", K::kBytes, "512KiB", "bytes (payload, per queue)",
                  "With trimming: a trimmable packet arriving at a queue of this length or more "
                  "is trimmed even if the buffer could hold it (UEC-style early trimming; about "
                  "one bandwidth-delay product of 400 Gb/s x 10 us); 0: only where it would be "
                  "dropped.",
                  0),
            &M::trim_threshold_bytes),
       bind(param("trim_bytes", K::kBytes, "64B", "bytes",
                  "Payload a trimmed packet keeps (the issue's default; UEC material often "
                  "trims to a 256 B packet).",
                  0, 65536),
            &M::trim_bytes)},
      resolve);
  f.check = check_links;
  f.create = [](const std::any& p) -> std::unique_ptr<SwitchFeature> {
    return std::make_unique<EthernetMmu>(std::any_cast<const EthernetMmuParams&>(p));
  };
  return f;
}

}  // namespace fabricsim
