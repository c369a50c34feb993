// RescanLimiter: unresolvable-change rescans at most once per root per interval, the ones in
// between merged into one rescan of their common directory and passed on when the time is up.
#include "daemon/rescan_limiter.hpp"

#include <gtest/gtest.h>

namespace wsindex::daemon {
namespace {

using namespace std::chrono_literals;
using monitor::RootEvent;
using monitor::RootEventKind;

RootEvent unresolvable(const std::string& root, const std::string& subtree) {
    return RootEvent{RootEventKind::unresolvable, root, "test", subtree};
}

TEST(RescanLimiter, OnePerRootPerIntervalTheRestMergedIntoTheirCommonDirectory) {
    RescanLimiter limiter(30s);
    const auto t0 = RescanLimiter::Clock::time_point{} + 1h;
    auto out = limiter.pass({unresolvable("/r", "/r/a/b/c")}, t0);
    ASSERT_EQ(out.size(), 1u) << "the first passes at once";
    EXPECT_EQ(out[0].subtree, "/r/a/b/c");
    EXPECT_FALSE(limiter.next_due());

    // A storm of them: none passes within the interval, whatever their number.
    for (int i = 0; i < 1000; ++i) {
        out = limiter.pass({unresolvable("/r", "/r/a/x" + std::to_string(i % 3) + "/deep")},
                           t0 + 1s + std::chrono::milliseconds(i));
        EXPECT_TRUE(out.empty());
    }
    ASSERT_TRUE(limiter.next_due());
    EXPECT_EQ(*limiter.next_due(), t0 + 30s);
    EXPECT_TRUE(limiter.pass({}, t0 + 29s).empty());
    out = limiter.pass({}, t0 + 30s);
    ASSERT_EQ(out.size(), 1u) << "the held ones, merged, once the time is up";
    EXPECT_EQ(out[0].subtree, "/r/a") << "the deepest directory covering all of them";
    EXPECT_FALSE(limiter.next_due());
    EXPECT_TRUE(limiter.pass({unresolvable("/r", "/r/a")}, t0 + 31s).empty()) << "interval again";
}

TEST(RescanLimiter, RootsAreLimitedApartAndOtherEventsPass) {
    RescanLimiter limiter(30s);
    const auto t0 = RescanLimiter::Clock::time_point{} + 1h;
    EXPECT_EQ(limiter.pass({unresolvable("/r", "/r/a")}, t0).size(), 1u);
    EXPECT_EQ(limiter.pass({unresolvable("/s", "")}, t0).size(), 1u) << "another root";
    const auto out = limiter.pass({RootEvent{RootEventKind::overflow, "/r", "lost", {}},
                                   RootEvent{RootEventKind::mark_lost, "/r", "gone", {}}},
                                  t0 + 1s);
    EXPECT_EQ(out.size(), 2u) << "only unresolvable changes are limited";
    // Merged subtrees that meet only at the root: the root is rescanned.
    EXPECT_TRUE(limiter.pass({unresolvable("/r", "/r/a")}, t0 + 2s).empty());
    EXPECT_TRUE(limiter.pass({unresolvable("/r", "/r/b")}, t0 + 3s).empty());
    const auto later = limiter.pass({}, t0 + 30s);
    ASSERT_EQ(later.size(), 1u);
    EXPECT_EQ(later[0].subtree, "") << "the whole root";
}

TEST(RescanLimiter, CommonDirectoryEndsAtAComponent) {
    EXPECT_EQ(common_directory("/r/x/y", "/r/x/z"), "/r/x");
    EXPECT_EQ(common_directory("/r/x", "/r/x/y"), "/r/x");
    EXPECT_EQ(common_directory("/r/xa", "/r/xb"), "/r");
    EXPECT_EQ(common_directory("/a", "/b"), "/");
    EXPECT_EQ(common_directory("/", "/b"), "/");
}

}  // namespace
}  // namespace wsindex::daemon
