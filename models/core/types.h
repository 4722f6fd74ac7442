// Basic types shared by every model.
#pragma once
#include <cstdint>

namespace fabricsim {

// 128-bit intermediate for exact picosecond arithmetic (bytes x 8 x 1e12 overflows 64 bits).
__extension__ typedef unsigned __int128 u128;

// Ceil(bytes * 8 * 1e12 / rate_bps): time in ps to move `bytes` at `rate_bps`.
inline uint64_t transfer_ps(uint64_t bytes, uint64_t rate_bps) {
  u128 num = u128(bytes) * 8u * 1000000000000ull;
  return uint64_t((num + rate_bps - 1) / rate_bps);
}

// simulation.aggregate_round_robin_packets: which aggregated messages take turns of one
// packet while they share a port under round robin (docs/architecture.md, "Aggregation
// under round robin"). kNone: every turn is a transaction. kAll: every message's, and the
// answers to NVLS reads go a packet per turn. kGroupOnly (`nvls`): in-switch group
// messages' only, and the answers.
enum class PacketTurns : uint8_t { kNone, kAll, kGroupOnly };

// SC_METHOD activations of the fabric models: the "kernel events" a run costs.
inline uint64_t g_kernel_events = 0;

}  // namespace fabricsim
