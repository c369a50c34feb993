// Walker: the parallel directory walker — one pool task per directory, one WalkResult per entry.
//
// ## How a walk goes
//
// A task is a directory whose own stat its parent already took. The task opens it relative to
// the parent's descriptor (openat, O_NOFOLLOW|O_DIRECTORY), reads every record with getdents64
// into a per-worker buffer, emits the directory's own record (with the open/read error, if
// any), then stats each entry relative to the directory fd (statx, AT_SYMLINK_NOFOLLOW |
// AT_NO_AUTOMOUNT) and emits one record per entry. A subdirectory gets its id at discovery (one
// relaxed fetch_add per directory, root = 1) and is spawned as a child task, unless it is on
// another file system (one_file_system), pruned, or a loop. A directory with more than
// `split_threshold` entries moves its records into a shared listing and spawns stat chunks of
// `chunk_entries`, so idle workers steal chunks of one huge directory.
//
// ## Descriptors
//
// A directory's fd lives in a reference-counted DirFd. Each pending child task holds a reference
// (so it can openat relative to it) and drops it right after its own open; the fd closes when the
// directory's task and all its children's opens are done. A walk therefore holds about one fd per
// level of the current depth-first path per worker. When the number of open directory fds reaches
// `fd_budget`, new children get no reference: a child then reopens itself from the nearest
// ancestor whose fd is still open (the root's always is), one path component at a time
// (O_NOFOLLOW at every step), which works past PATH_MAX and stays within the budget.
//
// ## Errors
//
// See walk_errors.hpp: recoverable errors become records, the first fatal error (or consumer
// failure) stops every worker and is returned by run().
//
// ## Choices
//
// - The root must exist, and is reached by descriptor (core/resolve.hpp): its parent is opened
//   from "/" without following a symlink in any component, the root is lstat'ed and opened
//   relative to that descriptor, and the opened directory must be the one the lstat saw. A root
//   that is a symlink is recorded as a symlink and not followed (what `find ROOT` prints; a
//   trailing slash does not make it followed: the daemon never resolves a symlink for a caller).
// - Every directory below is opened relative to its parent's descriptor and checked the same way
//   (fstat of the opened fd against the parent's stat of the name): a name renamed or exchanged
//   between the stat and the open is recorded with ESTALE and not listed.
// - The root is never pruned: it was asked for explicitly.
// - A pruned directory, a mount point skipped by one_file_system, and a loop are recorded with
//   their metadata; only their contents are skipped (a loop also carries ELOOP).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs_ops.hpp"
#include "core/prune.hpp"
#include "core/status.hpp"
#include "core/walk_result.hpp"

namespace wsindex::core {

struct PoolWorkerStats;  // core/worker_pool.hpp

// A cancellation flag that can be shared with whoever may cancel (e.g. the daemon's IPC thread).
class CancelToken {
  public:
    CancelToken() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
    // Any thread.
    void cancel() const { flag_->store(true, std::memory_order_relaxed); }
    [[nodiscard]] bool cancelled() const { return flag_->load(std::memory_order_relaxed); }

  private:
    std::shared_ptr<std::atomic<bool>> flag_;
};

// Walker threads when WalkOptions::workers is 0: one per CPU, and never fewer than
// kMinDefaultWalkWorkers. On a cold cache a worker spends most of the walk blocked in openat,
// getdents64 or statx, one request each; more workers than CPUs keep that many requests in
// flight for the disk. The workers beyond one per CPU run at nice 19: on a warm cache, where
// every worker has CPU work, they yield the CPUs to the others and to the consumer
// (docs/performance.md).
inline constexpr unsigned kMinDefaultWalkWorkers = 16;
unsigned default_walk_workers();

struct WalkOptions {
    unsigned workers = 0;          // 0: default_walk_workers()
    bool one_file_system = false;  // do not descend into directories with another st_dev
    PruneRules prune;
    // Open directory descriptors the walk may hold (transient reopen fds add ~2 per worker).
    // 0: derived from RLIMIT_NOFILE after raising it: (soft - 64) / 2, clamped to [8, 256].
    std::size_t fd_budget = 0;
    bool raise_fd_limit = true;  // raise RLIMIT_NOFILE's soft limit to the hard limit at start
    // Directories with more entries than this stat in chunks of chunk_entries that others steal.
    std::size_t split_threshold = 4096;
    std::size_t chunk_entries = 1024;
    std::size_t result_batch = 1024;  // results per batch handed to the consumer
    // Batches that may wait for the consumer before workers block (backpressure). 0: 16 per
    // worker, for at most as many workers as CPUs (workers beyond the CPUs are there to wait on
    // the disk, not to queue more results). A consumer that writes in bulk (the index commits many
    // thousand rows at once) needs more than one commit's worth queued, or every worker blocks for
    // every commit (measurements: docs/ and bench/).
    std::size_t queued_batches = 0;
    // false: a record of a file (any non-directory) that was stat'ed without error carries
    // only its name in `path` (name_offset 0); directories and records with an error still
    // carry the full path. For consumers that know each record's directory by parent_id (the
    // index stores names under directory ids): most names fit std::string's inline buffer, so
    // the walk neither builds nor allocates a path per file.
    bool full_paths = true;
    // Directories deeper than this are recorded but not listed (0: no limit). 1 lists the root
    // only: the live index re-lists one directory with it.
    std::uint32_t max_depth = 0;
    const FsOps* fs = nullptr;  // null: the real system calls
    CancelToken cancel;         // checked at every task and every few hundred entries
};

// Counters of the last run (for tests and the benchmark).
struct WalkStats {
    std::uint64_t dirs_read = 0;     // directories opened and listed
    std::uint64_t entries = 0;       // records emitted (root included)
    std::uint64_t chunks = 0;        // stat chunks of split directories
    std::uint64_t reopens = 0;       // children opened through an ancestor (fd budget)
    std::uint64_t max_open_fds = 0;  // highest number of DirFds seen open at once
    std::uint64_t fd_budget = 0;     // the budget in force
    // The pool's counters, summed over workers (since the Walker was made).
    std::uint64_t tasks = 0, steal_attempts = 0, steals = 0, parks = 0, parked_ns = 0;
};

class Walker {
  public:
    using Consumer = std::function<Status(std::span<WalkResult>)>;

    // Starts the worker threads (they park until run()).
    explicit Walker(WalkOptions options = {});
    ~Walker();
    Walker(const Walker&) = delete;
    Walker& operator=(const Walker&) = delete;

    // One caller at a time (not a worker thread). Walks `root`, feeding result batches to
    // `consume` on this thread. Returns ok, the first fatal error, the consumer's failure, an
    // error for a root that cannot be reached (before any work: ELOOP for a symlink among the
    // root's ancestors, ESTALE for a root that changed while it was opened), or
    // operation_canceled. `root` is absolute.
    Status run(std::string_view root, const Consumer& consume);

    // As run(), for several roots in one run of the pool: the live index re-lists many
    // directories one level each (max_depth = 1), and one hand-off to the workers per batch
    // instead of one per directory keeps the threads from waking and parking per directory.
    // Root i that is a directory gets dir_id i + 1 (its records carry it as parent_id); results
    // of different roots interleave. A root that cannot be reached is left out, with its error
    // in (*root_status)[i] (resized to roots.size(); ok for the others). Returns ok, the first
    // fatal error, the consumer's failure, or operation_canceled.
    Status run_many(std::span<const std::string> roots, const Consumer& consume,
                    std::vector<Status>* root_status);

    // Any thread. Stops the current run (or the next one, if none runs) as soon as possible.
    void cancel();

    [[nodiscard]] unsigned workers() const;
    // After run() returned.
    [[nodiscard]] WalkStats stats() const;
    // Any thread, also during run() (the daemon's live status): each worker's pool counters
    // (relaxed snapshots) and the result batches waiting for the consumer.
    [[nodiscard]] std::vector<PoolWorkerStats> worker_stats() const;
    [[nodiscard]] std::size_t ready_batches() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace wsindex::core
