#include "models/nvlink/nvls_unit.h"

#include <algorithm>
#include <functional>
#include <map>
#include <utility>

#include "models/core/datatype.h"
#include "models/core/errors.h"
#include "models/core/limits.h"
#include "models/core/packet.h"
#include "models/core/text.h"
#include "models/core/types.h"
#include "models/core/units.h"
#include "models/switch/switch_kind.h"

namespace fabricsim {

NvlsUnit::NvlsUnit(const NvlsParams& p) : params_(p) {
  reduce_.rate_Bps = p.reduce_Bps;
  mcast_.rate_Bps = p.multicast_Bps;
  reduce_.alarm = Alarm{this, kReduceEngine};
  mcast_.alarm = Alarm{this, kMcastEngine};
  pipeline_alarm_ = Alarm{this, kPipeline};
}

std::vector<PacketKind> NvlsUnit::claims() const {
  std::vector<PacketKind> kinds;
  for (size_t k = 0; k < kPacketKinds; ++k)
    if (is_nvls_switch_bound(PacketKind(k))) kinds.push_back(PacketKind(k));
  return kinds;
}

void NvlsUnit::attached() {
  member_of_port_.assign(frame().ports(), -1);
  link_index_.assign(frame().ports(), -1);
}

void NvlsUnit::wake(uint32_t what) {
  switch (what) {
    case kReduceEngine: engine_wake(reduce_, true); break;
    case kMcastEngine: engine_wake(mcast_, false); break;
    case kPipeline: pipeline_wake(); break;
    default: FABRICSIM_ASSERT(false, frame().display_name() + ": bad NVLS wake-up");
  }
}

void NvlsUnit::peers_known(const std::vector<SwitchPeer>& peers) {
  // Members in the order of their device indices; a member's links in the order of its
  // own port numbers (the address interleaving pairs the j-th links of all members).
  std::map<int, std::vector<std::pair<int, int>>> links;  // device -> (its port, our port)
  for (size_t port = 0; port < peers.size(); ++port) {
    const SwitchPeer& e = peers[port];
    if (e.endpoint >= 0) links[e.device].push_back({e.port, int(port)});
  }
  for (auto& [device, v] : links) {
    std::sort(v.begin(), v.end());
    std::vector<int> ports;
    for (const auto& pr : v) ports.push_back(pr.second);
    add_member(uint32_t(peers[size_t(v.front().second)].endpoint), ports);
  }
}

void NvlsUnit::add_member(uint32_t endpoint, std::vector<int> ports) {
  FABRICSIM_ASSERT(!ports.empty(), frame().display_name() + ": NVLS member without links");
  const int m = int(members_.size());
  for (size_t j = 0; j < ports.size(); ++j) {
    const int port = ports[j];
    FABRICSIM_ASSERT(port >= 0 && port < frame().ports() && frame().connected(port) &&
                         member_of_port_[port] < 0,
                     frame().display_name() + ": bad NVLS member port");
    member_of_port_[port] = m;
    link_index_[port] = int(j);
  }
  members_.push_back(Member{endpoint, std::move(ports)});
}

void NvlsUnit::arrive(int in, Packet* p) {
  FABRICSIM_ASSERT(member_of_port_[in] >= 0,
                   frame().display_name() + ": NVLS packet on a port that is not a member's link");
  p->route_port = in;  // remembered: the engines return its credits on this port
  switch (p->kind) {
    case PacketKind::kNvlsReq: request(in, p); break;
    case PacketKind::kNvlsResp: engine_push(reduce_, p); break;
    case PacketKind::kNvlsMcast: engine_push(mcast_, p); break;
    default: FABRICSIM_ASSERT(false, frame().display_name() + ": unexpected NVLS packet");
  }
}

void NvlsUnit::request(int in, Packet* req) {
  ++requests_;
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
  // Counted in packets: a member's answer may come in parts (Endpoint::answer_part).
  ctx.remaining = uint32_t(members_.size()) * req->npackets;
  ctx.out = in;
  // A request of several packets arrives at its head (cut-through): the reads go out
  // now, their tails no earlier than its tail; its buffer is freed when that is in.
  const uint64_t now = SwitchFrame::now();
  const uint64_t req_tail = std::max(now, req->tail_ps);
  frame().release_rx(in, req, req_tail - now);
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
    r->inject_ps = now;
    r->head_ps = now;
    r->tail_ps = req_tail;
    frame().emit(m.ports[size_t(j) % m.ports.size()], r);
  }
}

void NvlsUnit::engine_push(Engine& e, Packet* p) {
  const uint64_t t = SwitchFrame::now();
  e.q.push(p);
  e.queued += p->payload_bytes;
  e.depth.set(t, e.queued);
  if (e.q.size() == 1) engine_start(e, t);
}

// The head of `e` starts now: it is done when its input bytes have streamed through.
void NvlsUnit::engine_start(Engine& e, uint64_t t) {
  const Packet* p = e.q.front();
  const uint64_t dur = e.rate_Bps ? transfer_ps(p->payload_bytes, e.rate_Bps * 8) : 0;
  e.done_at = t + dur;
  e.busy_ps += dur;
  SwitchFrame::wake_at(e.alarm, e.done_at);
}

void NvlsUnit::engine_wake(Engine& e, bool reduce) {
  ++g_kernel_events;
  const uint64_t t = SwitchFrame::now();
  while (!e.q.empty() && e.done_at <= t) {
    Packet* p = e.q.pop();
    e.queued -= p->payload_bytes;
    e.busy_bytes += p->payload_bytes;
    e.depth.set(t, e.queued);
    // Taken in at its head; the buffer is freed when its tail has passed through.
    const uint64_t tail = tail_through(e, p);
    frame().release_rx(p->route_port, p, tail > t ? tail - t : 0);
    consumed_ += p->payload_bytes;
    if (reduce)
      reduced(p);
    else
      replicate(p);
    if (!e.q.empty()) engine_start(e, t);
  }
}

uint64_t NvlsUnit::tail_through(const Engine& e, const Packet* p) {
  if (p->npackets <= 1) return 0;  // one packet: it is all in when taken
  const uint64_t last = p->last_packet_payload();
  return p->tail_ps + (e.rate_Bps ? transfer_ps(last, e.rate_Bps * 8) : 0);
}

void NvlsUnit::reduced(Packet* p) {
  FABRICSIM_ASSERT(p->ctx < ctx_.size() && ctx_[p->ctx].req,
                   frame().display_name() + ": NVLS response for no open reduction");
  ReduceCtx& ctx = ctx_[p->ctx];
  if (ctx.req->npackets > 1) {
    // p->head_ps: when its first packet arrived here. The engine's FIFO took the whole
    // transaction then (its work bounds the tail: now); per packet the engine, faster than
    // the links that feed it, reduces each packet as it arrives. An answer in parts
    // (Endpoint::answer_part): its first part (at the request's offset) bounds the head.
    if (p->offset == ctx.req->offset) {
      const uint64_t first = std::min(p->payload_bytes, p->packet_payload);
      ctx.head_ps = std::max(
          ctx.head_ps, p->head_ps + (reduce_.rate_Bps ? transfer_ps(first, reduce_.rate_Bps * 8) : 0));
    }
    ctx.tail_ps = std::max({ctx.tail_ps, SwitchFrame::now(), tail_through(reduce_, p)});
  }
  FABRICSIM_ASSERT(p->npackets <= ctx.remaining,
                   frame().display_name() + ": more NVLS answer packets than the reduction reads");
  ctx.remaining -= p->npackets;
  if (ctx.remaining > 0) {
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
  // The NVLS path's own latency: the result joins its egress queue no earlier (leave()).
  // Cut-through, as a switch forwards a transaction: its first packet is reduced when
  // every member's first packet is in, its last no earlier than every member's last
  // (per packet the two are the same). The port serialises it no faster than the line.
  const uint64_t now = SwitchFrame::now();
  p->head_ps = (ctx.head_ps ? ctx.head_ps : now) + params_.latency_ps;
  p->tail_ps = std::max(now, ctx.tail_ps) + params_.latency_ps;
  emitted_ += p->payload_bytes;
  const int out = ctx.out;
  PacketPool::global().release(req);
  ctx = ReduceCtx{};
  free_ctx_.push_back(p->ctx);
  leave(out, p);
}

void NvlsUnit::replicate(Packet* p) {
  ++stores_;
  const int j = link_index_[p->route_port];
  const uint64_t now = SwitchFrame::now();
  const uint64_t tail = std::max(now, tail_through(mcast_, p));
  for (size_t k = 0; k < members_.size(); ++k) {
    const Member& m = members_[k];
    Packet* r = p;
    if (k + 1 < members_.size()) {
      r = PacketPool::global().acquire();
      *r = *p;
    }
    r->dst = m.endpoint;
    r->kind = PacketKind::kNvlsData;
    r->head_ps = now + params_.latency_ps;  // as a result (cut-through)
    r->tail_ps = tail + params_.latency_ps;
    emitted_ += r->payload_bytes;
    leave(m.ports[size_t(j) % m.ports.size()], r);
  }
}

// Results and replicas leave the unit's pipeline in the order of their head times (ties
// in the order they entered) and join their egress queue then, behind what is already in
// it. Queued at once with a later head (before 2026-12-06), a packet still in the
// pipeline held its port and everything queued behind it: 7.1M waits for a head not yet
// due on DGX H100 with 2 NVLS channels at 128 MiB (docs/architecture.md).
void NvlsUnit::leave(int out, Packet* p) {
  const uint64_t now = SwitchFrame::now();
  if (p->head_ps <= now && (pipeline_.empty() || pipeline_.front().head_ps > now)) {
    frame().emit(out, p);
    return;
  }
  pipeline_.push_back(InPipeline{std::max(p->head_ps, now), pipeline_seq_++, out, p});
  std::push_heap(pipeline_.begin(), pipeline_.end(), std::greater<InPipeline>());
  SwitchFrame::wake_at(pipeline_alarm_, pipeline_.front().head_ps);
}

void NvlsUnit::pipeline_wake() {
  ++g_kernel_events;
  const uint64_t now = SwitchFrame::now();
  while (!pipeline_.empty() && pipeline_.front().head_ps <= now) {
    std::pop_heap(pipeline_.begin(), pipeline_.end(), std::greater<InPipeline>());
    const InPipeline e = pipeline_.back();
    pipeline_.pop_back();
    frame().emit(e.out, e.p);
  }
  if (!pipeline_.empty()) SwitchFrame::wake_at(pipeline_alarm_, pipeline_.front().head_ps);
}

void NvlsUnit::reset_dynamic_state() {
  FABRICSIM_ASSERT(pipeline_.empty(),
                   frame().display_name() + ": reset with NVLS packets in the pipeline");
  pipeline_seq_ = 0;
}

void NvlsUnit::add_stats(nlohmann::json& j, uint64_t now_ps) const {
  j["nvls_reductions"] = requests_;
  j["nvls_multicast_stores"] = stores_;
  j["nvls_reduce_input_bytes"] = reduce_.busy_bytes;
  j["nvls_reduce_engine_utilisation"] = now_ps ? double(reduce_.busy_ps) / double(now_ps) : 0.0;
  j["nvls_reduce_queue_max_bytes"] = reduce_.depth.max();
  j["nvls_multicast_input_bytes"] = mcast_.busy_bytes;
  j["nvls_multicast_engine_utilisation"] = now_ps ? double(mcast_.busy_ps) / double(now_ps) : 0.0;
  j["nvls_bytes_emitted"] = emitted_;
}

// ---------------------------------------------------------------------------------------
// NVLS as a switch feature: its parameters and checks (the reduction engine's throughput,
// the datatypes it reduces) and its part of a switch's model.


namespace {

void resolve(NvlsParams& n, const ParamReader& r) {
  n.reduce_Bps = optional_bandwidth_Bps(r, "nvls_reduce_bandwidth");
  n.multicast_Bps = optional_bandwidth_Bps(r, "nvls_multicast_bandwidth");
  if (n.enabled && n.reduce_Bps == 0)
    r.fail("nvls", "nvls is true but nvls_reduce_bandwidth is not set",
           "set the reduction engine's throughput, e.g. nvls_reduce_bandwidth: 2000GB/s");
  const std::string& list = r.str("nvls_datatypes");
  const std::vector<std::string> known = datatype_names();
  for (size_t pos = 0; pos <= list.size();) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    std::string t = list.substr(pos, comma - pos);
    t.erase(0, t.find_first_not_of(' '));
    t.erase(t.find_last_not_of(' ') + 1);
    if (std::find(known.begin(), known.end(), t) == known.end())
      r.fail("nvls_datatypes", "'" + t + "' is not a datatype",
             "a comma-separated list; " + did_you_mean(t, known));
    n.datatypes.push_back(t);
    pos = comma + 1;
  }
}

}  // namespace

SwitchFeatureKind nvls_feature() {
  using K = ParamKind;
  SwitchFeatureKind f;
  f.name = "nvls";
  f.params = param_block<NvlsParams>(
      "nvls",
      {bind(param("nvls", K::kBool, "false", "",
                  "In-switch reduction and multicast (NVLink SHARP, NVSwitch3 and later): the "
                  "switch reads a range from every endpoint linked to it, reduces it and "
                  "returns the sum, and replicates multicast stores (models/nvlink/nvls_unit.h). "
                  "Needed by the nvls algorithms."),
            &NvlsParams::enabled),
       param("nvls_reduce_bandwidth", K::kString, "none", "GB/s (input bytes, per chip)",
             "Reduction engine throughput: input bytes it consumes per second, shared by the "
             "chip's ports (a bandwidth such as 2000GB/s). Required when nvls is true."),
       param("nvls_multicast_bandwidth", K::kString, "none", "GB/s (input bytes, per chip)",
             "Multicast engine throughput: stored bytes it replicates per second (a "
             "bandwidth); none = not a bottleneck (replicas still serialise on every output "
             "link)."),
       bind(param("nvls_latency", K::kTime, "0ns", "ns",
                  "The NVLS path's own latency: every reduction result and multicast "
                  "replica the unit sends joins its egress queue this long after it is "
                  "made (the port sends other traffic meanwhile)."),
            &NvlsParams::latency_ps),
       param("nvls_datatypes", K::kString, "float,half,bfloat16", "",
             "Comma-separated element types the reduction engine supports; an nvls "
             "reduction of another type is a config error.")},
      resolve);
  f.create = [](const std::any& p) -> std::unique_ptr<SwitchFeature> {
    const NvlsParams& n = std::any_cast<const NvlsParams&>(p);
    if (!n.enabled) return nullptr;
    return std::make_unique<NvlsUnit>(n);
  };
  return f;
}

}  // namespace fabricsim
