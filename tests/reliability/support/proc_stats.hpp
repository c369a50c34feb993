// A process's open descriptors and memory, from /proc (for the resource-bound tests).
#pragma once

#include <sys/types.h>

#include <string>

namespace wsindex::reliability::test {

// Entries of /proc/PID/fd; -1 if it cannot be read.
int open_fds(pid_t pid);

// A "Vm...:  N kB" line of /proc/PID/status (VmRSS, VmHWM), in KiB; -1 if absent.
long status_kib(pid_t pid, const std::string& field);

// The targets of /proc/PID/fd, one per line (for a failure message when fds leak).
std::string fd_targets(pid_t pid);

}  // namespace wsindex::reliability::test
