// Incremental rescans: unchanged directories keep their rows (nothing rewritten), any change
// of a name or of metadata is seen, and the result always equals a fresh scan.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>

#include "storage/database.hpp"
#include "storage/scan_writer.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

using test::TempDir;

const char* const kDirs[] = {"a", "b", "c", "b/x", "b/x/y", "c/z"};  // plus the root: 7 dirs

void make_tree(const std::string& root) {
    ASSERT_EQ(mkdir(root.c_str(), 0755), 0);
    for (const char* d : kDirs) ASSERT_EQ(mkdir((root + "/" + d).c_str(), 0755), 0);
    int n = 0;
    for (const char* d : kDirs) {
        for (int i = 0; i < 30; ++i) {
            test::write_file(root + "/" + d + "/f" + std::to_string(i), (n++ * 53) % 3000);
        }
    }
    ASSERT_EQ(link((root + "/a/f1").c_str(), (root + "/c/z/hard").c_str()), 0);
    ASSERT_EQ(symlink("f2", (root + "/b/link").c_str()), 0);
}

struct Fixture {
    TempDir dir;
    std::string root = dir / "tree";
    std::string db_path = dir / "index.db";
    std::unique_ptr<ScanWriter> writer;

    void SetUpTree() {
        make_tree(root);
        ASSERT_TRUE(ScanWriter::open(db_path, &writer));
        ASSERT_TRUE(test::scan_with(*writer, root, 1));
    }
    // The index a fresh database gets from scanning `root` now.
    std::string fresh_dump() {
        TempDir other;
        EXPECT_TRUE(test::scan_db(other / "fresh.db", root, 7));
        Database fresh = test::open_reader(other / "fresh.db");
        return test::dump_index(fresh);
    }
    std::string dump() {
        Database reader = test::open_reader(db_path);
        return test::dump_index(reader);
    }
    std::int64_t generation() {
        std::int64_t g = -1;
        EXPECT_TRUE(
            writer->database().query_int64("SELECT value FROM meta WHERE key = 'generation'", &g));
        return g;
    }
};

TEST(Incremental, RescanOfAnUnchangedTreeRewritesNothing) {
    Fixture f;
    f.SetUpTree();
    EXPECT_EQ(f.writer->reused_dirs(), 0u) << "a first scan has nothing to reuse";
    const std::string before = f.dump();
    std::int64_t rows_before = 0;
    ASSERT_TRUE(f.writer->database().query_int64("SELECT count(*) FROM entries", &rows_before));
    const std::int64_t generation = f.generation();
    EXPECT_GT(generation, 0);

    ASSERT_TRUE(test::scan_with(*f.writer, f.root, 3));  // another arrival order
    // No (directory, name) key changed: name indexes built before stay valid.
    EXPECT_EQ(f.generation(), generation);
    EXPECT_EQ(f.writer->reused_dirs(), 7u);
    EXPECT_EQ(f.writer->reused_rows(), static_cast<std::uint64_t>(rows_before) - 1)
        << "every row but the root's own (written by the swap) kept";
    EXPECT_EQ(f.dump(), before);
    std::int64_t rows_after = 0;
    ASSERT_TRUE(f.writer->database().query_int64("SELECT count(*) FROM entries", &rows_after));
    EXPECT_EQ(rows_after, rows_before) << "no garbage left behind, nothing duplicated";
}

TEST(Incremental, ASizeChangeRewritesOnlyItsDirectory) {
    Fixture f;
    f.SetUpTree();
    test::write_file(f.root + "/b/x/f3", 4321);  // b/x changes; b's entry for x does not
    const std::int64_t generation = f.generation();
    ASSERT_TRUE(test::scan_with(*f.writer, f.root, 5));
    EXPECT_EQ(f.writer->reused_dirs(), 6u);
    EXPECT_EQ(f.generation(), generation + 1) << "b/x's rows were rewritten under a new id";
    EXPECT_EQ(f.dump(), f.fresh_dump());
}

TEST(Incremental, AnMtimeOnlyChangeIsSeen) {
    Fixture f;
    f.SetUpTree();
    const std::string file = f.root + "/c/z/f4";
    struct timeval times[2] = {{1000000, 0}, {1000000, 0}};
    ASSERT_EQ(utimes(file.c_str(), times), 0);
    ASSERT_TRUE(test::scan_with(*f.writer, f.root, 9));
    EXPECT_EQ(f.writer->reused_dirs(), 6u);
    EXPECT_EQ(f.dump(), f.fresh_dump());
}

TEST(Incremental, AddedRemovedAndRenamedEntriesGiveAFreshScansIndex) {
    Fixture f;
    f.SetUpTree();
    ASSERT_EQ(unlink((f.root + "/a/f7").c_str()), 0);
    ASSERT_EQ(rename((f.root + "/c/f1").c_str(), (f.root + "/c/g1").c_str()), 0);
    ASSERT_EQ(mkdir((f.root + "/b/new").c_str(), 0755), 0);
    test::write_file(f.root + "/b/new/n", 10);
    ASSERT_TRUE(test::scan_with(*f.writer, f.root, 4));
    EXPECT_LT(f.writer->reused_dirs(), 7u);
    EXPECT_GT(f.writer->reused_dirs(), 0u);
    EXPECT_EQ(f.dump(), f.fresh_dump());
}

TEST(Incremental, SubtreeRescanReusesAndKeepsAncestorTotals) {
    Fixture f;
    f.SetUpTree();
    test::write_file(f.root + "/b/x/y/f0", 99999);
    ASSERT_TRUE(f.writer->begin(f.root + "/b"));
    auto results = test::walk_tree(f.root + "/b");
    test::shuffle_results(&results, 2);
    ASSERT_TRUE(test::feed(std::move(results), 13,
                           [&](std::span<core::WalkResult> b) { return f.writer->write(b); }));
    ASSERT_TRUE(f.writer->complete());
    ASSERT_TRUE(f.writer->collect_garbage());
    EXPECT_EQ(f.writer->reused_dirs(), 2u) << "b and b/x unchanged, b/x/y changed";
    EXPECT_EQ(f.dump(), f.fresh_dump());
}

}  // namespace
}  // namespace wsindex::storage
