#include "models/collectives/protocol.h"

#include <algorithm>

#include "models/core/errors.h"

namespace fabricsim::coll {

namespace {
constexpr uint64_t kLLLine = 8, kLLData = 4;          // bytes per LL line, of which data
constexpr uint64_t kLL128Line = 128, kLL128Data = 120;  // bytes per LL128 line, of which data
}  // namespace

const char* protocol_name(Protocol p) {
  switch (p) {
    case Protocol::kSimple: return "simple";
    case Protocol::kLL: return "ll";
    case Protocol::kLL128: return "ll128";
  }
  throw InternalError("protocol_name: unknown protocol");
}

Protocol protocol_from_name(const std::string& name) {
  for (Protocol p : {Protocol::kSimple, Protocol::kLL, Protocol::kLL128})
    if (name == protocol_name(p)) return p;
  throw InternalError("protocol_from_name: unknown protocol '" + name + "'");
}

uint64_t protocol_bytes(Protocol p, uint64_t data) {
  switch (p) {
    case Protocol::kSimple: return data;
    case Protocol::kLL: return (data + kLLData - 1) / kLLData * kLLLine;
    case Protocol::kLL128: return (data + kLL128Data - 1) / kLL128Data * kLL128Line;
  }
  throw InternalError("protocol_bytes: unknown protocol");
}

double protocol_efficiency(Protocol p) {
  switch (p) {
    case Protocol::kSimple: return 1.0;
    case Protocol::kLL: return double(kLLData) / double(kLLLine);
    case Protocol::kLL128: return double(kLL128Data) / double(kLL128Line);
  }
  throw InternalError("protocol_efficiency: unknown protocol");
}

int protocol_channels(const ProtocolConfig& c, Protocol p, uint64_t bytes, int ranks,
                      int max_channels) {
  uint64_t threshold = c.channel_threshold[int(p)];
  if (p == Protocol::kLL) threshold *= uint64_t(std::max(ranks, 1));
  if (threshold == 0) return max_channels;
  const uint64_t fit = bytes / threshold;
  return int(std::max<uint64_t>(1, std::min<uint64_t>(uint64_t(max_channels), fit)));
}

uint64_t nvls_piece_bytes(const ProtocolConfig& c, uint64_t bytes, uint64_t concurrent) {
  uint64_t chunk = c.nvls_chunk_bytes;
  if (bytes < 64 * concurrent * chunk && chunk > 65536) chunk = 65536;
  if (bytes < 8 * concurrent * chunk && chunk > 32768) chunk = 32768;
  if (bytes < 2 * concurrent * chunk && chunk > 16384) chunk = 16384;
  return chunk;
}

}  // namespace fabricsim::coll
