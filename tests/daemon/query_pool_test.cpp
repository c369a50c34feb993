// Tests of the query pool's scheduling: when the index warm-up may run beside the queries, and
// how the threads are shared between the callers' uids.
#include "daemon/query_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "storage/database.hpp"
#include "tests/daemon/support/daemon_test_support.hpp"

namespace wsindex::daemon {
namespace {

using namespace std::chrono_literals;

// Polls `done` until it holds or `timeout` passes; returns whether it held.
template <typename Predicate>
bool eventually(Predicate done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

// A warm-up reads the whole index; beside a running query it takes the CPU that query's search
// workers need (a 10M-entry find by the parallel scan took 86 ms on 2 workers with the idle
// query thread warming up beside it, 69 ms on one worker). It waits until no job runs.
TEST(QueryPool, AWarmUpWaitsWhileAJobRunsAndStartsWhenItEnds) {
    test::TempDir dir;
    const std::string db = dir / "index.db";
    {
        storage::Database writer;  // the schema
        ASSERT_TRUE(storage::Database::open(db, storage::OpenMode::read_write, &writer));
    }
    std::unique_ptr<QueryPool> pool;
    ASSERT_TRUE(QueryPool::open(db, /*threads=*/2, /*max_pending=*/8, &pool));

    test::Gate job;
    ASSERT_TRUE(pool->submit(0, [&](QueryContext&) { job.pass(); }));
    ASSERT_TRUE(job.wait_arrived());
    const std::uint64_t before = pool->warm_ups_started();
    pool->warm();
    // The second thread is idle and woken by warm(): it would begin at once (microseconds) if
    // it did not wait for the job. Half a second without a warm-up shows it waits.
    EXPECT_FALSE(eventually([&] { return pool->warm_ups_started() != before; }, 500ms))
        << "a warm-up began while a job ran";
    job.open();
    // Both threads warm up once the job has returned.
    EXPECT_TRUE(eventually([&] { return pool->warm_ups_started() >= before + 2; }, 30s))
        << pool->warm_ups_started() - before << " warm-ups after the job ended";
    pool->stop();
}

// An empty index and a pool on it.
class PoolFairness : public ::testing::Test {
  protected:
    void open(unsigned threads, unsigned max_per_uid, std::size_t max_pending = 64) {
        db_ = dir_ / "index.db";
        {
            storage::Database writer;  // the schema
            ASSERT_TRUE(storage::Database::open(db_, storage::OpenMode::read_write, &writer));
        }
        ASSERT_TRUE(QueryPool::open(db_, threads, max_pending, &pool_, 1, SIZE_MAX, max_per_uid));
    }
    // Queues a job of `uid` that records its start, waits at `gate`, and counts `uid`'s jobs in
    // flight (the most seen at once in `peak`).
    bool submit(uid_t uid, test::Gate& gate) {
        return pool_->submit(uid, [this, uid, &gate](QueryContext&) {
            {
                std::lock_guard lock(mutex_);
                order_.push_back(uid);
                const unsigned now = ++in_flight_[uid];
                peak_[uid] = std::max(peak_[uid], now);
            }
            gate.pass();
            std::lock_guard lock(mutex_);
            --in_flight_[uid];
        });
    }
    std::vector<uid_t> order() {
        std::lock_guard lock(mutex_);
        return order_;
    }

    test::TempDir dir_;
    std::string db_;
    std::unique_ptr<QueryPool> pool_;
    std::mutex mutex_;
    std::vector<uid_t> order_;                    // guarded: uids in the order their jobs began
    std::map<uid_t, unsigned> in_flight_, peak_;  // guarded
};

constexpr uid_t kFlooder = 1000;
constexpr uid_t kOther = 1001;

// Both threads busy with A's jobs, more of A's queued, then one of B's: the next free thread
// takes B's (with one FIFO queue it took A's, and B waited for A's whole flood).
TEST_F(PoolFairness, AnotherUidsJobQueuedLaterRunsBeforeTheFloodersRemainingOnes) {
    open(/*threads=*/2, /*max_per_uid=*/2);
    test::Gate first;  // A's first job: ends first
    test::Gate rest;   // everything else
    ASSERT_TRUE(submit(kFlooder, first));
    ASSERT_TRUE(first.wait_arrived());
    ASSERT_TRUE(submit(kFlooder, rest));
    ASSERT_TRUE(rest.wait_arrived(1));  // both threads now run A's jobs
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(submit(kFlooder, rest));
    ASSERT_TRUE(submit(kOther, rest));
    first.open();
    ASSERT_TRUE(rest.wait_arrived(2));  // the freed thread took its next job
    const std::vector<uid_t> began = order();
    ASSERT_EQ(began.size(), 3U);
    EXPECT_EQ(began[2], kOther) << "B waited behind A's queued jobs";
    rest.open();
    pool_->stop();
    EXPECT_EQ(order().size(), 7U);  // everything queued ran
}

// With three threads and a bound of two, A never runs a third job at once: the third thread
// stays for B, whose job queued after A's flood starts while A's first two still run.
TEST_F(PoolFairness, OneUidNeverHasMoreThanTheBoundInFlight) {
    open(/*threads=*/3, /*max_per_uid=*/2);
    ASSERT_EQ(pool_->max_per_uid(), 2U);
    test::Gate a_gate;
    test::Gate b_gate;
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(submit(kFlooder, a_gate));
    ASSERT_TRUE(a_gate.wait_arrived(2));
    ASSERT_TRUE(submit(kOther, b_gate));
    // B's job gets the third thread at once, though four of A's were queued before it: A's
    // third job was held back by the bound (or the third thread would have taken it first).
    ASSERT_TRUE(b_gate.wait_arrived(1)) << "B's job did not start";
    const std::vector<uid_t> began = order();
    ASSERT_EQ(began.size(), 3U);
    EXPECT_EQ(began[2], kOther);
    b_gate.open();
    a_gate.open();
    pool_->stop();
    std::lock_guard lock(mutex_);
    EXPECT_EQ(order_.size(), 7U);
    EXPECT_EQ(peak_[kFlooder], 2U) << "A had more than the bound in flight";
}

// The default bound leaves a thread to the others; one uid may not fill the whole queue.
TEST_F(PoolFairness, DefaultBoundAndShareOfTheQueue) {
    open(/*threads=*/2, /*max_per_uid=*/0, /*max_pending=*/8);
    EXPECT_EQ(pool_->max_per_uid(), 1U);
    test::Gate gate;
    ASSERT_TRUE(submit(kFlooder, gate));
    ASSERT_TRUE(gate.wait_arrived(1));  // running: no longer queued
    int queued = 0;
    while (submit(kFlooder, gate)) ++queued;
    EXPECT_EQ(queued, 4);               // half of max_pending
    EXPECT_TRUE(submit(kOther, gate));  // the rest is the others'
    ASSERT_TRUE(gate.wait_arrived(2));
    gate.open();
    pool_->stop();
    std::lock_guard lock(mutex_);
    EXPECT_EQ(peak_[kFlooder], 1U);
    EXPECT_EQ(order_.size(), 6U);
}

}  // namespace
}  // namespace wsindex::daemon
