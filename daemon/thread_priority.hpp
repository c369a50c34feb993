// Thread priority: nice and I/O class of the calling thread, so scans yield to queries.
//
// Why on the scan thread: core::WalkOptions does not expose PoolOptions::on_worker_start, but
// Linux threads inherit both the nice value and the I/O priority of the thread that creates them
// (clone copies static_prio and, without CLONE_IO, the ioprio). The scan thread lowers itself
// once, then every Walker and writer thread it creates starts low too (tested).
#pragma once

#include "core/status.hpp"

namespace wsindex::daemon {

// I/O scheduling classes of ioprio_set(2).
enum class IoClass { None = 0, RealTime = 1, BestEffort = 2, Idle = 3 };

// Calling thread only. Sets its nice value (setpriority on its tid) and its I/O class (ioprio_set
// on its tid; the level is 0 for classes that take one). Lowering needs no privilege; raising
// does. Both are attempted; the first failure is returned.
core::Status set_thread_priority(int nice, IoClass io_class);

// The calling thread's nice value and I/O class (for tests and logs).
int thread_nice();
IoClass thread_io_class();

}  // namespace wsindex::daemon
