// Schema creation, version checks and the errors for databases we must not touch.
#include "storage/schema.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "storage/database.hpp"
#include "storage/sqlite_error.hpp"
#include "storage/statement.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

using test::TempDir;

TEST(Schema, FreshDatabaseGetsCurrentVersionAndWal) {
    TempDir dir;
    Database db;
    auto s = Database::open(dir / "index.db", OpenMode::read_write, &db);
    ASSERT_TRUE(s) << s.to_string();
    EXPECT_EQ(test::query_int(db, "PRAGMA user_version"), kSchemaVersion);
    EXPECT_EQ(test::query_text(db, "PRAGMA journal_mode"), "wal");
    EXPECT_EQ(test::query_int(db, "PRAGMA synchronous"), 1);  // NORMAL
    EXPECT_EQ(test::query_int(db, "SELECT count(*) FROM files"), 0);
    EXPECT_EQ(test::query_int(db, "SELECT count(*) FROM dir_totals"), 0);
    EXPECT_EQ(test::query_int(db, "SELECT count(*) FROM scan_errors"), 0);
    EXPECT_EQ(test::query_int(db, "SELECT count(*) FROM scans"), 0);
}

TEST(Schema, ReopenKeepsVersionAndReadOnlyOpens) {
    TempDir dir;
    {
        Database db;
        ASSERT_TRUE(Database::open(dir / "index.db", OpenMode::read_write, &db));
    }
    Database again;
    ASSERT_TRUE(Database::open(dir / "index.db", OpenMode::read_write, &again));
    Database reader;
    auto s = Database::open(dir / "index.db", OpenMode::read_only, &reader);
    ASSERT_TRUE(s) << s.to_string();
    EXPECT_EQ(test::query_int(reader, "PRAGMA user_version"), kSchemaVersion);
}

// The du index is created with a fresh schema and added to an existing one at the next
// read-write open, without a new schema version; the earlier dirs(depth, prefix) goes.
TEST(Schema, DirsParentIndexOnFreshAndExistingDatabases) {
    TempDir dir;
    const char* count_index =
        "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'dirs_parent'";
    const char* count_old =
        "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'dirs_depth_prefix'";
    {
        Database db;
        ASSERT_TRUE(Database::open(dir / "index.db", OpenMode::read_write, &db));
        EXPECT_EQ(test::query_int(db, count_index), 1);
        EXPECT_EQ(test::query_int(db, count_old), 0);
        // A database of an older build: no dirs_parent, the earlier du index instead.
        ASSERT_TRUE(
            db.exec("DROP INDEX dirs_parent;"
                    " CREATE INDEX dirs_depth_prefix ON dirs(depth, prefix)"));
    }
    Database db;
    auto s = Database::open(dir / "index.db", OpenMode::read_write, &db);
    ASSERT_TRUE(s) << s.to_string();
    EXPECT_EQ(test::query_int(db, count_index), 1);
    EXPECT_EQ(test::query_int(db, count_old), 0);
    EXPECT_EQ(test::query_int(db, "PRAGMA user_version"), kSchemaVersion);
    // A directory's children are one range of that index (the plan's 4th column is its text).
    Statement plan;
    ASSERT_TRUE(db.prepare(
        "EXPLAIN QUERY PLAN SELECT prefix FROM dirs WHERE parent = 7 AND id != 0", &plan));
    bool row = false;
    ASSERT_TRUE(plan.step(&row));
    ASSERT_TRUE(row);
    EXPECT_NE(plan.column_bytes(3).find("dirs_parent"), std::string::npos) << plan.column_bytes(3);
}

// Version 3 stores no ctime equal to the mtime and reads it back through coalesce; a version 2
// database (ctime always stored, the view without coalesce) gets the new view at its next
// read-write open, and its rows read as before.
TEST(Schema, Version3StoresNoCtimeEqualToTheMtimeAndMigratesVersion2) {
    TempDir dir;
    const std::string root = dir / "tree";
    ASSERT_EQ(::mkdir(root.c_str(), 0755), 0);
    test::write_file(root + "/written-once", 10);  // ctime == mtime
    test::write_file(root + "/chmod-later", 10);
    struct timespec past[2] = {{1'000'000'000, 0}, {1'000'000'000, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (root + "/chmod-later").c_str(), past, 0), 0);  // ctime: now
    const std::string db_path = dir / "index.db";
    ASSERT_TRUE(test::scan_db(db_path, root));
    const char* stored_null =
        "SELECT count(*) FROM entries WHERE name = CAST('written-once' AS BLOB)"
        " AND ctime_ns IS NULL";
    const char* view_equal =
        "SELECT count(*) FROM files WHERE name = 'written-once' AND ctime_ns = mtime_ns";
    const char* view_differs =
        "SELECT count(*) FROM files WHERE name = 'chmod-later' AND ctime_ns > mtime_ns";
    {
        Database db;
        ASSERT_TRUE(Database::open(db_path, OpenMode::read_write, &db));
        EXPECT_EQ(test::query_int(db, stored_null), 1);
        EXPECT_EQ(test::query_int(db, view_equal), 1);
        EXPECT_EQ(test::query_int(db, view_differs), 1);
        // Back to what version 2 wrote: every ctime stored, a view that read the column as is.
        ASSERT_TRUE(
            db.exec("UPDATE entries SET ctime_ns = mtime_ns WHERE ctime_ns IS NULL;"
                    " DROP VIEW files; CREATE VIEW files AS SELECT 'version 2' AS stale;"
                    " PRAGMA user_version = 2"));
    }
    Database db;
    auto s = Database::open(db_path, OpenMode::read_write, &db);
    ASSERT_TRUE(s) << s.to_string();
    EXPECT_EQ(test::query_int(db, "PRAGMA user_version"), kSchemaVersion);
    EXPECT_EQ(test::query_int(db, view_equal), 1);
    EXPECT_EQ(test::query_int(db, view_differs), 1);
    EXPECT_EQ(test::query_int(db, "SELECT count(*) FROM files WHERE ctime_ns IS NULL"), 0);
}

TEST(Schema, NewerVersionIsAClearErrorAndUntouched) {
    TempDir dir;
    {
        Database db;
        ASSERT_TRUE(Database::open(dir / "index.db", OpenMode::read_write, &db));
        ASSERT_TRUE(db.exec("PRAGMA user_version = 99"));
    }
    for (OpenMode mode : {OpenMode::read_write, OpenMode::read_only}) {
        Database db;
        auto s = Database::open(dir / "index.db", mode, &db);
        ASSERT_FALSE(s);
        EXPECT_EQ(s.code(), make_error_code(StorageErrc::schema_too_new));
        EXPECT_NE(s.message().find("version 99"), std::string::npos) << s.message();
    }
    // Untouched: still version 99, as read by plain SQLite.
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open_v2((dir / "index.db").c_str(), &raw, SQLITE_OPEN_READONLY, nullptr),
              SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &stmt, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int(stmt, 0), 99);
    sqlite3_finalize(stmt);
    sqlite3_close(raw);
}

TEST(Schema, ForeignDatabaseIsRefused) {
    TempDir dir;
    {
        Database db;
        // Not through Database::open: a plain SQLite file with someone else's table.
        ASSERT_TRUE(Database::open(dir / "other.db", OpenMode::read_write, &db));
        ASSERT_TRUE(db.exec("PRAGMA user_version = 0; CREATE TABLE theirs(x)"));
    }
    Database db;
    auto s = Database::open(dir / "other.db", OpenMode::read_write, &db);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.code(), make_error_code(StorageErrc::schema_corrupt)) << s.to_string();
}

TEST(Schema, SqliteErrorsCarrySqlitesMessage) {
    TempDir dir;
    Database db;
    ASSERT_TRUE(Database::open(dir / "index.db", OpenMode::read_write, &db));
    auto s = db.exec("SELECT * FROM no_such_table");
    ASSERT_FALSE(s);
    EXPECT_EQ(&s.code().category(), &sqlite_category());
    EXPECT_NE(s.message().find("no such table"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace wsindex::storage
