// Tests for RangeExecutor (both schedules) and the prime-counting workload it is benchmarked on.
//
// The central check: every index of [0, n) runs exactly once, counted in an array of atomics,
// for 1..8 workers, both schedules, skewed per-index costs, repeated. Interleavings that matter
// (a steal from a busy worker, a stop from another thread) are forced with flags the bodies wait
// on, never with sleeps.
#include "core/range_executor.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <vector>

#include "core/primes.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::core {
namespace {

#ifdef WSINDEX_SANITIZED
constexpr int kRepeats = 3;  // sanitizers cost 5-20x; the interleavings come from the sweep
#else
constexpr int kRepeats = 12;
#endif

constexpr RangeSchedule kSchedules[] = {RangeSchedule::Stealing, RangeSchedule::Static};

// Options by assignment: GCC 12 warns (-Wmissing-field-initializers) on designated initializers
// that leave fields out.
RangeOptions options(unsigned workers, RangeSchedule schedule = RangeSchedule::Stealing) {
    RangeOptions o;
    o.workers = workers;
    o.schedule = schedule;
    return o;
}
RangeOptions chunked(unsigned workers, std::size_t divisor, std::size_t min_chunk) {
    RangeOptions o = options(workers);
    o.chunk_divisor = divisor;
    o.min_chunk = min_chunk;
    return o;
}
RangeOptions with_hook(unsigned workers, std::function<void(unsigned)> hook) {
    RangeOptions o = options(workers);
    o.on_worker_start = std::move(hook);
    return o;
}

// Spins (yielding) until `flag` is set; false when it was not set within `limit`: a test that
// waits for another worker's event fails instead of hanging until the ctest timeout.
bool wait_until_set(const std::atomic<bool>& flag,
                    std::chrono::seconds limit = std::chrono::seconds(30)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!flag.load(std::memory_order_acquire)) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::yield();
    }
    return true;
}

// Burns roughly `rounds` dependent multiply-adds; the result goes to a relaxed atomic so the
// compiler cannot drop it.
std::atomic<std::uint64_t> g_sink{0};
void burn(std::uint64_t seed, unsigned rounds) {
    std::uint64_t x = seed | 1;
    for (unsigned r = 0; r < rounds; ++r) x = x * 6364136223846793005ull + 1442695040888963407ull;
    g_sink.fetch_add(x & 1, std::memory_order_relaxed);
}

// Skewed costs: the first quarter of the indices (all in worker 0's share for W >= 4) is 50x
// dearer than the rest, and every 97th index is dearer still.
unsigned skewed_cost(std::size_t i, std::size_t n) {
    unsigned cost = i < n / 4 ? 100 : 2;
    if (i % 97 == 0) cost += 400;
    return cost;
}

// Runs one parallel_for over [0, n) and checks exactly-once, bounds, worker ids and statistics.
void run_and_check(RangeExecutor& ex, std::size_t n) {
    std::unique_ptr<std::atomic<std::uint32_t>[]> counts(new std::atomic<std::uint32_t>[n + 1]);
    for (std::size_t i = 0; i <= n; ++i) counts[i].store(0, std::memory_order_relaxed);
    std::atomic<std::uint64_t> bad_calls{0};

    const Status status = ex.parallel_for(n, [&](std::size_t begin, std::size_t end, unsigned w) {
        if (begin >= end || end > n || w >= ex.size()) {
            bad_calls.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        for (std::size_t i = begin; i < end; ++i) {
            burn(i, skewed_cost(i, n));
            counts[i].fetch_add(1, std::memory_order_relaxed);
        }
    });
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    ASSERT_EQ(bad_calls.load(), 0u);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (counts[i].load(std::memory_order_relaxed) != 1) {
            if (++wrong <= 5) {
                ADD_FAILURE() << "index " << i << " ran " << counts[i].load() << " times (n=" << n
                              << ", workers=" << ex.size() << ", " << to_string(ex.schedule())
                              << ")";
            }
        }
    }
    ASSERT_EQ(wrong, 0u);

    const std::vector<RangeWorkerStats> stats = ex.stats();
    ASSERT_EQ(stats.size(), ex.size());
    std::uint64_t items = 0;
    std::uint64_t stolen = 0;
    for (const RangeWorkerStats& s : stats) {
        items += s.items;
        stolen += s.items_stolen;
        EXPECT_LE(s.steals, s.steal_attempts);
        EXPECT_LE(s.chunks, s.items);
        if (ex.schedule() == RangeSchedule::Static) {
            EXPECT_EQ(s.steal_attempts, 0u);
        }
    }
    EXPECT_EQ(items, n);
    // No bound of n on `stolen`: a stolen half lands in the thief's own range, where another
    // thief may steal it again, so one index can count in several workers' items_stolen.
    if (ex.schedule() == RangeSchedule::Static) {
        EXPECT_EQ(stolen, 0u);
    }
}

TEST(RangeExecutor, EveryIndexExactlyOnceAcrossWorkersSchedulesAndSizes) {
    for (RangeSchedule schedule : kSchedules) {
        for (unsigned workers = 1; workers <= 8; ++workers) {
            RangeExecutor ex(options(workers, schedule));
            ASSERT_EQ(ex.size(), workers);
            // 0, 1, fewer than the workers, one per worker, a prime, and a larger loop.
            const std::size_t sizes[] = {0,    1,     workers > 1 ? workers - 1 : 1, workers, 97,
                                         5003, 40'000};
            for (int rep = 0; rep < kRepeats; ++rep) {
                for (std::size_t n : sizes) {
                    SCOPED_TRACE(testing::Message() << to_string(schedule) << " workers=" << workers
                                                    << " n=" << n << " rep=" << rep);
                    run_and_check(ex, n);
                }
            }
        }
    }
}

TEST(RangeExecutor, ZeroIndicesNeverCallsTheBody) {
    for (RangeSchedule schedule : kSchedules) {
        RangeExecutor ex(options(4, schedule));
        std::atomic<int> calls{0};
        const Status status = ex.parallel_for(0, [&](std::size_t, std::size_t, unsigned) {
            calls.fetch_add(1, std::memory_order_relaxed);
        });
        EXPECT_TRUE(status.is_ok());
        EXPECT_EQ(calls.load(), 0);
        for (const RangeWorkerStats& s : ex.stats()) EXPECT_EQ(s.chunks, 0u);
    }
}

TEST(RangeExecutor, MinChunkAndDivisorShapeTheChunks) {
    // One worker, divisor 4: chunks are ceil(remaining/4): 100 -> 25, 75 -> 19, ...
    RangeExecutor ex(chunked(1, 4, 1));
    std::vector<std::size_t> sizes;
    ASSERT_TRUE(ex.parallel_for(100, [&](std::size_t b, std::size_t e, unsigned) {
                      sizes.push_back(e - b);
                  }).is_ok());
    ASSERT_GE(sizes.size(), 2u);
    EXPECT_EQ(sizes[0], 25u);
    EXPECT_EQ(sizes[1], 19u);
    for (std::size_t i = 1; i < sizes.size(); ++i) EXPECT_LE(sizes[i], sizes[i - 1]);

    RangeExecutor floor(chunked(1, 16, 10));
    sizes.clear();
    ASSERT_TRUE(floor
                    .parallel_for(
                        35, [&](std::size_t b, std::size_t e, unsigned) { sizes.push_back(e - b); })
                    .is_ok());
    EXPECT_EQ(sizes, (std::vector<std::size_t>{10, 10, 10, 5}));
}

// Forces the interleaving the executor exists for: worker 0 is stuck in its first chunk until
// another worker has run an index from worker 0's share, which only a steal can give it.
TEST(RangeExecutor, IdleWorkerStealsFromABusyOne) {
    for (unsigned workers = 2; workers <= 4; ++workers) {
        for (int rep = 0; rep < kRepeats; ++rep) {
            RangeExecutor ex(options(workers, RangeSchedule::Stealing));
            const std::size_t n = 1000 * workers;
            const std::size_t share0_end = n / workers;
            std::atomic<bool> stolen_index_ran{false};
            std::atomic<bool> first_chunk{true};
            bool timed_out = false;  // written and read by worker 0's thread, then after the call
            std::vector<std::atomic<int>> counts(n);
            const Status status = ex.parallel_for(n, [&](std::size_t b, std::size_t e, unsigned w) {
                if (w == 0 && first_chunk.exchange(false, std::memory_order_relaxed)) {
                    // Waits for an event, not for time; the deadline only turns a steal that
                    // never happens into a failure instead of a hang.
                    timed_out = !wait_until_set(stolen_index_ran);
                }
                for (std::size_t i = b; i < e; ++i) {
                    counts[i].fetch_add(1, std::memory_order_relaxed);
                    if (w != 0 && i < share0_end) {
                        stolen_index_ran.store(true, std::memory_order_release);
                    }
                }
            });
            ASSERT_TRUE(status.is_ok()) << status.to_string();
            ASSERT_FALSE(timed_out) << "no other worker ran an index of worker 0's share";
            for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(counts[i].load(), 1) << i;
            const std::vector<RangeWorkerStats> stats = ex.stats();
            std::uint64_t steals = 0;
            for (unsigned w = 1; w < workers; ++w) steals += stats[w].steals;
            EXPECT_GE(steals, 1u);
        }
    }
}

TEST(RangeExecutor, StaticScheduleRunsEachShareOnItsOwnWorker) {
    RangeExecutor ex(options(3, RangeSchedule::Static));
    const std::size_t n = 10;  // shares: [0,4) [4,7) [7,10)
    std::vector<std::atomic<unsigned>> owner(n);
    ASSERT_TRUE(ex.parallel_for(n, [&](std::size_t b, std::size_t e, unsigned w) {
                      for (std::size_t i = b; i < e; ++i) owner[i].store(w);
                  }).is_ok());
    const unsigned expected[] = {0, 0, 0, 0, 1, 1, 1, 2, 2, 2};
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(owner[i].load(), expected[i]) << i;
}

TEST(RangeExecutor, ExceptionCancelsAndIsReturnedAsAnError) {
    for (RangeSchedule schedule : kSchedules) {
        for (unsigned workers : {1u, 2u, 5u}) {
            RangeExecutor ex(options(workers, schedule));
            const std::size_t n = 100'000;
            std::atomic<std::size_t> ran{0};
            const Status status = ex.parallel_for(n, [&](std::size_t b, std::size_t e, unsigned) {
                if (b <= 1234 && 1234 < e) throw std::runtime_error("index 1234 is bad");
                ran.fetch_add(e - b, std::memory_order_relaxed);
            });
            EXPECT_FALSE(status.is_ok());
            EXPECT_EQ(status.code(), std::make_error_code(std::errc::state_not_recoverable));
            EXPECT_NE(status.message().find("index 1234 is bad"), std::string::npos)
                << status.message();
            EXPECT_LT(ran.load(), n);  // cancelled: not everything ran
            ASSERT_TRUE(ex.last_exception());
            EXPECT_THROW(std::rethrow_exception(ex.last_exception()), std::runtime_error);

            // The executor is usable afterwards, and the error does not leak into the next call.
            run_and_check(ex, 5003);
            EXPECT_FALSE(ex.last_exception());
        }
    }
}

TEST(RangeExecutor, BadAllocBecomesNotEnoughMemory) {
    RangeExecutor ex(options(3));
    const Status status = ex.parallel_for(1000, [](std::size_t b, std::size_t, unsigned) {
        if (b == 0) throw std::bad_alloc();
    });
    EXPECT_EQ(status.code(), std::make_error_code(std::errc::not_enough_memory));
}

TEST(RangeExecutor, NonStandardExceptionIsCaughtToo) {
    RangeExecutor ex(options(2));
    const Status status = ex.parallel_for(10, [](std::size_t, std::size_t, unsigned) { throw 42; });
    EXPECT_EQ(status.code(), std::make_error_code(std::errc::state_not_recoverable));
}

// request_stop() from another thread: the body waits (on a flag, not a clock) until the stop is
// visible, so the call cannot finish first.
TEST(RangeExecutor, RequestStopFromAnotherThreadCancels) {
    for (RangeSchedule schedule : kSchedules) {
        for (unsigned workers : {1u, 2u, 4u}) {
            RangeExecutor ex(options(workers, schedule));
            std::atomic<bool> started{false};
            std::atomic<std::size_t> ran{0};
            std::thread stopper([&] {
                while (!started.load(std::memory_order_acquire)) std::this_thread::yield();
                ex.request_stop();
            });
            const std::size_t n = 1'000'000;
            const Status status = ex.parallel_for(n, [&](std::size_t b, std::size_t e, unsigned) {
                started.store(true, std::memory_order_release);
                while (!ex.stop_requested()) std::this_thread::yield();
                ran.fetch_add(e - b, std::memory_order_relaxed);
            });
            stopper.join();
            EXPECT_EQ(status.code(), std::make_error_code(std::errc::operation_canceled))
                << status.to_string();
            EXPECT_LT(ran.load(), n);
            std::uint64_t items = 0;
            for (const RangeWorkerStats& s : ex.stats()) items += s.items;
            EXPECT_EQ(items, ran.load());
            run_and_check(ex, 97);  // a stop does not outlive its call
        }
    }
}

TEST(RangeExecutor, StopTokenCancels) {
    RangeExecutor ex(options(3));
    std::stop_source source;
    std::atomic<std::size_t> ran{0};
    const std::size_t n = 1'000'000;
    const Status status = ex.parallel_for(
        n,
        [&](std::size_t b, std::size_t e, unsigned) {
            source.request_stop();
            ran.fetch_add(e - b, std::memory_order_relaxed);
        },
        source.get_token());
    EXPECT_EQ(status.code(), std::make_error_code(std::errc::operation_canceled));
    EXPECT_LT(ran.load(), n);

    // A token stopped before the call: nothing runs.
    std::atomic<int> calls{0};
    EXPECT_EQ(ex.parallel_for(
                    100, [&](std::size_t, std::size_t, unsigned) { calls.fetch_add(1); },
                    source.get_token())
                  .code(),
              std::make_error_code(std::errc::operation_canceled));
    EXPECT_EQ(calls.load(), 0);
}

TEST(RangeExecutor, ReentrantCallIsAnErrorNotADeadlock) {
    RangeExecutor ex(options(3));
    std::atomic<int> errors{0};
    ASSERT_TRUE(
        ex.parallel_for(30, [&](std::size_t, std::size_t, unsigned) {
              const Status inner = ex.parallel_for(5, [](std::size_t, std::size_t, unsigned) {});
              if (inner.code() == std::make_error_code(std::errc::resource_deadlock_would_occur)) {
                  errors.fetch_add(1);
              }
          }).is_ok());
    EXPECT_GE(errors.load(), 1);

    // A different executor may be used from inside a body.
    RangeExecutor inner_ex(options(2));
    std::atomic<std::size_t> inner_items{0};
    ASSERT_TRUE(ex.parallel_for(6, [&](std::size_t b, std::size_t e, unsigned) {
                      for (std::size_t i = b; i < e; ++i) {
                          EXPECT_TRUE(inner_ex
                                          .parallel_for(
                                              10, [&](std::size_t ib, std::size_t ie,
                                                      unsigned) { inner_items.fetch_add(ie - ib); })
                                          .is_ok());
                      }
                  }).is_ok());
    EXPECT_EQ(inner_items.load(), 60u);
}

TEST(RangeExecutor, ConcurrentCallersAreSerialized) {
    RangeExecutor ex(options(3));
    std::vector<std::thread> callers;
    std::atomic<int> failures{0};
    for (int t = 0; t < 3; ++t) {
        callers.emplace_back([&] {
            for (int rep = 0; rep < kRepeats; ++rep) {
                const std::size_t n = 3000;
                std::vector<std::atomic<int>> counts(n);
                const Status s = ex.parallel_for(n, [&](std::size_t b, std::size_t e, unsigned) {
                    for (std::size_t i = b; i < e; ++i) counts[i].fetch_add(1);
                });
                if (!s.is_ok()) failures.fetch_add(1);
                for (std::size_t i = 0; i < n; ++i) {
                    if (counts[i].load() != 1) failures.fetch_add(1);
                }
            }
        });
    }
    for (std::thread& t : callers) t.join();
    EXPECT_EQ(failures.load(), 0);
}

TEST(RangeExecutor, OnWorkerStartRunsOncePerHelper) {
    std::vector<std::atomic<int>> seen(6);
    {
        RangeExecutor ex(with_hook(6, [&](unsigned w) { seen[w]++; }));
        // The constructor waited for the hooks, so they are visible now.
        EXPECT_EQ(seen[0].load(), 0);  // worker 0 is the calling thread
        for (unsigned w = 1; w < 6; ++w) EXPECT_EQ(seen[w].load(), 1) << w;
    }
    EXPECT_THROW(RangeExecutor(with_hook(3,
                                         [](unsigned w) {
                                             if (w == 2) throw std::runtime_error("no");
                                         })),
                 std::runtime_error);
}

TEST(RangeExecutor, StatisticsAddUp) {
    RangeExecutor ex(options(4));
    const std::size_t n = 20'000;
    ASSERT_TRUE(ex.parallel_for(n, [](std::size_t b, std::size_t e, unsigned) {
                      for (std::size_t i = b; i < e; ++i) burn(i, skewed_cost(i, n));
                  }).is_ok());
    std::uint64_t items = 0;
    std::uint64_t chunks = 0;
    for (const RangeWorkerStats& s : ex.stats()) {
        items += s.items;
        chunks += s.chunks;
        EXPECT_GT(s.busy_ns + s.idle_ns, 0u);
    }
    EXPECT_EQ(items, n);
    // ~16 ln(share) + 16 chunks per share plus those of stolen ranges: far fewer than indices.
    EXPECT_GE(chunks, 4u);
    EXPECT_LT(chunks, n / 4);
    EXPECT_EQ(ex.topology().cpus().empty(), false);
}

// The victim tie-break by CPU class runs only on machines whose CPUs differ; pretend this one
// does (every CPU it has gets its own class) so that path runs here too, under the sanitizers.
TEST(RangeExecutor, SpeedClassTieBreakKeepsExactlyOnce) {
    std::vector<CpuInfo> cpus;
    const unsigned online = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned c = 0; c < online; ++c) {
        CpuInfo info;
        info.id = c;
        info.speed_class = c;  // cpu0 slowest
        cpus.push_back(info);
    }
    auto topo =
        std::make_shared<const CpuTopology>(CpuTopology::from_cpus(std::move(cpus), "test"));
    for (unsigned workers : {2u, 3u, 8u}) {
        RangeOptions o = options(workers);
        o.topology = topo;
        RangeExecutor ex(o);
        ASSERT_EQ(ex.topology().class_count(), online);
        for (int rep = 0; rep < kRepeats; ++rep) {
            for (std::size_t n : {std::size_t{1}, std::size_t{workers}, std::size_t{5003}}) {
                run_and_check(ex, n);
            }
        }
    }
}

// The tie-break itself: a thief facing two victims with equal remainders takes from the one last
// seen on the slower CPU class. Worker 1 is pinned to a CPU the topology calls fast, worker 2 to
// one it calls slow; both hold their first chunk until worker 0 (the caller) has emptied its
// share and stolen once. The scan starts at worker 1 and keeps the first of equal remainders, so
// without the tie-break worker 0 would steal from worker 1.
TEST(RangeExecutor, SpeedClassTieBreakPrefersTheSlowerVictim) {
    const std::vector<unsigned> allowed = CpuTopology::read().allowed();
    if (allowed.size() < 2) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs 2 CPUs to pin workers to";
    const unsigned slow_cpu = allowed[0];
    const unsigned fast_cpu = allowed[1];
    std::vector<CpuInfo> cpus;
    for (unsigned c : allowed) {
        CpuInfo info;
        info.id = c;
        info.speed_class = c == slow_cpu ? 0 : 1;
        cpus.push_back(info);
    }
    RangeOptions o = options(3);
    o.topology =
        std::make_shared<const CpuTopology>(CpuTopology::from_cpus(std::move(cpus), "test"));
    std::atomic<bool> pinned_ok{true};
    o.on_worker_start = [&](unsigned w) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(w == 2 ? slow_cpu : fast_cpu, &set);
        if (::sched_setaffinity(0, sizeof set, &set) != 0) pinned_ok.store(false);
    };
    for (int rep = 0; rep < kRepeats; ++rep) {
        RangeExecutor ex(o);
        ASSERT_TRUE(pinned_ok.load());
        const std::size_t n = 3000;  // shares [0,1000) [1000,2000) [2000,3000)
        std::atomic<int> helpers_holding{0};
        std::atomic<bool> both_holding{false};
        std::atomic<bool> stolen{false};
        std::atomic<bool> first_chunk_1{true};
        std::atomic<bool> first_chunk_2{true};
        bool first0 = true;
        bool timed_out = false;        // worker 0's thread, read after the call
        std::size_t first_stolen = n;  // worker 0's thread: begin of its first stolen chunk
        std::atomic<bool> helper_timed_out{false};
        std::vector<std::atomic<int>> counts(n);
        const Status status = ex.parallel_for(n, [&](std::size_t b, std::size_t e, unsigned w) {
            if (w != 0 && (w == 1 ? first_chunk_1 : first_chunk_2).exchange(false)) {
                if (helpers_holding.fetch_add(1) + 1 == 2) both_holding.store(true);
                if (!wait_until_set(stolen)) helper_timed_out.store(true);
            }
            if (w == 0) {
                if (first0) {
                    first0 = false;
                    if (!wait_until_set(both_holding)) timed_out = true;
                }
                if (b >= 1000 && first_stolen == n) {
                    first_stolen = b;
                    stolen.store(true, std::memory_order_release);
                }
            }
            for (std::size_t i = b; i < e; ++i) counts[i].fetch_add(1, std::memory_order_relaxed);
        });
        stolen.store(true);
        ASSERT_TRUE(status.is_ok()) << status.to_string();
        ASSERT_FALSE(timed_out || helper_timed_out.load()) << "rep " << rep;
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(counts[i].load(), 1) << i;
        EXPECT_GE(first_stolen, 2000u) << "stole from worker 1 (fast), not worker 2 (slow)";
        EXPECT_LT(first_stolen, n);
    }
}

TEST(RangeExecutor, DefaultWorkerCountIsHardwareConcurrency) {
    RangeExecutor ex;
    EXPECT_EQ(ex.size(), std::max(1u, std::thread::hardware_concurrency()));
    EXPECT_EQ(ex.schedule(), RangeSchedule::Stealing);
}

// --- The seed's workload -----------------------------------------------------------------------

TEST(RangeExecutorPrimes, IsPrimeKnownValues) {
    const std::uint64_t primes[] = {2,
                                    3,
                                    5,
                                    7,
                                    11,
                                    13,
                                    97,
                                    7919,
                                    1'000'003,
                                    2'147'483'647,
                                    4'294'967'291ull,                // largest prime < 2^32
                                    4'294'967'311ull,                // smallest prime > 2^32
                                    1'000'000'000'000'000'003ull,    // 10^18 + 3
                                    18'446'744'073'709'551'557ull};  // largest prime < 2^64
    for (std::uint64_t p : primes) EXPECT_TRUE(is_prime(p)) << p;
    const std::uint64_t composites[] = {
        0,
        1,
        4,
        9,
        25,
        49,
        91,
        7917,
        1'000'001,
        4'294'967'297ull,              // 641 * 6700417 (F5)
        4'294'967'296ull,              // 2^32
        3'825'123'056'546'413'051ull,  // strong pseudoprime to 2..23
        18'446'744'073'709'551'615ull};
    for (std::uint64_t c : composites) EXPECT_FALSE(is_prime(c)) << c;
    static_assert(is_prime(65'537) && !is_prime(65'535));
}

TEST(RangeExecutorPrimes, SequentialCountsAreKnown) {
    EXPECT_EQ(count_primes(0, 10), 4u);
    EXPECT_EQ(count_primes(0, 100), 25u);
    EXPECT_EQ(count_primes(10, 10), 0u);
    EXPECT_EQ(count_primes(20, 10), 0u);
    EXPECT_EQ(count_primes(0, 1'000'000), 78'498u);
    EXPECT_EQ(count_primes(0, 2'000'000), kPrimesBelowTwoMillion);
}

TEST(RangeExecutorPrimes, BisectionToAnyThresholdSumsToTheCount) {
    for (std::uint64_t threshold : {0ull, 1ull, 7ull, 1000ull, 1'000'000ull}) {
        std::vector<PrimeRange> stack{{3, 100'003}};
        std::uint64_t total = 0;
        std::uint64_t leaves = 0;
        while (!stack.empty()) {
            const PrimeRange r = stack.back();
            stack.pop_back();
            if (r.is_leaf(threshold)) {
                total += r.count();
                ++leaves;
            } else {
                const auto [left, right] = r.split();
                ASSERT_EQ(left.hi, right.lo);
                ASSERT_GT(left.size(), 0u);
                stack.push_back(left);
                stack.push_back(right);
            }
        }
        EXPECT_EQ(total, count_primes(3, 100'003)) << threshold;
        EXPECT_GE(leaves, 100'000 / std::max<std::uint64_t>(threshold, 1)) << threshold;
    }
}

TEST(RangeExecutorPrimes, BothSchedulesCountPrimesBelowTwoMillion) {
#ifdef WSINDEX_SANITIZED
    const unsigned worker_counts[] = {2u, 3u};
#else
    const unsigned worker_counts[] = {1u, 2u, 3u, 8u};
#endif
    for (RangeSchedule schedule : kSchedules) {
        for (unsigned workers : worker_counts) {
            RangeExecutor ex(options(workers, schedule));
            struct alignas(64) Partial {
                std::uint64_t count = 0;
            };
            std::vector<Partial> partial(workers);
            ASSERT_TRUE(ex.parallel_for(2'000'000, [&](std::size_t b, std::size_t e, unsigned w) {
                              partial[w].count += count_primes(b, e);
                          }).is_ok());
            std::uint64_t total = 0;
            for (const Partial& p : partial) total += p.count;
            EXPECT_EQ(total, kPrimesBelowTwoMillion) << to_string(schedule) << " " << workers;
        }
    }
}

}  // namespace
}  // namespace wsindex::core
