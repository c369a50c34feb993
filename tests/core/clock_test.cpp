// Tests of the protocol's clocks: each reads the clock its name says (sandwiched between two
// reads of the std::chrono clock on the same kernel clock), in nanoseconds.
#include "core/clock.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace wsindex::core {
namespace {

template <class Clock>
std::int64_t chrono_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
        .count();
}

TEST(Clock, WallClockIsTheSystemClockInNanoseconds) {
    const std::int64_t before = chrono_ns<std::chrono::system_clock>();
    const std::int64_t now = wall_clock_ns();
    const std::int64_t after = chrono_ns<std::chrono::system_clock>();
    EXPECT_LE(before, now);
    EXPECT_LE(now, after);
}

TEST(Clock, MonotonicIsTheSteadyClockInNanoseconds) {
    const std::int64_t before = chrono_ns<std::chrono::steady_clock>();
    const std::int64_t now = monotonic_ns();
    const std::int64_t after = chrono_ns<std::chrono::steady_clock>();
    EXPECT_LE(before, now);
    EXPECT_LE(now, after);
    EXPECT_LE(now, monotonic_ns());
}

}  // namespace
}  // namespace wsindex::core
