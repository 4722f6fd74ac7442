#include "models/link/packet_link_layer.h"

namespace fabricsim {

PacketLinkLayer::PacketLinkLayer(const LinkParams& link, uint64_t seed,
                                 const std::string& port_name)
    : ser_(link.rate_bps) {
  if (link.ber > 0) {
    errors_.emplace(link.ber, seed, port_name);
    nak_wait_ps_ = 2 * link.latency_ps + link.retry_latency_ps;
    bits_to_error_ = errors_->next_gap();
  }
}

uint64_t PacketLinkLayer::draw_crc_errors(uint32_t n, uint64_t full, uint64_t last,
                                          uint64_t& wait_ps, uint64_t& first_ps,
                                          uint64_t& last_ps) {
  uint64_t extra = 0;
  uint32_t k = 0;  // first packet of the current pass (the replay restarts at the bad one)
  for (;;) {
    const uint64_t pass_bits = 8 * (uint64_t(n - 1 - k) * full + last);
    if (bits_to_error_ >= pass_bits) {
      bits_to_error_ -= pass_bits;
      return extra;
    }
    // The error falls in packet j: packets k..j-1 arrive good, j is NAKed, and go-back-N
    // re-sends from j once the NAK is back. Error draws restart with the replayed copy
    // (the geometric distribution is memoryless, so this is the same bit process).
    const uint32_t j = uint32_t(std::min<uint64_t>(k + bits_to_error_ / (8 * full), n - 1));
    const uint64_t bytes = j == n - 1 ? last : full;
    const uint64_t lost = ser_.peek_ps(bytes) + nak_wait_ps_;
    ++retry_.crc_errors;
    ++retry_.replays;
    retry_.replay_wire_bytes += bytes;
    retry_.retry_ps += lost;
    extra += bytes;
    wait_ps += nak_wait_ps_;
    if (j == 0) first_ps += lost;
    if (j == n - 1) last_ps += lost;
    bits_to_error_ = errors_->next_gap();
    k = j;
  }
}

}  // namespace fabricsim
