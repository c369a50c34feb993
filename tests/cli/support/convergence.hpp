// The convergence check under a mutation storm, shared by the tests that run it on ext4 in a
// scratch directory (e2e_convergence_test.cpp) and on other file systems
// (e2e_filesystems_test.cpp): after seeded random changes from several processes, the daemon's
// index (files, dir_totals, find -0) equals a fresh scan of the same tree, row for row.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/cli/support/daemon.hpp"
#include "tests/cli/support/scratch.hpp"

namespace wsindex::cli::test {

// The configuration line that turns the change monitor off, for the daemons that must change
// the index only by scanning (the reference B, and A in the rescan tests).
inline constexpr const char* kNoWatch = "watch = false\n";

enum class Mode {
    kRescan,  // after the storm, `wsctl scan ROOT --wait` on the daemon that indexed it before
    // The storm stays below the root's subdirectories, and each of them is rescanned on its own
    // (subtree rescans: what a live update does to one directory, hard links across the edges).
    kSubtreeRescans,
    // The storm stays below one subdirectory (top1), changes only names, and links to files in
    // another (top0); only top1 is rescanned. top0's rows of the linked files keep their old
    // nlink and ctime (nobody rescanned them), so `files` is compared below top1 only;
    // `dir_totals` and find -0 over the whole root.
    kOneSubtreeRescan,
    kLive,  // no rescan: the daemon's change monitor must catch up on its own
};

class Convergence : public ::testing::Test {
  protected:
    // The tree (and the directory outside it that the storm moves things to) below the scratch
    // directory; a test on another file system calls make_trees(its mount point) instead.
    void SetUp() override { make_trees(scratch_.path()); }
    void make_trees(const std::string& base);

    // Starts a daemon in scratch/NAME with `config` written to scratch/NAME.conf.
    std::unique_ptr<Daemon> start_daemon(const std::string& name, const std::string& config);
    void scan(Daemon& daemon, const std::string& path);
    std::string find0(Daemon& daemon);
    // "" when the two daemons' indexes of the root agree (views and find -0), else why not.
    // `files_root`: where `files` is compared, when narrower than the root.
    std::string difference(Daemon& a, Daemon& b, const std::string& files_root = {});
    // The directories the storm creates entries in: a few directories of each kind below the
    // root (few, so that the processes often meet on the same paths), and the root itself.
    static std::vector<std::string> storm_dirs(bool with_root);
    // The subtrees that hold every directory of storm_dirs(false).
    static std::vector<std::string> storm_subtrees() { return {"top0", "top1", "odd"}; }

    // The whole test: index, storm, then compare daemon A with a fresh scan (daemon B).
    // `watch_config` holds the top-level watch keys for daemon A. In Mode::kLive it also checks
    // that A converged from its events alone: no batch failed and fell back to a rescan, and the
    // root was scanned once (the first scan).
    void converge(Mode mode, const std::string& watch_config);
    std::size_t count_scans(Daemon& daemon);
    void expect_no_fallback_rescans(Daemon& daemon, std::size_t scans_before);

    // Mode::kLive: whether the daemon may rescan to converge (after a queue overflow it must).
    bool rescans_allowed_ = false;
    ScratchDir scratch_{"conv"};
    std::string root_;
    std::string outside_;
};

}  // namespace wsindex::cli::test
