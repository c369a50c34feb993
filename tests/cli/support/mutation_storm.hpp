// A seeded random mutation storm on a directory tree, run by several processes at once: the
// changes a live index must follow (creates, writes, truncations, deletes, renames within, across
// and over the edge of the root, deep mkdir -p, rm -r, chmod, chown, touch -d, hard links,
// symlinks, odd names).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace wsindex::cli::test {

struct StormOptions {
    std::string root;     // the indexed tree (exists)
    std::string outside;  // a directory beside it, same file system, not indexed (exists)
    // Directories below `root` (relative, "" for root itself) that the storm creates entries
    // in; it never removes or renames them, only the entries it made (and those already there
    // with the names it uses, e.g. "file7.dat").
    std::vector<std::string> dirs;
    // Directories below `root` (relative) the storm only reads: when not empty, half of the hard
    // links across directories are made to one of their files "file<N>.dat" (N < 100), so
    // that an inode gains names outside the directories the storm changes.
    std::vector<std::string> link_sources;
    // Only names change: no write, truncate, chmod, chown or touch, and creates never open an
    // existing file. An inode linked from elsewhere then keeps its size and attributes (only
    // its link count and ctime change), so rows outside the storm's directories stay current.
    bool names_only = false;
    // When set, child i logs each operation (times, kind, outcome, paths) to LOG_PATH.i.
    std::string log_path;
    std::uint64_t seed = 1;
    int processes = 3;
    int ops_per_process = 300;
    uid_t other_uid = 65534;  // chown target besides root (nobody)
    gid_t other_gid = 65534;
};

// What the storm did, summed over its processes.
struct StormResult {
    std::uint64_t ops = 0;     // operations attempted
    std::uint64_t failed = 0;  // of them, failed (ENOENT and the like, from races and chance)
    std::map<std::string, std::uint64_t> done_by_op;    // successful operations per kind
    std::map<std::string, std::uint64_t> failed_by_op;  // failed operations per kind
    std::map<int, std::uint64_t> failed_by_errno;
    std::string error;  // a process that crashed or could not report; "" if all went well

    // "seed S: N ops, F failed; create 40/3, rename-out 12/5, ...; ENOENT 60, ..." (done/failed).
    [[nodiscard]] std::string summary(std::uint64_t seed) const;
};

// Forks options.processes children; child i runs ops_per_process operations drawn from a
// generator seeded with (seed, i), on paths drawn from a fixed pool (so the sequence of calls
// is the same for a seed; only their outcomes depend on how the children interleave), reports
// its counts through a pipe and exits. Returns when every child has exited.
StormResult run_mutation_storm(const StormOptions& options);

}  // namespace wsindex::cli::test
