// Building blocks for model-level testbenches: small systems wired in C++ (no YAML),
// traffic drivers and monitors. Each test builds one bench in its own process.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "models/link/port.h"
#include "models/core/rng.h"
#include "models/endpoint/endpoint.h"
#include "models/switch/switch.h"

namespace fabricsim::tb {

// NVLink4-like link: 2 lanes x 100 Gb/s, 16 B flits, 2 overhead flits, 128 B payload.
LinkParams nvlink_like(uint64_t latency_ps, uint64_t rx_buffer_bytes);

// UALink 1.0 x4 port: 4 lanes x 212.5 GT/s signalling (the FEC is in the framing's 680 B
// codeword per 640 B DL flit, so 4 x 200 Gb/s of DL flits), 256 B requests.
LinkParams ualink_x4(uint64_t latency_ps, uint64_t rx_buffer_bytes);

// N endpoints, each with one port into port i of one switch (built with `features`;
// peer of port i: device i, endpoint i, port 0).
struct StarBench {
  std::vector<std::unique_ptr<Endpoint>> eps;
  std::unique_ptr<Switch> sw;
  StarBench(int n, const SwitchParams& sp, const EndpointParams& ep, const LinkParams& link,
            Switch::Features features = {});
};

// N endpoints in a unidirectional-use ring of direct links: endpoint r's port 0 is
// linked to endpoint (r+1)'s port 1.
struct RingBench {
  std::vector<std::unique_ptr<Endpoint>> eps;
  RingBench(int n, const EndpointParams& ep, const LinkParams& link);
};

// Keeps an endpoint's DMA queue topped up with single-packet messages to uniformly random
// other endpoints: a saturated Bernoulli-uniform source (offered load 100%).
class UniformSource : public sc_core::sc_module {
 public:
  UniformSource(sc_core::sc_module_name n, Endpoint& ep, int n_endpoints, uint32_t bytes,
                uint64_t seed, int depth = 8);

 private:
  void refill();
  Endpoint& ep_;
  int n_;
  uint32_t bytes_;
  Rng rng_;
  int depth_;
  int queued_ = 0;
};

// Counts payload bytes delivered to a set of endpoints inside a time window.
class ThroughputMonitor : public sc_core::sc_module {
 public:
  ThroughputMonitor(sc_core::sc_module_name n, std::vector<Endpoint*> eps, uint64_t start_ps,
                    uint64_t end_ps);
  uint64_t bytes() const { return bytes_; }

 private:
  uint64_t start_ps_, end_ps_;
  uint64_t bytes_ = 0;
};

}  // namespace fabricsim::tb
