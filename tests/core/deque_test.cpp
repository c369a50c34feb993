// Tests of ChaseLevDeque through its owner and thief handles: every operation, growth, the roles
// as types, and an exactly-once stress test with thieves.
#include "core/deque.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

namespace wsindex::core {
namespace {

// Items are small integers stored as pointer-sized values (0 is never pushed).
using Deque = DequeOwner<std::uintptr_t>;
using Stealer = DequeStealer<std::uintptr_t>;

// The roles are types: a thief's handle cannot push or pop, and there is one owner.
template <class H>
concept CanPop = requires(H h) {
    h.pop();
};
template <class H>
concept CanPush = requires(H h, std::uintptr_t v) {
    h.push(v);
};
template <class H>
concept CanSteal = requires(H h) {
    h.steal();
};
static_assert(CanPop<Deque> && CanPush<Deque> && !CanSteal<Deque>);
static_assert(!CanPop<Stealer> && !CanPush<Stealer> && CanSteal<Stealer>);
static_assert(!std::is_copy_constructible_v<Deque> && std::is_move_constructible_v<Deque>);
static_assert(std::is_copy_constructible_v<Stealer>);

TEST(ChaseLevDeque, StealFromEmptyIsEmpty) {
    Deque d(4);
    EXPECT_EQ(d.stealer().steal().status, StealStatus::Empty);
    EXPECT_FALSE(d.pop().has_value());
    EXPECT_EQ(d.size_estimate(), 0u);
}

TEST(ChaseLevDeque, OwnerPopsLifo) {
    Deque d(8);
    for (std::uintptr_t i = 1; i <= 5; ++i) d.push(i);
    EXPECT_EQ(d.size_estimate(), 5u);
    for (std::uintptr_t i = 5; i >= 1; --i) {
        auto v = d.pop();
        ASSERT_TRUE(v.has_value());
        EXPECT_EQ(*v, i);
    }
    EXPECT_FALSE(d.pop().has_value());
}

TEST(ChaseLevDeque, ThiefStealsFifo) {
    Deque d(8);
    for (std::uintptr_t i = 1; i <= 5; ++i) d.push(i);
    for (std::uintptr_t i = 1; i <= 5; ++i) {
        auto s = d.stealer().steal();
        ASSERT_EQ(s.status, StealStatus::Success);
        EXPECT_EQ(s.value, i);
        EXPECT_EQ(s.count, 1u);
    }
    EXPECT_EQ(d.stealer().steal().status, StealStatus::Empty);
}

TEST(ChaseLevDeque, PopAndStealMeetInTheMiddle) {
    Deque d(4);
    for (std::uintptr_t i = 1; i <= 3; ++i) d.push(i);
    EXPECT_EQ(d.stealer().steal().value, 1u);
    EXPECT_EQ(*d.pop(), 3u);
    EXPECT_EQ(*d.pop(), 2u);  // the last item, taken through the CAS path
    EXPECT_FALSE(d.pop().has_value());
    EXPECT_EQ(d.stealer().steal().status, StealStatus::Empty);
    d.push(9);  // usable after emptying from both ends
    EXPECT_EQ(d.stealer().steal().value, 9u);
}

TEST(ChaseLevDeque, GrowsAndKeepsOrder) {
    Deque d(2);
    EXPECT_EQ(d.capacity(), 2u);
    for (std::uintptr_t i = 1; i <= 1000; ++i) d.push(i);
    EXPECT_GE(d.capacity(), 1000u);
    EXPECT_EQ(d.size_estimate(), 1000u);
    // Steal a few from the top, pop the rest from the bottom: all in order.
    for (std::uintptr_t i = 1; i <= 10; ++i) EXPECT_EQ(d.stealer().steal().value, i);
    for (std::uintptr_t i = 1000; i > 10; --i) EXPECT_EQ(*d.pop(), i);
    EXPECT_FALSE(d.pop().has_value());
}

TEST(ChaseLevDeque, GrowsWhenWrappedAroundTheBuffer) {
    Deque d(4);
    // Move top and bottom past the buffer end several times, then grow with a wrapped range.
    for (std::uintptr_t round = 0; round < 10; ++round) {
        d.push(round * 2 + 1);
        d.push(round * 2 + 2);
        EXPECT_EQ(d.stealer().steal().value, round * 2 + 1);
        EXPECT_EQ(*d.pop(), round * 2 + 2);
    }
    for (std::uintptr_t i = 100; i < 120; ++i) d.push(i);
    for (std::uintptr_t i = 100; i < 120; ++i) EXPECT_EQ(d.stealer().steal().value, i);
}

TEST(ChaseLevDeque, CapacityRoundsUpToPowerOfTwo) {
    EXPECT_EQ(Deque(0).capacity(), 2u);
    EXPECT_EQ(Deque(5).capacity(), 8u);
    EXPECT_EQ(Deque(64).capacity(), 64u);
}

TEST(ChaseLevDeque, StealBatchTakesAboutHalfIntoTheThiefsDeque) {
    Deque victim(16);
    Deque mine(16);
    for (std::uintptr_t i = 1; i <= 20; ++i) victim.push(i);
    auto s = victim.stealer().steal_batch(mine, 100);
    ASSERT_TRUE(s.success());
    EXPECT_EQ(s.value, 1u);  // the oldest comes back to run
    // 1 taken, then half of the 19 remaining (9) published in `mine`.
    EXPECT_EQ(s.count, 10u);
    EXPECT_EQ(mine.size_estimate(), 9u);
    EXPECT_EQ(victim.size_estimate(), 10u);
    for (std::uintptr_t i = 10; i >= 2; --i) EXPECT_EQ(*mine.pop(), i);
}

TEST(ChaseLevDeque, StealBatchRespectsTheCap) {
    Deque victim(64);
    Deque mine(4);
    for (std::uintptr_t i = 1; i <= 64; ++i) victim.push(i);
    auto s = victim.stealer().steal_batch(mine, 4);
    ASSERT_TRUE(s.success());
    EXPECT_EQ(s.count, 4u);
    EXPECT_EQ(mine.size_estimate(), 3u);
    EXPECT_EQ(victim.size_estimate(), 60u);
}

TEST(ChaseLevDeque, StealBatchFromOneItemTakesOne) {
    Deque victim(4);
    Deque mine(4);
    victim.push(7);
    auto s = victim.stealer().steal_batch(mine, 32);
    ASSERT_TRUE(s.success());
    EXPECT_EQ(s.value, 7u);
    EXPECT_EQ(s.count, 1u);
    EXPECT_TRUE(mine.empty_estimate());
    EXPECT_EQ(victim.stealer().steal_batch(mine, 32).status, StealStatus::Empty);
}

// Exactly-once stress: one owner pushes N items (interleaving pops), T thieves steal, singly or
// in batches into their own deques (which they drain themselves). Starting at capacity 2 forces
// growth while thieves are stealing; frequent pops at size 1 exercise the last-item race. Every
// item must be taken exactly once: the per-item counters are compared with the gold value 1.
struct StressParams {
    unsigned thieves;
    bool batch;
};

class DequeStress : public ::testing::TestWithParam<StressParams> {};

TEST_P(DequeStress, EveryItemExactlyOnce) {
    const StressParams p = GetParam();
#if defined(WSINDEX_SANITIZED)
    const std::uintptr_t kItems = 200'000;  // sanitizers are ~10x slower
#else
    const std::uintptr_t kItems = 2'000'000;
#endif
    std::vector<std::atomic<std::uint8_t>> taken(kItems + 1);
    Deque deque(2);
    const Stealer stealer = deque.stealer();
    std::atomic<bool> owner_done{false};
    std::atomic<std::uint64_t> retries{0};

    auto take = [&](std::uintptr_t v) { taken[v].fetch_add(1, std::memory_order_relaxed); };

    std::vector<std::thread> thieves;
    for (unsigned t = 0; t < p.thieves; ++t) {
        thieves.emplace_back([&] {
            Deque mine(2);
            std::uint64_t my_retries = 0;
            for (;;) {
                const bool done = owner_done.load(std::memory_order_acquire);
                auto s = p.batch ? stealer.steal_batch(mine, 16) : stealer.steal();
                if (s.success()) {
                    take(s.value);
                    while (auto v = mine.pop()) take(*v);
                } else if (s.status == StealStatus::Retry) {
                    ++my_retries;
                } else if (done) {
                    break;  // empty after the owner finished: nothing more will come
                }
            }
            retries.fetch_add(my_retries, std::memory_order_relaxed);
        });
    }

    // Owner: push in bursts, pop some back (LIFO), leaving work for the thieves.
    std::uint32_t rng = 12345;
    for (std::uintptr_t next = 1; next <= kItems;) {
        rng = rng * 1664525u + 1013904223u;
        const unsigned burst = 1 + (rng >> 24) % 8;
        for (unsigned i = 0; i < burst && next <= kItems; ++i) deque.push(next++);
        const unsigned pops = (rng >> 16) % 8;
        for (unsigned i = 0; i < pops; ++i) {
            if (auto v = deque.pop()) take(*v);
        }
    }
    while (auto v = deque.pop()) take(*v);
    owner_done.store(true, std::memory_order_release);
    for (auto& t : thieves) t.join();

    std::size_t missing = 0;
    std::size_t twice = 0;
    for (std::uintptr_t i = 1; i <= kItems; ++i) {
        const auto c = taken[i].load(std::memory_order_relaxed);
        if (c == 0) ++missing;
        if (c > 1) ++twice;
    }
    EXPECT_EQ(missing, 0u);
    EXPECT_EQ(twice, 0u);
    EXPECT_EQ(taken[0].load(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Thieves, DequeStress,
                         ::testing::Values(StressParams{1, false}, StressParams{2, false},
                                           StressParams{4, false}, StressParams{8, false},
                                           StressParams{1, true}, StressParams{2, true},
                                           StressParams{4, true}, StressParams{8, true}),
                         [](const auto& param_info) {
                             return std::to_string(param_info.param.thieves) +
                                    (param_info.param.batch ? "ThievesBatch" : "ThievesSingle");
                         });

// The last-item race, hammered: the owner pushes one item and immediately pops while a thief
// steals. Exactly one of them must get it, every round.
TEST(ChaseLevDeque, LastItemRaceHasOneWinner) {
#if defined(WSINDEX_SANITIZED)
    const int kRounds = 20'000;
#else
    const int kRounds = 300'000;
#endif
    Deque deque(2);
    const Stealer stealer = deque.stealer();
    std::atomic<int> round_go{-1};
    std::atomic<int> thief_got{0};
    std::atomic<bool> stop{false};
    std::thread thief([&] {
        int seen = -1;
        while (!stop.load(std::memory_order_acquire)) {
            const int r = round_go.load(std::memory_order_acquire);
            if (r == seen) continue;
            seen = r;
            for (int attempt = 0; attempt < 4; ++attempt) {
                auto s = stealer.steal();
                if (s.success()) {
                    thief_got.fetch_add(1, std::memory_order_relaxed);
                    break;
                }
                if (s.status == StealStatus::Empty) break;
            }
        }
    });
    int owner_got = 0;
    for (int r = 0; r < kRounds; ++r) {
        deque.push(static_cast<std::uintptr_t>(r + 1));
        round_go.store(r, std::memory_order_release);
        if (deque.pop()) ++owner_got;
        // Drain anything the thief has not taken yet so the next round starts empty.
        while (deque.size_estimate() != 0) {
            if (deque.pop()) ++owner_got;
        }
    }
    stop.store(true, std::memory_order_release);
    thief.join();
    EXPECT_EQ(owner_got + thief_got.load(), kRounds);
}

}  // namespace
}  // namespace wsindex::core
