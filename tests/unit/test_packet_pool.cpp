// PacketPool: two-line packets unless a model enables transport lines, and then a line
// beside every packet that no packet field shares. Each test runs in its own process
// (gtest_discover_tests), so each starts with an empty global pool.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "models/core/packet.h"

namespace fabricsim {
namespace {

// Acquires n packets (more than one slab) and returns them in acquire order.
std::vector<Packet*> take(size_t n) {
  std::vector<Packet*> v;
  for (size_t i = 0; i < n; ++i) v.push_back(PacketPool::global().acquire());
  return v;
}

void give_back(const std::vector<Packet*>& v) {
  for (Packet* p : v) PacketPool::global().release(p);
}

// The smallest distance between two packets' addresses: the slab's stride.
uintptr_t stride(const std::vector<Packet*>& v) {
  uintptr_t best = UINTPTR_MAX;
  for (size_t i = 1; i < v.size(); ++i) {
    const auto a = reinterpret_cast<uintptr_t>(v[i - 1]), b = reinterpret_cast<uintptr_t>(v[i]);
    best = std::min(best, a > b ? a - b : b - a);
  }
  return best;
}

TEST(PacketPool, PacketsAreTwoLinesApartWithoutTransport) {
  EXPECT_FALSE(PacketPool::transport_enabled());
  const auto v = take(5000);
  EXPECT_EQ(stride(v), 128u);
  for (Packet* p : v) EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_EQ(PacketPool::global().outstanding(), 5000u);
  give_back(v);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

TEST(PacketPool, TransportLinesFollowEveryPacketAndShareNoField) {
  PacketPool::global().enable_transport();
  PacketPool::global().enable_transport();  // a second model asking changes nothing
  const auto v = take(5000);  // two slabs
  EXPECT_EQ(stride(v), 192u);
  for (size_t i = 0; i < v.size(); ++i) {
    // A fresh slab's transport lines are zero, never garbage.
    EXPECT_EQ(v[i]->tr().psn, 0u);
    EXPECT_EQ(v[i]->tr().via, 0u);
    v[i]->msg_id = i;
    v[i]->ctx = uint32_t(i);  // the packet's last field
    v[i]->head_ps = i;        // its first
  }
  for (size_t i = 0; i < v.size(); ++i) {
    v[i]->tr().tx_ps = ~uint64_t(i);  // the line's first field
    v[i]->tr().via = 7;               // its last
    v[i]->tr().psn = uint32_t(i);
  }
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i]->head_ps, i);
    EXPECT_EQ(v[i]->msg_id, i);
    EXPECT_EQ(v[i]->ctx, uint32_t(i));
    EXPECT_EQ(v[i]->tr().psn, uint32_t(i));
    EXPECT_EQ(v[i]->tr().tx_ps, ~uint64_t(i));
  }
  // acquire() leaves a recycled packet's transport line as it was (clear_transport()).
  give_back(v);
  Packet* p = PacketPool::global().acquire();
  EXPECT_EQ(p->msg_id, 0u);
  EXPECT_EQ(p->tr().via, 7u);
  p->clear_transport();
  EXPECT_EQ(p->tr().via, 0u);
  EXPECT_EQ(p->tr().tx_ps, 0u);
  PacketPool::global().release(p);
}

TEST(PacketPool, EnablingTransportAfterPacketsExistIsRefused) {
  Packet* p = PacketPool::global().acquire();
  EXPECT_THROW(PacketPool::global().enable_transport(), std::logic_error);
  EXPECT_FALSE(PacketPool::transport_enabled());
  PacketPool::global().release(p);
}

TEST(PacketPool, TransportFieldsWithoutTransportLinesStopTheRun) {
  Packet* p = PacketPool::global().acquire();
  EXPECT_DEATH(p->tr().psn = 1, "transport line was used");
  PacketPool::global().release(p);
}

TEST(PacketPool, PacketWithTransportCopiesBothParts) {
  PacketPool::global().enable_transport();
  Packet* p = PacketPool::global().acquire();
  p->clear_transport();
  p->msg_id = 42;
  p->payload_bytes = 4096;
  p->tr().psn = 9;
  p->tr().retransmits = 2;
  PacketWithTransport copy;
  EXPECT_EQ(copy.tr().psn, 0u);  // value-initialised
  copy.assign(*p);
  EXPECT_EQ(copy.msg_id, 42u);
  EXPECT_EQ(copy.tr().psn, 9u);
  EXPECT_EQ(&copy.tr(), &copy.transport);
  ++copy.tr().retransmits;

  Packet* q = PacketPool::global().acquire();
  copy.copy_to(q);
  EXPECT_EQ(q->msg_id, 42u);
  EXPECT_EQ(q->payload_bytes, 4096u);
  EXPECT_EQ(q->tr().psn, 9u);
  EXPECT_EQ(q->tr().retransmits, 3u);
  EXPECT_EQ(p->tr().retransmits, 2u);  // the original is untouched
  PacketPool::global().release(p);
  PacketPool::global().release(q);
}

}  // namespace
}  // namespace fabricsim
