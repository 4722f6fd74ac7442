// One registration line per plug-in. Each is declared and defined in its own family's
// folder; adding one is its own file plus a line here (docs/extending.md).
#include "fabrics/plugins.h"

#include <mutex>

#include "fabrics/topologies/builder.h"
#include "fabrics/workloads/workload.h"
#include "models/core/device_kind.h"
#include "models/link/link_type.h"
#include "models/switch/switch_kind.h"

namespace fabricsim {

// Link framings.
FramingKind flit_framing();         // models/nvlink/flit_framing.cpp
FramingKind frame_framing();        // models/link/frame_framing.cpp
FramingKind ualink_framing();       // models/ualink/ualink_framing.cpp
// Switch features.
SwitchFeatureKind ualink_class_feature();  // models/ualink/switch_class.cpp
SwitchFeatureKind nvls_feature();          // models/nvlink/nvls_unit.cpp
SwitchFeatureKind host_path_feature();     // models/pcie/root_complex.cpp
SwitchFeatureKind ethernet_mmu_feature();  // models/ethernet/mmu.cpp
SwitchFeatureKind dragonfly_routing_feature();  // models/ethernet/dragonfly_routing.cpp
SwitchFeatureKind torus_routing_feature();  // models/optics/torus_routing.cpp
// Device kinds.
DeviceKind endpoint_kind();      // models/endpoint/endpoint_kind.cpp
DeviceKind switch_kind();        // models/switch/switch_kind.cpp
DeviceKind root_complex_kind();  // models/pcie/root_complex.cpp
DeviceKind ethernet_switch_kind();  // models/ethernet/ethernet_switch.cpp
DeviceKind ocs_kind();              // models/optics/ocs_kind.cpp
DeviceKind uec_nic_kind();          // models/uec/uec_nic_kind.cpp
DeviceKind roce_nic_kind();         // models/roce/roce_nic_kind.cpp
// Workloads.
WorkloadKind allreduce_sweep_workload();   // fabrics/workloads/size_sweeps.cpp
WorkloadKind collective_sweep_workload();  // fabrics/workloads/size_sweeps.cpp
WorkloadKind ddp_step_workload();          // fabrics/workloads/training_steps.cpp
WorkloadKind fsdp_step_workload();         // fabrics/workloads/training_steps.cpp
WorkloadKind moe_layer_workload();         // fabrics/workloads/training_steps.cpp
WorkloadKind tp_layer_workload();          // fabrics/workloads/training_steps.cpp
WorkloadKind chakra_workload();            // fabrics/workloads/chakra.cpp
WorkloadKind incast_workload();            // fabrics/workloads/traffic.cpp
WorkloadKind permutation_workload();       // fabrics/workloads/traffic.cpp
WorkloadKind ocs_phases_workload();        // fabrics/workloads/ocs_phases.cpp

namespace topo {
TopologyKind switched_node_topology();  // fabrics/topologies/switched_node.cpp
TopologyKind multi_node_topology();     // fabrics/topologies/multi_node.cpp
TopologyKind two_tier_topology();       // fabrics/topologies/two_tier.cpp
TopologyKind explicit_topology();       // fabrics/topologies/explicit.cpp
TopologyKind full_mesh_topology();      // fabrics/topologies/full_mesh.cpp
TopologyKind fat_tree_topology();       // fabrics/topologies/fat_tree.cpp
TopologyKind rail_optimized_topology(); // fabrics/topologies/rail_optimized.cpp
TopologyKind dragonfly_topology();      // fabrics/topologies/dragonfly.cpp
TopologyKind tpu_pod_topology();        // fabrics/topologies/tpu_pod.cpp
TopologyKind rack_spine_topology();     // fabrics/topologies/rack_spine.cpp
}  // namespace topo

void register_builtin_plugins() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Framings and features first: the kinds that take them look them up.
    framings().add(flit_framing());
    framings().add(frame_framing());
    framings().add(ualink_framing());
    switch_features().add(ualink_class_feature());
    switch_features().add(nvls_feature());
    switch_features().add(host_path_feature());
    switch_features().add(ethernet_mmu_feature());
    switch_features().add(dragonfly_routing_feature());
    switch_features().add(torus_routing_feature());
    device_kinds().add(endpoint_kind());
    device_kinds().add(switch_kind());
    device_kinds().add(root_complex_kind());
    device_kinds().add(ethernet_switch_kind());
    device_kinds().add(uec_nic_kind());
    device_kinds().add(roce_nic_kind());
    device_kinds().add(ocs_kind());
    topo::topologies().add(topo::switched_node_topology());
    topo::topologies().add(topo::multi_node_topology());
    topo::topologies().add(topo::two_tier_topology());
    topo::topologies().add(topo::explicit_topology());
    topo::topologies().add(topo::full_mesh_topology());
    topo::topologies().add(topo::fat_tree_topology());
    topo::topologies().add(topo::rail_optimized_topology());
    topo::topologies().add(topo::dragonfly_topology());
    topo::topologies().add(topo::tpu_pod_topology());
    topo::topologies().add(topo::rack_spine_topology());
    workloads().add(allreduce_sweep_workload());
    workloads().add(collective_sweep_workload());
    workloads().add(ddp_step_workload());
    workloads().add(fsdp_step_workload());
    workloads().add(moe_layer_workload());
    workloads().add(tp_layer_workload());
    workloads().add(chakra_workload());
    workloads().add(incast_workload());
    workloads().add(permutation_workload());
    workloads().add(ocs_phases_workload());
  });
}

}  // namespace fabricsim
