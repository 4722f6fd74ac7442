// UALink 1.0 stream framing (docs/models.md "UALink 1.0"): TL fields + data packed into DL
// flits, each sent as one FEC codeword. Plain C++; the stream itself is FlitStream
// (flit_stream.h), the port's transmit discipline StreamLinkLayer (stream_link_layer.h).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "models/link/link_layer.h"

namespace fabricsim {

// A packet is a TL field (request or response header) plus its data in half-flits of
// tl_flit_bytes / 2; the TL stream fills the dl_flit_bytes - dl_overhead_bytes payload of
// each DL flit back to back, and every DL flit goes on the wire as one fec_codeword_bytes
// codeword. Declared below its class (ualink_framing()); the declared defaults are UALink
// 1.0's.
struct UALinkFramingParams {
  uint32_t tl_flit_bytes = 0;       // TL flit; data travels in its half-flits
  uint32_t tl_request_bytes = 0;    // request field (write, read request)
  uint32_t tl_response_bytes = 0;   // response field (read response, write response)
  uint32_t dl_flit_bytes = 0;       // DL flit
  uint32_t dl_overhead_bytes = 0;   // DL flit header + segment headers + CRC
  uint32_t fec_codeword_bytes = 0;  // FEC codeword carrying one DL flit
};

class UALinkFraming final : public Framing {
 public:
  explicit UALinkFraming(const UALinkFramingParams& p) : p_(p) {}
  const UALinkFramingParams& params() const { return p_; }

  // TL stream bytes of one packet: its field + data rounded up to half-flits.
  uint64_t tl_bytes(uint32_t payload, PacketKind pk = PacketKind::kData) const {
    // Responses (read data, write completions) carry a response field, everything else a
    // request field; data travels in whole half-flits.
    const bool response =
        pk == PacketKind::kAck || pk == PacketKind::kNack || pk == PacketKind::kReadResp;
    const uint64_t half = p_.tl_flit_bytes / 2;
    const uint64_t data = (uint64_t(payload) + half - 1) / half * half;
    return (response ? p_.tl_response_bytes : p_.tl_request_bytes) + data;
  }
  uint64_t transaction_tl_bytes(const Packet& p) const {
    if (p.npackets <= 1) return tl_bytes(p.payload_bytes, p.kind);
    return uint64_t(p.npackets - 1) * tl_bytes(p.packet_payload, p.kind) +
           tl_bytes(p.last_packet_payload(), p.kind);
  }
  uint32_t dl_payload_bytes() const { return p_.dl_flit_bytes - p_.dl_overhead_bytes; }

  // The packet's share of codeword bytes rounded up (a lone packet; streams carry the
  // remainder, FlitStream).
  uint64_t packet_wire_bytes(uint32_t payload, PacketKind pk = PacketKind::kData) const override;
  // Exact for a long stream: payload / (tl_bytes x codeword / DL payload).
  double efficiency(uint32_t payload, PacketKind pk = PacketKind::kData) const override;
  // Efficiency against the data rate instead of the signalling rate, i.e. against DL-flit
  // bytes instead of codeword bytes: payload x (dl_flit - dl_overhead) / (tl_bytes x
  // dl_flit). The UALink 1.0 "200 Gb/s per lane" is this data rate: 212.5 GT/s x 640 / 680.
  // For 256 B writes: 256 x 628 / (272 x 640) = 92.35%.
  double data_rate_efficiency(uint32_t payload, PacketKind pk = PacketKind::kData) const {
    return double(payload) * dl_payload_bytes() /
           (double(tl_bytes(payload, pk)) * p_.dl_flit_bytes);
  }
  std::string describe() const override;
  // The receiver checks a DL flit's CRC before it uses any of it: one codeword.
  uint64_t receive_unit_bytes(uint32_t) const override { return p_.fec_codeword_bytes; }
  // A packet's tail is the end of its codeword, up to a codeword after its last byte.
  uint64_t replay_slack_bytes() const override { return p_.fec_codeword_bytes; }
  std::unique_ptr<LinkLayer> make_link_layer(const LinkParams& link, uint64_t seed,
                                             const std::string& port_name) const override;

 private:
  UALinkFramingParams p_;
};

}  // namespace fabricsim
