// The host side of a PCIe root complex: the data path between its root ports and the
// host, and the host memory that peer traffic bounces through when GPUs cannot write to
// each other directly (p2p off). Plain C++, no SystemC; the Switch frame calls it for
// every transaction its crossbar moves when the switch is a root complex.
//
// Three shared resources, each a serial server with a busy-until time and byte-exact
// integer-picosecond service (carried remainder, as a link's serialiser):
//   up    root ports -> host: `rc_bps` per direction; every forwarded byte crosses once
//   mem   host memory (DRAM): `memory_bps` shared by reads and writes (one DDR bus per
//         channel is half-duplex); a bounced byte is written once and read back once
//   down  host -> root ports: `rc_bps`; every forwarded byte crosses once
// p2p off (bounce): up -> memory write -> memory read -> memory latency -> down.
// p2p on: up -> down (port to port through the root complex, no memory).
// A transaction reserves each resource in turn, in the order the crossbar moves them
// (FIFO per resource); its write and read are reserved back to back on the memory. So the
// throughput is exact (every resource is busy exactly bytes / rate per transaction); a
// transaction's latency is store-and-forward per stage at transaction granularity.
#pragma once
#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "models/link/serializer.h"

namespace fabricsim {

struct HostPathParams {
  bool enabled = false;            // false: a plain switch (no host path)
  bool p2p = false;                // true: forward port to port; false: bounce via memory
  uint64_t rc_bps = 0;             // root complex data path, bits/s per direction
  uint64_t memory_bps = 0;         // host memory bandwidth, bits/s (reads + writes)
  uint64_t memory_latency_ps = 0;  // read latency of host memory
};

class HostPath {
 public:
  explicit HostPath(const HostPathParams& p);

  // A transaction of `bytes` payload enters the host path at `t_ps`; returns the time its
  // last byte has come back down to the root ports (ready to leave on the egress port).
  uint64_t forward(uint64_t t_ps, uint64_t bytes);
  // When the last forwarded byte is down (every stage is free from then on).
  uint64_t idle_at() const { return std::max({up_free_, mem_free_, down_free_}); }
  // Between independent measurements, once idle: the stages' carried serialisation
  // remainders and busy-until times as when built (a remainder left by one row would
  // shift the next row's times by up to 1 ps per stage). Kept: the statistics (busy
  // times, bytes written, read and forwarded).
  void reset();

  const HostPathParams& params() const { return p_; }
  uint64_t up_busy_ps() const { return up_busy_; }
  uint64_t down_busy_ps() const { return down_busy_; }
  uint64_t memory_busy_ps() const { return mem_busy_; }
  uint64_t memory_bytes_written() const { return written_; }
  uint64_t memory_bytes_read() const { return read_; }
  uint64_t bytes_forwarded() const { return forwarded_; }
  nlohmann::json stats_json(uint64_t now_ps) const;

 private:
  HostPathParams p_;
  Serializer up_, down_, mem_;
  uint64_t up_free_ = 0, down_free_ = 0, mem_free_ = 0;
  uint64_t up_busy_ = 0, down_busy_ = 0, mem_busy_ = 0;
  uint64_t written_ = 0, read_ = 0, forwarded_ = 0;
};

}  // namespace fabricsim
