// The transmit discipline of a UALink port: packets go into the FlitStream, and with
// ber > 0 the error unit is the FEC codeword (one DL flit), not the packet (docs/models.md
// "Link-level retry", "UALink 1.0"): the stream draws each codeword's errors when a packet
// opens it and delays the bad codeword's good copy and everything after it by one
// codeword + the NAK wait per bad copy; a packet's tail is the end of the good copy of the
// codeword holding its last byte, and its share of codeword bytes is what it holds in the
// replay buffer. Plain C++.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "models/link/bit_errors.h"
#include "models/link/link_layer.h"
#include "models/link/link_params.h"
#include "models/ualink/flit_stream.h"
#include "models/ualink/ualink_framing.h"

namespace fabricsim {

class StreamLinkLayer final : public LinkLayer {
 public:
  StreamLinkLayer(const UALinkFraming& f, const LinkParams& link, uint64_t seed,
                  const std::string& port_name);

  // The stream's charge for the transaction's TL bytes now (its remainder carried).
  uint64_t prepare(const Packet& p) override {
    tl_ = f_.transaction_tl_bytes(p);
    return stream_.peek_wire(tl_);
  }
  TxTiming send(const Packet& p, uint64_t t, uint64_t wire) override;
  void set_ber(double ber) override;
  void reset() override { stream_.restart(); }

 private:
  const UALinkFraming f_;  // a copy of the link's (immutable, small) framing
  std::string port_name_;  // for messages
  // The port's bit-error stream (ber > 0 only); the stream counts the codewords' bits.
  std::optional<GeometricBitErrors> errors_;
  FlitStream stream_;
  uint64_t tl_ = 0;  // what prepare() sized: the transaction's TL stream bytes
  uint64_t seed_ = 0, nak_wait_ps_ = 0;  // for bursts (set_ber)
};

}  // namespace fabricsim
