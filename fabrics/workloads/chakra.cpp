#include "fabrics/workloads/chakra.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <queue>

#include <google/protobuf/io/coded_stream.h>

#include "chakra_et.pb.h"
#include "fabrics/systems/system_spec.h"
#include "fabrics/workloads/training_common.h"
#include "fabrics/workloads/workload.h"
#include "models/collectives/job.h"
#include "models/core/errors.h"
#include "models/core/units.h"

namespace fabricsim {

namespace {

namespace pb = fabricsim::chakra;

std::string node_where(const std::string& file, const pb::Node& n) {
  return file + ": node " + std::to_string(n.id()) + (n.name().empty() ? "" : " '" + n.name() + "'");
}

// The rank's nodes in file order; the metadata message is checked and dropped.
std::vector<pb::Node> read_trace(const std::string& file) {
  std::ifstream f(file, std::ios::binary);
  if (!f)
    throw InputError(file + ": cannot read the Chakra trace; workload.trace names the files "
                            "<trace>.<rank>.et, relative to the config file");
  const std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(data.data()),
                                            int(data.size()));
  std::vector<pb::Node> nodes;
  bool metadata = true;
  size_t index = 0;
  while (in.CurrentPosition() < int(data.size())) {
    const int at = in.CurrentPosition();
    uint32_t len = 0;
    if (!in.ReadVarint32(&len) || len > data.size() - size_t(in.CurrentPosition()))
      throw InputError(file + ": byte " + std::to_string(at) + ": message " +
                       std::to_string(index) + " is truncated (length prefix past the end)");
    const auto limit = in.PushLimit(int(len));
    bool ok;
    if (metadata) {
      pb::GlobalMetadata m;
      ok = m.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
    } else {
      pb::Node n;
      ok = n.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
      if (ok) nodes.push_back(std::move(n));
    }
    in.PopLimit(limit);
    if (!ok)
      throw InputError(file + ": byte " + std::to_string(at) + ": message " +
                       std::to_string(index) + " is not a Chakra " +
                       (metadata ? "GlobalMetadata" : "Node"));
    metadata = false;
    ++index;
  }
  if (metadata) throw InputError(file + ": empty; a Chakra trace starts with a GlobalMetadata");
  return nodes;
}

const pb::AttributeProto* attr(const pb::Node& n, const std::string& name) {
  for (const pb::AttributeProto& a : n.attr())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t int_attr(const std::string& file, const pb::Node& n, const std::string& name,
                 bool required, int64_t dflt = 0) {
  const pb::AttributeProto* a = attr(n, name);
  if (!a) {
    if (required)
      throw InputError(node_where(file, n) + ": missing attribute '" + name + "'");
    return dflt;
  }
  switch (a->value_case()) {
    case pb::AttributeProto::kInt32Val: return a->int32_val();
    case pb::AttributeProto::kInt64Val: return a->int64_val();
    case pb::AttributeProto::kUint32Val: return int64_t(a->uint32_val());
    case pb::AttributeProto::kUint64Val: return int64_t(a->uint64_val());
    default:
      throw InputError(node_where(file, n) + ": attribute '" + name + "' is not an integer");
  }
}

// The collective a COMM_COLL_NODE names, as fabricsim calls it.
std::string collective_of(const std::string& file, const pb::Node& n) {
  switch (int_attr(file, n, "comm_type", true)) {
    case pb::ALL_REDUCE: return "all_reduce";
    case pb::REDUCE: return "reduce";
    case pb::ALL_GATHER: return "all_gather";
    case pb::BROADCAST: return "broadcast";
    case pb::ALL_TO_ALL: return "alltoall";
    case pb::REDUCE_SCATTER: return "reduce_scatter";
    case pb::BARRIER: return "barrier";
    default:
      throw InputError(node_where(file, n) +
                       ": comm_type " + std::to_string(int_attr(file, n, "comm_type", true)) +
                       " is not supported; fabricsim runs ALL_REDUCE, REDUCE, ALL_GATHER, "
                       "BROADCAST, ALL_TO_ALL, REDUCE_SCATTER and BARRIER");
  }
}

// The nodes of one rank in dependency order (ties by id); a dependency on a missing node
// or a cycle is bad input.
std::vector<size_t> topo_order(const std::string& file, const std::vector<pb::Node>& nodes,
                               std::vector<std::vector<size_t>>& deps) {
  std::map<uint64_t, size_t> by_id;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!by_id.emplace(nodes[i].id(), i).second)
      throw InputError(node_where(file, nodes[i]) + ": node id used twice");
  deps.assign(nodes.size(), {});
  std::vector<std::vector<size_t>> users(nodes.size());
  std::vector<size_t> waiting(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<uint64_t> ids(nodes[i].data_deps().begin(), nodes[i].data_deps().end());
    ids.insert(ids.end(), nodes[i].ctrl_deps().begin(), nodes[i].ctrl_deps().end());
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (uint64_t d : ids) {
      const auto it = by_id.find(d);
      if (it == by_id.end())
        throw InputError(node_where(file, nodes[i]) + ": depends on node " + std::to_string(d) +
                         ", which this trace does not have");
      deps[i].push_back(it->second);
      users[it->second].push_back(i);
      ++waiting[i];
    }
  }
  std::priority_queue<std::pair<uint64_t, size_t>, std::vector<std::pair<uint64_t, size_t>>,
                      std::greater<>>
      ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!waiting[i]) ready.push({nodes[i].id(), i});
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t i = ready.top().second;
    ready.pop();
    order.push_back(i);
    for (size_t u : users[i])
      if (--waiting[u] == 0) ready.push({nodes[u].id(), u});
  }
  if (order.size() != nodes.size()) {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (waiting[i])
        throw InputError(node_where(file, nodes[i]) + ": its dependencies form a cycle");
  }
  return order;
}

}  // namespace

ChakraJob load_chakra(const std::string& prefix, const SystemSpec& spec) {
  const WorkloadSpec& w = spec.workload;
  const int n = int(spec.ranks.size());
  std::vector<std::string> files(static_cast<size_t>(n));
  std::vector<std::vector<pb::Node>> nodes(static_cast<size_t>(n));
  std::vector<std::vector<std::vector<size_t>>> deps(static_cast<size_t>(n));
  std::vector<std::vector<size_t>> order(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    files[r] = prefix + "." + std::to_string(r) + ".et";
    nodes[r] = read_trace(files[r]);
    order[r] = topo_order(files[r], nodes[r], deps[r]);
  }
  ChakraJob job;
  coll::JobBuilder b(n);
  std::vector<std::vector<size_t>> ref(static_cast<size_t>(n));  // per rank, node index -> job.nodes index
  for (int r = 0; r < n; ++r) ref[r].assign(nodes[r].size(), SIZE_MAX);
  auto dep_ops = [&](int r, size_t i) {
    std::vector<uint32_t> ops;
    for (size_t d : deps[r][i]) ops.push_back(job.nodes[ref[r][d]].join);
    return ops;
  };
  auto record = [&](int r, size_t i, const std::string& type, uint32_t join, uint64_t ps) {
    ChakraJob::NodeRef x;
    x.rank = r;
    x.id = nodes[r][i].id();
    x.name = nodes[r][i].name();
    x.type = type;
    x.join = join;
    x.duration_ps = ps;
    for (size_t d : deps[r][i]) x.deps.push_back(ref[r][d]);
    ref[r][i] = job.nodes.size();
    job.nodes.push_back(std::move(x));
  };
  auto elems = [&](uint64_t bytes) { return std::max<uint64_t>(1, (bytes + w.elem_bytes - 1) / w.elem_bytes); };
  // Point-to-point: the k-th message src -> dst with one comm_tag has one job tag.
  std::map<std::tuple<int, int, int64_t, size_t>, uint64_t> p2p_tag;
  std::map<std::tuple<int, int, int64_t>, size_t> sent, received;
  std::vector<size_t> cursor(size_t(n), 0);
  for (;;) {
    // Every rank runs ahead to its next collective node (or its end).
    for (int r = 0; r < n; ++r)
      for (; cursor[r] < order[r].size(); ++cursor[r]) {
        const size_t i = order[r][cursor[r]];
        const pb::Node& nd = nodes[r][i];
        if (nd.type() == pb::COMM_COLL_NODE) break;
        if (nd.type() == pb::COMP_NODE) {
          uint64_t ps = nd.duration_micros() * 1000000ull;
          if (!ps) {
            const int64_t ops = int_attr(files[r], nd, "num_ops", false);
            ps = uint64_t(double(ops) / w.training.device_tflops + 0.5);  // FLOPs / TFLOP/s = ps
          }
          record(r, i, "compute", b.compute(r, ps, dep_ops(r, i)), ps);
        } else if (nd.type() == pb::COMM_SEND_NODE || nd.type() == pb::COMM_RECV_NODE) {
          const bool send = nd.type() == pb::COMM_SEND_NODE;
          const int64_t peer = int_attr(files[r], nd, send ? "comm_dst" : "comm_src", true);
          if (peer < 0 || peer >= n || peer == r)
            throw InputError(node_where(files[r], nd) + ": " + (send ? "comm_dst " : "comm_src ") +
                             std::to_string(peer) + " is not another rank (0.." +
                             std::to_string(n - 1) + ")");
          const int64_t tag = int_attr(files[r], nd, "comm_tag", false);
          const int src = send ? r : int(peer), dst = send ? int(peer) : r;
          const size_t k = (send ? sent : received)[{src, dst, tag}]++;
          auto it = p2p_tag.find({src, dst, tag, k});
          if (it == p2p_tag.end()) it = p2p_tag.emplace(std::make_tuple(src, dst, tag, k), b.new_tag()).first;
          const uint64_t bytes = uint64_t(int_attr(files[r], nd, "comm_size", true));
          record(r, i, send ? "send" : "recv",
                 b.p2p(r, send ? coll::OpKind::kSend : coll::OpKind::kRecv, int(peer), elems(bytes),
                       it->second, dep_ops(r, i)),
                 0);
        } else {  // metadata and memory nodes: ordering points of no duration
          record(r, i, "other", b.delay(r, 0, dep_ops(r, i)), 0);
        }
      }
    // Every rank is at a collective or at its end: the k-th collectives meet.
    int at = -1;
    for (int r = 0; r < n; ++r)
      if (cursor[r] < order[r].size()) at = r;
    if (at < 0) break;
    const pb::Node& first = nodes[at][order[at][cursor[at]]];
    const std::string c = collective_of(files[at], first);
    const uint64_t bytes = uint64_t(int_attr(files[at], first, "comm_size", c != "barrier"));
    std::vector<std::vector<uint32_t>> start(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      if (cursor[r] == order[r].size())
        throw InputError(files[r] + ": has " + std::to_string(job.collectives) +
                         " collective nodes, but " + node_where(files[at], first) + " is collective " +
                         std::to_string(job.collectives + 1) +
                         "; every rank's trace must have the same collectives in the same order");
      const pb::Node& nd = nodes[r][order[r][cursor[r]]];
      const std::string cr = collective_of(files[r], nd);
      const uint64_t br = uint64_t(int_attr(files[r], nd, "comm_size", cr != "barrier"));
      if (cr != c || br != bytes)
        throw InputError(node_where(files[r], nd) + ": collective " +
                         std::to_string(job.collectives + 1) + " is " + cr + " of " +
                         std::to_string(br) + " B, but on rank " + std::to_string(at) + " it is " +
                         c + " of " + std::to_string(bytes) + " B");
      start[r] = dep_ops(r, order[r][cursor[r]]);
    }
    // A barrier is a one-element all-reduce; the others run the workload's algorithm for
    // all-reduce and each collective's first algorithm otherwise.
    const std::string coll_name = c == "barrier" ? "all_reduce" : c;
    const std::string algo =
        coll_name == "all_reduce" ? w.algorithm : coll::algorithms_for(coll_name).front();
    coll::CollParams cp = w.coll_params(n, c == "barrier" ? 1 : elems(bytes));
    const coll::Schedule sub = coll::make_schedule(coll_name, algo, cp, spec.domain_size);
    std::vector<int> group(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) group[r] = r;
    const std::vector<uint32_t> joins = b.collective(sub, group, 0, w.training.launch_ps, start);
    for (int r = 0; r < n; ++r) record(r, order[r][cursor[r]++], "collective", joins[r], 0);
    ++job.collectives;
  }
  for (const auto& [key, count] : sent)
    if (received[key] != count)
      throw InputError(files[size_t(std::get<0>(key))] + ": " + std::to_string(count) +
                       " sends to rank " + std::to_string(std::get<1>(key)) + " with comm_tag " +
                       std::to_string(std::get<2>(key)) + " but rank " +
                       std::to_string(std::get<1>(key)) + " receives " +
                       std::to_string(received[key]));
  for (const auto& [key, count] : received)
    if (!sent.count(key))
      throw InputError(files[size_t(std::get<1>(key))] + ": " + std::to_string(count) +
                       " receives from rank " + std::to_string(std::get<0>(key)) +
                       " with comm_tag " + std::to_string(std::get<2>(key)) + " that rank " +
                       std::to_string(std::get<0>(key)) + " never sends");
  job.schedule = b.finish("chakra");
  return job;
}

WorkloadKind chakra_workload() {
  WorkloadKind k;
  k.name = "chakra";
  k.summary =
      "A Chakra execution trace (MLCommons; one file TRACE.RANK.et per rank): compute, "
      "send/receive and collective nodes with their dependencies, as one job.";
  k.training = true;
  k.params = {param("trace", ParamKind::kString, "", "path prefix",
                    "Trace files <trace>.<rank>.et, one per rank, relative to the config "
                    "file's directory.")};
  const std::vector<ParamSpec> c = comm_params();
  k.params.insert(k.params.end(), c.begin(), c.end());
  k.parse = [](const cfg::Params& p, const cfg::Params& sim, SystemSpec& s) {
    parse_common(p, sim, s, false);
    const std::filesystem::path rel = p.str("trace");
    const std::string prefix =
        rel.is_absolute() ? rel.string()
                          : (std::filesystem::path(p.file()).parent_path() / rel).lexically_normal().string();
    try {
      s.workload.training.chakra = std::make_shared<ChakraJob>(load_chakra(prefix, s));
    } catch (const InputError& e) {
      p.fail("trace", e.what(), "");
    }
  };
  return k;
}

}  // namespace fabricsim
