// Disk full through the daemon: the index lives on a small tmpfs (mounted in a private mount
// namespace, so it cannot outlive the test process); a scan runs out of space. It must fail with
// a clear error (wsctl scan, wsctl scans, the log), leave the previous index intact and
// queryable, and leave the daemon serving; once a filler file is deleted the next scan succeeds.
// tests/storage/failure_test.cpp covers the writer alone; this is the daemon's path (its scan
// thread, its error reporting, its read connections on the full file system).
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "tests/reliability/support/fixture.hpp"
#include "tests/reliability/support/index_dump.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::reliability::test {
namespace {

using cli::test::ScratchDir;

// Space left free on the tmpfs when the filler is written: the big scan needs far more.
constexpr std::uint64_t kLeftFree = 192 * 1024;

class DiskFull : public DaemonFixture {
  protected:
    void SetUp() override {
        if (::geteuid() != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "mounting a tmpfs needs root";
        // A private mount namespace for this process and the daemon it starts: the tmpfs goes
        // away with them whatever happens.
        ASSERT_EQ(::unshare(CLONE_NEWNS), 0) << std::strerror(errno);
        ASSERT_EQ(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr), 0)
            << std::strerror(errno);
        mnt_ = scratch_ / "mnt";
        ASSERT_EQ(::mkdir(mnt_.c_str(), 0700), 0);
        ASSERT_EQ(::mount("tmpfs", mnt_.c_str(), "tmpfs", 0, "size=16m,mode=0700"), 0)
            << std::strerror(errno);
        mounted_ = true;
        db_path_ = mnt_ + "/index.db";
        start_daemon();
    }
    void TearDown() override {
        if (daemon_) daemon_->stop();
        if (mounted_) ::umount2(mnt_.c_str(), MNT_DETACH);
    }

    // Fills the tmpfs up to kLeftFree bytes free with one file; its size, or 0 on failure.
    std::uint64_t fill(const std::string& path) {
        struct statvfs fs {};
        if (::statvfs(mnt_.c_str(), &fs) != 0) return 0;
        const std::uint64_t free_bytes = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
        if (free_bytes <= kLeftFree) return 0;
        const std::uint64_t size = free_bytes - kLeftFree;
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0) return 0;
        // Real pages (tmpfs does not reserve for a sparse file).
        const bool ok = ::posix_fallocate(fd, 0, static_cast<off_t>(size)) == 0;
        ::close(fd);
        return ok ? size : 0;
    }

    std::string mnt_;
    bool mounted_ = false;
};

TEST_F(DiskFull, AScanOutOfSpaceFailsClearlyAndTheDaemonKeepsServing) {
    const std::string small = scratch_ / "small";
    cli::test::make_odd_tree(small);
    scan(small);
    const IndexDump before = dump_index(daemon_->db());
    ASSERT_EQ(before.integrity, "ok") << describe(before);
    const auto du_before = json_of({"du", small, "--depth", "1"});
    const auto find_before = find0_under(small);
    ASSERT_FALSE(find_before.empty());

    ScratchDir big_dir("full", cli::test::memory_backed_base());
    const std::string big = big_dir / "tree";
#ifdef WSINDEX_SANITIZED
    cli::test::make_big_tree(big, 10'000);
#else
    cli::test::make_big_tree(big, 20'000);
#endif
    const std::string filler = mnt_ + "/filler";
    ASSERT_GT(fill(filler), 0u) << "could not fill " << mnt_;

    // The scan that cannot fit.
    const auto failed = ctl({"scan", big, "--wait"});
    EXPECT_NE(failed.code, 0) << failed.out;
    EXPECT_NE((failed.out + failed.err).find("full"), std::string::npos)
        << "wsctl scan: " << failed.out << failed.err;
    ASSERT_TRUE(daemon_->running()) << "wsindexd died on a full disk; log:\n" << log();
    std::printf("disk full: wsctl scan said: %s%s", failed.out.c_str(), failed.err.c_str());

    // Still serving, on the full file system: status, scans, du, find.
    const auto status = ctl({"status", "--json"});
    EXPECT_EQ(status.code, 0) << status.err;
    const auto history = scans();
    ASSERT_GE(history.size(), 2u) << history.dump();
    EXPECT_EQ(history[0].value("state", ""), "failed") << history[0].dump();
    EXPECT_NE(history[0].value("error", "").find("full"), std::string::npos) << history[0].dump();
    const auto human = ctl({"scans"});
    EXPECT_NE(human.out.find("full"), std::string::npos) << "wsctl scans:\n" << human.out;
    EXPECT_NE(log().find("full"), std::string::npos) << "log:\n" << log();
    EXPECT_EQ(json_of({"du", small, "--depth", "1"}), du_before);
    EXPECT_TRUE(find0_under(small) == find_before);
    const IndexDump during = dump_index(daemon_->db());
    EXPECT_EQ(during.integrity, "ok") << describe(during);
    EXPECT_TRUE(during == before) << describe(during) << "\nbefore: " << describe(before);

    // Space freed: the next scan succeeds and is complete; the old index is still there.
    ASSERT_EQ(::unlink(filler.c_str()), 0);
    scan(big);
    const auto got = find0_under(big);
    const auto want = cli::test::find_print0(big, scratch_.path(), /*with_root=*/false);
    EXPECT_TRUE(got == want) << cli::test::describe_diff(got, want);
    EXPECT_EQ(json_of({"du", small, "--depth", "1"}), du_before);
    EXPECT_EQ(scans()[0].value("state", ""), "done");
    const IndexDump after = dump_index(daemon_->db());
    EXPECT_EQ(after.integrity, "ok") << describe(after);
    EXPECT_EQ(after.files, before.files + want.size() + 1) << describe(after);
}

}  // namespace
}  // namespace wsindex::reliability::test
