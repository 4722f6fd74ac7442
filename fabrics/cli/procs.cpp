#include "fabrics/cli/procs.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "models/core/errors.h"

extern char** environ;

namespace fabricsim {

namespace {

pid_t spawn(const Child& c) {
  std::vector<std::string> args{"fabricsim"};
  args.insert(args.end(), c.args.begin(), c.args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, c.stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw InternalError(std::string("cannot start a child process: ") + std::strerror(rc));
  return pid;
}

}  // namespace

void run_children(const std::vector<Child>& children, int jobs,
                  const std::function<void(size_t)>& started,
                  const std::function<void(size_t, int)>& done,
                  const std::function<void()>& tick) {
  std::map<pid_t, size_t> running;
  size_t next = 0;
  while (next < children.size() || !running.empty()) {
    while (next < children.size() && int(running.size()) < std::max(1, jobs)) {
      if (started) started(next);
      running[spawn(children[next])] = next;
      ++next;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, tick ? WNOHANG : 0);
    if (pid == 0 || (pid < 0 && errno == EINTR)) {
      if (tick) tick();
      if (pid == 0) ::usleep(100000);
      continue;
    }
    if (pid < 0) throw InternalError(std::string("waitpid: ") + std::strerror(errno));
    const auto it = running.find(pid);
    if (it == running.end()) continue;  // not ours
    const size_t i = it->second;
    running.erase(it);
    done(i, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
}

int parse_jobs(const std::string& flag, const std::string& v) {
  if (v.empty() || v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(v) < 1)
    throw InputError("command line: " + flag + " takes a positive number of processes, got '" +
                     v + "'");
  return std::stoi(v);
}

}  // namespace fabricsim
