#include "models/nvlink/flit_framing.h"

#include "models/link/link_type.h"

#include <sstream>

#include "models/core/limits.h"
#include "models/link/packet_link_layer.h"

namespace fabricsim {

std::string FlitFraming::describe() const {
  std::ostringstream os;
  os << "flits of " << p_.flit_bytes << " B, " << p_.overhead_flits
     << " overhead flit(s) per packet";
  return os.str();
}

std::unique_ptr<LinkLayer> FlitFraming::make_link_layer(const LinkParams& link, uint64_t seed,
                                                        const std::string& port_name) const {
  return std::make_unique<FramedLinkLayer<FlitFraming>>(*this, link, seed, port_name);
}

// The flit framing as a link framing: its keys in a link type.

FramingKind flit_framing() {
  using K = ParamKind;
  using F = FlitFramingParams;
  FramingKind f;
  f.name = "flit";
  f.params = param_block<F>(
      "flit",
      {bind(param("flit_bytes", K::kBytes, "16B", "bytes", "Flit size (framing: flit).", 1,
                  limits::kMaxFramingBytes),
            &F::flit_bytes),
       bind(param("overhead_flits", K::kInt, "1", "flits",
                  "Non-data flits per packet: header with CRC, address/byte-enable (framing: "
                  "flit).",
                  0, 16),
            &F::overhead_flits),
       bind(param("request_flits", K::kInt, "0", "flits",
                  "Flits of a header-only packet: a read request, e.g. the NVLS reads a switch "
                  "sends (framing: flit); 0 = overhead_flits.",
                  0, 16),
            &F::request_flits)});
  f.apply = [](LinkParams& l, const std::any& p) {
    l.framing = std::make_shared<const FlitFraming>(std::any_cast<const F&>(p));
  };
  return f;
}

}  // namespace fabricsim
