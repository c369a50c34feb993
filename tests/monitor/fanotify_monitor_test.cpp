// FanotifyMonitor on a real tmpfs: every kind of change marks the right directory; roots deleted;
// unknown handles resolved to paths; events outside the roots dropped; queue overflow.
#include "monitor/fanotify_monitor.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "support/monitor_support.hpp"

namespace wsindex::monitor {
namespace {

using test::RecordingSink;

class FanotifyTest : public test::MonitorTest<FanotifyMonitor> {
  protected:
    void SetUp() override {
        MonitorTest::SetUp();
        if (HasFatalFailure() || IsSkipped()) return;
        ASSERT_EQ(::mkdir((root_ + "/a").c_str(), 0755), 0);
        ASSERT_EQ(::mkdir((root_ + "/b").c_str(), 0755), 0);
        ASSERT_EQ(test::write_file(root_ + "/a/f", "x"), "");
        start();
    }

    // Opens the group (call again after changing the queue limit: it is read at creation).
    void start() {
        mon_ = std::make_unique<FanotifyMonitor>(sink_);
        if (auto s = mon_->open(); !s) {
            if (s.code().value() != EPERM) FAIL() << s.to_string();
            WSINDEX_SKIP_OR_FAIL_IN_CI() << s.to_string();
        }
        ASSERT_TRUE(mon_->add_root(root_)) << "add_root";
        ASSERT_TRUE(mon_->register_path(root_, kRoot));
        ASSERT_TRUE(mon_->register_path(root_ + "/a", kA));
        ASSERT_TRUE(mon_->register_path(root_ + "/b", kB));
    }

    static constexpr DirKey kRoot = 1, kA = 2, kB = 3;
};

TEST_F(FanotifyTest, CreateMarksTheParent) {
    ASSERT_EQ(test::write_file(root_ + "/a/new", ""), "");
    wait_for([&] { return sink_.has_key(kA); });
    EXPECT_FALSE(sink_.has_key(kB));
}

TEST_F(FanotifyTest, DeleteMarksTheParent) {
    ASSERT_EQ(::unlink((root_ + "/a/f").c_str()), 0);
    wait_for([&] { return sink_.has_key(kA); });
}

TEST_F(FanotifyTest, WriteAndChmodMarkTheParent) {
    ASSERT_EQ(test::write_file(root_ + "/a/f", "more bytes"), "");
    wait_for([&] { return sink_.has_key(kA); });
    sink_.clear();
    ASSERT_EQ(::chmod((root_ + "/a/f").c_str(), 0600), 0);
    wait_for([&] { return sink_.has_key(kA); });
}

TEST_F(FanotifyTest, RenameWithinAndAcrossDirectories) {
    EXPECT_TRUE(mon_->has_rename());  // Linux 5.17+: CI and this machine run 6.x
    ASSERT_EQ(::rename((root_ + "/a/f").c_str(), (root_ + "/a/g").c_str()), 0);
    wait_for([&] { return sink_.has_key(kA); });
    sink_.clear();
    ASSERT_EQ(::rename((root_ + "/a/g").c_str(), (root_ + "/b/g").c_str()), 0);
    wait_for([&] { return sink_.has_key(kA) && sink_.has_key(kB); });
}

TEST_F(FanotifyTest, MkdirRmdirAndChmodOfADirectory) {
    ASSERT_EQ(::mkdir((root_ + "/a/d").c_str(), 0755), 0);
    wait_for([&] { return sink_.has_key(kA); });
    sink_.clear();
    ASSERT_EQ(::chmod((root_ + "/b").c_str(), 0700), 0);
    wait_for([&] { return sink_.has_key(kB); });  // a change of the directory itself
    sink_.clear();
    ASSERT_EQ(::rmdir((root_ + "/a/d").c_str()), 0);
    wait_for([&] { return sink_.has_key(kA); });
    EXPECT_TRUE(sink_.roots.empty());
}

TEST_F(FanotifyTest, OddNamesAreReportedInTheirDirectory) {
    const std::string newline = root_ + "/a/line\nbreak";
    const std::string invalid = root_ + "/b/bad\xff\xfe";
    ASSERT_EQ(test::write_file(newline, ""), "");
    ASSERT_EQ(test::write_file(invalid, ""), "");
    wait_for([&] { return sink_.has_key(kA) && sink_.has_key(kB); });
}

TEST_F(FanotifyTest, UnknownDirectoryIsResolvedToItsPath) {
    const std::string dir = root_ + "/a/odd\nname\xff";
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    wait_for([&] { return sink_.has_key(kA); });
    sink_.clear();
    ASSERT_EQ(test::write_file(dir + "/f", ""), "");
    wait_for([&] { return sink_.has_path(dir); });
    EXPECT_GE(mon_->stats().slow_path, 1u);
    for (const auto& r : sink_.roots) ADD_FAILURE() << r.detail;
}

TEST_F(FanotifyTest, RemovedUnknownSubtreeRaisesNoRootEvent) {
    // Events name directories that are gone by the time they are read: stale handles, dropped,
    // because the removal of each is reported in its parent (here the registered a/).
    std::string dir = root_ + "/a/t";
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((dir + "/u").c_str(), 0755), 0);
    ASSERT_EQ(test::write_file(dir + "/u/f", ""), "");
    ASSERT_EQ(::unlink((dir + "/u/f").c_str()), 0);
    ASSERT_EQ(::rmdir((dir + "/u").c_str()), 0);
    ASSERT_EQ(::rmdir(dir.c_str()), 0);
    ASSERT_EQ(test::write_file(root_ + "/b/after", ""), "");
    wait_for([&] { return sink_.has_key(kB); });
    EXPECT_TRUE(sink_.has_key(kA));
    EXPECT_TRUE(sink_.roots.empty()) << to_string(sink_.roots.at(0).kind);
    EXPECT_GE(mon_->stats().stale_handles, 1u);
}

TEST_F(FanotifyTest, ANewNameAlsoReportsTheInodeWhoseLinkCountChanged) {
    // `ln a/f b/g`: b names g, and the link count event of the inode must reach the client
    // as the inode too. If b leaves the roots before the client stats b/g, only the inode
    // leads it to a/f, whose nlink and ctime changed without an event naming it.
    struct stat st {};
    ASSERT_EQ(::lstat((root_ + "/a/f").c_str(), &st), 0);
    const InodeId inode{static_cast<std::uint64_t>(st.st_dev),
                        static_cast<std::uint64_t>(st.st_ino)};
    ASSERT_EQ(::link((root_ + "/a/f").c_str(), (root_ + "/b/g").c_str()), 0);
    wait_for([&] {
        for (const auto& d : sink_.dirs) {
            if (d.inode == inode) return true;
        }
        return false;
    });
    EXPECT_TRUE(sink_.has_key(kB));
    EXPECT_EQ(mon_->stats().linked_outside, 0u) << "every name is inside the root";
}

TEST_F(FanotifyTest, ChangesOutsideTheRootsAreDropped) {
    const std::string outside = fs_->path() + "/outside";
    ASSERT_EQ(::mkdir(outside.c_str(), 0755), 0);
    ASSERT_EQ(test::write_file(outside + "/f", ""), "");
    // A change inside afterwards: once it is seen, the outside ones were processed before it.
    ASSERT_EQ(test::write_file(root_ + "/a/after", ""), "");
    wait_for([&] { return sink_.has_key(kA); });
    for (const auto& d : sink_.dirs) EXPECT_TRUE(d.key.has_value()) << d.path;
    EXPECT_GE(mon_->stats().outside_roots, 1u);
}

TEST_F(FanotifyTest, DeletedRootIsReported) {
    ASSERT_EQ(::unlink((root_ + "/a/f").c_str()), 0);
    for (const char* d : {"/a", "/b", ""}) ASSERT_EQ(::rmdir((root_ + d).c_str()), 0) << d;
    wait_for([&] { return sink_.has_root_event(RootEventKind::root_deleted, root_); });
}

TEST_F(FanotifyTest, MovedRootIsReported) {
    ASSERT_EQ(::rename(root_.c_str(), (fs_->path() + "/elsewhere").c_str()), 0);
    wait_for([&] { return sink_.has_root_event(RootEventKind::root_moved, root_); });
}

TEST_F(FanotifyTest, UnmountedRootIsReportedByCheckRoots) {
    const std::string mnt = root_ + "/a";
    ASSERT_EQ(::unlink((mnt + "/f").c_str()), 0);
    // A root that is a mount point of its own, then unmounted under the monitor.
    const std::string inner = fs_->path() + "/inner";
    ASSERT_EQ(::mkdir(inner.c_str(), 0755), 0);
    ASSERT_EQ(::mount("wsinner", inner.c_str(), "tmpfs", 0, "size=1m"), 0) << std::strerror(errno);
    ASSERT_TRUE(mon_->add_root(inner));
    mon_->check_roots();
    EXPECT_TRUE(sink_.roots.empty());
    ASSERT_EQ(::umount2(inner.c_str(), MNT_DETACH), 0);
    mon_->check_roots();
    EXPECT_TRUE(sink_.has_root_event(RootEventKind::mark_lost, inner));
    EXPECT_FALSE(sink_.has_root_event(RootEventKind::mark_lost, root_));
}

TEST_F(FanotifyTest, QueueOverflowIsReportedForTheRoot) {
    {
        // The limit is read when the group is created: lower it, recreate, restore.
        test::SysctlOverride limit("/proc/sys/fs/fanotify/max_queued_events", "16");
        ASSERT_TRUE(limit.ok()) << "cannot lower max_queued_events";
        start();
    }
    for (int i = 0; i < 200; ++i) {
        ASSERT_EQ(test::write_file(root_ + "/a/n" + std::to_string(i), ""), "");
    }
    wait_for([&] { return sink_.has_root_event(RootEventKind::overflow, root_); });
    EXPECT_GE(mon_->stats().overflows, 1u);
}

}  // namespace
}  // namespace wsindex::monitor
