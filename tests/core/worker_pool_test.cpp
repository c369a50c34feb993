// Tests of WorkerPool: exact results over sweeps, errors, cancellation, termination under injected
// delays, backpressure, idle CPU use and wake-up after idling.
#include "core/worker_pool.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/primes.hpp"

namespace wsindex::core {
namespace {

using PrimePool = WorkerPool<PrimeRange, std::uint64_t>;

#if defined(WSINDEX_SANITIZED)
constexpr std::uint64_t kHi = 60'000;  // sanitizers are ~10x slower
#else
constexpr std::uint64_t kHi = 400'000;
#endif

PrimePool::Task bisect(std::uint64_t threshold) {
    return [threshold](PrimeRange& r, PrimePool::Context& ctx) {
        if (r.is_leaf(threshold)) {
            ctx.emit(r.count());
        } else {
            auto [left, right] = r.split();
            ctx.spawn(left);
            ctx.spawn(right);
        }
        return Status::ok();
    };
}

// Runs one bisection job and returns the consumer's sum (or the error).
std::uint64_t run_sum(PrimePool& pool, PrimeRange range, Status* status_out = nullptr) {
    std::uint64_t sum = 0;
    pool.submit(range);
    Status st = pool.consume_until_done([&](std::span<std::uint64_t> batch) {
        for (auto v : batch) sum += v;
        return Status::ok();
    });
    if (status_out) *status_out = st;
    return sum;
}

struct SweepParams {
    unsigned workers;
    std::uint64_t threshold;
};

// Nodes of the tree bisect(threshold) makes over `r`: the number of tasks it runs.
std::uint64_t bisection_nodes(PrimeRange r, std::uint64_t threshold) {
    if (r.is_leaf(threshold)) return 1;
    auto [left, right] = r.split();
    return 1 + bisection_nodes(left, threshold) + bisection_nodes(right, threshold);
}

class PoolPrimeSweep : public ::testing::TestWithParam<SweepParams> {};

TEST_P(PoolPrimeSweep, CountEqualsSequential) {
    const auto [workers, threshold] = GetParam();
    const std::uint64_t expected = count_primes(0, kHi);
    PoolOptions opt;
    opt.workers = workers;
    opt.deque_capacity = 4;  // force growth
    opt.result_batch = 64;
    PrimePool pool(opt, bisect(threshold));
    for (int rep = 0; rep < 3; ++rep) {  // the pool is reused across runs
        Status st;
        EXPECT_EQ(run_sum(pool, {0, kHi}, &st), expected) << "rep " << rep;
        EXPECT_TRUE(st.is_ok()) << st.to_string();
    }
    std::uint64_t tasks = 0;
    for (const auto& s : pool.stats()) tasks += s.tasks_run;
    // The bisection tree over kHi numbers with leaves <= threshold: every node ran exactly once
    // in each of the 3 runs.
    EXPECT_EQ(tasks, 3 * bisection_nodes({0, kHi}, threshold));
}

std::vector<SweepParams> sweep() {
    std::vector<SweepParams> out;
    for (unsigned w : {1u, 2u, 3u, 4u, 8u}) {
        for (std::uint64_t t : {1ull, 10ull, 1000ull, 100'000ull, 1'000'000ull}) {
            out.push_back({w, t});
        }
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(WorkersThresholds, PoolPrimeSweep, ::testing::ValuesIn(sweep()),
                         [](const auto& param_info) {
                             return "w" + std::to_string(param_info.param.workers) + "_t" +
                                    std::to_string(param_info.param.threshold);
                         });

TEST(WorkerPool, EmptyWaitReturnsOk) {
    PrimePool pool({.workers = 2}, bisect(10));
    EXPECT_TRUE(
        pool.consume_until_done([](std::span<std::uint64_t>) { return Status::ok(); }).is_ok());
}

TEST(WorkerPool, ManySeedsAllCounted) {
    PrimePool pool({.workers = 3}, bisect(50));
    std::uint64_t expected = 0;
    for (std::uint64_t lo = 0; lo < kHi; lo += 1000) {
        pool.submit({lo, lo + 1000});
        expected += count_primes(lo, lo + 1000);
    }
    std::uint64_t sum = 0;
    Status st = pool.consume_until_done([&](std::span<std::uint64_t> b) {
        for (auto v : b) sum += v;
        return Status::ok();
    });
    EXPECT_TRUE(st.is_ok());
    EXPECT_EQ(sum, expected);
}

// A task fails at one item: consume_until_done() returns that error, quickly, and no task starts
// after the stop: a task that sees stop_requested() on entry passed the pool's start check just
// before the stop, which can happen at most once per worker.
TEST(WorkerPool, FirstErrorStopsEveryoneAndIsReturned) {
    for (unsigned workers : {1u, 2u, 4u, 8u}) {
        std::atomic<int> started_after_stop{0};
        std::atomic<std::uint64_t> leaves{0};
        constexpr std::uint64_t kFailAfter = 10'000;  // leaves, of 2^22
        PrimePool pool({.workers = workers}, [&](PrimeRange& r, PrimePool::Context& ctx) -> Status {
            if (ctx.stop_requested()) started_after_stop.fetch_add(1);
            if (r.is_leaf(1)) {
                if (leaves.fetch_add(1) == kFailAfter) {
                    return Status::from_errno(EIO, "item X");
                }
                ctx.emit(1);
                return Status::ok();
            }
            auto [a, b] = r.split();
            ctx.spawn(a);
            ctx.spawn(b);
            return Status::ok();
        });
        Status st;
        run_sum(pool, {0, 1 << 22}, &st);
        ASSERT_FALSE(st.is_ok());
        EXPECT_EQ(st.code(), std::error_code(EIO, std::generic_category()));
        EXPECT_EQ(st.message(), "item X");
        EXPECT_LE(started_after_stop.load(), static_cast<int>(workers)) << workers;
        EXPECT_LT(leaves.load(), std::uint64_t{1} << 21) << "work was not abandoned";
        std::uint64_t discarded = 0;
        for (const auto& s : pool.stats()) discarded += s.discarded;
        EXPECT_GT(discarded, 0u);
        // The pool is usable again after a failed run.
        Status again;
        leaves.store(0);
        EXPECT_EQ(run_sum(pool, {0, 2000}, &again), 2000u);
        EXPECT_TRUE(again.is_ok()) << again.to_string();
    }
}

TEST(WorkerPool, ExceptionInTaskBecomesTheError) {
    PrimePool pool({.workers = 2}, [](PrimeRange& r, PrimePool::Context& ctx) -> Status {
        if (r.lo == 77 && r.is_leaf(1)) throw std::runtime_error("boom");
        if (r.is_leaf(1)) return ctx.emit(0), Status::ok();
        auto [a, b] = r.split();
        ctx.spawn(a);
        ctx.spawn(b);
        return Status::ok();
    });
    Status st;
    run_sum(pool, {0, 4096}, &st);
    ASSERT_FALSE(st.is_ok());
    EXPECT_NE(st.message().find("boom"), std::string::npos);
}

TEST(WorkerPool, ConsumerFailureStopsThePool) {
    PrimePool pool({.workers = 2, .result_batch = 16}, bisect(1));
    int batches = 0;
    pool.submit({0, 1 << 22});
    Status st = pool.consume_until_done([&](std::span<std::uint64_t>) {
        ++batches;
        return Status::from_errno(ENOSPC, "disk full");
    });
    EXPECT_EQ(st.code(), std::error_code(ENOSPC, std::generic_category()));
    EXPECT_EQ(batches, 1);  // never called again after failing
}

TEST(WorkerPool, RequestStopCancelsAndPoolIsReusable) {
    std::atomic<std::uint64_t> leaves{0};
    PrimePool* self = nullptr;
    PrimePool pool({.workers = 2}, [&](PrimeRange& r, PrimePool::Context& ctx) -> Status {
        if (r.is_leaf(1)) {
            // Cancel from inside after some progress: deterministic, no timing involved.
            if (leaves.fetch_add(1) == 10'000) self->request_stop();
            ctx.emit(1);
            return Status::ok();
        }
        auto [a, b] = r.split();
        ctx.spawn(a);
        ctx.spawn(b);
        return Status::ok();
    });
    self = &pool;
    Status st;
    run_sum(pool, {0, 1 << 22}, &st);
    EXPECT_EQ(st.code(), std::make_error_code(std::errc::operation_canceled));
    EXPECT_LT(leaves.load(), std::uint64_t{1} << 21);
    leaves.store(0);
    Status again;
    EXPECT_EQ(run_sum(pool, {0, 5000}, &again), 5000u);
    EXPECT_TRUE(again.is_ok());
}

TEST(WorkerPool, RequestStopFromAnotherThread) {
    PrimePool pool({.workers = 2}, bisect(1));
    pool.submit({0, std::uint64_t{1} << 40});  // far more work than the test will wait for
    std::atomic<bool> first_batch{false};
    std::thread canceller([&] {
        first_batch.wait(false);
        pool.request_stop();
    });
    Status st = pool.consume_until_done([&](std::span<std::uint64_t>) {
        first_batch.store(true);
        first_batch.notify_one();
        return Status::ok();
    });
    canceller.join();
    EXPECT_EQ(st.code(), std::make_error_code(std::errc::operation_canceled));
}

// A one-shot event with a bounded wait: a test that waits for it fails instead of hanging.
class Signal {
  public:
    void set() {
        {
            std::lock_guard lock(mutex_);
            set_ = true;
        }
        cv_.notify_all();
    }
    [[nodiscard]] bool wait_for(std::chrono::seconds limit) {
        std::unique_lock lock(mutex_);
        return cv_.wait_for(lock, limit, [&] { return set_; });
    }

  private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool set_ = false;
};

// Stop means stop: after a stop, batches already queued for the consumer are dropped, not
// consumed. One task hands over a one-result batch, waits until the consumer holds it, then
// queues 7 more; the consumer, at its first batch, waits until the stop has happened (a cancel
// it makes itself, or the task's error recorded), and must not be called again.
TEST(WorkerPool, QueuedBatchesAreDroppedAfterAStop) {
    constexpr int kBatches = 8;
    for (const bool by_error : {false, true}) {
        SCOPED_TRACE(by_error ? "task error" : "request_stop");
        std::atomic<bool> task_returned{false};
        Signal consuming;  // the consumer holds the first batch
        Signal stopped;
        PoolOptions opt;
        opt.workers = 1;
        opt.result_batch = 1;
        opt.queued_batches = 4 * kBatches;  // room for every batch: the task never blocks
        // After the task returned, the worker's next search starts only after run() recorded
        // the task's error (fail()).
        opt.on_transition = [&](unsigned, PoolEvent event) {
            if (event == PoolEvent::StartSearch && task_returned.load()) stopped.set();
        };
        PrimePool pool(opt, [&](PrimeRange&, PrimePool::Context& ctx) -> Status {
            ctx.emit(1);
            EXPECT_TRUE(consuming.wait_for(std::chrono::seconds(30)));
            for (int i = 1; i < kBatches; ++i) ctx.emit(1);
            task_returned.store(true);
            return by_error ? Status::from_errno(EIO, "task failed") : Status::ok();
        });
        int calls = 0;
        pool.submit({0, 1});
        const Status st = pool.consume_until_done([&](std::span<std::uint64_t>) {
            if (++calls == 1) {
                consuming.set();
                // Once the task returned, every batch is queued (the queue has room).
                EXPECT_TRUE(stopped.wait_for(std::chrono::seconds(30)));
                if (!by_error) pool.request_stop();
            }
            return Status::ok();
        });
        EXPECT_EQ(calls, 1) << "batches consumed after the stop";
        if (by_error) {
            EXPECT_EQ(st.code(), std::error_code(EIO, std::generic_category()));
        } else {
            EXPECT_EQ(st.code(), std::make_error_code(std::errc::operation_canceled));
        }
    }
}

// Termination under injected delays at every idle/active transition: workers go idle and come
// back while others still produce; every run must end with the exact count, never early (a lost
// leaf) and never hang (ctest's timeout).
TEST(WorkerPool, TerminationWithInjectedDelays) {
#if defined(WSINDEX_SANITIZED)
    const int kRuns = 40;
#else
    const int kRuns = 200;
#endif
    for (unsigned workers : {2u, 3u, 4u}) {
        PoolOptions opt;
        opt.workers = workers;
        opt.result_batch = 1;  // every result crosses the hand-off
        opt.on_transition = [](unsigned worker, PoolEvent) {
            thread_local std::minstd_rand rng(worker * 7919 + 1);
            const unsigned r = rng() % 16;
            if (r < 3) {
                std::this_thread::sleep_for(std::chrono::microseconds(r * 50));
            } else if (r < 8) {
                std::this_thread::yield();
            }
        };
        // Leaves sometimes linger before emitting, so other workers run dry, park and wake.
        PrimePool pool(opt, [](PrimeRange& r, PrimePool::Context& ctx) -> Status {
            if (r.is_leaf(8)) {
                if (r.lo % 64 == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
                ctx.emit(r.size());
                return Status::ok();
            }
            auto [a, b] = r.split();
            ctx.spawn(a);
            ctx.spawn(b);
            return Status::ok();
        });
        for (int run = 0; run < kRuns; ++run) {
            const std::uint64_t n = 1 + static_cast<std::uint64_t>(run) * 37 % 2000;
            Status st;
            ASSERT_EQ(run_sum(pool, {0, n}, &st), n) << "workers " << workers << " run " << run;
            ASSERT_TRUE(st.is_ok());
        }
    }
}

// CPU time consumed by this process (all threads), in seconds.
double process_cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto secs = [](timeval tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; };
    return secs(ru.ru_utime) + secs(ru.ru_stime);
}

TEST(WorkerPool, IdlePoolUsesNoCpuAndWakesForNewWork) {
    PrimePool pool({.workers = 4}, bisect(100));
    Status st;
    EXPECT_EQ(run_sum(pool, {0, 20'000}, &st), count_primes(0, 20'000));
    // Let the workers finish their bounded spin and park, then measure an idle interval. The
    // sleep makes the interval; it hides no race (the assertion is about CPU, not ordering).
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double before = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    const double cpu = process_cpu_seconds() - before;
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(cpu, 0.02 * wall) << "idle pool burnt " << cpu << " s of CPU in " << wall << " s";
    std::uint64_t parks = 0;
    for (const auto& s : pool.stats()) parks += s.parks;
    EXPECT_GE(parks, 1u);
    // Work submitted after idling wakes the parked workers and completes.
    EXPECT_EQ(run_sum(pool, {0, 30'000}, &st), count_primes(0, 30'000));
    EXPECT_TRUE(st.is_ok());
}

// Backpressure: while the consumer is stalled, producers block; results in flight stay bounded by
// (queued batches + one batch per worker) instead of growing with the work.
TEST(WorkerPool, SlowConsumerBoundsResultsInFlight) {
    constexpr std::size_t kBatch = 8;
    constexpr std::size_t kQueued = 2;
    constexpr unsigned kWorkers = 3;
    std::atomic<std::uint64_t> emitted{0};
    PrimePool pool({.workers = kWorkers, .result_batch = kBatch, .queued_batches = kQueued},
                   [&](PrimeRange& r, PrimePool::Context& ctx) -> Status {
                       if (r.is_leaf(1)) {
                           // Counted before the emit, so the count is never behind.
                           emitted.fetch_add(1, std::memory_order_relaxed);
                           ctx.emit(1);
                           return Status::ok();
                       }
                       auto [a, b] = r.split();
                       ctx.spawn(a);
                       ctx.spawn(b);
                       return Status::ok();
                   });
    std::uint64_t consumed = 0;
    std::uint64_t max_in_flight = 0;
    pool.submit({0, 20'000});
    Status st = pool.consume_until_done([&](std::span<std::uint64_t> b) {
        // Stall on the first batches long enough for producers to fill every buffer.
        if (consumed < 5 * kBatch) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        consumed += b.size();
        const std::uint64_t e = emitted.load(std::memory_order_relaxed);
        max_in_flight = std::max(max_in_flight, e - consumed);
        return Status::ok();
    });
    EXPECT_TRUE(st.is_ok());
    EXPECT_EQ(consumed, 20'000u);
    // Queue + this batch + one full buffer per worker + the one being emitted per worker.
    EXPECT_LE(max_in_flight, (kQueued + 1 + kWorkers) * kBatch + kWorkers);
}

TEST(WorkerPool, StatsCountEveryTask) {
    PrimePool pool({.workers = 2}, bisect(16));
    Status st;
    run_sum(pool, {0, 1 << 16}, &st);
    std::uint64_t tasks = 0;
    std::uint64_t stolen = 0;
    for (const auto& s : pool.stats()) {
        tasks += s.tasks_run;
        stolen += s.items_stolen;
        EXPECT_LE(s.steals, s.steal_attempts);
        EXPECT_LE(s.steals, s.items_stolen);
    }
    // A full binary tree with 2^16 / 16 = 4096 leaves has 8191 nodes.
    EXPECT_EQ(tasks, 8191u);
    EXPECT_LE(stolen, tasks);
}

// Items need not be trivially copyable: they live in pool-owned nodes.
TEST(WorkerPool, MoveOnlyItemsAndResults) {
    using Pool = WorkerPool<std::unique_ptr<int>, std::string>;
    Pool pool({.workers = 2}, [](std::unique_ptr<int>& item, Pool::Context& ctx) -> Status {
        if (*item > 0) {
            ctx.spawn(std::make_unique<int>(*item - 1));
            ctx.spawn(std::make_unique<int>(*item - 1));
        }
        ctx.emit(std::to_string(*item));
        return Status::ok();
    });
    pool.submit(std::make_unique<int>(10));
    std::size_t count = 0;
    ASSERT_TRUE(pool.consume_until_done([&](std::span<std::string> b) {
                        count += b.size();
                        return Status::ok();
                    })
                    .is_ok());
    EXPECT_EQ(count, (1u << 11) - 1);
}

}  // namespace
}  // namespace wsindex::core
