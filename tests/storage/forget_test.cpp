// ScanWriter::forget: a top-level root leaves the index whole (rows, totals, errors, history),
// other roots stay exactly as they were, and paths that are not roots are refused.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/scan_writer.hpp"
#include "storage/sqlite_error.hpp"
#include "storage/statement.hpp"
#include "tests/storage/support/synth.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

using test::Synth;
using test::TempDir;

core::Status scan(ScanWriter& w, const std::string& root, std::vector<core::WalkResult> rs) {
    if (auto s = w.begin(root); !s) return s;
    core::Status s =
        test::feed(std::move(rs), 2, [&](std::span<core::WalkResult> b) { return w.write(b); });
    if (!s) return s;
    if (s = w.complete(); !s) return s;
    return w.collect_garbage();
}

// A root with subdirectories, a hard link, a nested directory and an entry with an error.
std::vector<core::WalkResult> tree(const std::string& root, std::uint64_t ino_base) {
    Synth t(root);
    const auto x = t.dir(1, "x");
    t.file(x, "f1", 100, 8, ino_base + 1);
    t.file(x, "h1", 50, 4, ino_base + 2, 2);
    const auto y = t.dir(1, "y");
    t.file(y, "h2", 50, 4, ino_base + 2, 2);
    const auto z = t.dir(y, "z");
    t.file(z, "g", 5, 1, ino_base + 3);
    t.file(z, "locked", 0, 0, ino_base + 4);
    t.last().error = EACCES;
    return t.results();
}

std::vector<core::WalkResult> x_subtree(const std::string& root) {
    Synth t(root + "/x");
    t.file(1, "f1", 100, 8, 1);
    t.file(1, "f2", 7, 1, 9);
    return t.results();
}

// Every row of a query as one string per row, for comparisons.
std::vector<std::string> rows(Database& db, const std::string& sql) {
    Statement s;
    EXPECT_TRUE(db.prepare(sql, &s));
    std::vector<std::string> out;
    for (bool row = true;;) {
        EXPECT_TRUE(s.step(&row));
        if (!row) break;
        std::string line;
        for (int c = 0; c < s.column_count(); ++c) line += std::string(s.column_bytes(c)) + "|";
        out.push_back(line);
    }
    return out;
}

std::int64_t count(Database& db, const std::string& sql) {
    std::int64_t n = -1;
    EXPECT_TRUE(db.query_int64(sql, &n)) << sql;
    return n;
}

std::int64_t generation(Database& db) {
    return count(db, "SELECT value FROM meta WHERE key = 'generation'");
}

// What root /b owns in the index, every column that a reader can see.
std::vector<std::string> rows_of_b(Database& db) {
    std::vector<std::string> all =
        rows(db, "SELECT * FROM files WHERE path = '/b' OR path LIKE '/b/%' ORDER BY path");
    for (auto& r : rows(db,
                        "SELECT * FROM dir_totals WHERE path = '/b' OR path LIKE '/b/%'"
                        " ORDER BY path")) {
        all.push_back("totals " + r);
    }
    for (auto& r : rows(
             db,
             "SELECT path, errno FROM errors WHERE CAST(path AS TEXT) LIKE '/b/%' ORDER BY path")) {
        all.push_back("error " + r);
    }
    for (auto& r : rows(db,
                        "SELECT id, root, state, entries FROM scans WHERE CAST(root AS TEXT) = '/b'"
                        " ORDER BY id")) {
        all.push_back("scan " + r);
    }
    return all;
}

TEST(ScanWriterForget, RemovesTheRootAndLeavesOtherRootsAsTheyWere) {
    TempDir dir;
    std::unique_ptr<ScanWriter> w;
    ASSERT_TRUE(ScanWriter::open(dir / "index.db", &w));
    ASSERT_TRUE(scan(*w, "/a", tree("/a", 100)));
    ASSERT_TRUE(scan(*w, "/b", tree("/b", 200)));
    ASSERT_TRUE(scan(*w, "/a/x", x_subtree("/a")));  // a subtree scan: history of /a too
    Database& db = w->database();
    const std::vector<std::string> b_before = rows_of_b(db);
    ASSERT_FALSE(b_before.empty());
    ASSERT_GT(count(db, "SELECT count(*) FROM errors WHERE CAST(path AS TEXT) LIKE '/a/%'"), 0);
    const std::int64_t generation_before = generation(db);

    ForgetReport report;
    auto s = w->forget("/a", &report);
    ASSERT_TRUE(s) << s.to_string();
    EXPECT_EQ(report.dirs, 4u);     // /a, x, y, z
    EXPECT_EQ(report.entries, 9u);  // /a, x y z, f1 f2 h2 g locked
    EXPECT_EQ(report.scans, 2u);    // /a and /a/x
    EXPECT_TRUE(report.garbage_collected);

    EXPECT_EQ(count(db, "SELECT count(*) FROM files WHERE path = '/a' OR path LIKE '/a/%'"), 0);
    EXPECT_EQ(count(db, "SELECT count(*) FROM dir_totals WHERE path = '/a' OR path LIKE '/a/%'"),
              0);
    EXPECT_EQ(count(db, "SELECT count(*) FROM entries WHERE dir = 0 AND name = CAST('/a' AS BLOB)"),
              0);
    EXPECT_EQ(count(db, "SELECT count(*) FROM errors WHERE CAST(path AS TEXT) LIKE '/a/%'"), 0);
    EXPECT_EQ(count(db,
                    "SELECT count(*) FROM scans WHERE CAST(root AS TEXT) = '/a'"
                    " OR CAST(root AS TEXT) LIKE '/a/%'"),
              0);
    // Garbage collected: no entry or link row of a directory that is not in the index.
    EXPECT_EQ(count(db, "SELECT count(*) FROM garbage"), 0);
    EXPECT_EQ(count(db, "SELECT count(*) FROM entries WHERE dir NOT IN (SELECT id FROM dirs)"), 0);
    EXPECT_EQ(count(db, "SELECT count(*) FROM links WHERE dir NOT IN (SELECT id FROM dirs)"), 0);
    EXPECT_GT(generation(db), generation_before);

    EXPECT_EQ(rows_of_b(db), b_before);
    Queries q(db);
    std::vector<RootRow> roots;
    ASSERT_TRUE(q.roots(&roots));
    ASSERT_EQ(roots.size(), 1u);
    EXPECT_EQ(roots[0].path, "/b");

    // Gone for good: a second forget is refused; a new scan of it indexes it afresh.
    s = w->forget("/a", &report);
    EXPECT_EQ(s.code(), make_error_code(StorageErrc::not_indexed)) << s.to_string();
    ASSERT_TRUE(scan(*w, "/a", tree("/a", 100)));
    ASSERT_TRUE(q.roots(&roots));
    ASSERT_EQ(roots.size(), 2u);
    EXPECT_EQ(roots[0].path, "/a");
    EXPECT_EQ(roots[0].entries, 8u);  // the hard-linked h1 and h2 count once
    EXPECT_EQ(rows_of_b(db), b_before);
}

TEST(ScanWriterForget, RefusesPathsThatAreNotIndexedTopLevelRoots) {
    TempDir dir;
    std::unique_ptr<ScanWriter> w;
    ASSERT_TRUE(ScanWriter::open(dir / "index.db", &w));
    ASSERT_TRUE(scan(*w, "/a", tree("/a", 100)));
    const std::int64_t generation_before = generation(w->database());
    const std::int64_t entries_before = count(w->database(), "SELECT count(*) FROM entries");

    ForgetReport report;
    // A directory and a file inside the root, and a path below a file: name the root.
    for (const char* inside : {"/a/y/z", "/a/x/f1", "/a/y/z/g/nothing"}) {
        auto s = w->forget(inside, &report);
        EXPECT_EQ(s.code(), make_error_code(StorageErrc::not_indexed)) << inside;
        EXPECT_EQ(report.inside_root, "/a") << inside;
        EXPECT_NE(s.to_string().find("is inside indexed root /a"), std::string::npos)
            << s.to_string();
    }
    // Not indexed at all, an ancestor of the root, and not a normalized path.
    for (const char* outside : {"/c", "/", "/ab"}) {
        auto s = w->forget(outside, &report);
        EXPECT_EQ(s.code(), make_error_code(StorageErrc::not_indexed)) << outside;
        EXPECT_TRUE(report.inside_root.empty()) << outside;
    }
    EXPECT_EQ(w->forget("/a/", &report).code(), make_error_code(StorageErrc::bad_root));
    EXPECT_EQ(w->forget("a", &report).code(), make_error_code(StorageErrc::bad_root));

    // During a scan the writer belongs to the scan.
    ASSERT_TRUE(w->begin("/b"));
    EXPECT_EQ(w->forget("/a", &report).code(), make_error_code(StorageErrc::scan_in_progress));
    ASSERT_TRUE(w->abort(core::Status{}, true));

    EXPECT_EQ(generation(w->database()), generation_before);
    EXPECT_EQ(count(w->database(), "SELECT count(*) FROM entries"), entries_before);
}

TEST(ScanWriterForget, TheFileSystemRootToo) {
    TempDir dir;
    std::unique_ptr<ScanWriter> w;
    ASSERT_TRUE(ScanWriter::open(dir / "index.db", &w));
    ASSERT_TRUE(scan(*w, "/", tree("/", 100)));
    ForgetReport report;
    auto s = w->forget("/", &report);
    ASSERT_TRUE(s) << s.to_string();
    EXPECT_EQ(report.dirs, 4u);
    EXPECT_EQ(count(w->database(), "SELECT count(*) FROM entries"), 0);
    EXPECT_EQ(count(w->database(), "SELECT count(*) FROM dirs"), 1);  // the sentinel
}

}  // namespace
}  // namespace wsindex::storage
