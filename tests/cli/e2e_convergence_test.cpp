// Convergence under a mutation storm: after seeded random changes from several processes, the
// daemon's index (files, dir_totals, find -0) equals a fresh scan of the same tree, row for row —
// after an incremental rescan, and (once the daemon runs the change monitor) live, without one.
#include "tests/cli/support/convergence.hpp"
#include "tests/support/prerequisite.hpp"
#include "tests/support/sysctl_override.hpp"

namespace wsindex::cli::test {
namespace {

TEST_F(Convergence, IncrementalRescanAfterAStormEqualsAFreshScan) {
    converge(Mode::kRescan, kNoWatch);
}

TEST_F(Convergence, SubtreeRescansAfterAStormEqualAFreshScan) {
    converge(Mode::kSubtreeRescans, kNoWatch);
}

// Hard links across a subtree rescan's edge: an inode with names in top0 and top1 must count
// once in the root's dir_totals row (files, size and blocks), as in a fresh scan.
TEST_F(Convergence, ASubtreeRescanWithHardLinksAcrossItsEdgeEqualsAFreshScan) {
    converge(Mode::kOneSubtreeRescan, kNoWatch);
}

// The live index: no rescan after the storm; A must converge from the monitor's events alone.

TEST_F(Convergence, LiveFanotifyConvergesWithoutARescan) {
    converge(Mode::kLive,
             "watch = true\nwatch_backend = \"fanotify\"\nwatch_settle_ms = 200\n"
             "watch_max_delay_ms = 1000\n");
}

TEST_F(Convergence, LiveFanotifyConvergesAfterTheQueueOverflows) {
    // The limit applies to groups created after the write: set before daemon A starts. 64
    // events is far fewer than the storm makes, so the queue overflows and the daemon must
    // recover (an incremental rescan of the root) on its own.
    const wsindex::test::SysctlOverride limit("/proc/sys/fs/fanotify/max_queued_events", "64");
    if (!limit.ok()) {
        WSINDEX_SKIP_OR_FAIL_IN_CI() << "cannot write /proc/sys/fs/fanotify/max_queued_events";
    }
    rescans_allowed_ = true;
    converge(Mode::kLive, "watch = true\nwatch_backend = \"fanotify\"\n");
}

TEST_F(Convergence, LiveInotifyConvergesWithoutARescan) {
    converge(Mode::kLive, "watch = true\nwatch_backend = \"inotify\"\n");
}

}  // namespace
}  // namespace wsindex::cli::test
