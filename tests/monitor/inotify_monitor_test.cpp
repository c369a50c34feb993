// InotifyMonitor on a real tmpfs: changes reported by directory path, new and moved
// subdirectories followed, deleted root, watch budget, queue overflow.
#include "monitor/inotify_monitor.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>

#include "support/monitor_support.hpp"

namespace wsindex::monitor {
namespace {

using test::RecordingSink;

class InotifyTest : public test::MonitorTest<InotifyMonitor> {
  protected:
    void SetUp() override {
        MonitorTest::SetUp();
        if (HasFatalFailure() || IsSkipped()) return;
        for (const char* d : {"/a", "/b", "/a/sub"}) {
            ASSERT_EQ(::mkdir((root_ + d).c_str(), 0755), 0) << d;
        }
        ASSERT_EQ(test::write_file(root_ + "/a/f", "x"), "");
        start({});
    }

    void start(InotifyMonitor::Options options) {
        mon_ = std::make_unique<InotifyMonitor>(sink_, options);
        ASSERT_TRUE(mon_->open());
        ASSERT_TRUE(mon_->add_root(root_));
    }
};

TEST_F(InotifyTest, EveryDirectoryIsWatched) { EXPECT_EQ(mon_->watch_count(), 4u); }

TEST_F(InotifyTest, CreateWriteChmodDeleteMarkTheDirectory) {
    ASSERT_EQ(test::write_file(root_ + "/a/sub/new", "data"), "");
    wait_for([&] { return sink_.has_path(root_ + "/a/sub"); });
    sink_.clear();
    ASSERT_EQ(::chmod((root_ + "/a/f").c_str(), 0600), 0);
    wait_for([&] { return sink_.has_path(root_ + "/a"); });
    sink_.clear();
    ASSERT_EQ(::unlink((root_ + "/a/f").c_str()), 0);
    wait_for([&] { return sink_.has_path(root_ + "/a"); });
    EXPECT_FALSE(sink_.has_path(root_ + "/b"));
}

TEST_F(InotifyTest, RenameAcrossDirectoriesMarksBoth) {
    ASSERT_EQ(::rename((root_ + "/a/f").c_str(), (root_ + "/b/g").c_str()), 0);
    wait_for([&] { return sink_.has_path(root_ + "/a") && sink_.has_path(root_ + "/b"); });
}

TEST_F(InotifyTest, NewSubdirectoryIsWatched) {
    const std::string dir = root_ + "/b/odd\nname\xff";
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    wait_for([&] { return sink_.has_path(root_ + "/b"); });
    EXPECT_EQ(mon_->watch_count(), 5u);
    ASSERT_EQ(test::write_file(dir + "/f", ""), "");
    wait_for([&] { return sink_.has_path(dir); });
    sink_.clear();
    ASSERT_EQ(::unlink((dir + "/f").c_str()), 0);
    ASSERT_EQ(::rmdir(dir.c_str()), 0);
    wait_for([&] { return sink_.has_path(root_ + "/b") && mon_->watch_count() == 4u; });
}

TEST_F(InotifyTest, MovedDirectoryIsFollowedUnderItsNewPath) {
    ASSERT_EQ(::rename((root_ + "/a").c_str(), (root_ + "/b/c").c_str()), 0);
    wait_for([&] { return sink_.has_path(root_ + "/b"); });
    sink_.clear();
    ASSERT_EQ(test::write_file(root_ + "/b/c/sub/x", ""), "");
    wait_for([&] { return sink_.has_path(root_ + "/b/c/sub"); });
    EXPECT_FALSE(sink_.has_path(root_ + "/a/sub"));
}

TEST_F(InotifyTest, DirectoryMovedOutOfTheRootIsForgotten) {
    ASSERT_EQ(::rename((root_ + "/a").c_str(), (fs_->path() + "/out").c_str()), 0);
    wait_for([&] { return sink_.has_path(root_) && mon_->watch_count() == 2u; });
    sink_.clear();
    ASSERT_EQ(test::write_file(fs_->path() + "/out/sub/x", ""), "");
    ASSERT_EQ(test::write_file(root_ + "/b/after", ""), "");
    wait_for([&] { return sink_.has_path(root_ + "/b"); });
    for (const auto& d : sink_.dirs) EXPECT_EQ(d.path, root_ + "/b");
}

// Read in one pass: a directory moved out, and another moved to its path. The newcomer keeps
// its watches; the one that left loses its own.
TEST_F(InotifyTest, ADirectoryMovedToThePathOfOneThatLeftIsWatched) {
    const std::string other = fs_->path() + "/other";
    ASSERT_EQ(::mkdir(other.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((other + "/deep").c_str(), 0755), 0);
    ASSERT_EQ(::rename((root_ + "/a").c_str(), (fs_->path() + "/out").c_str()), 0);
    ASSERT_EQ(::rename(other.c_str(), (root_ + "/a").c_str()), 0);
    // root, b, the new a and a/deep
    wait_for([&] { return sink_.has_path(root_) && mon_->watch_count() == 4u; });
    sink_.clear();
    ASSERT_EQ(test::write_file(root_ + "/a/deep/x", ""), "");
    ASSERT_EQ(test::write_file(fs_->path() + "/out/sub/y", ""), "");
    wait_for([&] { return sink_.has_path(root_ + "/a/deep"); });
    EXPECT_FALSE(sink_.has_path(root_ + "/a/sub"));
}

// Read in one pass: a directory moved out of the root and back (two moves, two cookies).
TEST_F(InotifyTest, ADirectoryMovedOutAndBackIsStillWatched) {
    ASSERT_EQ(::rename((root_ + "/a").c_str(), (fs_->path() + "/out").c_str()), 0);
    ASSERT_EQ(::rename((fs_->path() + "/out").c_str(), (root_ + "/a").c_str()), 0);
    wait_for([&] { return sink_.has_path(root_) && mon_->watch_count() == 4u; });
    sink_.clear();
    ASSERT_EQ(test::write_file(root_ + "/a/sub/x", ""), "");
    wait_for([&] { return sink_.has_path(root_ + "/a/sub"); });
}

TEST_F(InotifyTest, DirectoryMovedIntoTheRootIsWatched) {
    const std::string outside = fs_->path() + "/in";
    ASSERT_EQ(::mkdir(outside.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((outside + "/deep").c_str(), 0755), 0);
    ASSERT_EQ(::rename(outside.c_str(), (root_ + "/b/in").c_str()), 0);
    wait_for([&] { return sink_.has_path(root_ + "/b") && mon_->watch_count() == 6u; });
    ASSERT_EQ(test::write_file(root_ + "/b/in/deep/x", ""), "");
    wait_for([&] { return sink_.has_path(root_ + "/b/in/deep"); });
}

TEST_F(InotifyTest, DeletedRootIsReported) {
    ASSERT_EQ(::unlink((root_ + "/a/f").c_str()), 0);
    for (const char* d : {"/a/sub", "/a", "/b", ""}) {
        ASSERT_EQ(::rmdir((root_ + d).c_str()), 0) << d;
    }
    wait_for([&] { return sink_.has_root_event(RootEventKind::root_deleted, root_); });
}

TEST_F(InotifyTest, OverBudgetRootNeedsPeriodicRescans) {
    sink_.clear();
    start({.max_watches = 2});
    EXPECT_TRUE(sink_.has_root_event(RootEventKind::needs_periodic, root_));
    EXPECT_EQ(mon_->watch_count(), 2u);
}

TEST_F(InotifyTest, QueueOverflowIsReportedForTheRoot) {
    {
        test::SysctlOverride limit("/proc/sys/fs/inotify/max_queued_events", "16");
        ASSERT_TRUE(limit.ok()) << "cannot lower max_queued_events";
        start({});
    }
    for (int i = 0; i < 200; ++i) {
        ASSERT_EQ(test::write_file(root_ + "/a/n" + std::to_string(i), ""), "");
    }
    wait_for([&] { return sink_.has_root_event(RootEventKind::overflow, root_); });
    EXPECT_GE(mon_->stats().overflows, 1u);
}

}  // namespace
}  // namespace wsindex::monitor
