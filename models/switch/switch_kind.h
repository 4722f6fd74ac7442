// Device kinds built on the one switch frame (models/switch/switch.h), and the seam through
// which switch features plug into it: a feature (in-switch reduction and multicast, a
// root complex's host path, a switch class's latency limit; next a shared buffer, ECN, PFC,
// trimming) declares its parameters and checks here and builds its part of the model.
// Plain C++: the config layer reads kinds and features through this header.
#pragma once
#include <any>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/core/device_kind.h"
#include "models/core/param_spec.h"
#include "models/core/registry.h"

namespace fabricsim {

class SwitchFeature;

struct SwitchFeatureKind {
  std::string name;  // also the name of its params block (DeviceType::find)
  ParamBlock params;
  // Checks one switch of a built system that has this feature (optional).
  std::function<void(const DeviceCheck&, const std::any& params)> check = {};
  // The feature's part of one switch's model; empty, or returning nullptr, when there is
  // nothing to simulate (the feature is off, or is a limit checked at load time only).
  std::function<std::unique_ptr<SwitchFeature>(const std::any& params)> create = {};
};

Registry<SwitchFeatureKind>& switch_features();

// The frame's own parameters (bound to SwitchParams).
const ParamBlock& switch_frame_params();

// A device kind on the switch frame: it forwards, its ports are one group, its parameters
// are the frame's then each feature's (registered in switch_features(), in this order),
// its check runs every feature's check and its model is a Switch with those features.
// `frame` is the block of the frame's keys it offers (named "switch_frame", bound to
// SwitchParams): switch_frame_params() by default; a kind that fixes some frame settings
// (the Ethernet switch: output-queued, with traffic classes) declares its own.
DeviceKind switch_frame_kind(std::string name, std::string summary,
                             std::vector<std::string> features,
                             const ParamBlock& frame = switch_frame_params());

}  // namespace fabricsim
