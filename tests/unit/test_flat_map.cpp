// FlatMap (models/core/flat_map.h) against std::unordered_map: random inserts, updates,
// lookups, erases and for_each, including keys that collide in their home slot, so the backward
// shift of erase() is exercised on wrapped probe runs.
#include "models/core/flat_map.h"

#include <cstdint>
#include <unordered_map>

#include <gtest/gtest.h>

#include "models/core/rng.h"

namespace fabricsim {
namespace {

// Hashes only the key's low bits: many keys share a home slot, long probe runs.
struct Coarse {
  size_t operator()(uint64_t k) const { return size_t(k & 7); }
};
struct Plain {
  size_t operator()(uint64_t k) const { return size_t(k); }
};

template <typename Hash>
void agrees_with_unordered_map(uint64_t key_range, int steps) {
  Rng rng(11, "flat_map");
  FlatMap<uint64_t, uint32_t, Hash> m;
  std::unordered_map<uint64_t, uint32_t> ref;
  for (int s = 0; s < steps; ++s) {
    const uint64_t k = rng.below(key_range);
    switch (rng.below(4)) {
      case 0:
      case 1: {  // insert or update
        const uint32_t v = uint32_t(rng.next());
        m[k] = v;
        ref[k] = v;
        break;
      }
      case 2: {  // erase if present
        auto it = m.find(k);
        ASSERT_EQ(it != m.end(), ref.count(k) == 1) << "step " << s;
        if (it != m.end()) {
          m.erase(it);
          ref.erase(k);
        }
        break;
      }
      default: {  // increment, as the engine counts early arrivals
        ++m[k];
        ++ref[k];
      }
    }
    ASSERT_EQ(m.size(), ref.size()) << "step " << s;
    if (s % 64 == 0) {  // every key's value, and absent keys absent
      for (uint64_t q = 0; q < key_range; ++q) {
        auto it = m.find(q);
        auto r = ref.find(q);
        ASSERT_EQ(it != m.end(), r != ref.end()) << "key " << q << " step " << s;
        if (it != m.end()) {
          ASSERT_EQ(it->second, r->second) << "key " << q;
        }
      }
      // for_each visits every key once, with its value (the endpoint sums its partial
      // messages' bytes with it).
      std::unordered_map<uint64_t, uint32_t> seen;
      m.for_each([&](uint64_t key, uint32_t v) {
        ASSERT_TRUE(seen.emplace(key, v).second) << key;
      });
      ASSERT_EQ(seen, ref) << "step " << s;
    }
  }
}

TEST(FlatMap, AgreesWithUnorderedMapOnRandomOperations) {
  agrees_with_unordered_map<Plain>(300, 20000);
}

TEST(FlatMap, AgreesWithUnorderedMapWhenKeysCollide) {
  agrees_with_unordered_map<Coarse>(200, 20000);
}

TEST(FlatMap, ClearKeepsNothingAndTheMapIsReusable) {
  FlatMap<uint64_t, uint32_t, Plain> m;
  for (uint64_t k = 0; k < 100; ++k) m[k] = uint32_t(k + 1);
  EXPECT_EQ(m.size(), 100u);
  m.clear();
  EXPECT_EQ(m.size(), 0u);
  for (uint64_t k = 0; k < 100; ++k) EXPECT_EQ(m.count(k), 0u) << k;
  EXPECT_EQ(m[5], 0u);  // a fresh value, not the old one
  EXPECT_EQ(m.size(), 1u);
}

}  // namespace
}  // namespace fabricsim
