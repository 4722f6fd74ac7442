// The fabricsim executable. SystemC's own main() would print a banner and hide our exit
// codes, so we provide main() and run everything inside sc_main.
#include <cstdlib>
#include <string>
#if defined(__linux__) && defined(__GLIBC__)
#if __GLIBC_PREREQ(2, 33)  // mallinfo2
#define FABRICSIM_HUGE_PAGE_HEAP 1
#endif
#endif
#ifdef FABRICSIM_HUGE_PAGE_HEAP
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif
#include <vector>

#include <systemc>

#include "fabrics/cli/app.h"

int sc_main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return fabricsim::app_main(args);
}

namespace {
// Backs the heap with transparent huge pages (2 MiB) where the kernel offers them on
// request (/sys/kernel/mm/transparent_hugepage/enabled: madvise or always). A large
// fabric's hop touches state spread over hundreds of MiB (ports, packets in flight,
// messages, the collective schedule), and with 4 KiB pages most of those touches also
// miss the TLB: GB200 NVL72, 1 GiB ring all-reduce aggregated, 21.5 -> 15.4 s CPU
// (docs/performance.md). It changes where memory is, never what is computed.
// How: the first growth of glibc's heap reserves kHeapPad (address space; memory is
// only used as it is touched) and that range is marked MADV_HUGEPAGE, so its pages fault
// in huge; allocations of up to 32 MiB come from the heap instead of their own mmap
// (those mappings would have small pages: 17.8 s instead of 15.4 s above). 1.5 GiB
// covers NVL576's per-packet all-to-all (1.3 GiB); growth beyond it keeps small pages.
// FABRICSIM_SMALL_PAGES=1 turns it off.
void huge_page_heap() {
#ifdef FABRICSIM_HUGE_PAGE_HEAP
  if (getenv("FABRICSIM_SMALL_PAGES")) return;
  constexpr size_t kHeapPad = size_t(1536) << 20;
  constexpr int kMmapThreshold = 32 << 20;  // glibc's largest
  constexpr int kDefaultPad = 128 << 10;     // glibc's M_TOP_PAD and M_MMAP_THRESHOLD
  if (!mallopt(M_MMAP_THRESHOLD, kMmapThreshold) || !mallopt(M_TOP_PAD, int(kHeapPad))) return;
  // Grow the heap now (volatile: the compiler may not drop an unused malloc/free pair).
  void* volatile grow = malloc(size_t(16) << 20);
  free(grow);
  const struct mallinfo2 mi = mallinfo2();
  const uintptr_t top = reinterpret_cast<uintptr_t>(sbrk(0));
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  if (mi.arena < kHeapPad || mi.arena > top) {
    // The reservation was refused (an address-space limit): glibc's defaults again, or
    // every later growth would ask for the pad and fail.
    mallopt(M_TOP_PAD, kDefaultPad);
    mallopt(M_MMAP_THRESHOLD, kDefaultPad);
    return;
  }
  const uintptr_t start = (top - mi.arena + page - 1) & ~(page - 1);
  if (start < top) madvise(reinterpret_cast<void*>(start), top - start, MADV_HUGEPAGE);
#endif
}
}  // namespace

int main(int argc, char** argv) {
  huge_page_heap();
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
