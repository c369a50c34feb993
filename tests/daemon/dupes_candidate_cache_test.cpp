// Dupes candidate cache: served from memory only while no other connection committed, and what
// it serves is what a fresh listing returns (hashes stored through it included).
#include "daemon/dupes_candidate_cache.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/database.hpp"
#include "storage/index_damage.hpp"
#include "tests/daemon/support/daemon_test_support.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::daemon {
namespace {

using storage::test::TempDir;

using test::write_file;

std::string describe(const std::vector<storage::DupeCandidate>& list) {
    std::string out;
    for (const storage::DupeCandidate& c : list) {
        out += c.path + " " + std::to_string(c.size) + " " + std::to_string(c.mtime_ns) + " " +
               std::to_string(c.ctime_ns) + " " + std::to_string(c.dev) + ":" +
               std::to_string(c.ino) + " p" + (c.partial ? std::to_string((*c.partial)[0]) : "-") +
               " f" + (c.full ? std::to_string((*c.full)[0]) : "-") + "\n";
    }
    return out;
}

storage::Hash128 hash_of(std::uint8_t first) {
    storage::Hash128 h{};
    h[0] = first;
    return h;
}

class DupesCandidateCacheTest : public ::testing::Test {
  protected:
    void SetUp() override {
        root_ = dir_ / "tree";
        ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
        for (int i = 0; i < 6; ++i) {
            write_file(root_ + "/a" + std::to_string(i), std::string(100, 'a'));
            write_file(root_ + "/b" + std::to_string(i), std::string(200 + i % 2, 'b'));
        }
        ASSERT_TRUE(storage::test::scan_db(db_path(), root_));
        ASSERT_TRUE(storage::Database::open(db_path(), storage::OpenMode::read_write, &other_));
    }

    [[nodiscard]] std::string db_path() const { return dir_ / "index.db"; }

    // What a listing on a connection of its own returns now.
    std::vector<storage::DupeCandidate> fresh() {
        std::vector<storage::DupeCandidate> out;
        EXPECT_TRUE(storage::dupe_candidates(other_, query(), &out));
        return out;
    }

    [[nodiscard]] storage::CandidateQuery query() const {
        storage::CandidateQuery q;
        q.roots = {root_};
        return q;
    }

    TempDir dir_;
    std::string root_;
    storage::Database other_;  // another connection: the writer, a sqlite3 shell
};

TEST_F(DupesCandidateCacheTest, AnUnchangedIndexIsServedFromMemory) {
    DupesCandidateCache cache(db_path());
    std::vector<storage::DupeCandidate> first;
    bool from_memory = true;
    ASSERT_TRUE(cache.list(query(), &first, &from_memory));
    EXPECT_FALSE(from_memory);
    ASSERT_EQ(first.size(), 12u);
    std::vector<storage::DupeCandidate> second;
    ASSERT_TRUE(cache.list(query(), &second, &from_memory));
    EXPECT_TRUE(from_memory);
    EXPECT_EQ(describe(second), describe(first));

    // Another query is listed again.
    storage::CandidateQuery bigger = query();
    bigger.min_size = 150;
    std::vector<storage::DupeCandidate> big;
    ASSERT_TRUE(cache.list(bigger, &big, &from_memory));
    EXPECT_FALSE(from_memory);
    EXPECT_EQ(big.size(), 6u);
}

TEST_F(DupesCandidateCacheTest, ACommitOfAnotherConnectionListsAgain) {
    DupesCandidateCache cache(db_path());
    std::vector<storage::DupeCandidate> list;
    ASSERT_TRUE(cache.list(query(), &list));
    // As a live update would record a file written since: another mtime in its entry.
    ASSERT_TRUE(other_.exec("UPDATE entries SET mtime_ns = mtime_ns + 1 WHERE name = X'6130'"));
    bool from_memory = true;
    ASSERT_TRUE(cache.list(query(), &list, &from_memory));
    EXPECT_FALSE(from_memory);
    EXPECT_EQ(describe(list), describe(fresh()));
    // A file that left the index leaves the listing.
    ASSERT_TRUE(other_.exec("DELETE FROM entries WHERE name = X'6131'"));
    ASSERT_TRUE(cache.list(query(), &list, &from_memory));
    EXPECT_FALSE(from_memory);
    EXPECT_EQ(list.size(), 11u);
    EXPECT_EQ(describe(list), describe(fresh()));
}

TEST_F(DupesCandidateCacheTest, HashesStoredThroughItAreInTheCopy) {
    DupesCandidateCache cache(db_path());
    std::vector<storage::DupeCandidate> list;
    ASSERT_TRUE(cache.list(query(), &list));
    // A partial hash for every candidate, a full one for the first; then a record without a
    // full hash for it (the full one stays, as in the table), and one of another state for the
    // second (its row no longer matches its entry: no hashes).
    std::vector<storage::HashRecord> records;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const storage::DupeCandidate& c = list[i];
        records.push_back({c.dev, c.ino, c.size, c.mtime_ns, c.ctime_ns,
                           hash_of(static_cast<std::uint8_t>(i + 1)),
                           i == 0 ? std::optional(hash_of(99)) : std::nullopt});
    }
    ASSERT_TRUE(cache.store(records));
    const storage::DupeCandidate& a = list[0];
    const storage::DupeCandidate& b = list[1];
    ASSERT_TRUE(cache.store({{a.dev, a.ino, a.size, a.mtime_ns, a.ctime_ns, hash_of(50), {}},
                             {b.dev, b.ino, b.size, b.mtime_ns + 1, b.ctime_ns, hash_of(51), {}}}));
    bool from_memory = false;
    ASSERT_TRUE(cache.list(query(), &list, &from_memory));
    EXPECT_TRUE(from_memory);
    const std::vector<storage::DupeCandidate> truth = fresh();
    EXPECT_EQ(describe(list), describe(truth));
    ASSERT_TRUE(truth[0].full);
    EXPECT_EQ((*truth[0].full)[0], 99);
    EXPECT_FALSE(truth[1].partial);

    // A cache emptied by hand (the benchmark's first runs) is seen.
    ASSERT_TRUE(other_.exec("DELETE FROM content_hashes"));
    ASSERT_TRUE(cache.list(query(), &list, &from_memory));
    EXPECT_FALSE(from_memory);
    for (const storage::DupeCandidate& c : list) EXPECT_FALSE(c.partial) << c.path;
}

// A damaged index set aside and built anew is another file at the same path: the listing is
// of the new one, as when each run opened its own connection.
TEST_F(DupesCandidateCacheTest, AnIndexReplacedAtItsPathIsListedAgain) {
    DupesCandidateCache cache(db_path());
    std::vector<storage::DupeCandidate> list;
    ASSERT_TRUE(cache.list(query(), &list));
    ASSERT_EQ(list.size(), 12u);
    other_.close();
    std::string set_aside_as;
    ASSERT_TRUE(storage::set_aside_damaged(db_path(), 1, &set_aside_as));
    // The new index knows only the a files.
    for (int i = 0; i < 6; ++i) ASSERT_EQ(::unlink((root_ + "/b" + std::to_string(i)).c_str()), 0);
    ASSERT_TRUE(storage::test::scan_db(db_path(), root_));
    bool from_memory = true;
    ASSERT_TRUE(cache.list(query(), &list, &from_memory));
    EXPECT_FALSE(from_memory);
    EXPECT_EQ(list.size(), 6u);
    ASSERT_TRUE(storage::Database::open(db_path(), storage::OpenMode::read_write, &other_));
    EXPECT_EQ(describe(list), describe(fresh()));
}

TEST_F(DupesCandidateCacheTest, ALargerListingThanTheCapIsNotKept) {
    DupesCandidateCache cache(db_path(), 11);
    std::vector<storage::DupeCandidate> list;
    bool from_memory = true;
    ASSERT_TRUE(cache.list(query(), &list, &from_memory));
    EXPECT_EQ(list.size(), 12u);
    ASSERT_TRUE(cache.list(query(), &list, &from_memory));
    EXPECT_FALSE(from_memory);
    EXPECT_EQ(describe(list), describe(fresh()));
    // At the cap it is kept.
    DupesCandidateCache at_cap(db_path(), 12);
    ASSERT_TRUE(at_cap.list(query(), &list));
    ASSERT_TRUE(at_cap.list(query(), &list, &from_memory));
    EXPECT_TRUE(from_memory);
}

}  // namespace
}  // namespace wsindex::daemon
