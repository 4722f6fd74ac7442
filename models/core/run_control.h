// Stopping a run from outside the model: SIGINT, SIGTERM and the wall-clock limit only set
// a flag (async-signal-safe); the wake-up calendar (scheduler.h) reads it once per
// activation, i.e. once per distinct simulated time and never per packet, and ends the
// simulation cleanly with sc_stop(). Plain C++ apart from that one reader.
#pragma once
#include <csignal>
#include <cstdint>

namespace fabricsim {

enum class StopReason : int { kNone = 0, kInterrupt = 1, kTerminate = 2, kWallLimit = 3 };

// Set by the handlers; 0 while the run may go on.
extern volatile std::sig_atomic_t g_stop_request;

inline bool stop_requested() { return g_stop_request != 0; }
inline StopReason stop_reason() { return static_cast<StopReason>(int(g_stop_request)); }
// "SIGINT", "SIGTERM", "the wall-clock limit".
const char* stop_reason_name(StopReason r);

// While alive: SIGINT and SIGTERM request a stop instead of killing the process, and, if
// wall_limit_s > 0, so does the end of that many seconds of wall time (SIGALRM from a
// real-time interval timer). The previous handlers and timer come back on destruction,
// and the request is cleared on construction. One at a time per process.
class StopHandlers {
 public:
  explicit StopHandlers(double wall_limit_s = 0);
  ~StopHandlers();
  StopHandlers(const StopHandlers&) = delete;
  StopHandlers& operator=(const StopHandlers&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {}, old_alrm_ {};
  bool timer_ = false;
};

}  // namespace fabricsim
