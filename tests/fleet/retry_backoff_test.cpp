// When the fleet publisher retries a failed publish (fleet/retry_backoff.hpp), on given times.
#include "fleet/retry_backoff.hpp"

#include <gtest/gtest.h>

namespace wsindex::fleet {
namespace {

using std::chrono::seconds;
using Clock = RetryBackoff::Clock;

TEST(FleetRetryBackoff, DoublesUpToTheLongestWhileAttemptsFail) {
    RetryBackoff backoff(seconds(1), seconds(60));
    Clock::time_point t{};
    for (const int wait : {1, 2, 4, 8, 16, 32, 60, 60}) {
        t += seconds(100);
        backoff.failed(t);
        EXPECT_EQ(backoff.due() - t, seconds(wait));
    }
    backoff.succeeded();
    backoff.failed(t);
    EXPECT_EQ(backoff.due() - t, seconds(1));
}

// PostgreSQL is back while the publisher waits out a long backoff, and the host changes: the
// retry comes 1 s after the failure, not 60 s.
TEST(FleetRetryBackoff, AChangeBringsTheRetryForward) {
    RetryBackoff backoff(seconds(1), seconds(60));
    Clock::time_point t{};
    for (int i = 0; i < 10; ++i) backoff.failed(t += seconds(100));
    ASSERT_EQ(backoff.due() - t, seconds(60));
    backoff.changed();
    EXPECT_EQ(backoff.due() - t, seconds(1));
    // Never sooner than the shortest wait after a failure, and the doubling goes on (a server
    // that is still down is not tried at once each time the host changes).
    backoff.failed(t += seconds(100));
    backoff.changed();
    EXPECT_EQ(backoff.due() - t, seconds(1));
    backoff.failed(t += seconds(100));
    EXPECT_EQ(backoff.due() - t, seconds(60));
}

}  // namespace
}  // namespace wsindex::fleet
