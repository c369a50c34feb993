// Checkpointer: its thread copies committed WAL pages into the database file while the writing
// connection has automatic checkpoints off, and stops promptly.
#include "storage/checkpointer.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <string>
#include <thread>

#include "storage/database.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

long long file_size(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : -1;
}

// A writer of `path` that committed ~4 MiB to the WAL and runs no checkpoint itself.
Database writer_with_full_wal(const std::string& path) {
    Database db;
    EXPECT_TRUE(Database::open(path, OpenMode::read_write, &db));
    EXPECT_TRUE(db.exec("PRAGMA wal_autocheckpoint=0; CREATE TABLE t(v BLOB);"));
    EXPECT_TRUE(
        db.exec("BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
                " WHERE i < 4000) INSERT INTO t SELECT randomblob(1000) FROM n; COMMIT;"));
    return db;
}

// Polls `done` (an outcome of the checkpointer's thread, not the passing of time) for up to
// 30 s; its last answer.
template <class F>
bool wait_until(F done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    return done();
}

TEST(Checkpointer, CopiesTheWalIntoTheDatabaseWhileTheWriterDoesNot) {
    test::TempDir dir;
    const std::string path = dir / "index.db";
    Database writer = writer_with_full_wal(path);
    const long long before = file_size(path);
    ASSERT_LT(before, 1 << 20) << "the pages should still be in the WAL only";

    std::unique_ptr<Checkpointer> checkpointer;
    ASSERT_TRUE(Checkpointer::start(path, std::chrono::milliseconds(5), &checkpointer));
    // runs() counts a checkpoint after it returned: wait for both outcomes.
    (void)wait_until([&] { return file_size(path) >= 4'000'000 && checkpointer->runs() > 0; });
    EXPECT_GE(file_size(path), 4'000'000) << "no checkpoint copied the WAL";
    EXPECT_GE(checkpointer->runs(), 1u);

    // The writer can keep committing beside it, and the data reads back.
    ASSERT_TRUE(writer.exec("INSERT INTO t VALUES (x'00')"));
    std::int64_t rows = 0;
    ASSERT_TRUE(writer.query_int64("SELECT count(*) FROM t", &rows));
    EXPECT_EQ(rows, 4001);
}

// The database file is flushed after a checkpoint that copied frames, and not again while
// nothing new was copied.
TEST(Checkpointer, FlushesTheDatabaseFileOnlyAfterCopying) {
    test::TempDir dir;
    const std::string path = dir / "index.db";
    Database writer = writer_with_full_wal(path);

    std::unique_ptr<Checkpointer> checkpointer;
    ASSERT_TRUE(Checkpointer::start(path, std::chrono::milliseconds(1), &checkpointer));
    ASSERT_TRUE(wait_until([&] { return checkpointer->flushes() >= 1; }))
        << "no flush after the WAL was copied";
    // Nothing new to copy: more runs, no more flushes.
    const unsigned long flushes = checkpointer->flushes();
    const unsigned long runs = checkpointer->runs();
    ASSERT_TRUE(wait_until([&] { return checkpointer->runs() >= runs + 3; }));
    EXPECT_EQ(checkpointer->flushes(), flushes);

    // A new commit is copied and flushed again.
    ASSERT_TRUE(writer.exec("INSERT INTO t VALUES (randomblob(5000))"));
    EXPECT_TRUE(wait_until([&] { return checkpointer->flushes() > flushes; }))
        << "no flush after a later commit was copied";
}

TEST(Checkpointer, StopsPromptlyWithALongPeriod) {
    test::TempDir dir;
    const std::string path = dir / "index.db";
    Database writer;
    ASSERT_TRUE(Database::open(path, OpenMode::read_write, &writer));
    std::unique_ptr<Checkpointer> checkpointer;
    ASSERT_TRUE(Checkpointer::start(path, std::chrono::hours(1), &checkpointer));
    const auto t0 = std::chrono::steady_clock::now();
    checkpointer.reset();  // must not wait for the hour
    // A bound far from both sides: stopping takes milliseconds, waiting for the period an hour.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::minutes(2));
}

TEST(Checkpointer, FailsClearlyOnAMissingDirectory) {
    std::unique_ptr<Checkpointer> checkpointer;
    const core::Status s = Checkpointer::start("/nonexistent-dir-wsindex/index.db",
                                               std::chrono::milliseconds(5), &checkpointer);
    EXPECT_FALSE(s);
    EXPECT_EQ(checkpointer, nullptr);
}

}  // namespace
}  // namespace wsindex::storage
