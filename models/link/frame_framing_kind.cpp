// Frame framing as a link framing: a header with FCS, a minimum frame, preamble and gap
// (PCIe TLPs, InfiniBand packets, Ethernet frames).
#include "models/link/link_type.h"

namespace fabricsim {

FramingKind frame_framing() {
  using K = ParamKind;
  using F = Framing;
  FramingKind f;
  f.name = "frame";
  f.params = param_block<F>(
      "frame",
      {bind(param("header_bytes", K::kBytes, "0B", "bytes",
                  "Per-packet header and trailer incl. FCS (framing: frame).", 0),
            &F::header_bytes),
       bind(param("min_frame_bytes", K::kBytes, "0B", "bytes",
                  "Frames shorter than this are padded (framing: frame).", 0),
            &F::min_frame_bytes),
       bind(param("gap_bytes", K::kBytes, "0B", "bytes",
                  "Preamble + SFD + inter-frame gap per packet (framing: frame).", 0),
            &F::gap_bytes)});
  f.apply = [](LinkParams& l, const std::any& p) {
    const F& x = std::any_cast<const F&>(p);
    l.framing.kind = Framing::Kind::kFrame;
    l.framing.header_bytes = x.header_bytes;
    l.framing.min_frame_bytes = x.min_frame_bytes;
    l.framing.gap_bytes = x.gap_bytes;
  };
  return f;
}

}  // namespace fabricsim
