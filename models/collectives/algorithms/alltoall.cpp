// All-to-all and send/recv family (algorithms.h): alltoall pairwise (lockstep by pieces)
// and direct (every block in flight at once), and sendrecv direct.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "models/collectives/algorithms/common.h"

namespace fabricsim::coll {

using namespace detail;

namespace {

constexpr const char* kPairwise = "alltoall_pairwise";
constexpr const char* kAllToAllDirect = "alltoall_direct";
constexpr const char* kSendRecv = "sendrecv";

// The distances d = 1..n-1 in the order rank r sends to r+d (`receive`: receives from
// r-d). One domain: 1, 2, .., n-1. Domains of L ranks (rank = k L + l): node distance dk
// outer, local distance dl inner; in round (dk, dl) rank (k, l) sends to
// (k+dk, l+dl) and receives from (k-dk, l-dl) (mod N and mod L), as NCCL orders its p2p
// schedule by node: in each round the ranks of a node send to distinct ranks of one other
// node, so no NIC is the target of every sender at once.
std::vector<int> peer_order(int r, int n, int domain_size, bool receive) {
  std::vector<int> order;
  if (domain_size <= 0 || domain_size >= n) {
    for (int d = 1; d < n; ++d) order.push_back(d);
    return order;
  }
  const int L = domain_size, N = n / L, k = r / L, l = r % L, sign = receive ? -1 : 1;
  for (int dk = 0; dk < N; ++dk)
    for (int dl = 0; dl < L; ++dl) {
      const int peer = mod_n(k + sign * dk, N) * L + mod_n(l + sign * dl, L);
      if (peer != r) order.push_back(mod_n(sign * (peer - r), n));
    }
  return order;
}

// All-to-all messages (shared by pairwise and direct): for each distance s of peer_order
// rank r sends input block r+s to rank r+s and receives into slot r-s from rank r-s.
Schedule alltoall(const char* who, const char* name, const CollParams& p, bool lockstep,
                  int domain_size) {
  const uint64_t chunk = check_params(who, p, false);
  const int n = p.ranks;
  const uint64_t slot = ceil_div(p.count, static_cast<uint64_t>(n));
  Schedule sched = empty_schedule(name, n, buffer_elems(Collective::kAllToAll, n, p.count));
  if (n == 1) return sched;
  const auto in = block_major(p.count, n, p.channels);  // in[j][c]: input block j, channel c
  const Tags tags(who, p.channels, static_cast<uint64_t>(n), chunk, in[0][0].count);
  const std::size_t nch = static_cast<std::size_t>(p.channels);
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    // Output slot of a block from rank `src`: block r's channel parts, moved to the slot.
    auto out_part = [&](int src, std::size_t c) {
      Range part = in[static_cast<std::size_t>(r)][c];
      part.offset +=
          p.count + static_cast<uint64_t>(src) * slot - in[static_cast<std::size_t>(r)][0].offset;
      return part;
    };
    // Lockstep state: op indices of the latest earlier step's send / recv pieces per channel.
    std::vector<std::vector<uint32_t>> last_send(nch), last_recv(nch);
    auto send_step = [&](int s) {
      const int dst = (r + s) % n;
      for (std::size_t c = 0; c < nch; ++c) {
        const Range blk = in[static_cast<std::size_t>(dst)][c];
        std::vector<uint32_t> sent;
        for (uint64_t j = 0; j < num_pieces(blk, chunk); ++j) {
          std::vector<uint32_t> extra;
          if (lockstep) {
            if (!last_send[c].empty())
              extra.push_back(last_send[c][std::min<std::size_t>(j, last_send[c].size() - 1)]);
            if (!last_recv[c].empty())
              extra.push_back(last_recv[c][std::min<std::size_t>(j, last_recv[c].size() - 1)]);
          }
          sent.push_back(rb.send(dst, tags(static_cast<int>(c), static_cast<uint64_t>(s), j),
                                 piece_of(blk, j, chunk), extra, -1, static_cast<int32_t>(c)));
        }
        if (!sent.empty()) last_send[c] = std::move(sent);
      }
    };
    auto recv_step = [&](int s) {
      const int src = mod_n(r - s, n);
      for (std::size_t c = 0; c < nch; ++c) {
        const Range part = out_part(src, c);
        std::vector<uint32_t> got;
        for (uint64_t j = 0; j < num_pieces(part, chunk); ++j)
          got.push_back(rb.recv(src, tags(static_cast<int>(c), static_cast<uint64_t>(s), j),
                                piece_of(part, j, chunk), RecvMode::kCopy, -1,
                                static_cast<int32_t>(c)));
        if (!got.empty()) last_recv[c] = std::move(got);
      }
    };
    // Round i: send to peer_order's i-th peer, receive from the rank that sends to us in
    // round i.
    const std::vector<int> sends = peer_order(r, n, domain_size, false);
    const std::vector<int> recvs = peer_order(r, n, domain_size, true);
    if (lockstep) {
      for (std::size_t i = 0; i < sends.size(); ++i) {
        send_step(sends[i]);
        recv_step(recvs[i]);
      }
    } else {
      for (int s : sends) send_step(s);
      for (int s : recvs) recv_step(s);
    }
  }
  return sched;
}

double pairwise_cost(int n, double S, double al, double be, int) {
  return (n - 1.0) * al + spread(n) * S * be;
}
double alltoall_direct_cost(int n, double S, double al, double be, int) {
  return al + spread(n) * S * be;
}
double sendrecv_cost(int, double S, double al, double be, int) { return al + S * be; }

}  // namespace

Schedule alltoall_pairwise(const CollParams& p, int domain_size) {
  return alltoall(kPairwise, "pairwise", p, true, domain_size);
}

Schedule alltoall_direct(const CollParams& p, int domain_size) {
  return alltoall(kAllToAllDirect, "direct", p, false, domain_size);
}

Schedule sendrecv(const CollParams& p) {
  const char* who = kSendRecv;
  const uint64_t chunk = check_params(who, p, false);
  const int n = p.ranks;
  Schedule sched = empty_schedule("direct", n, buffer_elems(Collective::kSendRecv, n, p.count));
  if (n == 1) return sched;
  const std::vector<Range> ch = split_range(Range{0, p.count}, p.channels);
  const Tags tags(who, p.channels, 1, chunk, ch[0].count);
  const uint64_t max_pieces = num_pieces(ch[0], chunk);
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    for (uint64_t j = 0; j < max_pieces; ++j)
      for (std::size_t c = 0; c < ch.size(); ++c)
        if (j < num_pieces(ch[c], chunk))
          rb.send((r + 1) % n, tags(static_cast<int>(c), 0, j), piece_of(ch[c], j, chunk), {},
                  -1, static_cast<int32_t>(c));
    for (uint64_t j = 0; j < max_pieces; ++j)
      for (std::size_t c = 0; c < ch.size(); ++c)
        if (j < num_pieces(ch[c], chunk)) {
          Range out = piece_of(ch[c], j, chunk);
          out.offset += p.count;
          rb.recv((r + n - 1) % n, tags(static_cast<int>(c), 0, j), out, RecvMode::kCopy, -1,
                  static_cast<int32_t>(c));
        }
  }
  return sched;
}

namespace detail {

void register_alltoall(AlgorithmRegistry& r) {
  r.add(algo_entry(Collective::kAllToAll, "pairwise", 0, "(n-1) alpha + (n-1)/n S beta",
                   alltoall_pairwise, pairwise_cost, checks_params(kPairwise)));
  r.add(algo_entry(Collective::kAllToAll, "direct", kNccl, "alpha + (n-1)/n S beta",
                   alltoall_direct, alltoall_direct_cost,
                   checks_params(kAllToAllDirect)));
  r.add(algo_entry(Collective::kSendRecv, "direct", kNccl, "alpha + S beta", one_level(sendrecv),
                   sendrecv_cost, checks_params(kSendRecv)));
}

}  // namespace detail

}  // namespace fabricsim::coll
