// The two clocks of the project: wall time (timestamps on the wire and in the index) and the
// monotonic clock (durations, and the MONOTONIC_USEC systemd wants).
#pragma once

#include <time.h>

#include <cstdint>

namespace wsindex::core {

// Nanoseconds since the Unix epoch, now (CLOCK_REALTIME: jumps when the clock is set).
inline std::int64_t wall_clock_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Nanoseconds of CLOCK_MONOTONIC (what std::chrono::steady_clock reads on Linux, and the clock
// sd_notify's MONOTONIC_USEC is in).
inline std::int64_t monotonic_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace wsindex::core
