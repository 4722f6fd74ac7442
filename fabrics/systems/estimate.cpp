#include "fabrics/systems/estimate.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <fstream>

#include "models/core/units.h"
#include "models/endpoint/endpoint_params.h"
#include "models/link/link_params.h"

namespace fabricsim {

namespace {

std::string bytes_text(double b) {
  char buf[32];
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (b >= 1024 && u < 5) {
    b /= 1024;
    ++u;
  }
  std::snprintf(buf, sizeof buf, u ? "%.1f%s" : "%.0f%s", b, unit[u]);
  return buf;
}

std::string wall_text(double s) {
  char buf[48];
  if (s < 120)
    std::snprintf(buf, sizeof buf, "%.0f s", std::max(1.0, s));
  else if (s < 7200)
    std::snprintf(buf, sizeof buf, "%.0f minutes", s / 60);
  else if (s < 3 * 86400)
    std::snprintf(buf, sizeof buf, "%.0f hours", s / 3600);
  else
    std::snprintf(buf, sizeof buf, "%.3g days", s / 86400);
  return buf;
}

// Mean links crossed between ranks, from up to four ranks' breadth-first distances
// (traffic relays through forwarding devices only).
double mean_hops(const SystemSpec& s) {
  const topo::Graph& g = s.graph;
  double sum = 0, count = 0;
  const size_t n = s.ranks.size(), samples = std::min<size_t>(4, n);
  std::vector<int> dist(g.devices.size());
  std::deque<int> q;
  for (size_t k = 0; k < samples; ++k) {
    const int src = g.endpoints[size_t(s.ranks[k * n / samples])];
    std::fill(dist.begin(), dist.end(), -1);
    dist[size_t(src)] = 0;
    q.assign(1, src);
    while (!q.empty()) {
      const int u = q.front();
      q.pop_front();
      if (u != src && !g.devices[size_t(u)].forwards) continue;
      for (int p = 0; p < g.devices[size_t(u)].ports; ++p) {
        const topo::LinkEnd nb = g.peer(u, p);
        if (nb.device < 0 || dist[size_t(nb.device)] >= 0) continue;
        dist[size_t(nb.device)] = dist[size_t(u)] + 1;
        q.push_back(nb.device);
      }
    }
    for (int id : s.ranks) {
      const int d = dist[size_t(g.endpoints[size_t(id)])];
      if (d > 0) {
        sum += d;
        ++count;
      }
    }
  }
  return count > 0 ? sum / count : 1;
}

uint64_t read_number(const std::string& path) {
  std::ifstream f(path);
  uint64_t v = 0;
  return f >> v ? v : 0;
}

}  // namespace

std::string ResourceEstimate::text() const {
  std::string parts_text;
  for (size_t i = 0; i < parts.size() && i < 3; ++i)
    if (parts[i].second >= 1 << 20)
      parts_text += (parts_text.empty() ? "" : ", ") + parts[i].first + " " +
                    bytes_text(parts[i].second);
  char hops[32];
  std::snprintf(hops, sizeof hops, "%.3g", transaction_hops);
  return bytes_text(memory_bytes) + (parts_text.empty() ? "" : " (" + parts_text + ")") + ", " +
         hops + " transaction-hops (~" + wall_text(wall_s) + " of wall time)";
}

namespace {

// The flow level: no port or device models, no routes table, no packets; schedules and
// flows of one period of ranks when the run is folded (assumed: a period of two nodes, as
// the rail-aligned ring; a fold that fails at run time builds every rank's, and the
// address-space limit stops it).
ResourceEstimate estimate_flow(const SystemSpec& s, const WorkloadCost& w) {
  using namespace cost;
  const topo::Graph& g = s.graph;
  const double n = double(std::max<size_t>(1, s.ranks.size()));
  double simulated = n;
  if (s.simulation.flow_fold && s.domain_size > 0) simulated = std::min(n, 2.0 * s.domain_size);
  const double share = simulated / n;
  const double hops = mean_hops(s);
  ResourceEstimate e;
  e.parts = {{"links", double(g.links.size()) * kFlowLinkBytes},
             {"schedules", w.schedule_ops * kOpBytes * share},
             {"paths", std::min(w.messages * share, simulated * n) * hops * kFlowPathBytes},
             {"functional buffers", w.data_bytes}};
  std::stable_sort(e.parts.begin(), e.parts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  e.memory_bytes = kBaseBytes;
  for (const auto& p : e.parts) e.memory_bytes += p.second;
  e.transaction_hops = w.messages * share * hops;
  e.wall_s = e.transaction_hops / kFlowHopsPerWallSecond;
  return e;
}

}  // namespace

ResourceEstimate estimate_resources(const SystemSpec& s) {
  using namespace cost;
  const topo::Graph& g = s.graph;
  if (s.simulation.flow()) {
    WorkloadCost w;
    if (const WorkloadKind* k = workloads().find(s.workload.type); k && k->estimate)
      w = k->estimate(s);
    return estimate_flow(s, w);
  }
  ResourceEstimate e;
  double ports = 0, models = 0, packets = 0;
  for (size_t d = 0; d < g.devices.size(); ++d) {
    const DeviceType& t = s.type_of(int(d));
    models += t.kind->model_bytes ? t.kind->model_bytes(t) : kDeviceBytes;
  }
  WorkloadCost w;
  if (const WorkloadKind* k = workloads().find(s.workload.type); k && k->estimate)
    w = k->estimate(s);
  // Transactions in flight: at most both receive buffers of every link full of the
  // workload's largest transactions (its largest piece, aggregated up to aggregate_bytes,
  // else one packet), plus one staged per port.
  const uint64_t agg = s.simulation.aggregate_bytes;
  double min_payload = 1e18, min_txn = 1e18;
  for (const topo::Link& l : g.links) {
    ports += 2 * kPortBytes;
    const LinkParams& lp = s.link_types.at(l.type);
    double txn = lp.packet_payload;
    if (agg > lp.packet_payload && w.piece_bytes >= double(s.simulation.aggregate_min_message))
      txn = std::min(double(agg), std::max(txn, w.piece_bytes));
    const double wire = double(lp.framing->packet_wire_bytes(lp.packet_payload)) *
                        std::ceil(txn / lp.packet_payload);
    packets += 2 * (std::ceil(double(lp.rx_buffer_bytes) / wire) * lp.vcs + 1) * kPacketBytes;
    min_payload = std::min(min_payload, double(lp.packet_payload));
    min_txn = std::min(min_txn, double(aggregate_txn_packets(lp, agg) * lp.packet_payload));
  }
  // NVLS: the switch turns each reduce request packet into a read to every member of
  // the group (answered one for one), and each multicast store packet into a replica to
  // every member. The requests of the schedules' windows go out at once (they are
  // headers), and the stores of the pieces reduced before them follow, so per packet
  // requested: the request, L reads or answers and L replicas, waiting in the switches'
  // egress queues and the members' answer queues, which no credit bounds (measured at the
  // peak: DGX H100 nvls 64 MiB 0.11M requests, 0.81M reads, 0.06M answers, 0.81M replicas).
  // Replicas of stores that outrun the switch's egress are not bounded by this: a 16-node
  // hierarchical_nvls run per packet held 12M at 256 MiB, and more as it went on (the
  // switch replicates a store at once; docs/performance.md, "NVLS packets in flight").
  // What stops such a run is the address-space cap (fabrics/cli/app.cpp), or the machine.
  // Aggregated (group messages from the smaller of aggregate_min_message and
  // aggregate_min_group_message, as the endpoints take it), a request of several packets
  // is one transaction and fans out as one read per member: counted per the smallest
  // transaction a link's credit loop allows.
  // With aggregate_round_robin_packets under the protocol model, a message that shares a
  // port moves one packet per turn, and the NVLS channels' requests share every port:
  // their reads and answers in flight are counted per packet (16 x DGX H100, 16 MiB: 468
  // MiB peak with the option, 158 aggregated in whole turns, 476 per packet); so are the
  // transaction-hops, below, a bound: the messages alone on their ports still move as
  // transactions (20.6M there, 7.5M in whole turns, 57.1M per packet).
  // (With its value nvls, only the group messages do, so only a workload with in-switch
  // collectives is counted so.)
  const PacketTurns turns = s.simulation.packet_turns();
  const bool shared_turns_in_packets =
      s.workload.protocol_model() &&
      (turns == PacketTurns::kAll ||
       (turns == PacketTurns::kGroupOnly && w.nvls_request_bytes > 0));
  if (w.nvls_request_bytes > 0 && min_payload < 1e18) {
    double unit = min_payload;
    const double group_min = double(
        std::min(s.simulation.aggregate_min_message, s.simulation.aggregate_min_group_message));
    if (agg > min_payload && w.piece_bytes >= group_min && !shared_turns_in_packets)
      unit = std::max(min_payload, std::min(min_txn, w.piece_bytes));
    packets += w.nvls_request_bytes / unit * (2 * w.nvls_group + 1) * kPacketBytes;
  }
  const double routes = double(g.devices.size()) * double(g.endpoints.size()) * kRoutePairBytes;
  e.parts = {{"ports", ports},
             {"device models", models},
             {"routes", routes},
             {"schedules", w.schedule_ops * kOpBytes},
             {"packets in flight", packets},
             {"functional buffers", w.data_bytes},
             {"graph", double(g.links.size()) * kGraphLinkBytes}};
  std::stable_sort(e.parts.begin(), e.parts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  e.memory_bytes = kBaseBytes;
  for (const auto& p : e.parts) e.memory_bytes += p.second;
  // Work: payload in transactions of the aggregate size where messages are aggregated,
  // one packet otherwise; every message also ends in a transaction of its own and, with
  // fence_flag, an ack and a flag; each crosses the mean path.
  const WorkloadSpec& wl = s.workload;
  const double packet = min_payload < 1e18 ? min_payload : 1;
  const double big_txn = agg > packet ? double(agg) : packet;
  const double per_message = 1 + (wl.sync.fence_flag ? 2 : 0);
  // Protocol ll's stores reach the link in packets of the ranks' ll_store_bytes.
  double ll_packet = packet;
  if (!s.ranks.empty())
    if (const EndpointParams* ep =
            s.type_of(g.endpoints[size_t(s.ranks[0])]).find<EndpointParams>("endpoint");
        ep && ep->ll_store_bytes)
      ll_packet = std::min(packet, double(ep->ll_store_bytes));
  // An endpoint cuts an aggregated message over the ports that reach its destination, a
  // share to each free port, so a piece smaller than aggregate_bytes times the ports goes
  // in smaller transactions (a 32 KiB NVLS piece over a GPU's 18 NVLink ports: ~14 packets
  // each). With aggregate_round_robin_packets under the protocol model, messages that
  // share a port go one packet per turn: counted per packet, the bound (those alone on
  // their ports still go as transactions: 2 x DGX H100 hierarchical_nvls 32 MiB, 9.4M
  // transaction-hops against 14.2M per packet; 1.05M without the option).
  double agg_unit = big_txn;
  if (shared_turns_in_packets) {
    agg_unit = packet;
  } else if (!s.ranks.empty()) {
    const int spread = g.devices[size_t(g.endpoints[size_t(s.ranks[0])])].ports;
    agg_unit = std::clamp(w.piece_bytes / std::max(1, spread), packet, big_txn);
  }
  e.transaction_hops = (w.aggregated_bytes / agg_unit +
                        (w.payload_bytes - w.aggregated_bytes - w.ll_bytes) / packet +
                        w.ll_bytes / ll_packet + w.messages * per_message) *
                       mean_hops(s);
  e.wall_s = e.transaction_hops / kHopsPerWallSecond;
  return e;
}

uint64_t machine_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  uint64_t ram = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : (8ull << 30);
  // A container's limit (cgroup v2, then v1) when it is the smaller.
  for (const char* f : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    const uint64_t limit = read_number(f);
    if (limit > 0 && limit < ram) ram = limit;
  }
  return ram;
}

uint64_t default_memory_limit() { return machine_memory() / 4 * 3; }

uint64_t address_space_cap(uint64_t limit, uint64_t machine) {
  constexpr uint64_t kMargin = 2ull << 30;  // holds the heap's 1.5 GiB reservation (main.cpp)
  const uint64_t wide = limit + limit / 2 + kMargin;
  return std::min(wide, std::max(limit + kMargin, machine));
}

namespace {
uint64_t g_memory_cap = 0;
}  // namespace

void set_memory_cap(uint64_t bytes) { g_memory_cap = bytes; }

uint64_t memory_limit(const SystemSpec& s) {
  const uint64_t limit =
      s.simulation.memory_limit ? s.simulation.memory_limit : default_memory_limit();
  return g_memory_cap ? std::min(limit, g_memory_cap) : limit;
}

void check_resources(SystemSpec& s, const SpecSources& src) {
  const ResourceEstimate e = estimate_resources(s);
  s.estimate = {e.memory_bytes, e.transaction_hops, e.wall_s, e.text()};
  const uint64_t limit = memory_limit(s);
  if (!(e.memory_bytes <= double(limit))) {  // also refuses a NaN estimate
    std::string parts;
    for (size_t i = 0; i < e.parts.size() && i < 3; ++i)
      parts += (parts.empty() ? "" : ", ") + e.parts[i].first + " " + bytes_text(e.parts[i].second);
    src.simulation.fail(
        "memory_limit",
        "this run needs an estimated " + bytes_text(e.memory_bytes) + " (" + parts + "; " +
            std::to_string(s.graph.devices.size()) + " devices, " +
            std::to_string(s.graph.links.size()) + " links, " +
            std::to_string(s.graph.endpoints.size()) + " endpoints), more than the memory "
            "limit of " + bytes_text(double(limit)) +
            (s.simulation.memory_limit ? "" : " (three quarters of this machine's memory)"),
        "shrink what dominates: fewer endpoints or ports (routes grow as devices x "
        "endpoints), input_queues: fifo on switches with many ports (voq grows as ports^2), "
        "fewer channels, sizes or layers (schedules); or raise simulation.memory_limit on a "
        "machine that has the memory");
  }
  const double wall_limit_s = double(s.simulation.wall_limit_ps) * 1e-12;
  if (!(e.wall_s <= wall_limit_s)) {
    char hops[32];
    std::snprintf(hops, sizeof hops, "%.3g", e.transaction_hops);
    src.simulation.fail(
        "wall_limit",
        "the workload needs an estimated " + std::string(hops) + " transaction-hops, about " +
            wall_text(e.wall_s) + " of wall time at " +
            std::to_string(int(cost::kHopsPerWallSecond)) + " per second, more than "
            "simulation.wall_limit " + format_time_ps(s.simulation.wall_limit_ps),
        "shrink the work: aggregate large messages (simulation.aggregate_bytes: 16KiB with "
        "aggregate_min_message: 512KiB), fewer or smaller sizes, a smaller model or fewer "
        "tokens; or raise simulation.wall_limit");
  }
}

}  // namespace fabricsim
