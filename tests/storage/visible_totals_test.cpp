// Visible totals: recomputed over every entry they equal the writer's precomputed totals (hard
// links once, after a subtree rescan too); with directories hidden they count exactly the
// entries of the listable directories.
#include "storage/visible_totals.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/scan_writer.hpp"
#include "storage/tree_totals.hpp"
#include "tests/storage/support/synth.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

using test::Synth;
using test::TempDir;

core::Status scan(ScanWriter& w, const std::string& root, std::vector<core::WalkResult> rs) {
    if (auto s = w.begin(root); !s) return s;
    test::shuffle_results(&rs, 7);
    core::Status s =
        test::feed(std::move(rs), 2, [&](std::span<core::WalkResult> b) { return w.write(b); });
    if (!s) return s;
    if (s = w.complete(); !s) return s;
    return w.collect_garbage();
}

// /r (10) { a (10) { f1 100, h1 50 (inode 7) }, b (10) { h2 50 (inode 7), c (10) { g } } }
std::vector<core::WalkResult> tree(std::uint64_t g_size) {
    Synth t("/r");
    const auto a = t.dir(1, "a");
    t.file(a, "f1", 100, 8);
    t.file(a, "h1", 50, 4, 7, 2);
    const auto b = t.dir(1, "b");
    t.file(b, "h2", 50, 4, 7, 2);
    const auto c = t.dir(b, "c");
    t.file(c, "g", g_size, 1);
    return t.results();
}

struct Row {
    Totals totals;
    bool partial = false;
    std::uint32_t depth = 0;
};

std::map<std::string, Row> visible(Database& db, const std::string& path, bool own_visible,
                                   const DirPredicate& listable) {
    std::map<std::string, Row> out;
    std::vector<std::string> order;
    auto st = visible_dir_totals(db, path, own_visible, listable, [&](VisibleTotalsRow&& r) {
        const DirTotalsRow& t = r.totals;
        out[t.path] = Row{Totals{t.size, t.blocks, t.files, t.dirs}, r.partial, t.depth};
        order.push_back(t.path);
    });
    EXPECT_TRUE(st) << st.to_string();
    // Children before parents.
    for (std::size_t i = 0; i < order.size(); ++i) {
        for (std::size_t j = i + 1; j < order.size(); ++j) {
            // A later row is never below an earlier one.
            EXPECT_NE(order[j].rfind(order[i] + "/", 0), 0U) << order[i] << " before " << order[j];
        }
    }
    return out;
}

void expect_equals_precomputed(Database& db, const std::string& path) {
    std::vector<DirTotalsRow> rows;
    ASSERT_TRUE(Queries(db).dir_totals(path, 100, &rows));
    const auto mine = visible(db, path, true, [](std::string_view) { return true; });
    ASSERT_EQ(mine.size(), rows.size());
    for (const auto& r : rows) {
        ASSERT_TRUE(mine.count(r.path)) << r.path;
        const Row& m = mine.at(r.path);
        EXPECT_EQ(m.totals, (Totals{r.size, r.blocks, r.files, r.dirs})) << r.path;
        EXPECT_EQ(m.depth, r.depth) << r.path;
        EXPECT_FALSE(m.partial) << r.path;
    }
    bool all = false;
    ASSERT_TRUE(subtree_all_listable(
        db, path, [](std::string_view) { return true; }, &all));
    EXPECT_TRUE(all);
}

TEST(VisibleTotals, EverythingListableEqualsThePrecomputedTotals) {
    TempDir dir;
    std::unique_ptr<ScanWriter> w;
    ASSERT_TRUE(ScanWriter::open(dir / "index.db", &w));
    ASSERT_TRUE(scan(*w, "/r", tree(5)));
    expect_equals_precomputed(w->database(), "/r");
    expect_equals_precomputed(w->database(), "/r/b");  // own entry inside /r, by base name
    // After a subtree rescan (ancestors adjusted by difference) the recomputation still agrees.
    Synth sub("/r/b");
    const auto c = sub.dir(1, "c");
    sub.file(c, "g", 20, 2);
    ASSERT_TRUE(scan(*w, "/r/b", sub.results()));
    expect_equals_precomputed(w->database(), "/r");
}

TEST(VisibleTotals, HiddenDirectoriesCountOnlyTheirOwnEntry) {
    TempDir dir;
    std::unique_ptr<ScanWriter> w;
    ASSERT_TRUE(ScanWriter::open(dir / "index.db", &w));
    ASSERT_TRUE(scan(*w, "/r", tree(5)));
    Database& db = w->database();

    // b and everything below it unlistable (what an unsearchable b means).
    const DirPredicate outside_b = [](std::string_view p) { return p.rfind("/r/b", 0) != 0; };
    bool all = true;
    ASSERT_TRUE(subtree_all_listable(db, "/r", outside_b, &all));
    EXPECT_FALSE(all);
    auto m = visible(db, "/r", true, outside_b);
    EXPECT_EQ(m["/r/b/c"].totals, (Totals{0, 0, 0, 0}));  // its entry lies in b: hidden
    EXPECT_EQ(m["/r/b"].totals, (Totals{10, 1, 0, 0}));   // only its own entry, seen in /r
    EXPECT_EQ(m["/r/a"].totals, (Totals{160, 13, 2, 0}));
    EXPECT_FALSE(m["/r/a"].partial);
    EXPECT_TRUE(m["/r/b"].partial);
    EXPECT_TRUE(m["/r/b/c"].partial);
    // h1 and h2 are one inode: still counted (once) through the visible name in a.
    EXPECT_EQ(m["/r"].totals, (Totals{180, 15, 2, 2}));
    EXPECT_TRUE(m["/r"].partial);

    // Only b unlistable, c listable below it (b search-only): c's entries count, c's own entry
    // (inside b) does not, and neither does anything else in b.
    const DirPredicate not_b = [](std::string_view p) { return p != "/r/b"; };
    m = visible(db, "/r", true, not_b);
    EXPECT_EQ(m["/r/b/c"].totals, (Totals{5, 1, 1, 0}));
    EXPECT_FALSE(m["/r/b/c"].partial);
    EXPECT_EQ(m["/r/b"].totals, (Totals{15, 2, 1, 0}));
    EXPECT_EQ(m["/r"].totals, (Totals{185, 16, 3, 2}));

    // The top's own entry is the caller's to decide.
    m = visible(db, "/r/a", false, outside_b);
    EXPECT_EQ(m["/r/a"].totals, (Totals{150, 12, 2, 0}));
    // Nothing listable: only the top's own size.
    m = visible(db, "/r", true, [](std::string_view) { return false; });
    EXPECT_EQ(m["/r"].totals, (Totals{10, 1, 0, 0}));
    EXPECT_EQ(m["/r/a"].totals, (Totals{0, 0, 0, 0}));
}

}  // namespace
}  // namespace wsindex::storage
