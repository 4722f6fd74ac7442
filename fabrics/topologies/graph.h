// The system graph that topology generators emit and the elaborator instantiates: plain
// data, no SystemC. A device is an instance of a device type; what it does comes from its
// kind (forwarding devices relay traffic, terminal ones source and sink it); links join
// (device, port) pairs.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace fabricsim::topo {

struct Device {
  std::string name;       // instance name, as the user reads it back ("gpu0")
  std::string type;       // device type name from device_types
  bool forwards = false;  // its kind relays traffic (routes pass through it)
  bool terminal = false;  // its kind sources and sinks traffic (an endpoint)
  int ports = 0;
  int endpoint_id = -1;   // ordinal among terminal devices (terminal only)
  std::vector<int> coords;  // the generator's coordinates of it (dragonfly: group, groups,
                            // endpoints per group), handed to its model
  YAML::Node where;       // config node that declared it (for errors)
  // Circuit devices (an optical circuit switch, DeviceKind::circuits): circuit[p] = the
  // port joined to port p by light, -1 dark. Empty for every other device.
  std::vector<int> circuit;
};

struct LinkEnd {
  int device = -1;
  int port = -1;
};

struct Link {
  LinkEnd a, b;
  std::string type;       // link type name from link_types
  YAML::Node where;
};

struct Graph {
  std::vector<Device> devices;
  std::vector<Link> links;
  std::map<std::string, int> by_name;
  std::vector<int> endpoints;  // device index of endpoint id k

  // Adds a device; returns its index. Endpoint ids follow declaration order.
  int add_device(Device d);
  // The peer of (device, port), or {-1,-1} if unbound. Valid after index_ports(). A port
  // linked to a circuit device sees through it: its peer is the device at the far end of
  // the circuit ({-1,-1} while the circuit is dark). A circuit device's own ports see
  // their physical peers.
  LinkEnd peer(int device, int port) const { return peers_[device][port]; }
  // The device and port at the other end of the link on (device, port), circuits ignored.
  LinkEnd physical_peer(int device, int port) const { return physical_[device][port]; }
  void index_ports();
  // Replaces a circuit device's map and re-indexes the peers seen through it.
  void set_circuit(int device, std::vector<int> circuit);

 private:
  void index_circuits();
  std::vector<std::vector<LinkEnd>> peers_, physical_;
};

// Which endpoints can reach each other, in O(devices + links): traffic relays through
// forwarding devices only, so two endpoints are connected when they are linked directly
// or both linked into one component of forwarding devices. Agrees with compute_routes
// (a route exists exactly when connected() is true) at a fraction of its memory.
class Reach {
 public:
  explicit Reach(const Graph& g);
  // a and b are endpoint devices (graph indices).
  bool connected(int a, int b) const;

 private:
  const Graph& g_;
  std::vector<int> component_;            // forwarding device -> component id; -1 for others
  std::vector<std::vector<int>> touches_;  // device -> sorted ids of adjacent components
};

// Shortest paths towards one destination device on demand, for the steps that need the
// paths of a few (source, destination) pairs rather than compute_routes' table of every
// device to every endpoint (the cost model behind `auto`, the flow level). Breadth-first
// distances to the destination, relaying through forwarding devices only (as
// compute_routes); route_ports gives the same ports as compute_routes' routes.
class PathSearch {
 public:
  // `cache_devices`: distances of up to that many devices' worth of whole searches are
  // kept, one array per destination, so that the paths of many sources to one destination
  // search once (0: none kept; every search stops at the level where it reaches its source).
  explicit PathSearch(const Graph& g, size_t cache_devices = 0);
  // Distances towards device `to`, at least up to the level before device `from`; true when
  // `from` is reached (false when from == to, or nothing relays between them).
  bool search(int from, int to);
  // After search(from, to), for v on a shortest path from `from`: the ports of v whose peer
  // is one step closer to `to` and relays or is `to`, ascending.
  void route_ports(int v, std::vector<int>& out) const;
  std::vector<int> route_ports(int v) const {
    std::vector<int> out;
    route_ports(v, out);
    return out;
  }

 private:
  const Graph& g_;
  size_t cache_left_;                      // devices' worth of cache still free
  std::vector<int> scratch_;               // per device, -1 unseen (searches not cached)
  std::vector<int> touched_;               // set in scratch_ by the last search
  std::map<int, std::vector<int>> cached_;  // destination -> distances of a whole search
  const int* dist_ = nullptr;              // the last search's distances
  int to_ = -1;
};

// g without the links marked in `removed` (per link index; faults), its ports indexed.
Graph without_links(const Graph& g, const std::vector<char>& removed);

// routes[device][endpoint id] = ports of `device` on a shortest path to that endpoint.
// Paths pass through forwarding devices only.
using Routes = std::vector<std::vector<std::vector<int>>>;
Routes compute_routes(const Graph& g);

}  // namespace fabricsim::topo
