// warm_pages: reads both tables to the end unless asked to give way, stops at once when asked,
// and leaves the connection as it found it.
#include "storage/warm_pages.hpp"

#include <gtest/gtest.h>

#include <string>

#include "storage/database.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

// An index (its real schema) with 50k rows in each table: rows, not a tree, since only the
// reading is under test.
Database small_index(const std::string& path) {
    Database db;
    EXPECT_TRUE(Database::open(path, OpenMode::read_write, &db));
    const core::Status filled = db.exec(
        "BEGIN;"
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000)"
        " INSERT INTO dirs(id, parent, scan_id, depth, prefix, size, blocks, files, dirs)"
        " SELECT i, 0, 1, 1, CAST('/d' || i || '/' AS BLOB), 0, 0, 0, 0 FROM n;"
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000)"
        " INSERT INTO entries(dir, name, type) SELECT i % 977 + 1, randomblob(24), 'f' FROM n;"
        "COMMIT;");
    EXPECT_TRUE(filled) << filled.to_string();
    return db;
}

TEST(WarmPages, ReadsToTheEndUnlessAskedToGiveWay) {
    test::TempDir dir;
    Database db = small_index(dir / "index.db");
    int asked = 0;
    EXPECT_TRUE(warm_pages(db, [&] {
        ++asked;
        return false;
    }));
    // Asked along the way (one step per row, not one opcode for the whole count): 100k rows
    // are tens of 10,000-step periods.
    EXPECT_GE(asked, 10);
}

TEST(WarmPages, StopsWhenAskedAndLeavesTheConnectionUsable) {
    test::TempDir dir;
    Database db = small_index(dir / "index.db");
    int asked = 0;
    EXPECT_FALSE(warm_pages(db, [&] { return ++asked >= 2; }));
    EXPECT_EQ(asked, 2) << "it kept reading after it was told to give way";
    // No handler left behind: a long statement runs to its end.
    std::int64_t rows = 0;
    ASSERT_TRUE(db.query_int64("SELECT count(*) FROM entries WHERE dir IS NOT NULL", &rows));
    EXPECT_EQ(rows, 50000);
}

}  // namespace
}  // namespace wsindex::storage
