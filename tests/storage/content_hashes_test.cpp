// Content hashes: dupes candidates from a synthetic index, the cache's validity rule, and its
// pruning by garbage collection.
#include "storage/content_hashes.hpp"

#include <gtest/gtest.h>

#include <set>

#include "storage/database.hpp"
#include "storage/scan_writer.hpp"
#include "tests/storage/support/synth.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

using test::Synth;
using test::TempDir;

// /h/a/x (100 B, ino 1), /h/a/y (100, ino 2), /h/b/x (100, ino 1: a hard link of /h/a/x),
// /h/b/lone (77, ino 3), /h/b/z (55, ino 4), /h/b/z2 (55, ino 4: only links of one inode),
// /h/e1 and /h/e2 (empty, inos 5 and 6), /h/b/w (100, ino 7, unless without_w).
std::vector<core::WalkResult> tree(bool without_w = false, std::int64_t y_mtime = 10) {
    Synth t("/h");
    const auto a = t.dir(1, "a");
    const auto b = t.dir(1, "b");
    auto file = [&](std::uint64_t dir, const std::string& name, std::uint64_t size,
                    std::uint64_t ino) {
        t.file(dir, name, size, 1, ino);
        t.last().mtime_ns = 10;
        t.last().ctime_ns = 10;
    };
    file(a, "x", 100, 1);
    file(a, "y", 100, 2);
    t.last().mtime_ns = y_mtime;
    file(b, "x", 100, 1);
    file(b, "lone", 77, 3);
    file(b, "z", 55, 4);
    file(b, "z2", 55, 4);
    file(1, "e1", 0, 5);
    file(1, "e2", 0, 6);
    if (!without_w) file(b, "w", 100, 7);
    return t.results();
}

class ContentHashesTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(ScanWriter::open(dir_ / "index.db", &writer_));
        scan(tree());
        ASSERT_TRUE(Database::open(dir_ / "index.db", OpenMode::read_write, &db_));
    }
    void scan(std::vector<core::WalkResult> rs) {
        ASSERT_TRUE(writer_->begin("/h"));
        ASSERT_TRUE(writer_->write(rs));
        ASSERT_TRUE(writer_->complete());
        ASSERT_TRUE(writer_->collect_garbage());
    }
    std::vector<DupeCandidate> candidates(CandidateQuery q = {}) {
        std::vector<DupeCandidate> out;
        auto s = dupe_candidates(db_, q, &out);
        EXPECT_TRUE(s) << s.to_string();
        return out;
    }
    static std::vector<std::string> paths(const std::vector<DupeCandidate>& cs) {
        std::vector<std::string> out;
        for (const auto& c : cs) out.push_back(c.path);
        return out;
    }

    TempDir dir_;
    std::unique_ptr<ScanWriter> writer_;
    Database db_;
};

TEST_F(ContentHashesTest, CandidatesShareASizeWithAnotherInode) {
    // Size 100 has three inodes (x's two names listed together); 55 is one inode's two names,
    // 77 is alone, and empty files stay out at the default min_size.
    EXPECT_EQ(paths(candidates()),
              (std::vector<std::string>{"/h/a/x", "/h/b/x", "/h/a/y", "/h/b/w"}));
    CandidateQuery with_empty;
    with_empty.min_size = 0;
    EXPECT_EQ(paths(candidates(with_empty)),
              (std::vector<std::string>{"/h/a/x", "/h/b/x", "/h/a/y", "/h/b/w", "/h/e1", "/h/e2"}));
    CandidateQuery big;
    big.min_size = 101;
    EXPECT_TRUE(candidates(big).empty());
}

TEST_F(ContentHashesTest, RootsLimitTheCandidates) {
    CandidateQuery under_b;
    under_b.roots = {"/h/b"};
    // Below /h/b, size 100 has inodes 1 and 7.
    EXPECT_EQ(paths(candidates(under_b)), (std::vector<std::string>{"/h/b/x", "/h/b/w"}));
    CandidateQuery under_a;
    under_a.roots = {"/h/a"};
    EXPECT_EQ(paths(candidates(under_a)), (std::vector<std::string>{"/h/a/x", "/h/a/y"}));
    CandidateQuery both;
    both.roots = {"/h/b", "/h", "/h/a"};  // nested roots count once
    EXPECT_EQ(candidates(both).size(), 4u);
    CandidateQuery prefix_only;
    prefix_only.roots = {"/h/a/x"};  // not a directory: nothing below it
    EXPECT_TRUE(candidates(prefix_only).empty());
}

TEST_F(ContentHashesTest, CachedHashIsReturnedOnlyWhileTheInodeIsUnchanged) {
    Hash128 p{};
    p[0] = 1;
    Hash128 f{};
    f[0] = 2;
    HashRecord w{1, 7, 100, 10, 10, p, std::nullopt};
    HashRecord x_stale{1, 1, 100, 9, 10, p, f};  // another mtime than indexed
    ASSERT_TRUE(store_content_hashes(db_, {HashRecord{1, 2, 100, 10, 10, p, f}, w, x_stale}));
    for (const DupeCandidate& c : candidates()) {
        if (c.path == "/h/a/y") {
            ASSERT_TRUE(c.partial && c.full);
            EXPECT_EQ(*c.partial, p);
            EXPECT_EQ(*c.full, f);
        } else if (c.path == "/h/b/w") {
            EXPECT_TRUE(c.partial);
            EXPECT_FALSE(c.full);
        } else {
            EXPECT_FALSE(c.partial) << c.path;
            EXPECT_FALSE(c.full) << c.path;
        }
    }
    // A partial-only record for the same state keeps the full hash; another state drops it.
    ASSERT_TRUE(store_content_hashes(db_, {HashRecord{1, 2, 100, 10, 10, p, std::nullopt}}));
    for (const DupeCandidate& c : candidates()) {
        if (c.path == "/h/a/y") {
            EXPECT_TRUE(c.full);
        }
    }
    // The rescanned file has a new mtime: its row no longer applies.
    scan(tree(false, 20));
    for (const DupeCandidate& c : candidates()) {
        if (c.path == "/h/a/y") {
            EXPECT_FALSE(c.partial);
            EXPECT_FALSE(c.full);
        }
    }
}

TEST_F(ContentHashesTest, GarbageCollectionAfterARescanDropsHashesOfVanishedInodes) {
    Hash128 p{};
    ASSERT_TRUE(store_content_hashes(
        db_, {HashRecord{1, 7, 100, 10, 10, p, p}, HashRecord{1, 1, 100, 10, 10, p, p},
              HashRecord{1, 99, 100, 10, 10, p, p}}));
    EXPECT_EQ(test::query_int(db_, "SELECT count(*) FROM content_hashes"), 3);
    scan(tree(/*without_w=*/true));  // /h/b/w (ino 7) is gone; ino 99 never was indexed
    EXPECT_EQ(test::query_int(db_, "SELECT group_concat(ino) FROM content_hashes"), 1);
    std::int64_t removed = -1;
    ASSERT_TRUE(prune_content_hashes(db_, &removed));
    EXPECT_EQ(removed, 0);
}

TEST_F(ContentHashesTest, PruneDropsRowsOfAnotherSize) {
    Hash128 p{};
    ASSERT_TRUE(store_content_hashes(db_, {HashRecord{1, 1, 99, 10, 10, p, p}}));
    std::int64_t removed = 0;
    ASSERT_TRUE(prune_content_hashes(db_, &removed));
    EXPECT_EQ(removed, 1);
    EXPECT_EQ(test::query_int(db_, "SELECT count(*) FROM content_hashes"), 0);
}

// Enough candidates that the cache is read in one pass beside them rather than looked up per
// inode: the same rule holds (a row counts only for the inode as indexed), across inode numbers
// that SQLite orders as negative integers, rows of inodes that are no candidates in between,
// and the names of a hard-linked inode.
TEST_F(ContentHashesTest, ManyCandidatesGetExactlyTheirValidCachedHashes) {
    Synth t("/m");
    const auto d = t.dir(1, "d");
    constexpr std::uint64_t kPairs = 2000;
    const std::uint64_t high = std::uint64_t{1} << 63;  // negative as a SQLite integer
    auto ino_of = [&](std::uint64_t i) { return (i % 3 == 0 ? high : 0) + 10 * i + 10; };
    for (std::uint64_t i = 0; i < kPairs; ++i) {
        // Two inodes of size 1000 + i; a third name of every tenth first inode (a hard link).
        for (std::uint64_t k = 0; k < 2; ++k) {
            t.file(d, "f" + std::to_string(i) + "-" + std::to_string(k), 1000 + i, 1, ino_of(i) + k,
                   i % 10 == 0 && k == 0 ? 2 : 1);
            t.last().mtime_ns = 10;
            t.last().ctime_ns = 10;
            if (i % 10 == 0 && k == 0) {
                t.file(d, "g" + std::to_string(i), 1000 + i, 1, ino_of(i), 2);
                t.last().mtime_ns = 10;
                t.last().ctime_ns = 10;
            }
        }
    }
    std::vector<core::WalkResult> rs = t.results();
    ASSERT_TRUE(writer_->begin("/m"));
    ASSERT_TRUE(writer_->write(rs));
    ASSERT_TRUE(writer_->complete());

    Hash128 p{};
    p[0] = 1;
    Hash128 f{};
    f[0] = 2;
    std::vector<HashRecord> rows;
    for (std::uint64_t i = 0; i < kPairs; ++i) {
        const auto size = static_cast<std::int64_t>(1000 + i);
        switch (i % 4) {
            case 0:  // valid, both hashes, for the first inode
                rows.push_back({1, ino_of(i), size, 10, 10, p, f});
                break;
            case 1:  // another ctime than indexed
                rows.push_back({1, ino_of(i), size, 10, 11, p, f});
                break;
            case 2:  // valid, partial only, for the second inode
                rows.push_back({1, ino_of(i) + 1, size, 10, 10, p, std::nullopt});
                break;
            default:  // an inode that is not indexed, between two that are
                rows.push_back({1, ino_of(i) + 5, size, 10, 10, p, f});
                break;
        }
    }
    ASSERT_TRUE(store_content_hashes(db_, rows));
    CandidateQuery q;
    q.roots = {"/m"};
    const std::vector<DupeCandidate> cs = candidates(q);
    ASSERT_EQ(cs.size(), 2 * kPairs + kPairs / 10);
    std::size_t with_full = 0;
    std::size_t partial_only = 0;
    for (const DupeCandidate& c : cs) {
        const std::uint64_t i = static_cast<std::uint64_t>(c.size) - 1000;
        const bool first = c.ino == ino_of(i);
        if (i % 4 == 0 && first) {
            ASSERT_TRUE(c.partial && c.full) << c.path;
            EXPECT_EQ(*c.full, f);
            ++with_full;
        } else if (i % 4 == 2 && !first) {
            EXPECT_TRUE(c.partial) << c.path;
            EXPECT_FALSE(c.full) << c.path;
            ++partial_only;
        } else {
            EXPECT_FALSE(c.partial) << c.path;
            EXPECT_FALSE(c.full) << c.path;
        }
    }
    // The first inode of every tenth pair has two names: of the 500 inodes with both hashes,
    // those of every twentieth pair (100) are listed twice.
    EXPECT_EQ(with_full, kPairs / 4 + kPairs / 20);
    EXPECT_EQ(partial_only, kPairs / 4);
}

}  // namespace
}  // namespace wsindex::storage
