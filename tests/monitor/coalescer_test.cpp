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
void check_against_model(Coalescer& c, Coalescer::TimePoint& now,
                         std::chrono::milliseconds group_within) {
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
        now += std::chrono::milliseconds(next() % 60);
        for (int k = 0, n = static_cast<int>(next() % 4); k < n; ++k) {
            const DirKey dir = next() % 50;
            c.dir_changed(DirChange{dir, ""});
            auto [it, inserted] = model.try_emplace(dir, Model{now, now});
            if (!inserted) it->second.last = now;
        }
        std::optional<Coalescer::TimePoint> model_next;
        std::set<DirKey> expected;
        const auto due_of = [](const Model& m) {
            return std::min(m.last + 200ms, m.first + 1000ms);
        };
        // Something due now takes along everything due within group_within.
        bool any_due = false;
        for (const auto& [dir, m] : model) any_due = any_due || due_of(m) <= now;
        const auto limit = any_due ? now + group_within : now;
        for (auto it = model.begin(); it != model.end();) {
            const auto due = due_of(it->second);
            if (due <= limit) {
                expected.insert(it->first);
                it = model.erase(it);
                continue;
            }
            if (!model_next || due < *model_next) model_next = due;
            ++it;
        }
        std::set<DirKey> got;
        for (const DirChange& d : c.take_due()) got.insert(*d.key);
        ASSERT_EQ(got, expected) << "step " << step;
        emitted += got.size();
        ASSERT_EQ(c.dirty_count(), model.size());
        if (model_next) {
            ASSERT_TRUE(c.next_due().has_value());
            EXPECT_LE(*c.next_due(), *model_next);
        }
    }
    EXPECT_GT(emitted, 1000u);
}

TEST_F(CoalescerTest, QueuedDueTimesMatchAPassOverEveryDirectory) {
    check_against_model(c_, now_, 0ms);
}

TEST(CoalescerGroupTest, DirectoriesDueSoonAfterLeaveWithTheFirstDue) {
    Coalescer::TimePoint now{};
    Coalescer c{{.settle = 200ms, .max_delay = 1000ms, .group_within = 50ms},
                [&now] { return now; }};
    check_against_model(c, now, 50ms);
}

TEST(CoalescerGroupTest, NothingLeavesEarlyWhenNothingIsDue) {
    Coalescer::TimePoint now{};
    Coalescer c{{.settle = 200ms, .max_delay = 1000ms, .group_within = 50ms},
                [&now] { return now; }};
    c.dir_changed(DirChange{1, ""});
    now += 30ms;
    c.dir_changed(DirChange{2, ""});
    now += 160ms;  // 1 is due in 10 ms, 2 in 40 ms: nothing yet
    EXPECT_TRUE(c.take_due().empty());
    now += 10ms;  // 1 is due; 2 (due 30 ms later) goes with it
    EXPECT_EQ(c.take_due().size(), 2u);
    EXPECT_EQ(c.dirty_count(), 0u);
}

TEST_F(CoalescerTest, NamesOfMergedEventsLeaveSortedAndANamelessEventMeansWhole) {
    c_.dir_changed(DirChange{1, "", "b", {}});
    c_.dir_changed(DirChange{1, "", "a", {}});
    c_.dir_changed(DirChange{1, "", "b", {}});
    c_.dir_changed(DirChange{2, "", "x", {}});
    c_.dir_changed(DirChange{2, "", "", {}});  // the directory itself: all of it
    c_.dir_changed(DirChange{2, "", "y", {}});
    now_ += 1s;
    auto due = c_.take_due();
    ASSERT_EQ(due.size(), 2u);
    if (*due[0].key != 1) std::swap(due[0], due[1]);
    EXPECT_EQ(due[0].names, (std::vector<std::string>{"a", "b"}));
    EXPECT_TRUE(due[0].rewalk.empty());
    EXPECT_TRUE(due[1].names.empty()) << "whole";
    // ... with every name it was told, before and after the nameless event, to walk again.
    EXPECT_EQ(due[1].rewalk, (std::vector<std::string>{"x", "y"}));
    EXPECT_TRUE(due[0].name.empty());
}

TEST_F(CoalescerTest, TooManyNamesMeanWhole) {
    for (std::size_t i = 0; i <= Coalescer::kMaxNames; ++i) {
        c_.dir_changed(DirChange{1, "", "n" + std::to_string(i), {}});
    }
    c_.dir_changed(DirChange{2, "", "only", {}});
    now_ += 1s;
    auto due = c_.take_due();
    ASSERT_EQ(due.size(), 2u);
    if (*due[0].key != 1) std::swap(due[0], due[1]);
    EXPECT_TRUE(due[0].names.empty()) << "more than kMaxNames: whole";
    EXPECT_EQ(due[0].rewalk.size(), Coalescer::kMaxNames) << "the names kept are bounded";
    EXPECT_TRUE(due[0].names_dropped) << "a name beyond the bound was dropped: said so";
    EXPECT_EQ(due[1].names, std::vector<std::string>{"only"});
    EXPECT_FALSE(due[1].names_dropped);
}

TEST_F(CoalescerTest, NamesAtTheBoundAndRepeatedAreNotDropped) {
    for (std::size_t i = 0; i < Coalescer::kMaxNames; ++i) {
        c_.dir_changed(DirChange{1, "", "n" + std::to_string(i), {}});
    }
    c_.dir_changed(DirChange{1, "", "n0", {}});  // known already: nothing is lost
    c_.dir_changed(DirChange{1, "", "", {}});    // the directory itself: whole, nothing lost
    now_ += 1s;
    const auto due = c_.take_due();
    ASSERT_EQ(due.size(), 1u);
    EXPECT_TRUE(due[0].names.empty());
    EXPECT_EQ(due[0].rewalk.size(), Coalescer::kMaxNames);
    EXPECT_FALSE(due[0].names_dropped);
}

}  // namespace
}  // namespace wsindex::monitor
