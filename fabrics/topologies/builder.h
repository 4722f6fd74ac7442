// What a topology generator builds a system graph with, and the seam generators plug into.
// A generator (one file each in this folder, registered by name in topologies()) reads its
// parameters and adds devices and links through a Builder, which checks every name, port
// and protocol and reports problems at the config's file:line:col. Plain C++ (no SystemC).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "fabrics/config/params.h"
#include "fabrics/topologies/graph.h"
#include "models/core/device_kind.h"
#include "models/core/registry.h"
#include "models/link/link_params.h"

namespace fabricsim::topo {

// Where a link's pieces were written: errors point at the offending one.
struct LinkSite {
  YAML::Node a, b, type;
  std::string path;  // "topology.links[3]" or "topology"
  bool per_key;      // a/b/type are separate keys under path
};

class Builder {
 public:
  // `section` is the `topology:` map of `file`.
  Builder(std::string file, YAML::Node section,
          const std::map<std::string, DeviceType>& device_types,
          const std::map<std::string, LinkParams>& link_types);

  const std::string& file() const { return file_; }
  const YAML::Node& section() const { return section_; }

  // The device type named `name` (written at `at`, key path `path`).
  const DeviceType& device_type(const YAML::Node& at, const std::string& path,
                                const std::string& name) const;
  // The device type named by parameter `key`, which must be of a forwarding kind
  // (want_switch) or a terminal one.
  const DeviceType& device_type(const cfg::Params& p, const char* key, bool want_switch) const;
  const LinkParams& link_type(const YAML::Node& at, const std::string& path,
                              const std::string& name) const;
  // The link type named by parameter `key`.
  const LinkParams& link_type(const cfg::Params& p, const char* key) const;
  std::vector<std::string> device_type_names() const;
  std::vector<std::string> link_type_names() const;

  // Adds a device of type `type` (checked) named `name` (letters, digits, '_'; unique);
  // returns its index in the graph.
  int add_device(const std::string& name, const std::string& type, const YAML::Node& where,
                 const std::string& path, std::vector<int> coords = {});
  // Adds a link of type `type` after checking both ends: the ports exist, each takes one
  // link, and speaks the link's protocol.
  void add_link(LinkEnd a, LinkEnd b, const std::string& type, const LinkSite& at);

  Graph& graph() { return graph_; }
  const Graph& graph() const { return graph_; }
  // Ranks in order as endpoint ids (default: every endpoint in declaration order).
  void set_ranks(std::vector<int> ranks) { ranks_ = std::move(ranks); }
  // Ranks per node of a two-level system (0: one node).
  void set_domain_size(int n) { domain_size_ = n; }
  // The torus the ranks form, sizes per dimension, ranks numbered x fastest (tpu_pod).
  void set_torus(std::vector<int> dims) { torus_ = std::move(dims); }
  const std::vector<int>& torus() const { return torus_; }
  // A twisted torus (tpu_pod `twisted: true`): the short dimensions' wraparounds are shifted,
  // so a ring per dimension of torus() is not a ring of neighbours (torus algorithms refuse).
  void set_torus_twisted(bool t) { torus_twisted_ = t; }
  bool torus_twisted() const { return torus_twisted_; }
  // The topology as results.json echoes it (default: the generator's parameters).
  void set_resolved(nlohmann::json j) { resolved_ = std::move(j); }

  // Refuse, at the topology section, a graph whose devices and links alone would take more
  // than `bytes` once elaborated (`per_device` and `per_link` each): a generator asked for a
  // million links stops at the first link over the budget instead of building them all.
  void set_memory_budget(double bytes, double per_device, double per_link) {
    budget_ = bytes;
    per_device_ = per_device;
    per_link_ = per_link;
  }

  // After the generator: indexes ports, checks every terminal device's ports are linked and
  // that there is an endpoint, and fills the default ranks.
  void finish();
  std::vector<int>& ranks() { return ranks_; }
  int domain_size() const { return domain_size_; }
  nlohmann::json& resolved() { return resolved_; }

 private:
  std::string file_;
  YAML::Node section_;
  const std::map<std::string, DeviceType>& device_types_;
  const std::map<std::string, LinkParams>& link_types_;
  Graph graph_;
  std::map<std::pair<int, int>, std::string> bound_;  // (device, port) -> where linked
  std::vector<int> ranks_;
  int domain_size_ = 0;
  std::vector<int> torus_;
  bool torus_twisted_ = false;
  nlohmann::json resolved_;
  double budget_ = 0, per_device_ = 0, per_link_ = 0, spent_ = 0;
  void spend(double bytes);
};

struct TopologyKind {
  std::string name;     // the `type:` of the topology section
  std::string summary;  // for `fabricsim describe`
  std::vector<ParamSpec> params;
  // The generator reads its section itself (lists of devices and links) instead of
  // declaring parameters: every key but `type` is its own to check.
  bool reads_section = false;
  // Builds the graph; `p` holds the declared parameters (empty when reads_section).
  std::function<void(const cfg::Params& p, Builder& b)> build;
};

Registry<TopologyKind>& topologies();

}  // namespace fabricsim::topo
