// Coalescer: settle time, the upper bound for a directory changed continuously, root events.
#include "monitor/coalescer.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace wsindex::monitor {
namespace {

using namespace std::chrono_literals;

class CoalescerTest : public ::testing::Test {
  protected:
    Coalescer::TimePoint now_{};
    Coalescer c_{{.settle = 200ms, .max_delay = 1000ms}, [this] { return now_; }};

    static DirChange key(DirKey k) { return DirChange{k, ""}; }
};

TEST_F(CoalescerTest, DirectoryIsDueAfterSettleSinceLastChange) {
    c_.dir_changed(key(1));
    EXPECT_TRUE(c_.take_due().empty());
    ASSERT_TRUE(c_.next_due().has_value());
    EXPECT_EQ(*c_.next_due(), now_ + 200ms);
    now_ += 150ms;
    c_.dir_changed(key(1));  // pushes it back
    now_ += 100ms;
    EXPECT_TRUE(c_.take_due().empty());
    now_ += 100ms;
    const auto due = c_.take_due();
    ASSERT_EQ(due.size(), 1u);
    EXPECT_EQ(due[0].key, std::optional<DirKey>(1));
    EXPECT_EQ(c_.dirty_count(), 0u);
    EXPECT_FALSE(c_.next_due().has_value());
}

TEST_F(CoalescerTest, ContinuousChangesAreBoundedByMaxDelay) {
    const auto start = now_;
    c_.dir_changed(key(7));
    bool emitted = false;
    while (now_ - start < 2s) {
        now_ += 100ms;
        c_.dir_changed(key(7));
        if (!c_.take_due().empty()) {
            emitted = true;
            break;
        }
    }
    ASSERT_TRUE(emitted);
    EXPECT_EQ(now_ - start, 1000ms);
}

TEST_F(CoalescerTest, ChangesToOneDirectoryCoalesceAndOthersStaySeparate) {
    c_.dir_changed(key(1));
    c_.dir_changed(DirChange{std::nullopt, "/r/a"});
    now_ += 10ms;
    c_.dir_changed(key(1));
    c_.dir_changed(DirChange{std::nullopt, "/r/a"});
    c_.dir_changed(DirChange{std::nullopt, "/r/b"});
    EXPECT_EQ(c_.dirty_count(), 3u);
    now_ += 1s;
    const auto due = c_.take_due();
    ASSERT_EQ(due.size(), 3u);
    // Oldest first change first: key 1 and /r/a (same instant) before /r/b.
    EXPECT_EQ(due[2].path, "/r/b");
}

TEST_F(CoalescerTest, RootEventsPassWithoutDelay) {
    c_.root_event({RootEventKind::overflow, "/r", "queue"});
    const auto events = c_.take_root_events();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, RootEventKind::overflow);
    EXPECT_EQ(events[0].root, "/r");
    EXPECT_TRUE(c_.take_root_events().empty());
}

// The due-time queue against a model that checks every directory at every step: the same
// directories come due at the same moments, and next_due is never later than the first of them.
TEST_F(CoalescerTest, QueuedDueTimesMatchAPassOverEveryDirectory) {
    struct Model {
        Coalescer::TimePoint first, last;
    };
    std::map<DirKey, Model> model;
    std::uint64_t state = 42;
    auto next = [&state] {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return state >> 33;
    };
    std::size_t emitted = 0;
    for (int step = 0; step < 5000; ++step) {
        now_ += std::chrono::milliseconds(next() % 60);
        for (int k = 0, n = static_cast<int>(next() % 4); k < n; ++k) {
            const DirKey dir = next() % 50;
            c_.dir_changed(key(dir));
            auto [it, inserted] = model.try_emplace(dir, Model{now_, now_});
            if (!inserted) it->second.last = now_;
        }
        std::optional<Coalescer::TimePoint> model_next;
        std::set<DirKey> expected;
        for (auto it = model.begin(); it != model.end();) {
            const auto due = std::min(it->second.last + 200ms, it->second.first + 1000ms);
            if (due <= now_) {
                expected.insert(it->first);
                it = model.erase(it);
                continue;
            }
            if (!model_next || due < *model_next) model_next = due;
            ++it;
        }
        std::set<DirKey> got;
        for (const DirChange& d : c_.take_due()) got.insert(*d.key);
        ASSERT_EQ(got, expected) << "step " << step;
        emitted += got.size();
        ASSERT_EQ(c_.dirty_count(), model.size());
        if (model_next) {
            ASSERT_TRUE(c_.next_due().has_value());
            EXPECT_LE(*c_.next_due(), *model_next);
        }
    }
    EXPECT_GT(emitted, 1000u);
}

}  // namespace
}  // namespace wsindex::monitor
