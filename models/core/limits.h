// The physical ranges parameter declarations share (docs/reliability.md, "Physical
// ranges", says why each bound is where it is). Every quantity a config gives lies inside one of them, so
// every product the simulator forms from them (rate x time, bytes x 8 x 1e12, sums of
// times) stays far inside 64 bits (picoseconds, bits per second, bytes) or 128 bits where
// the code says so; the derived products that the ranges alone do not bound are checked
// where they are formed (checked.h), with a located error.
#pragma once
#include <cstdint>

namespace fabricsim::limits {

// Simulated time: no run lasts longer than an hour of simulated time (the longest shipped
// runs simulate milliseconds; at ~1e6 transaction-hops per wall second an hour of a
// busy fabric would take years of wall time). 3.6e15 ps < 2^52, so a time plus any
// duration below stays exact in 64 bits and in a double.
constexpr double kMaxTimePs = 3.6e15;
// One-way latency of a link or of a device stage: 10 ms is 2,000 km of fibre.
constexpr double kMaxLatencyPs = 1e10;

// A serial lane: 1 Mb/s (below any fabric SerDes) to 10 Tb/s (ten times any announced
// electrical or optical lane, so that an idealised link may be written as one lane, as
// configs/worked_example_70b.yaml does with 7.2 Tb/s; a port is lanes x lane_rate).
constexpr double kMinLaneRateBps = 1e6;
constexpr double kMaxLaneRateBps = 1e13;
// Memory, host-path and engine bandwidths: 1 GB/s to 1 PB/s (HBM3e is ~8 TB/s per GPU).
constexpr double kMinDeviceBandwidthBps = 8e9;
constexpr double kMaxDeviceBandwidthBps = 8e15;

// Buffers (receive, replay, egress): at most 1 GiB; credits and a transaction's wire
// bytes travel in 32-bit fields.
constexpr double kMaxBufferBytes = 1073741824.0;
// One message or collective size per rank: at most 1 TiB (the shipped sweeps end at
// 8 GiB).
constexpr double kMaxMessageBytes = 1099511627776.0;
// Framing fields: a flit, a header or a gap is at most 1 KiB, a minimum frame 64 KiB.
constexpr double kMaxFramingBytes = 1024.0;

}  // namespace fabricsim::limits
