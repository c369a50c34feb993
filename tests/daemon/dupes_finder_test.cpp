// Dupes finder on real files: every candidate read exactly once per phase while one worker is
// slow (range stealing moves its share to the others), groups by content, the cache.
#include "daemon/dupes_finder.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "storage/database.hpp"
#include "tests/daemon/support/daemon_test_support.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::daemon {
namespace {

using storage::test::TempDir;

using test::write_file;

std::pair<std::uint64_t, std::uint64_t> inode_of(int fd) {
    struct stat st {};
    EXPECT_EQ(::fstat(fd, &st), 0);
    return {st.st_dev, st.st_ino};
}

class DupesFinderTest : public ::testing::Test {
  protected:
    void SetUp() override {
        root_ = dir_ / "tree";
        ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
        // 40 files of one size: 20 pairs of equal content. Half of them are larger than the
        // partial window and equal at both ends, so their partial hashes collide in one group
        // and they need a full hash too.
        for (int i = 0; i < 20; ++i) {
            std::string small(3000, 'a');
            small[1500] = static_cast<char>('A' + i);
            write_file(root_ + "/s" + std::to_string(i) + "a", small);
            write_file(root_ + "/s" + std::to_string(i) + "b", small);
            std::string big(20000, 'b');
            big[10000] = static_cast<char>('A' + i);
            write_file(root_ + "/b" + std::to_string(i) + "a", big);
            write_file(root_ + "/b" + std::to_string(i) + "b", big);
        }
        ASSERT_TRUE(storage::test::scan_db(dir_ / "index.db", root_));
        ASSERT_TRUE(
            storage::Database::open(dir_ / "index.db", storage::OpenMode::read_write, &db_));
    }

    TempDir dir_;
    std::string root_;
    storage::Database db_;
};

TEST_F(DupesFinderTest, EveryCandidateIsReadOncePerPhaseWithASlowWorker) {
    core::RangeOptions ro;
    ro.workers = 3;
    ro.use_topology = false;
    core::RangeExecutor executor(ro);
    DupesProgress progress(executor.size());

    // The first thread that opens a file is made slow for the whole run: the others must steal
    // its share, and nothing may be read twice in a phase or skipped.
    std::mutex mu;
    std::map<std::pair<std::uint64_t, std::uint64_t>, int> opens;
    std::thread::id slow;
    ReadPermission may_read = [&](int fd) {
        bool is_slow = false;
        {
            std::lock_guard lock(mu);
            ++opens[inode_of(fd)];
            if (slow == std::thread::id{}) slow = std::this_thread::get_id();
            is_slow = slow == std::this_thread::get_id();
        }
        if (is_slow) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return true;
    };
    DupesEnvironment env{&db_, executor, {}, may_read, progress};
    DupesResult result;
    auto st = find_dupes(env, DupesRequest{}, {}, &result);
    ASSERT_TRUE(st) << st.to_string();

    ASSERT_EQ(result.groups.size(), 40u);
    for (const DupesGroup& g : result.groups) {
        ASSERT_EQ(g.files.size(), 2u);
        const std::string a = g.files[0].names.at(0);
        const std::string b = g.files[1].names.at(0);
        EXPECT_EQ(a.substr(0, a.size() - 1) + "b", b);
    }
    // Small files: one read (the partial hash is the whole file). Large ones: partial, then
    // full, since all their partial hashes collide.
    ASSERT_EQ(opens.size(), 80u);
    int twice = 0;
    for (const auto& [inode, n] : opens) {
        EXPECT_TRUE(n == 1 || n == 2) << n;
        if (n == 2) ++twice;
    }
    EXPECT_EQ(twice, 40);
    EXPECT_EQ(result.hashed, 80u + 40u);
    EXPECT_EQ(result.read.files, 120u);
    // The slow worker's share went to the others.
    std::uint64_t steals = 0;
    for (const auto& w : executor.stats()) steals += w.steals;
    EXPECT_GT(steals, 0u);

    // A second run reads nothing: everything is cached (each file is only looked at).
    opens.clear();
    DupesResult again;
    ASSERT_TRUE(find_dupes(env, DupesRequest{}, {}, &again));
    EXPECT_EQ(again.read.files, 0u);
    EXPECT_EQ(again.read.bytes, 0u);
    EXPECT_EQ(again.hashed, 0u);
    EXPECT_EQ(again.groups.size(), 40u);
}

// Reading steps run on the readers' executor (more threads than CPUs in the daemon), made only
// when there is content to read; the check of cached files runs on the other one.
TEST_F(DupesFinderTest, ContentIsReadOnTheReadersAndTheCheckWithoutThem) {
    core::RangeOptions ro;
    ro.workers = 2;
    ro.use_topology = false;
    core::RangeExecutor executor(ro);
    core::RangeOptions rr = ro;
    rr.workers = 5;
    core::RangeExecutor reader_pool(rr);
    int asked = 0;
    DupesProgress progress(reader_pool.size());
    const auto items_done = [](const core::RangeExecutor& e) {
        std::uint64_t n = 0;
        for (const auto& w : e.stats()) n += w.items;
        return n;
    };
    DupesEnvironment env{&db_, executor, {}, {}, progress, [&]() -> core::RangeExecutor& {
                             ++asked;
                             return reader_pool;
                         }};
    DupesResult first;
    ASSERT_TRUE(find_dupes(env, DupesRequest{}, {}, &first));
    ASSERT_EQ(first.groups.size(), 40u);
    EXPECT_GE(asked, 1);
    EXPECT_EQ(items_done(executor), 0u);      // nothing cached: nothing to check
    EXPECT_EQ(items_done(reader_pool), 40u);  // the last reading step: full hashes of 40 files

    const int asked_before = asked;
    DupesResult again;
    ASSERT_TRUE(find_dupes(env, DupesRequest{}, {}, &again));
    EXPECT_EQ(again.groups.size(), 40u);
    EXPECT_EQ(asked, asked_before);        // nothing to read: no readers
    EXPECT_EQ(items_done(executor), 80u);  // every group member checked
}

TEST_F(DupesFinderTest, AStopRequestEndsTheRunAsCancelled) {
    core::RangeOptions ro;
    ro.workers = 2;
    core::RangeExecutor executor(ro);
    DupesProgress progress(executor.size());
    std::stop_source stop;
    int calls = 0;
    // Stops after the first few opens: the run must end as cancelled, not with a result.
    ReadPermission may_read = [&](int) {
        static std::mutex mu;
        std::lock_guard lock(mu);
        if (++calls == 5) stop.request_stop();
        return true;
    };
    DupesEnvironment env{&db_, executor, {}, may_read, progress};
    DupesResult result;
    auto st = find_dupes(env, DupesRequest{}, stop.get_token(), &result);
    EXPECT_EQ(st.code(), std::errc::operation_canceled) << st.to_string();
    EXPECT_LT(calls, 80);
}

TEST_F(DupesFinderTest, AFileTruncatedWhileOpenedIsReportedChangedAndLeftOut) {
    core::RangeOptions ro;
    ro.workers = 2;
    core::RangeExecutor executor(ro);
    DupesProgress progress(executor.size());
    const std::string victim = root_ + "/b3a";
    struct stat vst {};
    ASSERT_EQ(::stat(victim.c_str(), &vst), 0);
    // The permission check runs on the opened inode, between the index check and the read:
    // the file shrinks right there, as if a writer truncated it while it was being hashed.
    ReadPermission may_read = [&](int fd) {
        if (inode_of(fd).second == vst.st_ino) {
            EXPECT_EQ(::truncate(victim.c_str(), 100), 0);
        }
        return true;
    };
    DupesEnvironment env{&db_, executor, {}, may_read, progress};
    DupesResult result;
    ASSERT_TRUE(find_dupes(env, DupesRequest{}, {}, &result));
    EXPECT_EQ(result.changed, std::vector<std::string>{victim});
    EXPECT_EQ(result.groups.size(), 39u);
    for (const DupesGroup& g : result.groups) {
        for (const DupesFile& f : g.files) EXPECT_NE(f.names.at(0), root_ + "/b3b");
    }
}

}  // namespace
}  // namespace wsindex::daemon
