// Thread priority through the raw syscalls (glibc has no ioprio_set wrapper).
#include "daemon/thread_priority.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace wsindex::daemon {
namespace {

// From linux/ioprio.h (not shipped by every libc's headers).
constexpr int kIoprioWhoProcess = 1;  // with a tid: that thread only
constexpr int kIoprioClassShift = 13;

int ioprio_value(IoClass c, int level) {
    return (static_cast<int>(c) << kIoprioClassShift) | level;
}

}  // namespace

core::Status set_thread_priority(int nice, IoClass io_class) {
    const auto tid = static_cast<id_t>(::gettid());
    core::Status first;
    // PRIO_PROCESS with a tid changes that one thread on Linux (nice is per thread).
    if (::setpriority(PRIO_PROCESS, tid, nice) != 0) {
        first = core::Status::from_errno(errno, "setpriority");
    }
    if (::syscall(SYS_ioprio_set, kIoprioWhoProcess, static_cast<int>(tid),
                  ioprio_value(io_class, 0)) != 0 &&
        first) {
        first = core::Status::from_errno(errno, "ioprio_set");
    }
    return first;
}

int thread_nice() {
    errno = 0;
    return ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
}

IoClass thread_io_class() {
    const long v = ::syscall(SYS_ioprio_get, kIoprioWhoProcess, static_cast<int>(::gettid()));
    if (v < 0) return IoClass::None;
    return static_cast<IoClass>(v >> kIoprioClassShift);
}

}  // namespace wsindex::daemon
