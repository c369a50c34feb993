// Test support for the monitor: private tmpfs, recording sink, bounded polling, sysctl override.
#include "monitor_support.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace wsindex::monitor::test {

PrivateTmpfs::PrivateTmpfs() {
    if (::geteuid() != 0) {
        error_ = "mounting a tmpfs needs root";
        return;
    }
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        error_ = std::string("private mount namespace: ") + std::strerror(errno);
        return;
    }
    std::string templ = "/tmp/wsmonitor-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
        error_ = std::string("mkdtemp: ") + std::strerror(errno);
        return;
    }
    base_ = templ;
    if (::mount("wsmonitor", base_.c_str(), "tmpfs", 0, "size=64m,mode=0755") != 0) {
        error_ = std::string("mount tmpfs: ") + std::strerror(errno);
        return;
    }
    mounted_ = true;
    path_ = base_;
}

PrivateTmpfs::~PrivateTmpfs() {
    if (mounted_) ::umount2(base_.c_str(), MNT_DETACH);
    if (!base_.empty()) ::rmdir(base_.c_str());
}

bool RecordingSink::has_key(DirKey key) const {
    for (const auto& d : dirs) {
        if (d.key == key) return true;
    }
    return false;
}

bool RecordingSink::has_path(const std::string& path) const {
    for (const auto& d : dirs) {
        if (!d.key && d.path == path) return true;
    }
    return false;
}

bool RecordingSink::has_root_event(RootEventKind kind, const std::string& root) const {
    for (const auto& r : roots) {
        if (r.kind == kind && r.root == root) return true;
    }
    return false;
}

bool wait_until(int fd, const std::function<core::Status()>& process,
                const std::function<bool()>& done, std::string& error,
                std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        if (auto s = process(); !s) {
            error = s.to_string();
            return false;
        }
        if (done()) return true;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            error = "timed out";
            return false;
        }
        struct pollfd p {
            fd, POLLIN, 0
        };
        const int r = ::poll(&p, 1, static_cast<int>(left.count()));
        if (r < 0 && errno != EINTR) {
            error = std::string("poll: ") + std::strerror(errno);
            return false;
        }
    }
}

std::string write_file(const std::string& path, const std::string& data) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return "open " + path + ": " + std::strerror(errno);
    const ssize_t n = ::write(fd, data.data(), data.size());
    ::close(fd);
    if (n != static_cast<ssize_t>(data.size())) return "write " + path;
    return {};
}

}  // namespace wsindex::monitor::test
