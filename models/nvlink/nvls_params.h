// Parameters of NVLS, the in-switch reduction and multicast of NVSwitch3 and later
// (declared and modelled in models/nvlink/nvls_unit.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim {

struct NvlsParams {
  bool enabled = false;                // nvls
  uint64_t reduce_Bps = 0;             // reduction engine: input bytes per second, per chip
  uint64_t multicast_Bps = 0;          // multicast engine: input bytes per second (0: no limit)
  uint64_t latency_ps = 0;             // added to every result and replica (the NVLS path)
  std::vector<std::string> datatypes;  // element types the reduction engine reduces
};

}  // namespace fabricsim
