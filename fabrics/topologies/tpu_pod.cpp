// tpu_pod: a TPU v4-style pod. `cubes` cubes of kx x ky x kz chips (default 4x4x4); inside a
// cube every chip's router links to its neighbours electrically; the chips on a cube's
// faces link optically to optical circuit switches, one switch per (dimension, face
// position) shared by all cubes: the switch of dimension d at face position (u, v) has
// port 2c for cube c's chip on the + face (its +d port) and port 2c + 1 for the chip on
// the - face (its -d port). With 64 cubes of 4x4x4 that is 48 switches of 128 used ports
// and 6,144 optical links (Jouppi et al., ISCA 2023).
//
// A slice of `slice` = [X, Y, Z] cubes (the first X*Y*Z cubes) is wired as a 3D torus of
// (X kx) x (Y ky) x (Z kz) chips: in each switch, cube c's + face joins the - face of the
// next cube of the slice along d (wrapping; a slice one cube long joins a cube to itself).
// The other cubes' ports stay dark (spares). Each switch gets its circuit map as its
// coordinates (optical_circuit_switch reads them as its map). With `twisted: true` (a slice
// of q x q x 2q or q x 2q x 2q chips) a short dimension's wraparound also moves q chips
// along each long dimension: the same switches and fibres, another map (docs/optical.md,
// "Twisted tori"); the workload is then told of no torus.
//
// A chip is an endpoint (its DMA and reduction engine) linked by `local_links` links to
// its router (a forwarding device: ports 0..5 = +x, -x, +y, -y, +z, -z, then the local
// ones). Names: t<cube>_<x>_<y>_<z> (chip), r<cube>_<x>_<y>_<z> (router),
// ocs_<dim>_<u>_<v> (switch). Ranks: the slice's chips, x fastest, then y, then z; a chip's
// coordinates are its position in the slice's torus and the torus size [x, y, z, X, Y, Z].
#include <algorithm>

#include "fabrics/topologies/builder.h"

namespace fabricsim::topo {

namespace {

const char* const kDim = "xyz";

void build(const cfg::Params& p, Builder& b) {
  const std::vector<int64_t>& kv = p.int_list("cube");
  if (kv.size() != 3) p.fail("cube", "needs 3 sizes [x, y, z]", "e.g. cube: [4, 4, 4]");
  const int k[3] = {int(kv[0]), int(kv[1]), int(kv[2])};
  const int cubes = int(p.integer("cubes"));
  const std::vector<int64_t>& sv = p.int_list("slice");
  if (sv.size() != 3) p.fail("slice", "needs 3 sizes in cubes [X, Y, Z]", "e.g. slice: [4, 4, 4]");
  const int S[3] = {int(sv[0]), int(sv[1]), int(sv[2])};
  if (S[0] * S[1] * S[2] > cubes)
    p.fail("slice",
           "a slice of " + std::to_string(S[0] * S[1] * S[2]) + " cubes in a pod of " +
               std::to_string(cubes),
           "use a slice of at most `cubes` cubes");
  const int local = int(p.integer("local_links"));
  const DeviceType& chip = b.device_type(p, "chip_type", false);
  const DeviceType& router = b.device_type(p, "router_type", true);
  const DeviceType& ocs = b.device_type(p.node("ocs_type"), "topology.ocs_type", p.str("ocs_type"));
  if (!ocs.kind->circuits)
    p.fail("ocs_type", "'" + p.str("ocs_type") + "' is not an optical circuit switch",
           "use a device type of type optical_circuit_switch");
  if (ocs.ports < 2 * cubes)
    p.fail("ocs_type",
           "'" + p.str("ocs_type") + "' has " + std::to_string(ocs.ports) + " ports; " +
               std::to_string(cubes) + " cubes need " + std::to_string(2 * cubes),
           "use fewer cubes or a larger switch");
  if (router.ports < 6 + local)
    p.fail("router_type",
           "'" + p.str("router_type") + "' has " + std::to_string(router.ports) +
               " ports; a torus router needs 6 + local_links = " + std::to_string(6 + local),
           "give the router type more ports");
  if (chip.ports < local)
    p.fail("local_links", std::to_string(local) + " local links but chip type '" +
                              p.str("chip_type") + "' has " + std::to_string(chip.ports) +
                              " ports",
           "use local_links = the chip's ports");
  const std::string et = p.str("electrical_link_type"), ot = p.str("optical_link_type"),
                    lt = p.str("local_link_type");
  b.link_type(p, "electrical_link_type");
  b.link_type(p, "optical_link_type");
  b.link_type(p, "local_link_type");
  const YAML::Node& t = b.section();
  const LinkSite site{t, t, t, "topology", false};

  // Cube c's position in the slice's cube grid (cubes beyond the slice: spares).
  const int in_slice = S[0] * S[1] * S[2];
  auto cube_pos = [&](int c, int d) {
    const int x = c % S[0], y = (c / S[0]) % S[1], z = c / (S[0] * S[1]);
    return d == 0 ? x : d == 1 ? y : z;
  };
  auto cube_at = [&](int x, int y, int z) { return x + S[0] * (y + S[1] * z); };
  const int T[3] = {S[0] * k[0], S[1] * k[1], S[2] * k[2]};  // the slice's torus

  // A twisted torus (Camara et al., IEEE TPDS 2010; TPU v4, Jouppi et al., ISCA 2023): on a
  // slice of q x q x 2q or q x 2q x 2q chips, every wraparound of a short dimension (q)
  // lands q further on in each long dimension (2q). The shift is whole cubes, so it is only
  // a different circuit map: the same fibres, the same number of circuits.
  const bool twisted = p.boolean("twisted");
  if (twisted) {
    const int q = std::min({T[0], T[1], T[2]});
    int shorts = 0, longs = 0;
    for (int d = 0; d < 3; ++d) {
      if (T[d] == q) ++shorts;
      if (T[d] == 2 * q) ++longs;
    }
    if (shorts + longs != 3 || longs == 0)
      p.fail("twisted",
             "a twisted torus needs a slice of q x q x 2q or q x 2q x 2q chips (in any order); "
             "this slice is " + std::to_string(T[0]) + "x" + std::to_string(T[1]) + "x" +
                 std::to_string(T[2]),
             "use slice: [1, 1, 2] or [1, 2, 2] cubes (e.g. 4x4x8, 4x8x8), or twisted: false");
    for (int e = 0; e < 3; ++e)
      if (T[e] == 2 * q && q % k[e] != 0)
        p.fail("twisted",
               "the twist shifts dimension " + std::string(1, kDim[e]) + " by " +
                   std::to_string(q) + " chips, not a whole number of cubes of " +
                   std::to_string(k[e]) + " (the circuit switches join whole cube faces)",
               "use a slice whose short side is a multiple of the cube, or twisted: false");
  }
  auto twist_of = [&](int d, int e) {  // cubes the wraparound of d moves along e
    return twisted && T[d] < T[e] ? T[d] / k[e] : 0;
  };

  const int per_cube = k[0] * k[1] * k[2];
  std::vector<int> routers(size_t(cubes * per_cube)), chips(routers.size());
  auto idx = [&](int c, int x, int y, int z) { return c * per_cube + x + k[0] * (y + k[1] * z); };
  std::vector<int> rank_of(routers.size(), -1);
  for (int c = 0; c < cubes; ++c)
    for (int z = 0; z < k[2]; ++z)
      for (int y = 0; y < k[1]; ++y)
        for (int x = 0; x < k[0]; ++x) {
          const std::string tail = std::to_string(c) + "_" + std::to_string(x) + "_" +
                                   std::to_string(y) + "_" + std::to_string(z);
          std::vector<int> coords;
          if (c < in_slice) {
            const int g[3] = {cube_pos(c, 0) * k[0] + x, cube_pos(c, 1) * k[1] + y,
                              cube_pos(c, 2) * k[2] + z};
            coords = {g[0], g[1], g[2], T[0], T[1], T[2]};
            rank_of[size_t(idx(c, x, y, z))] = g[0] + T[0] * (g[1] + T[1] * g[2]);
          }
          const int i = idx(c, x, y, z);
          chips[size_t(i)] = b.add_device("t" + tail, p.str("chip_type"), t, "topology", coords);
          routers[size_t(i)] =
              b.add_device("r" + tail, p.str("router_type"), t, "topology", coords);
          for (int l = 0; l < local; ++l)
            b.add_link({chips[size_t(i)], l}, {routers[size_t(i)], 6 + l}, lt, site);
        }
  // Electrical links inside each cube: +d port of a chip to the -d port of its neighbour.
  for (int c = 0; c < cubes; ++c)
    for (int z = 0; z < k[2]; ++z)
      for (int y = 0; y < k[1]; ++y)
        for (int x = 0; x < k[0]; ++x) {
          const int at[3] = {x, y, z};
          for (int d = 0; d < 3; ++d) {
            if (at[d] + 1 >= k[d]) continue;
            int n[3] = {x, y, z};
            ++n[d];
            b.add_link({routers[size_t(idx(c, x, y, z))], 2 * d},
                       {routers[size_t(idx(c, n[0], n[1], n[2]))], 2 * d + 1}, et, site);
          }
        }
  // One switch per (dimension, face position); the optical links and the slice's circuits.
  for (int d = 0; d < 3; ++d) {
    const int du = d == 0 ? 1 : 0, dv = d == 2 ? 1 : 2;  // the face's two dimensions
    for (int v = 0; v < k[dv]; ++v)
      for (int u = 0; u < k[du]; ++u) {
        std::vector<int> map(size_t(ocs.ports), -1);
        for (int c = 0; c < in_slice; ++c) {
          int n[3] = {cube_pos(c, 0), cube_pos(c, 1), cube_pos(c, 2)};
          if (n[d] + 1 == S[d])  // the wraparound: twisted, it moves along the long dimensions
            for (int e = 0; e < 3; ++e) n[e] = (n[e] + twist_of(d, e)) % S[e];
          n[d] = (n[d] + 1) % S[d];
          const int next = cube_at(n[0], n[1], n[2]);
          map[size_t(2 * c)] = 2 * next + 1;
          map[size_t(2 * next + 1)] = 2 * c;
        }
        const int sw = b.add_device(std::string("ocs_") + kDim[d] + "_" + std::to_string(u) +
                                        "_" + std::to_string(v),
                                    p.str("ocs_type"), t, "topology", map);
        for (int c = 0; c < cubes; ++c) {
          int plus[3], minus[3];
          plus[d] = k[d] - 1;
          minus[d] = 0;
          plus[du] = minus[du] = u;
          plus[dv] = minus[dv] = v;
          b.add_link({routers[size_t(idx(c, plus[0], plus[1], plus[2]))], 2 * d}, {sw, 2 * c},
                     ot, site);
          b.add_link({routers[size_t(idx(c, minus[0], minus[1], minus[2]))], 2 * d + 1},
                     {sw, 2 * c + 1}, ot, site);
        }
      }
  }
  // Ranks: the slice's chips in torus order (endpoint ids follow declaration order).
  std::vector<int> ranks(size_t(in_slice * per_cube));
  for (size_t i = 0; i < rank_of.size(); ++i)
    if (rank_of[i] >= 0) ranks[size_t(rank_of[i])] = b.graph().devices[size_t(chips[i])].endpoint_id;
  b.set_ranks(ranks);
  b.set_torus({T[0], T[1], T[2]});
  b.set_torus_twisted(twisted);
}

}  // namespace

TopologyKind tpu_pod_topology() {
  using K = ParamKind;
  TopologyKind k;
  k.name = "tpu_pod";
  k.summary =
      "A TPU v4-style pod: cubes of chips with electrical links inside, optical faces through "
      "optical circuit switches (one per dimension and face position), a slice of cubes wired "
      "as a 3D torus by the switches' circuits. Names: t<cube>_<x>_<y>_<z> (chip), "
      "r<cube>_<x>_<y>_<z> (router), ocs_<dim>_<u>_<v>.";
  k.params = {
      param("cube", K::kIntList, "[4, 4, 4]", "chips", "Chips per cube along x, y, z.", 1, 64),
      param("cubes", K::kInt, "64", "cubes",
            "Cubes in the pod, all linked to the switches (a switch needs 2 ports per cube).", 1,
            4096),
      param("slice", K::kIntList, "[4, 4, 4]", "cubes",
            "The slice wired as a torus, in cubes along x, y, z (the first X*Y*Z cubes; the "
            "others are spares with dark ports).",
            1, 4096),
      param("twisted", K::kBool, "false", "",
            "Wire the slice as a twisted torus (TPU v4): on q x q x 2q or q x 2q x 2q chips "
            "(q a multiple of the cube along the long dimensions), each wraparound of a short "
            "dimension lands q chips further on in every long dimension. Only the circuit maps "
            "differ. Rings per dimension are then 2q long; torus collectives refuse it."),
      param("chip_type", K::kString, "", "", "Endpoint type of a chip."),
      param("router_type", K::kString, "", "",
            "Forwarding type of a chip's router (ports 0..5: +x, -x, +y, -y, +z, -z; then the "
            "local links)."),
      param("ocs_type", K::kString, "", "", "Optical circuit switch type."),
      param("local_links", K::kInt, "1", "links", "Links from a chip to its router.", 1, 64),
      param("electrical_link_type", K::kString, "", "", "Link type inside a cube."),
      param("optical_link_type", K::kString, "", "",
            "Link type from a face chip's router to its switch (one fibre side of a circuit)."),
      param("local_link_type", K::kString, "", "", "Link type chip - router.")};
  k.build = build;
  return k;
}

}  // namespace fabricsim::topo
