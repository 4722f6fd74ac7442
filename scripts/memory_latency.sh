#!/usr/bin/env bash
# The host's load-to-use latency, two ways, by a dependent pointer chase over one random
# cycle of 64-byte lines in memory backed by 2 MiB pages where the kernel offers them (as
# fabricsim's heap, fabrics/cli/main.cpp):
#  1. by working-set size (lines packed together): the caches' and DRAM's latency;
#  2. by how many 4 KiB pages the same 65,536 lines (4 MiB, what a last-level cache holds)
#     are spread over, inside one 256 MiB region of 2 MiB pages: the cost of address
#     translation. If it grows with the count of 4 KiB pages although the guest's pages are
#     2 MiB, the hypervisor maps the guest's memory in 4 KiB pages, and a hot line costs
#     a TLB miss and a nested page walk unless its 4 KiB page was touched lately
#     (docs/performance.md, "Address translation");
#  3. whether a software prefetch to a line whose page misses the TLB starts the walk: a
#     loop whose every item loads a line at a random address (known in advance, as the
#     calendar knows its next wake-ups) and feeds it into work that the next item's load
#     waits for, with no prefetch and with a prefetch 16 items ahead, the lines in 256 or
#     in 262,144 pages of a 1 GiB region. If the prefetch hides most of the 262,144-page
#     cost, prefetches walk the page tables here and fabricsim's prefetch hints (the
#     calendar's, Scheduler::run_instant) work on the large fabrics too.
# Not a test and not a fabricsim benchmark: it says what one miss costs on the machine at
# hand, which is what the large fabrics' per-event cost follows (docs/performance.md).
# Needs g++; writes nothing in the repository.
#
#   scripts/memory_latency.sh
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/chase.cpp" <<'CPP'
#include <sys/mman.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
char* volatile sink;
// Links the n lines line(0) .. line(n - 1) into one random cycle and follows it: ns per
// dependent load.
template <typename Line>
double chase(size_t n, Line line) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937_64(1));
  for (size_t i = 0; i < n; ++i)
    *reinterpret_cast<char**>(line(order[i])) = line(order[(i + 1) % n]);
  char* p = line(order[0]);
  const size_t steps = 20000000;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < steps; ++i) p = *reinterpret_cast<char**>(p);
  const auto t1 = std::chrono::steady_clock::now();
  sink = p;  // the chase's result is used: the loop is not optimised away
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / steps;
}
int main() {
  const size_t page = size_t(2) << 20;  // aligned_alloc wants a multiple of it
  // 1. Packed lines, by working-set size.
  const size_t sizes[] = {size_t(256) << 10, size_t(1) << 20,  size_t(4) << 20, size_t(16) << 20,
                          size_t(64) << 20,  size_t(256) << 20};
  for (size_t bytes : sizes) {
    const size_t alloc = (bytes + page - 1) / page * page;
    char* buf = static_cast<char*>(aligned_alloc(page, alloc));
    madvise(buf, alloc, MADV_HUGEPAGE);
    std::printf("%8zu KiB working set: %6.1f ns per dependent load\n", bytes >> 10,
                chase(bytes / 64, [&](size_t k) { return buf + k * 64; }));
    free(buf);
  }
  // 2. The same lines over more and more 4 KiB pages (a line's offset in its page varies
  // with the page, so the lines do not share cache sets).
  const size_t region = size_t(256) << 20, lines = 65536;
  char* buf = static_cast<char*>(aligned_alloc(page, region));
  madvise(buf, region, MADV_HUGEPAGE);
  for (size_t pages : {size_t(1024), size_t(4096), size_t(16384), size_t(65536)}) {
    const size_t per_page = lines / pages, gap = region / pages;
    const double ns = chase(lines, [&](size_t k) {
      const size_t pg = k / per_page;
      return buf + pg * gap + ((k % per_page + pg) % 64) * 64;
    });
    std::printf("4096 KiB of lines over %6zu pages of 4 KiB: %6.1f ns per dependent load\n",
                pages, ns);
  }
  free(buf);
  // 3. Prefetch ahead, lines over few or many 4 KiB pages of 1 GiB.
  const size_t big = size_t(1) << 30, items = size_t(1) << 22, ahead = 16;
  char* mem = static_cast<char*>(aligned_alloc(page, big));
  madvise(mem, big, MADV_HUGEPAGE);
  for (size_t i = 0; i < big; i += 4096) mem[i] = 0;  // fault every page in first
  for (size_t pages : {size_t(256), big / 4096}) {
    std::mt19937_64 rng(1);
    std::vector<const char*> at(items + ahead);
    for (const char*& a : at) a = mem + rng() % pages * (big / pages) + rng() % 64 * 64;
    for (int pf = 0; pf < 2; ++pf) {
      size_t mask = 0;  // zero, unknown to the compiler: each address waits for the work
      asm volatile("" : "+r"(mask));
      size_t acc = 1;
      const auto t0 = std::chrono::steady_clock::now();
      for (size_t i = 0; i < items; ++i) {
        if (pf) __builtin_prefetch(at[i + ahead]);
        acc = acc * 6364136223846793005ull + size_t(at[i][acc & mask]);
        for (int k = 0; k < 20; ++k) acc = acc * 2862933555777941757ull + 3037000493ull;
      }
      const auto t1 = std::chrono::steady_clock::now();
      sink = mem + (acc & 1);
      std::printf("lines over %6zu pages of 4 KiB, %-25s: %6.1f ns per item\n", pages,
                  pf ? "prefetched 16 items ahead" : "no prefetch",
                  std::chrono::duration<double, std::nano>(t1 - t0).count() / items);
    }
  }
  free(mem);
}
CPP
g++ -O2 -std=c++17 -o "$dir/chase" "$dir/chase.cpp"
"$dir/chase"
