// Per-directory totals against hand-computed values: hard links once, subtree rescans adjust
// every ancestor exactly.
#include <gtest/gtest.h>

#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/scan_writer.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

using test::TempDir;

// Builds WalkResults by hand, as the walker would number them.
class Synth {
public:
    explicit Synth(const std::string& root) {
        core::WalkResult r;
        r.path = root;
        r.dir_id = 1;
        r.type = core::EntryType::Directory;
        r.has_stat = true;
        r.size = 10;
        r.blocks = 1;
        r.nlink = 2;
        r.dev = 1;
        r.mode = 040755;
        rs_.push_back(r);
    }
    std::uint64_t dir(std::uint64_t parent, const std::string& name) {
        core::WalkResult r = make(parent, name);
        r.type = core::EntryType::Directory;
        r.dir_id = next_++;
        r.mode = 040755;
        r.size = 10;
        r.blocks = 1;
        r.nlink = 2;
        rs_.push_back(r);
        return r.dir_id;
    }
    void file(std::uint64_t parent, const std::string& name, std::uint64_t size,
              std::uint64_t blocks, std::uint64_t ino = 0, std::uint64_t nlink = 1) {
        core::WalkResult r = make(parent, name);
        r.type = core::EntryType::File;
        r.size = size;
        r.blocks = blocks;
        r.ino = ino ? ino : std::hash<std::string>{}(r.path) % 100000;
        r.nlink = nlink;
        rs_.push_back(r);
    }
    std::vector<core::WalkResult> results() const { return rs_; }

private:
    core::WalkResult make(std::uint64_t parent, const std::string& name) {
        core::WalkResult r;
        std::string parent_path;
        std::uint32_t depth = 0;
        for (const auto& x : rs_) {
            if (x.dir_id == parent) {
                parent_path = x.path;
                depth = x.depth;
            }
        }
        r.path = parent_path + "/" + name;
        r.name_offset = static_cast<std::uint32_t>(parent_path.size() + 1);
        r.parent_id = parent;
        r.depth = depth + 1;
        r.has_stat = true;
        r.dev = 1;
        r.mode = 0100644;
        return r;
    }
    std::vector<core::WalkResult> rs_;
    std::uint64_t next_ = 2;
};

core::Status scan(ScanWriter& w, const std::string& root, std::vector<core::WalkResult> rs,
                  unsigned seed) {
    if (auto s = w.begin(root); !s) return s;
    test::shuffle_results(&rs, seed);
    core::Status s = test::feed(std::move(rs), 2, [&](std::span<core::WalkResult> b) {
        return w.write(b);
    });
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
