// NVLS as a switch feature: its parameters and checks (the reduction engine's throughput,
// the datatypes it reduces), and its part of a switch's model (models/nvlink/nvls_unit.h).
#include <algorithm>

#include "models/core/datatype.h"
#include "models/core/text.h"
#include "models/core/units.h"
#include "models/nvlink/nvls_unit.h"
#include "models/switch/switch_kind.h"

namespace fabricsim {

namespace {

// "none" -> 0, or a bandwidth in bytes per second (the units parser rejects zero).
uint64_t optional_Bps(const ParamReader& r, const std::string& key) {
  const std::string& v = r.str(key);
  if (v == "none") return 0;
  try {
    return parse_bandwidth_bps(v) / 8;
  } catch (const UnitError& ex) {
    r.fail(key, ex.problem(), "a bandwidth such as 2000GB/s, or none");
  }
  return 0;  // not reached: fail() throws
}

void resolve(NvlsParams& n, const ParamReader& r) {
  n.reduce_Bps = optional_Bps(r, "nvls_reduce_bandwidth");
  n.multicast_Bps = optional_Bps(r, "nvls_multicast_bandwidth");
  if (n.enabled && n.reduce_Bps == 0)
    r.fail("nvls", "nvls is true but nvls_reduce_bandwidth is not set",
           "set the reduction engine's throughput, e.g. nvls_reduce_bandwidth: 2000GB/s");
  const std::string& list = r.str("nvls_datatypes");
  const std::vector<std::string> known = datatype_names();
  for (size_t pos = 0; pos <= list.size();) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    std::string t = list.substr(pos, comma - pos);
    t.erase(0, t.find_first_not_of(' '));
    t.erase(t.find_last_not_of(' ') + 1);
    if (std::find(known.begin(), known.end(), t) == known.end())
      r.fail("nvls_datatypes", "'" + t + "' is not a datatype",
             "a comma-separated list; " + did_you_mean(t, known));
    n.datatypes.push_back(t);
    pos = comma + 1;
  }
}

}  // namespace

SwitchFeatureKind nvls_feature() {
  using K = ParamKind;
  SwitchFeatureKind f;
  f.name = "nvls";
  f.params = param_block<NvlsParams>(
      "nvls",
      {bind(param("nvls", K::kBool, "false", "",
                  "In-switch reduction and multicast (NVLink SHARP, NVSwitch3 and later): the "
                  "switch reads a range from every endpoint linked to it, reduces it and "
                  "returns the sum, and replicates multicast stores (models/nvlink/nvls_unit.h). "
                  "Needed by the nvls algorithms."),
            &NvlsParams::enabled),
       param("nvls_reduce_bandwidth", K::kString, "none", "GB/s (input bytes, per chip)",
             "Reduction engine throughput: input bytes it consumes per second, shared by the "
             "chip's ports (a bandwidth such as 2000GB/s). Required when nvls is true."),
       param("nvls_multicast_bandwidth", K::kString, "none", "GB/s (input bytes, per chip)",
             "Multicast engine throughput: stored bytes it replicates per second (a "
             "bandwidth); none = not a bottleneck (replicas still serialise on every output "
             "link)."),
       param("nvls_datatypes", K::kString, "float,half,bfloat16", "",
             "Comma-separated element types the reduction engine supports; an nvls "
             "reduction of another type is a config error.")},
      resolve);
  f.create = [](const std::any& p) -> std::unique_ptr<SwitchFeature> {
    const NvlsParams& n = std::any_cast<const NvlsParams&>(p);
    if (!n.enabled) return nullptr;
    return std::make_unique<NvlsUnit>(n);
  };
  return f;
}

}  // namespace fabricsim
