// The live index's batches driven through the scan service: what a changed directory whose
// names were dropped past the bound (the coalescer's, or merge_changed_locked's) re-lists and
// walks again.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include "daemon/scan_service.hpp"
#include "monitor/coalescer.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "tests/daemon/support/daemon_test_support.hpp"

namespace wsindex::daemon {
namespace {

using test::TempDir;
using namespace std::chrono_literals;

class LiveBatches : public ::testing::Test {
  protected:
    void SetUp() override {
        std::filesystem::create_directories(tree_ + "/sub/deep");
        test::write_file(tree_ + "/sub/old", 10);
        test::write_file(tree_ + "/sub/deep/kept", 20);
        ScanServiceOptions options;
        options.db_path = db_;
        options.settings.workers = 2;
        ASSERT_TRUE(ScanService::open(std::move(options), &service_));
        auto job = service_->enqueue(tree_);
        ASSERT_TRUE(job.ok());
        ASSERT_TRUE(service_->wait_idle(60s));
    }
    void TearDown() override {
        if (service_) service_->stop();
    }

    // `sub` leaves the tree, changes while away (no event of it reaches the index), and comes
    // back under its name with its inode: only its name in the tree's events says so.
    void move_sub_out_and_back() {
        const std::string away = dir_ / "away";
        ASSERT_EQ(::rename((tree_ + "/sub").c_str(), away.c_str()), 0);
        ASSERT_EQ(::unlink((away + "/old").c_str()), 0);
        test::write_file(away + "/deep/new", 30);
        ASSERT_EQ(::rename(away.c_str(), (tree_ + "/sub").c_str()), 0);
    }

    // Hands the scan thread `dirs` and waits until a batch took them (bounded: the scan thread
    // takes a batch as soon as it is idle).
    void apply(std::vector<ChangedDir> dirs) {
        const std::uint64_t before = service_->live_stats().batches;
        service_->submit_live(std::move(dirs), {}, std::chrono::steady_clock::now());
        const auto deadline = std::chrono::steady_clock::now() + 60s;
        while (std::chrono::steady_clock::now() < deadline) {
            const LiveApplyStats s = service_->live_stats();
            if (s.batches > before && s.pending_dirs == 0) return;
            std::this_thread::yield();
        }
        FAIL() << "no live batch within the deadline";
    }

    std::set<std::string> indexed() {
        storage::Database reader;
        EXPECT_TRUE(storage::Database::open(db_, storage::OpenMode::read_only, &reader));
        storage::Queries q(reader);
        storage::FindQuery all;
        all.limit = 0;
        std::vector<storage::FileRow> rows;
        EXPECT_TRUE(q.find(all, &rows));
        std::set<std::string> out;
        for (const storage::FileRow& r : rows) out.insert(r.path);
        return out;
    }

    // `count` names changed in the tree, none of them "sub" (they sort before it).
    static std::vector<std::string> other_names(std::size_t count) {
        std::vector<std::string> names;
        for (std::size_t i = 0; i < count; ++i) names.push_back("a" + std::to_string(1000 + i));
        return names;
    }

    TempDir dir_;
    std::string tree_ = dir_ / "tree";
    std::string db_ = dir_ / "index.db";
    std::unique_ptr<ScanService> service_;
};

TEST_F(LiveBatches, ControlTheSubdirectoryNamedIsWalkedAgain) {
    move_sub_out_and_back();
    apply({ChangedDir{tree_, {}, {"sub"}}});
    const auto rows = indexed();
    EXPECT_TRUE(rows.contains(tree_ + "/sub/deep/new"));
    EXPECT_FALSE(rows.contains(tree_ + "/sub/old"));
    EXPECT_TRUE(rows.contains(tree_ + "/sub/deep/kept"));
}

TEST_F(LiveBatches, NamesDroppedByTheCoalescerStillWalkTheChangedSubdirectoryAgain) {
    move_sub_out_and_back();
    // As the coalescer hands it over past its bound: whole, kMaxNames names kept, "sub" not.
    apply({ChangedDir{tree_, {}, other_names(monitor::Coalescer::kMaxNames), true}});
    const auto rows = indexed();
    EXPECT_TRUE(rows.contains(tree_ + "/sub/deep/new"));
    EXPECT_FALSE(rows.contains(tree_ + "/sub/old"));
    EXPECT_TRUE(rows.contains(tree_ + "/sub/deep/kept"));
}

TEST_F(LiveBatches, NamesPastTheServiceBoundStillWalkTheChangedSubdirectoryAgain) {
    move_sub_out_and_back();
    // More names than the service keeps, "sub" the last: merge_changed_locked drops it.
    std::vector<ChangedDir> dirs;
    for (int round = 0; round < 3; ++round) {
        std::vector<std::string> names = other_names(200);
        for (std::string& n : names) n += "-" + std::to_string(round);
        dirs.push_back(ChangedDir{tree_, std::move(names), {}});
    }
    dirs.push_back(ChangedDir{tree_, {"sub"}, {}});
    apply(std::move(dirs));
    const auto rows = indexed();
    EXPECT_TRUE(rows.contains(tree_ + "/sub/deep/new"));
    EXPECT_FALSE(rows.contains(tree_ + "/sub/old"));
}

// A directory named by a change is reached through a symlink now (its parent was swapped for
// one): the named stat fails with ELOOP. Its parent is re-listed whole, then its parent's, until
// a listing sees the symlink: the old rows go, and nothing of the symlink's target comes in.
TEST_F(LiveBatches, ADirectoryReachedThroughASymlinkNowHasItsParentsReListed) {
    const std::string target = dir_ / "target";
    std::filesystem::create_directories(target + "/deep");
    test::write_file(target + "/deep/secret", 40);
    ASSERT_EQ(::rename((tree_ + "/sub").c_str(), (dir_ / "elsewhere").c_str()), 0);
    ASSERT_EQ(::symlink(target.c_str(), (tree_ + "/sub").c_str()), 0);
    // Only the deep directory's change reaches the index (the tree's own is not given).
    service_->submit_live({ChangedDir{tree_ + "/sub/deep", {"kept"}, {}}}, {},
                          std::chrono::steady_clock::now());
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    std::set<std::string> rows;
    while (std::chrono::steady_clock::now() < deadline) {
        rows = indexed();
        ASSERT_FALSE(rows.contains(tree_ + "/sub/deep/secret")) << "the target was listed";
        if (!rows.contains(tree_ + "/sub/deep/kept")) break;
        std::this_thread::yield();
    }
    EXPECT_FALSE(rows.contains(tree_ + "/sub/deep/kept")) << "the old rows stayed";
    EXPECT_FALSE(rows.contains(tree_ + "/sub/deep"));
    EXPECT_TRUE(rows.contains(tree_ + "/sub")) << "the symlink itself is indexed";
    EXPECT_FALSE(rows.contains(tree_ + "/sub/deep/secret"));
}

// Fairness: a directory whose whole re-listing is large is re-listed in a batch of its own,
// taking turns with the other directories, which then never wait for it within their batch.
TEST_F(LiveBatches, ALargeWholeReListingRunsInABatchOfItsOwn) {
    const std::string large = tree_ + "/large";
    ASSERT_EQ(::mkdir(large.c_str(), 0755), 0);
    for (std::size_t i = 0; i < ScanService::kLargeListing; ++i) {
        test::write_file(large + "/f" + std::to_string(i), 1);
    }
    apply({ChangedDir{tree_, {"large"}, {}}});  // indexed, walked as a new subtree
    apply({ChangedDir{large, {}, {}}});         // its first whole re-listing: known large now
    test::write_file(large + "/storm", 1);
    test::write_file(tree_ + "/sub/quiet", 1);
    const std::uint64_t before = service_->live_stats().batches;
    service_->submit_live({ChangedDir{large, {}, {}}, ChangedDir{tree_ + "/sub", {"quiet"}, {}}},
                          {}, std::chrono::steady_clock::now());
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline &&
           (service_->live_stats().batches < before + 2 || service_->live_stats().pending_dirs)) {
        std::this_thread::yield();
    }
    const auto rows = indexed();
    EXPECT_TRUE(rows.contains(large + "/storm"));
    EXPECT_TRUE(rows.contains(tree_ + "/sub/quiet"));
    EXPECT_EQ(service_->live_stats().batches, before + 2) << "one batch each";
}

}  // namespace
}  // namespace wsindex::daemon
