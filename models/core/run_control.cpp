#include "models/core/run_control.h"

#include <sys/time.h>

#include <cmath>

namespace fabricsim {

volatile std::sig_atomic_t g_stop_request = 0;

namespace {

extern "C" void on_stop_signal(int sig) {
  // The first request wins: a SIGTERM after SIGINT does not rename the reason.
  if (g_stop_request != 0) return;
  g_stop_request = int(sig == SIGINT    ? StopReason::kInterrupt
                       : sig == SIGTERM ? StopReason::kTerminate
                                        : StopReason::kWallLimit);
}

void install(int sig, struct sigaction* old) {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // reads, writes and waits go on; the flag is read where it matters
  sigaction(sig, &sa, old);
}

}  // namespace

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::kInterrupt: return "SIGINT";
    case StopReason::kTerminate: return "SIGTERM";
    case StopReason::kWallLimit: return "the wall-clock limit";
    case StopReason::kNone: break;
  }
  return "nothing";
}

StopHandlers::StopHandlers(double wall_limit_s) {
  g_stop_request = 0;
  install(SIGINT, &old_int_);
  install(SIGTERM, &old_term_);
  if (wall_limit_s > 0) {
    // The timer is armed before the handler is installed, with SIGALRM blocked in between
    // (a timer that fires meanwhile waits for the handler): once the process catches
    // SIGALRM (/proc/PID/status, SigCgt), its limit is counting, which is what a
    // supervisor (and the test that freezes the run past its limit) can observe.
    sigset_t alrm, mask;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    sigprocmask(SIG_BLOCK, &alrm, &mask);
    itimerval t {};
    t.it_value.tv_sec = time_t(std::floor(wall_limit_s));
    t.it_value.tv_usec = suseconds_t((wall_limit_s - std::floor(wall_limit_s)) * 1e6);
    if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0) t.it_value.tv_usec = 1;
    setitimer(ITIMER_REAL, &t, nullptr);
    install(SIGALRM, &old_alrm_);
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    timer_ = true;
  }
}

StopHandlers::~StopHandlers() {
  if (timer_) {
    itimerval off {};
    setitimer(ITIMER_REAL, &off, nullptr);
    sigaction(SIGALRM, &old_alrm_, nullptr);
  }
  sigaction(SIGTERM, &old_term_, nullptr);
  sigaction(SIGINT, &old_int_, nullptr);
}

}  // namespace fabricsim
