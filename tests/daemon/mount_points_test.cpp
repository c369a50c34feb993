// mount_points_below: the mount points strictly below a root, parsed from mountinfo text.
#include "daemon/mount_points.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace wsindex::daemon {
namespace {

// Lines as the kernel writes them (proc(5)): id parent major:minor root mount-point options...
constexpr const char* kMountinfo =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "30 22 0:25 / /home rw,relatime shared:2 - ext4 /dev/sda2 rw\n"
    "31 30 0:26 / /home/alice/mnt rw - tmpfs tmpfs rw\n"
    "32 30 0:27 / /home/al rw - tmpfs tmpfs rw\n"
    "33 22 0:28 / /homework rw - tmpfs tmpfs rw\n"
    "34 30 0:29 / /home/with\\040space\\011tab\\012newline\\134back rw - tmpfs tmpfs rw\n"
    "35 30 0:30 /sub /home/bind rw - ext4 /dev/sda2 rw\n"
    "short line\n"
    "\n"
    "36 30 0:31 / /home/last rw - tmpfs tmpfs rw";  // no newline at the end

TEST(MountPoints, StrictlyBelowTheRootInMountinfoOrder) {
    const std::vector<std::string> expected = {"/home/alice/mnt", "/home/al",
                                               "/home/with space\ttab\nnewline\\back", "/home/bind",
                                               "/home/last"};
    EXPECT_EQ(mount_points_below(kMountinfo, "/home"), expected);
}

TEST(MountPoints, TheRootItselfAndItsNeighboursAreNotBelowIt) {
    EXPECT_EQ(mount_points_below(kMountinfo, "/home/alice"),
              std::vector<std::string>{"/home/alice/mnt"});
    EXPECT_TRUE(mount_points_below(kMountinfo, "/home/alice/mnt").empty());
    EXPECT_TRUE(mount_points_below(kMountinfo, "/home/a").empty()) << "/home/al is not below it";
    const auto all = mount_points_below(kMountinfo, "/");
    EXPECT_EQ(all.size(), 7u) << "every mount but / itself";
    EXPECT_EQ(all.front(), "/home");
}

TEST(MountPoints, AnIncompleteEscapeIsKeptAsItIs) {
    const std::string text = "40 22 0:40 / /m/a\\04 rw - tmpfs tmpfs rw\n";
    EXPECT_EQ(mount_points_below(text, "/m"), std::vector<std::string>{"/m/a\\04"});
}

TEST(MountPoints, TheProcessesOwnMountinfoHoldsNothingBelowANewDirectory) {
    // /proc/self/mountinfo is read (the root of the process is "/"): nothing lies below a path
    // that does not exist.
    EXPECT_TRUE(mount_points_below(std::string("/nonexistent-wsindex-test-dir")).empty());
    EXPECT_FALSE(mount_points_below(std::string("/")).empty() &&
                 mount_points_below(std::string("/proc")).empty())
        << "/proc has mounts below it on Linux (or / has /proc)";
}

}  // namespace
}  // namespace wsindex::daemon
