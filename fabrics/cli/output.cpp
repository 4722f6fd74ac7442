#include "fabrics/cli/output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "models/core/errors.h"
#include "models/core/run_control.h"

namespace fabricsim {

namespace {

[[noreturn]] void cannot_write(const std::string& option, const std::string& path,
                               const std::string& tmp, int err) {
  ::unlink(tmp.c_str());
  throw InputError((option.empty() ? "" : option + ": ") + "cannot write " + path + ": " + std::strerror(err) +
                   "; nothing was replaced (a previous " +
                   std::filesystem::path(path).filename().string() +
                   " is kept): free space or choose another place");
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& text,
                       const std::string& option) {
  const std::filesystem::path target(path);
  const std::string tmp =
      (target.parent_path() / ("." + target.filename().string() + ".tmp." +
                               std::to_string(::getpid())))
          .string();
  // A write past RLIMIT_FSIZE raises SIGXFSZ, whose default action kills the process with
  // the temporary file in place; ignored, the write fails with EFBIG and is reported.
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGXFSZ, &ignore, &old);
  struct Restore {
    struct sigaction* old;
    ~Restore() { sigaction(SIGXFSZ, old, nullptr); }
  } restore{&old};

  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) cannot_write(option, path, tmp, errno);
  // Tests stop a run in the middle of this write (tests/system/test_reliability.cpp): with
  // FABRICSIM_TEST_WRITE_PAUSE_MS set, the first half of the text is written, then the
  // writer pauses that long (a signal cuts the pause short) before the rest.
  const char* pause = std::getenv("FABRICSIM_TEST_WRITE_PAUSE_MS");
  const size_t half = pause ? text.size() / 2 : text.size();
  size_t done = 0;
  while (done < text.size()) {
    if (done == half && pause) {
      ::usleep(useconds_t(std::strtoul(pause, nullptr, 10) * 1000));
      pause = nullptr;
    }
    const size_t chunk = done < half ? half - done : text.size() - done;
    const ssize_t n = ::write(fd, text.data() + done, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      cannot_write(option, path, tmp, err);
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) cannot_write(option, path, tmp, errno);
  if (stop_requested()) {
    ::unlink(tmp.c_str());
    throw Interrupted(std::string("stopped by ") + stop_reason_name(stop_reason()) +
                      " while writing " + path + ": it was not replaced (a previous one is kept)");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) cannot_write(option, path, tmp, errno);
}

std::string json_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string json_text(const nlohmann::ordered_json& j) {
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace fabricsim
