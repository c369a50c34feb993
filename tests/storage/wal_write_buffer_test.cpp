// WAL write buffering VFS: frame writes are gathered, every commit is on the file before SQLite
// publishes it (a reader through the default VFS sees each one at once), rolled-back and
// killed transactions leave a database that reads back exactly what was committed.
#include "storage/wal_write_buffer.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "storage/database.hpp"
#include "tests/storage/support/killed_child.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

// Readers open the database read-only, which goes through SQLite's default VFS (no buffer of
// its own; Database::open), so they read the files as they are on disk.

// `rows` rows of 1000 bytes each (a quarter of a page), in one transaction.
std::string insert_sql(int rows) {
    return "BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " +
           std::to_string(rows) + ") INSERT INTO t SELECT randomblob(1000) FROM n; COMMIT;";
}

Database open_writer(const std::string& path) {
    Database db;
    EXPECT_TRUE(Database::open(path, OpenMode::read_write, &db));
    EXPECT_TRUE(db.exec("PRAGMA wal_autocheckpoint=0; CREATE TABLE IF NOT EXISTS t(v BLOB)"));
    return db;
}

// The name a connection's VFS reports for its database file.
std::string vfs_name(Database& db) {
    char* name = nullptr;
    if (sqlite3_file_control(db.handle(), "main", SQLITE_FCNTL_VFSNAME, &name) != SQLITE_OK ||
        name == nullptr) {
        return "";
    }
    std::string out(name);
    sqlite3_free(name);
    return out;
}

TEST(WalWriteBuffer, WritersUseItReadersDoNot) {
    ASSERT_NE(wal_buffering_vfs(), nullptr);
    test::TempDir dir;
    Database writer = open_writer(dir / "index.db");
    const std::string ours = wal_buffering_vfs();
    EXPECT_EQ(vfs_name(writer).rfind(ours, 0), 0u) << vfs_name(writer);
    Database reader = test::open_reader(dir / "index.db");
    const std::string theirs = vfs_name(reader);
    EXPECT_FALSE(theirs.empty());
    EXPECT_EQ(theirs.find(ours), std::string::npos) << theirs;
}

TEST(WalWriteBuffer, GathersFramesAndPublishesEveryCommitWhole) {
    test::TempDir dir;
    const std::string path = dir / "index.db";
    Database writer = open_writer(path);
    Database reader = test::open_reader(path);
    const WalBufferStats before = wal_buffer_stats();
    constexpr int kCommits = 40;
    for (int i = 1; i <= kCommits; ++i) {
        ASSERT_TRUE(writer.exec(insert_sql(200)));  // ~50 pages: several buffers per commit
        // The commit returned: a reader through the plain VFS must see all of it.
        ASSERT_EQ(test::query_int(reader, "SELECT count(*) FROM t"), 200 * i)
            << "after commit " << i;
    }
    const WalBufferStats after = wal_buffer_stats();
    const auto frames = after.frames_buffered - before.frames_buffered;
    const auto writes = after.writes - before.writes;
    EXPECT_GE(frames, 2u * 50 * kCommits) << "two writes per frame (header, page) went through";
    EXPECT_LT(writes * 5, frames) << "frame writes were not gathered";
    EXPECT_GE(after.commit_flushes - before.commit_flushes, static_cast<std::uint64_t>(kCommits));
    // Every commit was recognized at its commit frame, none left for the barrier.
    EXPECT_EQ(after.late_flushes, before.late_flushes);
    EXPECT_EQ(test::integrity(reader), "ok");
}

TEST(WalWriteBuffer, ARolledBackTransactionLeavesOnlyWhatWasCommitted) {
    test::TempDir dir;
    const std::string path = dir / "index.db";
    Database writer = open_writer(path);
    ASSERT_TRUE(writer.exec(insert_sql(100)));
    // Big enough to spill frames into the log before the rollback (cache of 100 pages).
    ASSERT_TRUE(writer.exec("PRAGMA cache_size=100"));
    ASSERT_TRUE(
        writer.exec("BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1"
                    " FROM n WHERE i < 3000) INSERT INTO t SELECT randomblob(1000) FROM n;"
                    " ROLLBACK;"));
    ASSERT_TRUE(writer.exec(insert_sql(100)));
    Database reader = test::open_reader(path);
    EXPECT_EQ(test::query_int(reader, "SELECT count(*) FROM t"), 200);
    EXPECT_EQ(test::integrity(reader), "ok");
    writer.close();
    Database after_close = test::open_reader(path);
    EXPECT_EQ(test::query_int(after_close, "SELECT count(*) FROM t"), 200);
}

// A transaction bigger than its page cache spills pages into the log and reads them back
// before it commits: those reads must see the spilled pages, buffered or not.
TEST(WalWriteBuffer, ATransactionReadsBackThePagesItSpilled) {
    test::TempDir dir;
    const std::string path = dir / "index.db";
    Database writer = open_writer(path);
    ASSERT_TRUE(writer.exec("PRAGMA cache_size=10; CREATE TABLE u(i INTEGER PRIMARY KEY, v BLOB)"));
    const WalBufferStats before = wal_buffer_stats();
    ASSERT_TRUE(
        writer.exec("BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1"
                    " FROM n WHERE i < 2000) INSERT INTO u SELECT i, printf('%0500d', i) FROM n;"
                    " UPDATE u SET v = v || 'a'"));
    std::int64_t bytes = 0;
    ASSERT_TRUE(writer.query_int64("SELECT sum(length(v)) FROM u", &bytes));
    EXPECT_EQ(bytes, 2000 * 501);
    ASSERT_TRUE(writer.exec("UPDATE u SET v = v || 'b'; COMMIT"));
    // Frames rewritten in place, then every header after them rewritten with new checksums
    // (the commit frame's too): the commit still went out with its page, not at the barrier.
    EXPECT_EQ(wal_buffer_stats().late_flushes, before.late_flushes);
    Database reader = test::open_reader(path);
    EXPECT_EQ(test::query_int(reader, "SELECT sum(length(v)) FROM u"), 2000 * 502);
    EXPECT_EQ(test::query_int(reader, "SELECT count(*) FROM u WHERE v = printf('%0500dab', i)"),
              2000);
    EXPECT_EQ(test::integrity(reader), "ok");
}

// A writer killed in the middle of a transaction, with frames still in its buffer: the next
// opener recovers exactly the committed rows.
TEST(WalWriteBuffer, AKilledWriterLosesOnlyItsOpenTransaction) {
    test::TempDir dir;
    const std::string path = dir / "index.db";
    { Database setup = open_writer(path); }
    test::KilledChild child([&](int ready_fd) {
        Database db;
        if (!Database::open(path, OpenMode::read_write, &db)) _exit(2);
        if (!db.exec("PRAGMA wal_autocheckpoint=0")) _exit(3);
        for (int i = 0; i < 10; ++i) {
            if (!db.exec(insert_sql(150))) _exit(4);
        }
        // An open transaction whose pages spill into the log (a 10-page cache): frames of it
        // are in the buffer or already on the file, never committed.
        if (!db.exec("PRAGMA cache_size=10")) _exit(5);
        if (!db.exec("BEGIN; INSERT INTO t SELECT randomblob(1000) FROM t LIMIT 200")) _exit(5);
        const char ready = 'r';
        if (::write(ready_fd, &ready, 1) != 1) _exit(6);
        for (;;) pause();
    });
    ASSERT_TRUE(child.forked());
    ASSERT_TRUE(child.wait_ready()) << "the child failed before its open transaction";
    ASSERT_TRUE(child.kill());

    Database reopened = open_writer(path);  // recovery runs here
    Database reader = test::open_reader(path);
    EXPECT_EQ(test::query_int(reader, "SELECT count(*) FROM t"), 1500);
    EXPECT_EQ(test::integrity(reader), "ok");
}

}  // namespace
}  // namespace wsindex::storage
