// KilledChild: a forked child that runs some work, tells the parent when it reached the point
// to be killed at (one byte on a pipe), and is then killed with SIGKILL: a process that dies
// in the middle of writing, for recovery tests.
#pragma once

#include <sys/types.h>

#include <functional>

namespace wsindex::storage::test {

class KilledChild {
  public:
    // Forks. The child closes the pipe's read end and runs body(ready_fd); body writes one byte
    // to ready_fd at its kill point and must not return (the child _exits(99) if it does).
    explicit KilledChild(const std::function<void(int ready_fd)>& body);
    KilledChild(const KilledChild&) = delete;
    KilledChild& operator=(const KilledChild&) = delete;
    // Kills and reaps a child still running (a test that stopped early).
    ~KilledChild();

    [[nodiscard]] bool forked() const { return pid_ > 0; }
    // Blocks until the child wrote its byte; false if it exited before (a failed setup).
    [[nodiscard]] bool wait_ready();
    // SIGKILL, then waitpid: true if the child died of that signal (not of its own exit).
    [[nodiscard]] bool kill();

  private:
    pid_t pid_ = -1;
    int ready_fd_ = -1;  // the parent's read end
};

}  // namespace wsindex::storage::test
