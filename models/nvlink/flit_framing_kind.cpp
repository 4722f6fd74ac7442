// NVLink's flit framing as a link framing: whole flits, overhead flits per packet.
#include "models/link/link_type.h"

namespace fabricsim {

FramingKind flit_framing() {
  using K = ParamKind;
  using F = Framing;
  FramingKind f;
  f.name = "flit";
  f.params = param_block<F>(
      "flit",
      {bind(param("flit_bytes", K::kBytes, "16B", "bytes", "Flit size (framing: flit).", 1),
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
    const F& x = std::any_cast<const F&>(p);
    l.framing.kind = Framing::Kind::kFlit;
    l.framing.flit_bytes = x.flit_bytes;
    l.framing.overhead_flits = x.overhead_flits;
    l.framing.request_flits = x.request_flits;
  };
  return f;
}

}  // namespace fabricsim
