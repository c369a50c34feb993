// KilledChild: fork, a readiness byte on a pipe, SIGKILL.
#include "tests/storage/support/killed_child.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace wsindex::storage::test {

KilledChild::KilledChild(const std::function<void(int ready_fd)>& body) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
        ::close(fds[0]);
        body(fds[1]);
        _exit(99);
    }
    ::close(fds[1]);
    if (pid_ < 0) {
        ::close(fds[0]);
        return;
    }
    ready_fd_ = fds[0];
}

KilledChild::~KilledChild() {
    if (pid_ > 0) (void)kill();
    if (ready_fd_ >= 0) ::close(ready_fd_);
}

bool KilledChild::wait_ready() {
    char c = 0;
    return ready_fd_ >= 0 && ::read(ready_fd_, &c, 1) == 1;
}

bool KilledChild::kill() {
    if (pid_ <= 0) return false;
    ::kill(pid_, SIGKILL);
    int status = 0;
    const bool reaped = ::waitpid(pid_, &status, 0) == pid_;
    pid_ = -1;
    return reaped && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

}  // namespace wsindex::storage::test
