// Tests of the query pool's scheduling: when the index warm-up may run beside the queries.
#include "daemon/query_pool.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

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
    ASSERT_TRUE(pool->submit([&](QueryContext&) { job.pass(); }));
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

}  // namespace
}  // namespace wsindex::daemon
