// Resource bounds: across consecutive scans the daemon's open descriptors return to their
// baseline and its resident memory does not grow beyond a margin. CI: 10 scans of a 5k-entry
// tree (WSINDEX_REL_SCANS=N for more; bench/reliability/scan_loop.sh is the long run).
#include <cstdio>
#include <sstream>
#include <thread>

#include "tests/reliability/support/fixture.hpp"
#include "tests/reliability/support/proc_stats.hpp"

namespace wsindex::reliability::test {
namespace {

using cli::test::ScratchDir;

class ResourceBounds : public DaemonFixture {
  protected:
    // Sockets the daemon holds (the listener, plus one per client connection still open).
    int sockets() {
        const std::string targets = fd_targets(daemon_->pid());
        int n = 0;
        for (std::size_t at = targets.find("socket:"); at != std::string::npos;
             at = targets.find("socket:", at + 1)) {
            ++n;
        }
        return n;
    }
    // Waits (deadline 10 s) until only the listening socket is left: the last wsctl's
    // connection is closed on the daemon's side too. False on timeout.
    bool idle() {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (std::chrono::steady_clock::now() < deadline) {
            if (sockets() <= 1) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));  // poll period
        }
        return false;
    }
    // How many of the descriptors of `pid` name `dir` or something below it.
    int fds_into(pid_t pid, const std::string& dir) {
        const std::string targets = fd_targets(pid);
        int n = 0;
        std::istringstream lines(targets);
        for (std::string line; std::getline(lines, line);) {
            const auto arrow = line.find(" -> ");
            if (arrow == std::string::npos) continue;
            const std::string target = line.substr(arrow + 4);
            if (target == dir || target.rfind(dir + "/", 0) == 0) ++n;
        }
        return n;
    }
    // The descriptor count of `pid` once it is back at `want`, or the last count seen when it
    // is not within 10 s. After a scan the daemon's monitor opens the root for a moment (to mark
    // its file system and read its handle; it keeps no fd on it): a count taken then is one too
    // many without a leak. A leaked descriptor never goes, so the deadline still catches it.
    int fds_settled_at(pid_t pid, int want) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        int fds = open_fds(pid);
        while (fds != want && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));  // poll period
            fds = open_fds(pid);
        }
        return fds;
    }
};

TEST_F(ResourceBounds, DescriptorsAndMemoryStayFlatOverConsecutiveScans) {
    ScratchDir tree_dir("res", cli::test::memory_backed_base());
    const std::string root = tree_dir / "tree";
    cli::test::make_big_tree(root, 5'000);
    const auto count = env_number("WSINDEX_REL_SCANS", 10);

    // Warm-up: the first scans open what stays open (read connections, the name index).
    scan(root);
    scan(root);
    ASSERT_TRUE(json_of({"du", root})["entries"].is_array());
    ASSERT_TRUE(idle()) << fd_targets(daemon_->pid());
    const pid_t pid = daemon_->pid();
    // The baseline without a transient descriptor on the tree (see fds_settled_at).
    const int base_fds = fds_settled_at(pid, open_fds(pid) - fds_into(pid, root));
    const long base_rss = status_kib(pid, "VmRSS");
    ASSERT_GT(base_fds, 0);
    ASSERT_GT(base_rss, 0);
    const std::string base_targets = fd_targets(pid);

    int max_fds = base_fds;
    long max_rss = base_rss;
    for (std::uint64_t i = 0; i < count && !HasFailure(); ++i) {
        scan(root);
        ASSERT_TRUE(idle()) << fd_targets(pid);
        const int fds = fds_settled_at(pid, base_fds);
        const long rss = status_kib(pid, "VmRSS");
        max_fds = std::max(max_fds, fds);
        max_rss = std::max(max_rss, rss);
        EXPECT_EQ(fds, base_fds) << "after scan " << i + 1 << ":\n"
                                 << fd_targets(pid) << "baseline:\n"
                                 << base_targets;
    }
    const long hwm = status_kib(pid, "VmHWM");
    const long last_rss = status_kib(pid, "VmRSS");
    std::printf(
        "resource bounds: {\"scans\":%llu,\"fds_base\":%d,\"fds_max\":%d,"
        "\"rss_base_kib\":%ld,\"rss_max_kib\":%ld,\"rss_last_kib\":%ld,\"hwm_kib\":%ld}\n",
        static_cast<unsigned long long>(count), base_fds, max_fds, base_rss, max_rss, last_rss,
        hwm);
#ifndef WSINDEX_SANITIZED
    // Memory: a rescan of the same tree reuses what the warm-up scans allocated; 16 MiB covers
    // allocator noise (arenas of the walker threads), a leak per scan of this tree would not fit.
    // (Sanitizer builds hold freed memory in quarantine: not measured there.)
    EXPECT_LE(last_rss, base_rss + 16 * 1024) << "VmRSS grew from " << base_rss << " KiB";
#endif
}

}  // namespace
}  // namespace wsindex::reliability::test
