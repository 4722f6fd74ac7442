// Topology-aware alpha-beta cost of a collective schedule, for `algorithm: auto` (an
// NCCL-tuner-like choice per message size). Plain C++, no SystemC.
//
// Model. A schedule (program.h) is costed as
//     T(S) = latency + S * s_per_byte
// with both terms taken from the schedule itself on the given fabric, not from a formula
// per algorithm:
//   * latency: the longest chain of dependent messages, each hop src -> dst costing
//     FabricCosts::path(src, dst).alpha_s (a send starts when its deps are done, a recv is
//     done alpha after its matching send started). Ring all-reduce: 2(n-1) hops; tree:
//     up and down the depth; hierarchical: 2(L-1) hops inside nodes + 2(N-1) across.
//     In-switch ops (NVLS): a kNvlsReduce is done NvlsPath::reduce_alpha_s after it
//     starts (request up, reads down, answers up, engine, result down); a kNvlsStore's
//     replicas reach the group's kRecvs NvlsPath::store_alpha_s after it starts.
//   * bandwidth: every rank's bytes are summed per port group (the ports that reach the
//     destination: a GPU's NVLink ports for its node, its NIC for other nodes), divided
//     by that group's payload rate; the busiest rank sets s_per_byte. Messages in flight
//     at once share their group's rate; a rank's groups run in parallel (its time is the
//     max over groups), except for all_reduce hierarchical, whose NVLink and NIC phases
//     are costed in sequence (the sum): measured on 16 x DGX H100 they do not overlap
//     (64 MiB: 642 us simulated, 326 + 316 us for the two phase kinds alone), while on
//     2 nodes the short NIC phase hides under the NVLink ones (docs/collectives.md).
//     The tree across nodes (domain_size < ranks) likewise: a piece goes up its node's
//     chain, across the nodes and down the chain, and with NCCL's few pieces per stream
//     the levels barely overlap (2 x DGX H100, 64 MiB tree/simple: 449.58 us simulated,
//     NVLink 326 + NIC 169 us).
//     Schedules with in-switch ops are asymmetric (the switch -> GPU direction carries
//     the switches' reads, the results and every replica), so for them both directions
//     of a group are counted and the group's time is the busier one; header-only
//     packets (NVLS requests and reads) count as NvlsPath::req_bytes / read_bytes of
//     payload per byte they ask for. The switches' reduction and multicast engines are
//     resources too: a reduction of B bytes over G ranks feeds G B of input to the
//     engines of the requester's switches (each its share of the requester's links), a
//     store B to its multicast engines; an engine's time is its input over its rate,
//     and a rank's NVLS group takes at least as long as the slowest engine it feeds.
// Rank classes (any rank count). With FabricCosts::period P, schedule_cost asks the
// generator for ranks [0, P] only (CollParams::rank_limit; ring and hierarchical
// all-reduce honour it) and, where rank P runs rank 0's program shifted by P (the flow
// level's fold check; P = period, else 2 x period: a rail-aligned ring's period is two
// domains), costs the
// representatives [0, P) alone: their bytes per group, streams and dependency chain (a
// message to rank d arrives at d mod P from its sender shifted by the same multiple of
// P). Time and memory grow with P times a program, not with every rank's program; the
// result equals the full costing's (tests/model/test_cost_classes.cpp checks the shipped
// configs). Other schedules (no period, in-switch ops, generators that build every rank)
// are costed from every rank's program: tree and halving-doubling have O(log n) ops per
// rank, so that is O(n log n) too; direct and all-to-all have n per rank.
// Pipelining is taken in the fine-piece limit (latency and bandwidth terms add, as in
// alpha_beta_time_s); reduction arithmetic (except the switches' engines), queueing and
// credit effects are not in it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "models/collectives/protocol.h"

namespace fabricsim::coll {

struct PathCost {
  double alpha_s = 0;  // latency of one dependent step src -> dst (s), idealised transport
  int group = 0;       // the sender's port group that carries src -> dst (ids per rank)
  double trip_s = 0;   // one small packet's trip src -> dst (s)
  bool proxy = false;  // the route leaves src through a scale-out NIC port: under the
                       // protocol model every step goes through NCCL's network proxy
                       // (engine.h, "Proxy"): store and forward of the whole step
};

// One protocol under the GPU protocol model (engine.h), as the cost model sees it.
struct ProtocolCosts {
  double trips = 1;        // small-packet trips per dependent step: Simple's data, ack and
                           // flag; LL/LL128: the lines themselves
  double sync_s = 0;       // GPU time per dependent step: Simple's fence and poll, LL's poll
  double wire_factor = 1;  // link bytes per data byte against full packets of data: the
                           // line format, and LL's unmerged small stores
  double channel_Bps = 0;  // a channel's pass rate in protocol bytes/s (0: unlimited)
  double line_factor = 1;  // protocol bytes per data byte (protocol_bytes)
  // A dependent step over a proxy hop (PathCost::proxy): one trip (the step's RDMA write;
  // no ack or flag crosses the network) plus proxy_sync_s: Simple: the writer's local
  // fence, the send proxy's post, the receive proxy's poll and flush, the reader's poll of
  // the tail; LL/LL128: the post and the reader's poll of the lines. The step's own
  // serialisation on the NIC is added per size (AlgoCost::time_s).
  double proxy_sync_s = 0;
  // How long a send holds its stream (engine.h: the thread block moves on when the send
  // completes): send_trips small-packet trips plus send_s. Simple: the data and the ack,
  // then the fence (2, fence_latency); LL/LL128: its pass only (0, 0). Where a rank's
  // outgoing hop is much slower than its incoming one (a spine hop after leaf hops) the
  // stream's next step waits for this rather than for its receive.
  double send_trips = 0;
  double send_s = 0;
  // A slot of a connection over a proxy hop comes back to the writer this long after the
  // reader consumed its step, plus the trip back: the receive proxy posts the receive of
  // the slot, its clear-to-send crosses the network (engine.h, "Proxy"; proxy_post_latency).
  double proxy_head_s = 0;
};

// One rank's in-switch (NVLS) path: its links into NVLS switches and what they cost.
struct NvlsPath {
  int group = -1;          // its port group of those links (as PathCost::group); -1: none
  double req_bytes = 0;    // payload-equivalent bytes on the group per byte a request
                           // (GPU -> switch, header only) asks for: header wire bytes /
                           // a full data packet's wire bytes
  double read_bytes = 0;   // the same for the switch's reads (switch -> GPU)
  double reduce_alpha_s = 0;  // kNvlsReduce of one small packet, start to result back
  double store_alpha_s = 0;   // kNvlsStore of one small packet, start to a member's replica
  // (NVLS switch index, share of this rank's NVLS traffic it takes: its links' rate over
  // the rank's NVLS links' rate); the shares sum to 1.
  std::vector<std::pair<int, double>> switches;
};

struct NvlsEngine {
  double reduce_Bps = 0;     // reduction engine: input bytes per second (0: no limit)
  double multicast_Bps = 0;  // multicast engine: input bytes per second (0: no limit)
};

struct FabricCosts {
  int ranks = 0;
  int domain_size = 0;  // ranks per node (0: one node); passed to make_schedule
  // Rank classes: > 0 when shifting every rank by `period` (mod ranks) is a symmetry of
  // the fabric (path(r + period, d + period) == path(r, d) up to the numbering of r's
  // groups, and their rates); 0: none known. schedule_cost then builds and costs only the
  // representatives of schedules with the same symmetry (see schedule_cost).
  int period = 0;
  std::function<PathCost(int src, int dst)> path;
  std::function<double(int rank, int group)> group_Bps;  // payload bytes/s of that group
  std::vector<NvlsPath> nvls;             // per rank; empty: no NVLS (in-switch ops throw)
  std::vector<NvlsEngine> nvls_switches;  // per NVLS switch index of NvlsPath::switches
  // The GPU protocol model (sync: fence_flag): per protocol costs, and the fixed cost of
  // every collective (kernel launch and completion). Off: the idealised transport, where
  // PathCost::alpha_s is the step latency and none of this applies.
  const std::vector<std::vector<int>>* rings = nullptr;  // CollParams::rings (not owned)
  bool protocol_model = false;
  ProtocolCosts protocols[kProtocols];
  double base_s = 0;
  uint32_t slots = 0;  // buffer slots per connection (SyncProtocol::slots); 0: unbounded
};

// T(S) = base + max(latency + S * s_per_byte, channel time), or for schedules without
// streams base + max(latency + S * s_per_byte, connection time) (connection_s, below).
// The channel and connection terms exist under the protocol model only. Channel time: the
// busiest thread block runs `stream_steps` dependent steps per collective, each cut into
// pieces of at most piece_bytes, every piece paying piece_sync_s, and passes its share of
// the rank's protocol bytes (sent_per_byte x S x line factor / channels) at channel_Bps.
struct AlgoCost {
  double latency_s = 0;
  double s_per_byte = 0;
  double base_s = 0;
  double stream_steps = 0;     // sends of the busiest stream in the reference schedule
  double sent_per_byte = 0;    // bytes the busiest rank sends per byte of S
  double piece_sync_s = 0;     // per piece of a stream: its dependent step's latency (the
                               // mean over the longest chain's non-proxy hops)
  // The pipeline's fill: the longest dependent chain has chain_steps sends; beyond the
  // busiest stream's own steps each forwards a whole piece (its pass at channel_Bps and its
  // dependent step) before the next hop can start. A tree over D ranks on one chain has
  // 2 D such steps per piece and one send per stream: without this term it cost a small
  // packet's trip per hop (NVL576, 1 MiB: 732 us predicted, 4,918 simulated).
  double chain_steps = 0;
  // Stream queues on that chain: a tree head's down stream sends the piece to its chain
  // child and its child nodes one after another (their program order), so the hop to the
  // last of them waits for the others' passes and holds. chain_queued: such waiting passes
  // on the longest chain (on a tie, the chain with most); chain_queued_hold_s: the holds
  // beyond the passes (Simple: a send's ack and fence). The first piece pays them on top
  // of the fill. 16 x DGX H100, tree/ll at 1 MiB: 7 passes of 3.64 us (the root serves 2
  // children, every other head on the critical branch 3).
  double chain_queued = 0;
  double chain_queued_hold_s = 0;
  double stream_msg_per_byte = 0;  // a stream's largest message per byte of S, reference
  // Schedules with several streams per channel (the tree: up and down of two trees, each
  // its own thread block in the engine): the pass term is the busiest stream's, its bytes
  // per byte of S in the reference; 0: one stream per channel (the ring), whose pass is
  // the channel's share of the rank's bytes.
  double stream_per_byte = 0;
  int ref_channels = 1;            // the reference schedule's channels
  double channel_Bps = 0;      // per channel, protocol bytes/s (0: unlimited)
  double line_factor = 1;      // protocol bytes per data byte
  int ranks_costed = 0;        // rank programs built and costed (rank classes: < ranks)
  // The network proxy (PathCost::proxy; zero where no route leaves through a NIC). A proxy
  // hop stores and forwards a whole piece: its GPU pass, then the proxy's post, then the
  // piece's serialisation on the NIC (shared by the channels that cross it), then the
  // trip. Per piece of the busiest stream the dependent step costs
  //     (1 - proxy_share) x piece_sync_s + proxy_share x (proxy_sync_s + piece line
  //     bytes / (proxy_Bps / max(1, channels x proxy_channel_frac)))
  // with proxy_share the fraction of proxy hops on the longest dependent chain (ring over
  // 2 nodes of 8: 2 hops in 16). The link term: the NIC moves whole steps as they are
  // posted, not a stream behind the latency chain, and the chain's hops with their
  // serialisation are in the pass term; with proxy hops the link term is therefore the
  // larger of its two bounds, max(latency, S x s_per_byte), not their sum, and proxy
  // groups count protocol bytes in full packets (line_factor; LL's small stores stay
  // inside the node).
  bool store_forward = false;  // some send of the schedule crosses a proxy hop
  double proxy_share = 0;
  double proxy_sync_s = 0;     // per proxy hop: one trip plus ProtocolCosts::proxy_sync_s
  double proxy_Bps = 0;        // the proxy hop's NIC group: payload bytes/s
  double proxy_channel_frac = 0;  // share of the reference channels that cross that NIC
  // Schedules without streams (hierarchical_nvls, hierarchical, direct, halving-doubling,
  // all-to-all, send/recv, torus) over proxy hops: the engine's connection is (writer,
  // reader, stream, channel), so every piece of one channel of such a schedule to one
  // peer shares one connection and its `slots` buffer slots (engine.h), and each channel
  // has its own (conn_per_channel; sends without a channel share one across the channels).
  // A slot is busy from the send's pass until the reader's
  // clear-to-send is back: the pass at channel_Bps, the proxy's step (conn_alpha_s: trip
  // and ProtocolCosts::proxy_sync_s), the step's serialisation on the NIC behind the
  // other steps in flight there, and the head (proxy_head_s and the trip back). At size S
  // and c channels the busiest connection carries conn_sends x pieces steps (shared:
  // conn_sends x c / ref_channels x pieces), ceil(steps / slots) rounds of them, while
  // conn_per_nic x c / ref_channels connections (shared: conn_per_nic) post theirs on the
  // same NIC; the last round only needs to arrive. The rounds
  // run from the first proxy send of the reference chain walk (conn_first_s, the fill: the
  // first NVLS reductions, their latency and conn_fill_s_per_byte) to the last proxy
  // arrival, then conn_drain_s (the stores); the
  // walk's own span between the two (conn_span_s: a chain of dependent hops, one piece
  // each) is the floor. The term is max'ed with the link term (AlgoCost::time_s).
  double conn_sends = 0;          // proxy sends of the busiest connection (reference)
  double conn_msg_per_byte = 0;   // its largest message per byte of S (reference)
  double conn_per_nic = 0;        // connections sharing that connection's NIC group (ref)
  bool conn_per_channel = false;  // its sends name their channel: one connection each
  double conn_alpha_s = 0;        // a proxy step's latency: trip + proxy sync
  double slot_cycle_s = 0;        // conn_alpha_s + proxy_head_s + the trip back
  double conn_first_s = 0, conn_span_s = 0, conn_drain_s = 0;  // reference chain walk
  // The fill's bandwidth (in-switch schedules): the first proxy steps wait for the first
  // window of NVLS reductions of every channel (kNvlsWindow each), and every member answers
  // each of them over its NVLS links: s per byte of a piece per channel.
  double conn_fill_s_per_byte = 0;
  uint32_t slots = 0;
  // The connection term (0 where it does not apply).
  double connection_s(double bytes, int channels, double piece_bytes) const;
  // One piece's dependent step in the pass term (piece: data bytes).
  double piece_sync_step_s(double piece, int channels) const;
  double time_s(double bytes, int channels = 1,
                double piece_bytes = 0) const;  // piece_bytes 0: one piece per step
};

// Cost of `algorithm` for `collective` on `f` (per-rank data S in bytes as in
// algorithms.h). Built from make_schedule with `channels` channels (they decide which
// rails a rail-aligned ring uses), one piece per message and a reference count of
// 8 * channels * ranks elements of `elem_bytes`. Throws InternalError for unknown names or
// a schedule that cannot complete.
// `slices` is CollParams::slices (all_reduce hierarchical, hierarchical_nvls): with one
// slice the phases of hierarchical run in turn, so its port groups' times add up; with
// M > 1 slices they overlap as a pipeline and the bandwidth term is the busiest group plus
// 1/M of the others (the pipeline's fill and drain). hierarchical_nvls moves every slice
// through its levels sub-block by sub-block (N = ranks / domain_size per slice), so its
// pipeline has M N stages: the busiest group plus 1/(M N) of the others.
// With f.protocol_model, costed for protocol `p`: every dependent step takes p's trips of
// a small packet plus its GPU sync, every byte p's wire factor, and the channel terms are
// filled in.
AlgoCost schedule_cost(const std::string& collective, const std::string& algorithm,
                       int channels, uint32_t elem_bytes, int root, const FabricCosts& f,
                       int slices = 1, Protocol p = Protocol::kSimple);
// The same for each of `protos`, from one build of the schedule.
std::vector<AlgoCost> schedule_costs(const std::string& collective, const std::string& algorithm,
                                     int channels, uint32_t elem_bytes, int root,
                                     const FabricCosts& f, int slices,
                                     const std::vector<Protocol>& protos);

}  // namespace fabricsim::coll
