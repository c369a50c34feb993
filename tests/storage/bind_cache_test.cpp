// BindCache: a skipped bind leaves the value the statement already holds, so every executed
// row carries exactly what was asked for — repeated, changed, NULL, text — and forget()
// recovers after the bindings were cleared behind the cache's back.
#include "storage/bind_cache.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "storage/database.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

struct Row {
    std::string a;  // "NULL" or the integer
    std::string b;
    bool operator==(const Row&) const = default;
};

void PrintTo(const Row& row, std::ostream* os) { *os << "(" << row.a << ", " << row.b << ")"; }

std::vector<Row> dump(Database& db) {
    Statement select;
    EXPECT_TRUE(
        db.prepare("SELECT coalesce(CAST(a AS TEXT), 'NULL'),"
                   " coalesce(CAST(b AS TEXT), 'NULL') FROM t ORDER BY rowid",
                   &select));
    std::vector<Row> rows;
    for (bool row = true;;) {
        EXPECT_TRUE(select.step(&row));
        if (!row) break;
        rows.push_back(
            Row{std::string(select.column_bytes(0)), std::string(select.column_bytes(1))});
    }
    return rows;
}

TEST(BindCache, EveryExecutionInsertsWhatWasBound) {
    test::TempDir dir;
    Database db;
    ASSERT_TRUE(Database::open(dir / "t.db", OpenMode::read_write, &db));
    ASSERT_TRUE(db.exec("CREATE TABLE t(a, b)"));
    Statement insert;
    ASSERT_TRUE(db.prepare("INSERT INTO t(a, b) VALUES (?1, ?2)", &insert));
    BindCache cache;
    cache.attach(&insert, insert.parameter_count());

    // Same value twice (skipped bind), a change, NULL after an integer and back, an integer
    // equal to the cached one after NULL, static texts differing only by pointer or length.
    static constexpr std::string_view kLetters = "fd";
    cache.bind_int64(1, 7);
    cache.bind_static_text(2, kLetters.substr(0, 1));
    ASSERT_TRUE(insert.run_keep_bindings());
    cache.bind_int64(1, 7);
    cache.bind_static_text(2, kLetters.substr(0, 1));
    ASSERT_TRUE(insert.run_keep_bindings());
    cache.bind_int64(1, 8);
    cache.bind_static_text(2, kLetters.substr(1, 1));
    ASSERT_TRUE(insert.run_keep_bindings());
    cache.bind_null(1);
    cache.bind_static_text(2, kLetters.substr(0, 2));
    ASSERT_TRUE(insert.run_keep_bindings());
    cache.bind_null(1);
    cache.bind_int64(2, 0);
    ASSERT_TRUE(insert.run_keep_bindings());
    cache.bind_int64(1, 0);  // the NULL slot's stored integer was 0: must still bind
    cache.bind_null(2);
    ASSERT_TRUE(insert.run_keep_bindings());

    // Bindings cleared behind the cache's back (run() inserts, then clears them): without
    // forget() the next bind of 0 would be skipped and NULL inserted.
    ASSERT_TRUE(insert.run());  // inserts 0, NULL
    cache.forget();
    cache.bind_int64(1, 0);
    cache.bind_null(2);
    ASSERT_TRUE(insert.run_keep_bindings());

    const std::vector<Row> expected = {{"7", "f"},    {"7", "f"},    {"8", "d"},    {"NULL", "fd"},
                                       {"NULL", "0"}, {"0", "NULL"}, {"0", "NULL"}, {"0", "NULL"}};
    EXPECT_EQ(dump(db), expected);
}

}  // namespace
}  // namespace wsindex::storage
