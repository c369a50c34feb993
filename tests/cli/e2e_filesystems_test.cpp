// The live index on the file systems users have: the convergence storm (e2e_convergence_test.cpp)
// on xfs, btrfs (a root with a subvolume and a snapshot below it, and a root inside a
// subvolume), tmpfs, overlayfs (changes made through the overlay) and ext4, each on a loop image or
// mount made by the test. After the storm the index equals a fresh scan (files, every column;
// dir_totals; find -0), and it got there from its events alone: no batch failed and fell back to a
// rescan.
//
// Directories' own sizes change with their entries on xfs, btrfs and tmpfs (not on ext4 with
// short names): these runs are what showed a directory's own size change counted twice.
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "tests/cli/support/convergence.hpp"
#include "tests/cli/support/process.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::cli::test {
namespace {

enum class Fs { kExt4, kXfs, kBtrfs, kBtrfsSubvolume, kTmpfs, kOverlay };

const char* fs_name(Fs fs) {
    switch (fs) {
        case Fs::kExt4:
            return "ext4";
        case Fs::kXfs:
            return "xfs";
        case Fs::kBtrfs:
            return "btrfs";
        case Fs::kBtrfsSubvolume:
            return "btrfs_subvolume";
        case Fs::kTmpfs:
            return "tmpfs";
        case Fs::kOverlay:
            return "overlay";
    }
    return "?";
}

// One mounted file system for a test: a loop image (sparse, in the scratch directory) made with
// mkfs, or a tmpfs. Unmounted when the test ends, before the scratch directory is removed.
class TestMount {
  public:
    // "" when mounted, else why not.
    std::string mount(Fs fs, const std::string& scratch) {
        dir_ = scratch + "/mnt";
        if (::mkdir(dir_.c_str(), 0755) != 0) return "mkdir " + dir_ + ": " + std::strerror(errno);
        if (fs == Fs::kTmpfs) {
            if (::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=512m,mode=0755") != 0) {
                return std::string("mount tmpfs: ") + std::strerror(errno);
            }
            mounted_ = true;
            return {};
        }
        if (fs == Fs::kOverlay) {
            // The tree is made through the overlay (in its upper directory); lower holds one
            // directory that the storm's copy-ups and whiteouts meet.
            for (const char* d : {"/lower", "/lower/from_lower", "/upper", "/work"}) {
                if (::mkdir((scratch + d).c_str(), 0755) != 0) {
                    return std::string("mkdir ") + d + ": " + std::strerror(errno);
                }
            }
            const std::string options = "lowerdir=" + scratch + "/lower,upperdir=" + scratch +
                                        "/upper,workdir=" + scratch + "/work";
            if (::mount("overlay", dir_.c_str(), "overlay", 0, options.c_str()) != 0) {
                return std::string("mount overlay: ") + std::strerror(errno);
            }
            mounted_ = true;
            return {};
        }
        const std::string image = scratch + "/fs.img";
        std::vector<std::string> mkfs_args;
        switch (fs) {
            case Fs::kExt4:
                mkfs_args = {"/usr/sbin/mkfs.ext4", "-q", "-F", image};
                break;
            case Fs::kXfs:
                mkfs_args = {"/usr/sbin/mkfs.xfs", "-q", "-f", image};
                break;
            default:
                mkfs_args = {"/usr/sbin/mkfs.btrfs", "-q", "-f", image};
                break;
        }
        // Sparse: only what the test writes takes disk space.
        const Exit made = run({"/usr/bin/truncate", "-s", "512M", image}, scratch);
        if (made.code != 0) return "truncate: " + made.err;
        const Exit fs_made = run(mkfs_args, scratch);
        if (fs_made.code != 0) return mkfs_args[0] + ": " + fs_made.out + fs_made.err;
        const Exit mounted = run({"/usr/bin/mount", "-o", "loop", image, dir_}, scratch);
        if (mounted.code != 0) return "mount -o loop: " + mounted.err;
        mounted_ = true;
        return {};
    }
    ~TestMount() {
        if (!mounted_) return;
        if (::umount2(dir_.c_str(), 0) != 0) (void)::umount2(dir_.c_str(), MNT_DETACH);
    }
    [[nodiscard]] const std::string& dir() const { return dir_; }

  private:
    std::string dir_;
    bool mounted_ = false;
};

class FileSystemConvergence : public Convergence, public ::testing::WithParamInterface<Fs> {
  protected:
    void SetUp() override {
        if (::geteuid() != 0) {
            WSINDEX_SKIP_OR_FAIL_IN_CI() << "mounting a file system needs root";
            return;
        }
        const std::string why = mount_.mount(GetParam(), scratch_.path());
        if (!why.empty()) {
            WSINDEX_SKIP_OR_FAIL_IN_CI() << "cannot mount " << fs_name(GetParam()) << ": " << why;
            return;
        }
        std::string base = mount_.dir();
        if (GetParam() == Fs::kBtrfs || GetParam() == Fs::kBtrfsSubvolume) {
            // kBtrfs: the root is the top-level subvolume, with a subvolume and a snapshot of it
            // below (other st_dev values inside the root). kBtrfsSubvolume: the root inside a
            // subvolume, which no fanotify file-system mark can watch (EXDEV): inotify follows it.
            const std::string sub = base + "/vol";
            const Exit made =
                run({"/usr/bin/btrfs", "-q", "subvolume", "create", sub}, scratch_.path());
            ASSERT_EQ(made.code, 0) << made.err;
            if (GetParam() == Fs::kBtrfsSubvolume) base = sub;
        }
        make_trees(base);
        if (GetParam() == Fs::kBtrfs) {
            const std::string inner = root_ + "/top0/subvol";
            const Exit made =
                run({"/usr/bin/btrfs", "-q", "subvolume", "create", inner}, scratch_.path());
            ASSERT_EQ(made.code, 0) << made.err;
            ASSERT_EQ(::mkdir((inner + "/d").c_str(), 0755), 0);
            const Exit snap =
                run({"/usr/bin/btrfs", "-q", "subvolume", "snapshot", inner, root_ + "/snap"},
                    scratch_.path());
            ASSERT_EQ(snap.code, 0) << snap.err;
        }
    }

    TestMount mount_;  // after scratch_ (a base member): unmounted before it is removed
};

TEST_P(FileSystemConvergence, LiveIndexConvergesWithoutARescan) {
    if (IsSkipped()) return;
    converge(Mode::kLive, "watch = true\nwatch_settle_ms = 200\nwatch_max_delay_ms = 1000\n");
}

INSTANTIATE_TEST_SUITE_P(Fs, FileSystemConvergence,
                         ::testing::Values(Fs::kExt4, Fs::kXfs, Fs::kBtrfs, Fs::kBtrfsSubvolume,
                                           Fs::kTmpfs, Fs::kOverlay),
                         [](const ::testing::TestParamInfo<Fs>& p) {
                             return std::string(fs_name(p.param));
                         });

}  // namespace
}  // namespace wsindex::cli::test
