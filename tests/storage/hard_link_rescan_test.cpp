// Hard links across every edge a partial update draws (one directory, a rescanned subtree's
// edge, two top-level roots): after a subtree rescan the index equals a fresh scan of the
// roots, every column of `files`, every row of `dir_totals`, and the `links` table.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "storage/database.hpp"
#include "storage/inode_sync.hpp"
#include "storage/scan_writer.hpp"
#include "storage/statement.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

using test::TempDir;

// The `links` rows by directory path, sorted: the part of the totals a fresh scan would count.
std::string dump_links(Database& db) {
    Statement s;
    EXPECT_TRUE(
        db.prepare("SELECT CAST(d.prefix AS TEXT), l.dev, l.ino, l.size, l.blocks"
                   " FROM links AS l JOIN dirs AS d ON d.id = l.dir",
                   &s));
    std::vector<std::string> rows;
    for (bool row = true;;) {
        EXPECT_TRUE(s.step(&row));
        if (!row) break;
        std::string line;
        for (int i = 0; i < 5; ++i) line += std::string(s.column_bytes(i)) + "|";
        rows.push_back(line);
    }
    std::sort(rows.begin(), rows.end());
    std::string out;
    for (const auto& r : rows) out += r + "\n";
    return out;
}

void append(const std::string& path, std::size_t bytes) {
    FILE* f = std::fopen(path.c_str(), "a");
    ASSERT_NE(f, nullptr) << path;
    const std::string data(bytes, 'y');
    ASSERT_EQ(std::fwrite(data.data(), 1, data.size(), f), data.size());
    std::fclose(f);
}

struct HardLinks : ::testing::Test {
    TempDir dir;
    std::string top = dir / "t";
    std::string root = top + "/r";  // the usual root; `roots` lists every scanned root
    std::vector<std::string> roots{root};
    std::unique_ptr<ScanWriter> writer;

    void SetUp() override {
        ASSERT_EQ(mkdir(top.c_str(), 0755), 0);
        ASSERT_EQ(mkdir(root.c_str(), 0755), 0);
        for (const char* d : {"a", "b", "b/deep", "c"}) {
            ASSERT_EQ(mkdir((root + "/" + d).c_str(), 0755), 0);
        }
        test::write_file(root + "/a/f", 31526);
        test::write_file(root + "/a/other", 100);
        test::write_file(root + "/b/g0", 7000);
        test::write_file(root + "/c/h", 5000);
        ASSERT_TRUE(ScanWriter::open(dir / "index.db", &writer));
    }
    void scan(const std::string& path) {
        auto s = test::scan_with(*writer, path, 3);
        ASSERT_TRUE(s) << s.to_string();
    }
    void scan_all() {
        for (const auto& r : roots) scan(r);
    }
    // What a fresh database gets from scanning every root now.
    std::string fresh_dump() {
        TempDir other;
        std::unique_ptr<ScanWriter> fresh;
        EXPECT_TRUE(ScanWriter::open(other / "fresh.db", &fresh));
        for (const auto& r : roots) EXPECT_TRUE(test::scan_with(*fresh, r, 11));
        return test::dump_index(fresh->database()) + "--links\n" + dump_links(fresh->database());
    }
    std::string dump() {
        return test::dump_index(writer->database()) + "--links\n" + dump_links(writer->database());
    }
    std::int64_t total_size(const std::string& path) {
        return test::query_int(writer->database(),
                               "SELECT size FROM dir_totals WHERE path = '" + path + "'");
    }
};

TEST_F(HardLinks, LinkWithinOneRescannedDirectory) {
    scan_all();
    ASSERT_EQ(link((root + "/b/g0").c_str(), (root + "/b/g1").c_str()), 0);
    scan(root + "/b");
    EXPECT_EQ(dump(), fresh_dump());
}

TEST_F(HardLinks, LinkAcrossTheEdgeOfARescannedSubtreeCountsOnce) {
    scan_all();
    const std::int64_t before = total_size(root);
    ASSERT_EQ(link((root + "/a/f").c_str(), (root + "/b/deep/f2").c_str()), 0);
    scan(root + "/b");
    // The symptom: the root counted the inode twice (31,526 bytes too many).
    EXPECT_EQ(total_size(root), before);
    EXPECT_EQ(test::query_int(writer->database(),
                              "SELECT nlink FROM files WHERE path = '" + root + "/a/f'"),
              2);
    EXPECT_EQ(dump(), fresh_dump());

    // The outside directory's digest followed its row: a rescan of it rewrites nothing.
    scan(root + "/a");
    EXPECT_EQ(writer->reused_rows(), 2u);
    EXPECT_EQ(dump(), fresh_dump());
}

TEST_F(HardLinks, LinkFromADeeperSubtreeToItsAncestorsSibling) {
    scan_all();
    ASSERT_EQ(link((root + "/c/h").c_str(), (root + "/b/deep/h2").c_str()), 0);
    ASSERT_EQ(link((root + "/c/h").c_str(), (root + "/b/h3").c_str()), 0);
    scan(root + "/b/deep");
    scan(root + "/b");
    EXPECT_EQ(dump(), fresh_dump());
}

TEST_F(HardLinks, RemovingTheNameInsideLowersTheLinkCountOutside) {
    ASSERT_EQ(link((root + "/a/f").c_str(), (root + "/b/f2").c_str()), 0);
    scan_all();
    ASSERT_EQ(unlink((root + "/b/f2").c_str()), 0);
    scan(root + "/b");
    EXPECT_EQ(test::query_int(writer->database(),
                              "SELECT nlink FROM files WHERE path = '" + root + "/a/f'"),
              1);
    EXPECT_EQ(dump(), fresh_dump());
}

TEST_F(HardLinks, RemovingTheNameOutsideAndRescanningWhereItWas) {
    ASSERT_EQ(link((root + "/a/f").c_str(), (root + "/b/f2").c_str()), 0);
    scan_all();
    ASSERT_EQ(unlink((root + "/a/f").c_str()), 0);
    scan(root + "/a");  // sees the inode only leave: b/f2 is lstat'ed
    EXPECT_EQ(test::query_int(writer->database(),
                              "SELECT nlink FROM files WHERE path = '" + root + "/b/f2'"),
              1);
    EXPECT_EQ(dump(), fresh_dump());
}

TEST_F(HardLinks, RemovingOneOfThreeNamesKeepsTheOthersLinked) {
    ASSERT_EQ(link((root + "/a/f").c_str(), (root + "/b/f2").c_str()), 0);
    ASSERT_EQ(link((root + "/a/f").c_str(), (root + "/c/f3").c_str()), 0);
    scan_all();
    ASSERT_EQ(unlink((root + "/b/f2").c_str()), 0);
    scan(root + "/b");
    EXPECT_EQ(dump(), fresh_dump());
}

TEST_F(HardLinks, WritingThroughTheNameInsideUpdatesTheNameOutside) {
    ASSERT_EQ(link((root + "/a/f").c_str(), (root + "/b/f2").c_str()), 0);
    scan_all();
    append(root + "/b/f2", 70000);
    scan(root + "/b");
    EXPECT_EQ(test::query_int(writer->database(),
                              "SELECT size FROM files WHERE path = '" + root + "/a/f'"),
              31526 + 70000);
    EXPECT_EQ(dump(), fresh_dump());
}

TEST_F(HardLinks, WritingThroughTheNameOutsideThenRescanningInside) {
    ASSERT_EQ(link((root + "/a/f").c_str(), (root + "/b/f2").c_str()), 0);
    scan_all();
    append(root + "/a/f", 9000);
    scan(root + "/b");
    EXPECT_EQ(dump(), fresh_dump());
}

TEST_F(HardLinks, LinkAcrossTwoTopLevelRoots) {
    const std::string second = top + "/s";
    ASSERT_EQ(mkdir(second.c_str(), 0755), 0);
    ASSERT_EQ(mkdir((second + "/x").c_str(), 0755), 0);
    roots.push_back(second);
    scan_all();
    ASSERT_EQ(link((root + "/a/f").c_str(), (second + "/x/f2").c_str()), 0);
    scan(second);
    EXPECT_EQ(dump(), fresh_dump());
    ASSERT_EQ(unlink((second + "/x/f2").c_str()), 0);
    scan(second + "/x");
    EXPECT_EQ(dump(), fresh_dump());
}

TEST_F(HardLinks, NameOutsideEveryRootIsNotCounted) {
    scan_all();
    ASSERT_EQ(link((root + "/a/f").c_str(), (dir / "unindexed").c_str()), 0);
    scan(root + "/c");  // does not hold the inode: nothing to learn
    scan(root + "/a");
    EXPECT_EQ(dump(), fresh_dump());
}

// The API a live writer calls after re-listing one directory: what it reports.
TEST_F(HardLinks, SyncReportsTheAdditiveChangeOfEachDirectory) {
    scan_all();
    ASSERT_EQ(link((root + "/a/f").c_str(), (root + "/b/g").c_str()), 0);
    struct stat st {};
    ASSERT_EQ(lstat((root + "/b/g").c_str(), &st), 0);
    core::WalkResult fresh;
    fresh.type = core::EntryType::File;
    fresh.has_stat = true;
    fresh.size = static_cast<std::uint64_t>(st.st_size);
    fresh.blocks = static_cast<std::uint64_t>(st.st_blocks);
    fresh.dev = st.st_dev;
    fresh.ino = st.st_ino;
    fresh.nlink = st.st_nlink;
    fresh.mode = st.st_mode;
    fresh.uid = st.st_uid;
    fresh.gid = st.st_gid;
    fresh.mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    fresh.ctime_ns = st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
    Database& db = writer->database();
    const std::int64_t a =
        test::query_int(db, "SELECT id FROM dirs WHERE prefix = CAST('" + root + "/a/' AS BLOB)");
    const std::int64_t b =
        test::query_int(db, "SELECT id FROM dirs WHERE prefix = CAST('" + root + "/b/' AS BLOB)");
    const std::int64_t root_total = total_size(root);
    const std::int64_t a_total = total_size(root + "/a");
    ASSERT_TRUE(db.exec("BEGIN IMMEDIATE"));
    const InodeChange change = inode_change_of(fresh);
    InodeSyncReport report;
    auto s = sync_inode_names(
        db, std::span<const InodeChange>(&change, 1),
        [b](std::int64_t id, std::string_view) { return id == b; }, &report);
    ASSERT_TRUE(s) << s.to_string();
    ASSERT_TRUE(db.exec("COMMIT"));
    ASSERT_EQ(report.single.size(), 1u);
    EXPECT_EQ(report.single[0].dir, a);
    EXPECT_EQ(report.single[0].single,
              (Totals{-31526, -static_cast<std::int64_t>(fresh.blocks), -1, 0}));
    EXPECT_EQ(report.names_updated, 1u);
    EXPECT_TRUE(report.scanned_entries);  // a/f still said nlink 1: not in `links`
    EXPECT_TRUE(report.stale_dirs.empty());
    // a/f moved from the additive part to `links`: counted once, so no total changed size.
    EXPECT_EQ(test::query_int(db, "SELECT nlink FROM files WHERE path = '" + root + "/a/f'"), 2);
    EXPECT_EQ(test::query_int(db, "SELECT count(*) FROM links"), 1);
    EXPECT_EQ(total_size(root), root_total);
    EXPECT_EQ(total_size(root + "/a"), a_total);
}

TEST_F(HardLinks, SyncLeavesANameThatIsGoneAndReportsItsDirectory) {
    ASSERT_EQ(link((root + "/a/f").c_str(), (root + "/b/g").c_str()), 0);
    struct stat st {};
    ASSERT_EQ(lstat((root + "/b/g").c_str(), &st), 0);
    scan_all();
    ASSERT_EQ(unlink((root + "/a/f").c_str()), 0);
    Database& db = writer->database();
    const std::int64_t a =
        test::query_int(db, "SELECT id FROM dirs WHERE prefix = CAST('" + root + "/a/' AS BLOB)");
    const std::string before = dump();
    ASSERT_TRUE(db.exec("BEGIN IMMEDIATE"));
    const InodeChange change{st.st_dev, st.st_ino, std::nullopt};  // seen only leaving
    InodeSyncReport report;
    auto s = sync_inode_names(
        db, std::span<const InodeChange>(&change, 1),
        [](std::int64_t, std::string_view prefix) { return prefix.ends_with("/b/"); }, &report);
    ASSERT_TRUE(s) << s.to_string();
    ASSERT_TRUE(db.exec("COMMIT"));
    EXPECT_EQ(report.stale_dirs, std::vector<std::int64_t>{a});
    EXPECT_EQ(report.names_updated, 0u);
    EXPECT_EQ(dump(), before);
}

// Seeded random links, unlinks and writes, each followed by a rescan of the directory where
// it happened or of one of its ancestors: the index equals a fresh scan after every step.
TEST_F(HardLinks, RandomLinksUnlinksAndWritesConverge) {
    const std::vector<std::string> dirs{"", "/a", "/b", "/b/deep", "/c"};
    std::vector<std::string> names{"/a/f", "/a/other", "/b/g0", "/c/h"};  // those that exist
    scan_all();
    std::mt19937 rng(18);
    auto pick = [&rng](std::size_t n) {
        return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
    };
    for (int step = 0; step < 40; ++step) {
        std::string changed_dir;
        const std::size_t op = pick(3);
        std::string what;
        if (op == 0 || names.size() < 3) {
            const std::string from = names[pick(names.size())];
            const std::string to = dirs[pick(dirs.size())] + "/n" + std::to_string(step);
            ASSERT_EQ(link((root + from).c_str(), (root + to).c_str()), 0) << from << " " << to;
            names.push_back(to);
            changed_dir = to.substr(0, to.rfind('/'));
            what = "ln " + from + " " + to;
        } else if (op == 1) {
            const std::size_t i = pick(names.size());
            ASSERT_EQ(unlink((root + names[i]).c_str()), 0) << names[i];
            changed_dir = names[i].substr(0, names[i].rfind('/'));
            what = "rm " + names[i];
            names.erase(names.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
            const std::string& name = names[pick(names.size())];
            append(root + name, 1 + pick(20000));
            changed_dir = name.substr(0, name.rfind('/'));
            what = "write " + name;
        }
        // The directory itself, or one of its ancestors up to the root.
        std::string rescan = changed_dir;
        while (!rescan.empty() && pick(3) == 0) rescan = rescan.substr(0, rescan.rfind('/'));
        scan(root + rescan);
        ASSERT_EQ(dump(), fresh_dump())
            << "step " << step << ": " << what << ", rescan " << (rescan.empty() ? "/" : rescan);
    }
}

}  // namespace
}  // namespace wsindex::storage
