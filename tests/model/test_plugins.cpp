// The plug-in seams, proven from this file alone: a device kind (a two-port repeater with
// its own model, parameters and check) and a topology generator (a line of repeaters
// between two endpoints) are declared and registered here, without touching models/ or
// fabrics/, and a config that uses both runs through the command line's own entry point
// (app_main: load, check, elaborate, simulate, account, results.json). docs/extending.md
// walks through this file.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "fabrics/cli/app.h"
#include "fabrics/topologies/builder.h"
#include "models/core/device_kind.h"
#include "models/core/device_model.h"
#include "models/core/fifo.h"
#include "models/link/port.h"
#include "models/link/link_type.h"

namespace fabricsim {
namespace {

// ---------------------------------------------------------------------------------------
// A device kind: a two-port repeater. Whatever arrives on one port leaves on the other
// `latency` after it has fully arrived (store and forward per transaction); its receive
// buffer is freed, and the credits go back upstream, once the transaction's tail has left.

struct RepeaterParams {
  std::string protocol;
  uint64_t latency_ps = 0;
};

class Repeater : public sc_core::sc_module, public PortOwner, public DeviceModel {
 public:
  Repeater(sc_core::sc_module_name n, std::string name, const RepeaterParams& p,
           const std::vector<int>& used)
      : sc_module(n), name_(std::move(name)) {
    for (int i : used)
      ports_[i] = std::make_unique<Port>(("port_" + std::to_string(i)).c_str(),
                                         name_ + ".port[" + std::to_string(i) + "]", this, i,
                                         /*rx_at_head=*/false, p.latency_ps);
  }
  const std::string& display_name() const override { return name_; }
  Port& port(int i) override { return *ports_[i]; }
  void set_routes(const std::vector<std::vector<int>>&) override {}  // one way out
  nlohmann::json stats_json(uint64_t) const override { return {{"forwarded", forwarded_}}; }

  Packet* tx_peek(int port) override { return out_[port].empty() ? nullptr : out_[port].front(); }
  void tx_pop(int port, Packet* p) override {
    out_[port].pop();
    ++forwarded_;
    // The tail has arrived (store and forward): the input buffer frees as the copy starts.
    ports_[1 - port]->release_rx(p, 0);
  }
  void rx_arrive(int port, Packet* p) override {
    out_[1 - port].push(p);
    ports_[1 - port]->kick();
  }

 private:
  std::string name_;
  std::unique_ptr<Port> ports_[2];
  Fifo<Packet*> out_[2];
  uint64_t forwarded_ = 0;
};

DeviceKind repeater_kind() {
  DeviceKind k;
  k.name = "test_repeater";
  k.summary = "A two-port repeater (tests/model/test_plugins.cpp).";
  k.forwards = true;
  k.params.push_back(param_block<RepeaterParams>(
      "repeater",
      {bind(choice("protocol", link_protocols(), "", "Protocol of both ports."),
            &RepeaterParams::protocol),
       bind(param("latency", ParamKind::kTime, "10ns", "ns",
                  "From a transaction's tail arriving to it leaving on the other port.", 0),
            &RepeaterParams::latency_ps)}));
  k.ports = [](const DeviceType& t) {
    return std::vector<PortGroup>{{"fabric", 2, t.get<RepeaterParams>().protocol}};
  };
  // Its own check of a built system: both ports linked, with links of one type.
  k.check = [](const DeviceCheck& c) {
    if (c.links().size() == 2 && c.links()[0].link_type != c.links()[1].link_type)
      c.fail_link(1, c.device() + " joins link types " + c.links()[0].link_type + " and " +
                         c.links()[1].link_type,
                  "a repeater does not convert: use one link type on both sides");
  };
  k.create = [](const DeviceBuild& b) -> std::unique_ptr<DeviceModel> {
    return std::make_unique<Repeater>(b.name.c_str(), b.name, b.type.get<RepeaterParams>(),
                                      b.used_ports);
  };
  return k;
}

// ---------------------------------------------------------------------------------------
// A topology generator: gpu0 - r0 - r1 - ... - r(k-1) - gpu1.

topo::TopologyKind line_topology() {
  using K = ParamKind;
  topo::TopologyKind t;
  t.name = "test_line";
  t.summary = "Two endpoints joined through a line of repeaters (tests/model/test_plugins.cpp).";
  t.params = {param("endpoint_type", K::kString, "", "", "Endpoint type."),
              param("repeater_type", K::kString, "", "", "Repeater type."),
              param("repeaters", K::kInt, "1", "", "Repeaters in the line.", 0, 8),
              param("link_type", K::kString, "", "", "Link type of every hop."),
              param("last_link_type", K::kString, "same", "", "Link type of the last hop.")};
  t.build = [](const cfg::Params& p, topo::Builder& b) {
    const std::string et = p.str("endpoint_type"), rt = p.str("repeater_type");
    b.device_type(p, "endpoint_type", false);
    b.device_type(p, "repeater_type", true);
    const std::string lt = p.str("link_type");
    b.link_type(p, "link_type");
    const std::string last = p.str("last_link_type") == "same" ? lt : p.str("last_link_type");
    const YAML::Node& at = b.section();
    const topo::LinkSite site{at, at, at, "topology", false};
    const int a = b.add_device("gpu0", et, at, "topology");
    const int z = b.add_device("gpu1", et, at, "topology");
    int prev = a, prev_port = 0;
    const int k = int(p.integer("repeaters"));
    for (int i = 0; i < k; ++i) {
      const int r = b.add_device("r" + std::to_string(i), rt, at, "topology");
      b.add_link({prev, prev_port}, {r, 0}, lt, site);
      prev = r;
      prev_port = 1;
    }
    b.add_link({prev, prev_port}, {z, 0}, last, site);
  };
  return t;
}

// Registered once per process, before the command line registers the built-ins.
void register_test_plugins() {
  if (device_kinds().find("test_repeater")) return;
  device_kinds().add(repeater_kind());
  topo::topologies().add(line_topology());
}

// ---------------------------------------------------------------------------------------

std::string write_config(const std::string& name, int repeaters,
                         const std::string& last_link = "same") {
  const std::string file = "/tmp/fabricsim_plugins_" + name + "_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream f(file);
  f << "name: " << name << R"(
link_types:
  hop:   {protocol: generic, lanes: 1, lane_rate: 100Gb/s, framing: flit, flit_bytes: 16B,
          overhead_flits: 1, packet_payload: 64B, latency: 100ns, rx_buffer: 4KiB}
  other: {protocol: generic, lanes: 1, lane_rate: 100Gb/s, framing: flit, flit_bytes: 16B,
          overhead_flits: 1, packet_payload: 64B, latency: 200ns, rx_buffer: 4KiB}
device_types:
  gpu: {type: endpoint, protocol: generic, ports: 1, memory_bandwidth: 1000GB/s}
  rep: {type: test_repeater, protocol: generic, latency: 25ns}
topology: {type: test_line, endpoint_type: gpu, repeater_type: rep, link_type: hop,
           repeaters: )" << repeaters << ", last_link_type: " << last_link << R"(}
workload: {type: collective_sweep, collective: sendrecv, min_bytes: 64B, max_bytes: 64B}
)";
  return file;
}

nlohmann::json run(const std::string& config, const std::string& out) {
  const int rc = app_main({"run", config, "--quiet", "--out", out});
  EXPECT_EQ(rc, 0);
  std::ifstream f(out + "/results.json");
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

}  // namespace

// A 64 B message crosses k repeaters: every hop serialises 80 wire bytes (4 data + 1
// overhead flit of 16 B) at 100 Gb/s = 6.4 ns and adds the link's 100 ns; every repeater
// adds its 25 ns. Time = (k + 1)(6.4 + 100) + 25 k ns, exact to the picosecond: a model or
// route that skipped, doubled or misordered a hop would be off by >= 25 ns.
TEST(Plugins, TestOnlyRepeaterAndLineTopologyRunEndToEndAtTheClosedFormLatency) {
  register_test_plugins();
  const int k = 3;
  const std::string out = "/tmp/fabricsim_plugins_out_" + std::to_string(::getpid());
  const nlohmann::json j = run(write_config("line3", k), out);
  ASSERT_TRUE(j.contains("rows"));
  const double time_ns = j["rows"][0]["time_us"].get<double>() * 1e3;
  EXPECT_NEAR(time_ns, (k + 1) * (6.4 + 100.0) + 25.0 * k, 1e-3);
  // The repeaters are devices of the system: their stats, their ports' counters and the
  // end-of-run accounting cover them (both directions: sendrecv on 2 ranks is a swap).
  for (int i = 0; i < k; ++i) {
    const std::string r = "r" + std::to_string(i);
    EXPECT_EQ(j["stats"][r]["forwarded"].get<uint64_t>(), 2u) << r;
    EXPECT_EQ(j["stats"][r + ".port[1]"]["tx_payload_bytes"].get<uint64_t>(), 64u) << r;
  }
  EXPECT_EQ(j["checks"]["packets_outstanding"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["checks"]["payload_bytes_sent"], j["checks"]["payload_bytes_delivered"]);
  EXPECT_EQ(j["resolved_config"]["device_types"]["rep"]["type"], "test_repeater");
  EXPECT_EQ(j["resolved_config"]["topology"]["repeaters"], k);
}

// The kind's own check runs on the built system and reports at the config: a repeater
// between two link types is refused with exit 2, located at the topology.
TEST(Plugins, TestOnlyKindCheckRejectsABadSystemWithALocatedError) {
  register_test_plugins();
  testing::internal::CaptureStderr();
  const int rc = app_main({"check", write_config("mixed", 1, "other")});
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find(": topology: r0 joins link types hop and other; a repeater does not "
                     "convert"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("fabricsim_plugins_mixed"), std::string::npos) << err;
}

// describe lists the test-only types with their declared parameters.
TEST(Plugins, TestOnlyTypesAreDescribed) {
  register_test_plugins();
  testing::internal::CaptureStdout();
  EXPECT_EQ(app_main({"describe", "test_repeater"}), 0);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("latency"), std::string::npos) << out;
  EXPECT_NE(out.find("10ns"), std::string::npos) << out;
}

}  // namespace fabricsim
