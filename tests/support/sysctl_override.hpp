// SysctlOverride: a /proc/sys value changed for the life of the object, and put back.
//
// The values are global and test processes run side by side (ctest -j): two overrides of one
// file that overlap could restore in the wrong order and leave the low value behind for every
// later test and for the machine. So every override holds one lock file (flock) shared by the
// test processes from before it reads the old value until after it restored it; a second one
// waits. A process killed meanwhile cannot restore; its lock goes with it.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

namespace wsindex::test {

class SysctlOverride {
  public:
    SysctlOverride(std::string path, const std::string& value) : path_(std::move(path)) {
        lock_ = ::open("/tmp/wsindex-tests-sysctl.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (lock_ < 0) return;
        while (::flock(lock_, LOCK_EX) != 0 && errno == EINTR) {
        }
        std::ifstream in(path_);
        if (!std::getline(in, old_)) return;
        std::ofstream out(path_);
        out << value << '\n';
        out.close();
        ok_ = static_cast<bool>(out);
    }
    SysctlOverride(const SysctlOverride&) = delete;
    SysctlOverride& operator=(const SysctlOverride&) = delete;
    ~SysctlOverride() {
        if (ok_) {
            std::ofstream out(path_);
            out << old_ << '\n';
        }
        if (lock_ >= 0) ::close(lock_);  // releases the lock
    }

    // The value was written (false: no such file, or no permission: nothing changed).
    [[nodiscard]] bool ok() const { return ok_; }

  private:
    std::string path_;
    std::string old_;
    int lock_ = -1;
    bool ok_ = false;
};

}  // namespace wsindex::test
