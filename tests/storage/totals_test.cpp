// Per-directory totals against hand-computed values: hard links once, subtree rescans adjust
// every ancestor exactly.
#include <gtest/gtest.h>

#include <cstring>

#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/scan_writer.hpp"
#include "tests/storage/support/synth.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

using test::TempDir;

using test::Synth;

core::Status scan(ScanWriter& w, const std::string& root, std::vector<core::WalkResult> rs,
                  unsigned seed) {
    if (auto s = w.begin(root); !s) return s;
    test::shuffle_results(&rs, seed);
    core::Status s =
        test::feed(std::move(rs), 2, [&](std::span<core::WalkResult> b) { return w.write(b); });
    if (!s) return s;
    if (s = w.complete(); !s) return s;
    return w.collect_garbage();
}

std::vector<core::WalkResult> full_tree(bool rescanned) {
    Synth t("/r");
    const auto a = t.dir(1, "a");
    t.file(a, "f1", 100, 8);
    t.file(a, "h1", 50, 4, 7, 2);
    const auto b = t.dir(1, "b");
    if (!rescanned) t.file(b, "h2", 50, 4, 7, 2);
    const auto c = t.dir(b, "c");
    t.file(c, "g", rescanned ? 20 : 5, rescanned ? 2 : 1);
    return t.results();
}

std::vector<core::WalkResult> b_subtree() {
    Synth t("/r/b");
    const auto c = t.dir(1, "c");
    t.file(c, "g", 20, 2);
    return t.results();
}

std::map<std::string, Totals> totals_of(Database& db) {
    Queries q(db);
    std::vector<DirTotalsRow> rows;
    EXPECT_TRUE(q.dir_totals("/r", 10, &rows));
    std::map<std::string, Totals> m;
    for (const auto& r : rows) m[r.path] = Totals{r.size, r.blocks, r.files, r.dirs};
    return m;
}

TEST(Totals, HardLinksCountOncePerAncestor) {
    TempDir dir;
    std::unique_ptr<ScanWriter> w;
    ASSERT_TRUE(ScanWriter::open(dir / "index.db", &w));
    auto s = scan(*w, "/r", full_tree(false), 3);
    ASSERT_TRUE(s) << s.to_string();
    auto m = totals_of(w->database());
    EXPECT_EQ(m["/r/b/c"], (Totals{15, 2, 1, 0}));
    EXPECT_EQ(m["/r/b"], (Totals{75, 7, 2, 1}));
    EXPECT_EQ(m["/r/a"], (Totals{160, 13, 2, 0}));
    EXPECT_EQ(m["/r"], (Totals{195, 17, 3, 3}));
}

TEST(Totals, SubtreeRescanAdjustsAncestorsExactly) {
    TempDir dir;
    std::unique_ptr<ScanWriter> w;
    ASSERT_TRUE(ScanWriter::open(dir / "index.db", &w));
    ASSERT_TRUE(scan(*w, "/r", full_tree(false), 3));
    auto s = scan(*w, "/r/b", b_subtree(), 5);
    ASSERT_TRUE(s) << s.to_string();
    auto m = totals_of(w->database());
    EXPECT_EQ(m["/r/b/c"], (Totals{30, 3, 1, 0}));
    EXPECT_EQ(m["/r/b"], (Totals{40, 4, 1, 1}));
    EXPECT_EQ(m["/r/a"], (Totals{160, 13, 2, 0}));
    EXPECT_EQ(m["/r"], (Totals{210, 18, 3, 3}));

    // The same as a fresh full scan of the changed tree, row for row.
    std::unique_ptr<ScanWriter> fresh;
    ASSERT_TRUE(ScanWriter::open(dir / "fresh.db", &fresh));
    ASSERT_TRUE(scan(*fresh, "/r", full_tree(true), 9));
    EXPECT_EQ(test::dump_index(w->database()), test::dump_index(fresh->database()));
    // Replaced rows are gone from the tables, not only hidden.
    EXPECT_EQ(test::query_int(w->database(), "SELECT count(*) FROM entries"),
              test::query_int(fresh->database(), "SELECT count(*) FROM entries"));
    EXPECT_EQ(test::query_int(w->database(), "SELECT count(*) FROM garbage"), 0);
}

// Two names of one inode seen at two sizes (the file was written between their stats during the
// scan): every directory counts the largest size and blocks below it, as the recount from
// `links` does. A later change is adjusted by difference against that recount, so any other
// choice would stay wrong in the common ancestors (here /r) for good.
std::vector<core::WalkResult> linked_tree(std::int64_t h1_size, std::int64_t h1_blocks) {
    Synth t("/r");
    t.file(t.dir(1, "a"), "h1", h1_size, h1_blocks, 7, 2);
    t.file(t.dir(1, "b"), "h2", 70, 8, 7, 2);
    return t.results();
}

TEST(Totals, NamesOfOneInodeSeenAtTwoSizesCountTheLargestThenAdjustExactly) {
    for (unsigned seed = 1; seed <= 8; ++seed) {  // either name may come first
        SCOPED_TRACE(seed);
        TempDir dir;
        std::unique_ptr<ScanWriter> w;
        ASSERT_TRUE(ScanWriter::open(dir / "index.db", &w));
        ASSERT_TRUE(scan(*w, "/r", linked_tree(50, 4), seed));
        auto m = totals_of(w->database());
        EXPECT_EQ(m["/r/a"], (Totals{60, 5, 1, 0}));
        EXPECT_EQ(m["/r/b"], (Totals{80, 9, 1, 0}));
        EXPECT_EQ(m["/r"], (Totals{100, 11, 1, 2}));
        // A rescan of /r/a that sees h1 as it now is: the same as a fresh scan.
        Synth a("/r/a");
        a.file(1, "h1", 70, 8, 7, 2);
        ASSERT_TRUE(scan(*w, "/r/a", a.results(), seed));
        std::unique_ptr<ScanWriter> fresh;
        ASSERT_TRUE(ScanWriter::open(dir / "fresh.db", &fresh));
        ASSERT_TRUE(scan(*fresh, "/r", linked_tree(70, 8), seed));
        EXPECT_EQ(totals_of(w->database()), totals_of(fresh->database()));
    }
}

TEST(Totals, RescanOfTheRootReplacesEverything) {
    TempDir dir;
    std::unique_ptr<ScanWriter> w;
    ASSERT_TRUE(ScanWriter::open(dir / "index.db", &w));
    ASSERT_TRUE(scan(*w, "/r", full_tree(false), 3));
    ASSERT_TRUE(scan(*w, "/r", full_tree(true), 4));
    std::unique_ptr<ScanWriter> fresh;
    ASSERT_TRUE(ScanWriter::open(dir / "fresh.db", &fresh));
    ASSERT_TRUE(scan(*fresh, "/r", full_tree(true), 9));
    EXPECT_EQ(test::dump_index(w->database()), test::dump_index(fresh->database()));
    EXPECT_EQ(test::query_int(w->database(), "SELECT count(*) FROM entries"),
              test::query_int(fresh->database(), "SELECT count(*) FROM entries"));
}

TEST(Totals, SubtreeWhoseParentIsNotIndexedIsRefused) {
    TempDir dir;
    std::unique_ptr<ScanWriter> w;
    ASSERT_TRUE(ScanWriter::open(dir / "index.db", &w));
    ASSERT_TRUE(scan(*w, "/r", full_tree(false), 3));
    auto s = w->begin("/r/zzz/deeper");
    EXPECT_FALSE(s);
    EXPECT_NE(s.message().find("rescan a parent"), std::string::npos) << s.to_string();
    EXPECT_FALSE(w->begin("relative/path"));
    EXPECT_FALSE(w->begin("/trailing/"));
    EXPECT_FALSE(w->begin("/a/../b"));
}

}  // namespace
}  // namespace wsindex::storage

namespace wsindex::storage {
namespace {

TEST(ScanErrors, RecoverableErrorsAreStoredAndReplacedWithTheirSubtree) {
    TempDir dir;
    std::unique_ptr<ScanWriter> w;
    ASSERT_TRUE(ScanWriter::open(dir / "index.db", &w));
    auto tree = [](bool fixed) {
        Synth t("/e");
        const auto a = t.dir(1, "a");
        const auto locked = t.dir(a, "locked");
        if (!fixed) t.last().error = 13;  // listed with its stat, but could not be opened
        if (fixed) t.file(locked, "inside", 1, 1);
        t.file(1, "gone", 0, 0);
        t.last().has_stat = false;  // vanished between listing and stat
        t.last().error = 2;
        return t.results();
    };
    ASSERT_TRUE(scan(*w, "/e", tree(false), 1));
    Database& db = w->database();
    EXPECT_EQ(test::query_int(db, "SELECT count(*) FROM scan_errors"), 2);
    EXPECT_EQ(test::query_text(db, "SELECT message FROM scan_errors WHERE errno = 13"),
              std::strerror(13));
    EXPECT_EQ(test::query_text(db, "SELECT path FROM scan_errors WHERE errno = 13"), "/e/a/locked");
    EXPECT_EQ(test::query_int(db, "SELECT errno FROM files WHERE path = '/e/a/locked'"), 13);
    EXPECT_EQ(test::query_int(db,
                              "SELECT count(*) FROM files WHERE path = '/e/gone'"
                              " AND size IS NULL AND errno = 2"),
              1);
    EXPECT_EQ(test::query_int(db, "SELECT errors FROM scans WHERE id = 1"), 2);

    // Rescanning /e/a (now readable) drops its old error and keeps the one outside it.
    Synth sub("/e/a");
    const auto locked = sub.dir(1, "locked");
    sub.file(locked, "inside", 1, 1);
    ASSERT_TRUE(scan(*w, "/e/a", sub.results(), 2));
    EXPECT_EQ(test::query_int(db, "SELECT count(*) FROM scan_errors"), 1);
    EXPECT_EQ(test::query_text(db, "SELECT path FROM scan_errors"), "/e/gone");
}

// du --depth N: every level down to N and nothing deeper, depth-first in stored-prefix order
// ("/o/a-b" before "/o/a", since '-' < '/'), however the levels are read.
TEST(Totals, DirTotalsToADepthInPrefixOrder) {
    TempDir dir;
    std::unique_ptr<ScanWriter> w;
    ASSERT_TRUE(ScanWriter::open(dir / "index.db", &w));
    Synth t("/o");
    const auto a = t.dir(1, "a");
    const auto x = t.dir(a, "x");
    t.dir(x, "deep");
    const auto ab = t.dir(1, "a-b");
    t.file(ab, "f", 5, 1);
    t.dir(1, "b");
    ASSERT_TRUE(scan(*w, "/o", t.results(), 4));
    auto paths = [&](std::string_view path, std::uint32_t depth) {
        std::vector<DirTotalsRow> rows;
        EXPECT_TRUE(Queries(w->database()).dir_totals(path, depth, &rows));
        std::vector<std::string> out;
        for (const auto& r : rows) out.push_back(r.path);
        return out;
    };
    using V = std::vector<std::string>;
    EXPECT_EQ(paths("/o", 0), (V{"/o"}));
    EXPECT_EQ(paths("/o", 1), (V{"/o", "/o/a-b", "/o/a", "/o/b"}));
    EXPECT_EQ(paths("/o", 2), (V{"/o", "/o/a-b", "/o/a", "/o/a/x", "/o/b"}));
    EXPECT_EQ(paths("/o", 4096), (V{"/o", "/o/a-b", "/o/a", "/o/a/x", "/o/a/x/deep", "/o/b"}));
    EXPECT_EQ(paths("/o/a", 1), (V{"/o/a", "/o/a/x"}));
    EXPECT_EQ(paths("/o/a/x/deep", 3), (V{"/o/a/x/deep"}));
    EXPECT_EQ(paths("/o/nope", 3), V{});
}

}  // namespace
}  // namespace wsindex::storage
