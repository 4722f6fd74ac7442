// The end-of-run packet ledger of lossy fabrics (Ethernet without PFC, trimming): what the
// transports put into the network and took out of it, and what the switches dropped and
// trimmed, with reasons. Every packet a transport injects is received by a transport or
// dropped with a counted reason: injected == received + dropped (checked at the end of
// every run, fabrics/cli/app.cpp). Plain C++.
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace fabricsim {

struct PacketLedger {
  uint64_t injected = 0;   // packets transports (NICs) sent into the network, every kind
  uint64_t received = 0;   // packets transports received from it (trimmed ones included)
  std::map<std::string, uint64_t> dropped;        // by reason ("dt_threshold", ...)
  uint64_t trimmed = 0;                           // packets cut to their header
  std::map<std::string, uint64_t> retransmitted;  // data packets sent again, by cause
  uint64_t duplicates = 0;  // data packets a receiver already had (spurious retransmits)

  uint64_t dropped_total() const {
    uint64_t n = 0;
    for (const auto& kv : dropped) n += kv.second;
    return n;
  }
  uint64_t retransmitted_total() const {
    uint64_t n = 0;
    for (const auto& kv : retransmitted) n += kv.second;
    return n;
  }
};

}  // namespace fabricsim
