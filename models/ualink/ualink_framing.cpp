#include "models/ualink/ualink_framing.h"

#include <sstream>

#include "models/core/units.h"
#include "models/link/link_type.h"
#include "models/ualink/stream_link_layer.h"

namespace fabricsim {

double UALinkFraming::efficiency(uint32_t payload, PacketKind pk) const {
  return double(payload) * dl_payload_bytes() /
         (double(tl_bytes(payload, pk)) * p_.fec_codeword_bytes);
}

uint64_t UALinkFraming::packet_wire_bytes(uint32_t payload, PacketKind pk) const {
  const uint64_t dlp = dl_payload_bytes();
  return (tl_bytes(payload, pk) * p_.fec_codeword_bytes + dlp - 1) / dlp;
}

std::string UALinkFraming::describe() const {
  std::ostringstream os;
  os << "UALink: " << p_.tl_request_bytes << " B request / " << p_.tl_response_bytes
     << " B response field + data in " << p_.tl_flit_bytes / 2 << " B half-flits, packed into "
     << p_.dl_flit_bytes << " B DL flits (" << dl_payload_bytes() << " B of TL stream each), one "
     << p_.fec_codeword_bytes << " B FEC codeword per DL flit";
  return os.str();
}

std::unique_ptr<LinkLayer> UALinkFraming::make_link_layer(const LinkParams& link, uint64_t seed,
                                                          const std::string& port_name) const {
  return std::make_unique<StreamLinkLayer>(*this, link, seed, port_name);
}

// The UALink stream as a link framing: its keys in a link type, and what a UALink link type
// must satisfy (port widths, the signalling rate, a framing whose pieces fit together, 256 B
// requests at most).

namespace {

std::string real_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// UALink 1.0 links: x1/x2/x4 ports, and a framing whose pieces fit together. The FEC
// parity is in the codeword bytes, so no line-code factor may be applied on top.
void check(const LinkParams& l, const std::any& params, const ParamReader& p) {
  const UALinkFramingParams& f = std::any_cast<const UALinkFramingParams&>(params);
  const int64_t lanes = p.integer("lanes");
  if (lanes != 1 && lanes != 2 && lanes != 4)
    p.fail("lanes", "x" + std::to_string(lanes) + " is not a UALink port width",
           "UALink 1.0 ports are x1, x2 or x4");
  if (p.real("encoding_efficiency") != 1.0)
    p.fail("encoding_efficiency",
           "encoding_efficiency " + real_text(p.real("encoding_efficiency")) +
               " with framing: ualink counts the FEC twice (the " +
               std::to_string(f.fec_codeword_bytes) +
               " B codeword per DL flit already carries it)",
           "set encoding_efficiency: 1.0 and lane_rate to the signalling rate (212.5Gb/s)");
  // The most likely slip: the data rate given as lane_rate, which charges the codeword's
  // parity a second time. lane_rate x dl_flit / codeword = lane_rate means no FEC.
  if (p.bandwidth_bps("lane_rate") == 200'000'000'000ull && f.fec_codeword_bytes > f.dl_flit_bytes)
    p.fail("lane_rate",
           "lane_rate 200Gb/s is UALink's data rate; framing: ualink charges the " +
               std::to_string(f.fec_codeword_bytes) + " B codeword per " +
               std::to_string(f.dl_flit_bytes) + " B DL flit, so the FEC would count twice",
           "give the signalling rate: lane_rate: 212.5Gb/s (= 200Gb/s x " +
               std::to_string(f.fec_codeword_bytes) + " / " + std::to_string(f.dl_flit_bytes) +
               ")");
  if (f.dl_overhead_bytes >= f.dl_flit_bytes)
    p.fail("dl_overhead_bytes",
           "dl_overhead_bytes " + std::to_string(f.dl_overhead_bytes) +
               " B leaves no room for the TL stream in a " + std::to_string(f.dl_flit_bytes) +
               " B DL flit",
           "use fewer overhead bytes than dl_flit_bytes (UALink: 12B of 640B)");
  if (f.fec_codeword_bytes < f.dl_flit_bytes)
    p.fail("fec_codeword_bytes",
           "fec_codeword_bytes " + std::to_string(f.fec_codeword_bytes) +
               " B cannot carry a " + std::to_string(f.dl_flit_bytes) + " B DL flit",
           "use at least dl_flit_bytes (UALink: 680B per 640B flit)");
  if (f.tl_flit_bytes % 2 != 0)
    p.fail("tl_flit_bytes",
           "tl_flit_bytes " + std::to_string(f.tl_flit_bytes) +
               " B cannot be split into two half-flits",
           "use an even size (UALink: 64B)");
  for (const char* key : {"tl_request_bytes", "tl_response_bytes"}) {
    const uint64_t b = p.bytes(key);
    if (b > f.tl_flit_bytes / 2)
      p.fail(key,
             std::string(key) + " " + std::to_string(b) + " B does not fit a " +
                 std::to_string(f.tl_flit_bytes / 2) + " B half-flit of a " +
                 std::to_string(f.tl_flit_bytes) + " B TL flit",
             "UALink: 16B request and 8B response fields in 64B TL flits");
  }
  if (l.packet_payload > 256)
    p.fail("packet_payload",
           "packet_payload " + format_bytes(l.packet_payload) +
               " is larger than the 256B a UALink request carries",
           "use 64B, 128B, 192B or 256B");
}

}  // namespace

FramingKind ualink_framing() {
  using K = ParamKind;
  using F = UALinkFramingParams;
  FramingKind f;
  f.name = "ualink";
  f.params = param_block<F>(
      "ualink",
      {bind(param("tl_flit_bytes", K::kBytes, "64B", "bytes",
                  "UALink TL flit; data travels in its half-flits (framing: ualink).", 2, 4096),
            &F::tl_flit_bytes),
       bind(param("tl_request_bytes", K::kBytes, "16B", "bytes",
                  "TL request field per write, flag or read request (uncompressed; framing: "
                  "ualink).",
                  1, 4096),
            &F::tl_request_bytes),
       bind(param("tl_response_bytes", K::kBytes, "8B", "bytes",
                  "TL response field per read response or write completion (ack) (framing: "
                  "ualink).",
                  1, 4096),
            &F::tl_response_bytes),
       bind(param("dl_flit_bytes", K::kBytes, "640B", "bytes", "UALink DL flit (framing: ualink).",
                  1, 65536),
            &F::dl_flit_bytes),
       bind(param("dl_overhead_bytes", K::kBytes, "12B", "bytes",
                  "DL flit header + segment headers + CRC; the rest of a DL flit carries the TL "
                  "stream (framing: ualink).",
                  0, 65536),
            &F::dl_overhead_bytes),
       bind(param("fec_codeword_bytes", K::kBytes, "680B", "bytes",
                  "Wire bytes of the FEC codeword that carries one DL flit (RS(544,514): 680B) "
                  "(framing: ualink).",
                  1, 65536),
            &F::fec_codeword_bytes)});
  f.apply = [](LinkParams& l, const std::any& p) {
    l.framing = std::make_shared<const UALinkFraming>(std::any_cast<const F&>(p));
  };
  f.check = check;
  return f;
}

}  // namespace fabricsim
