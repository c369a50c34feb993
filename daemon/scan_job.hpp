// ScanJob: one requested scan — queued, running or ended — with its live counters.
//
// Shared between the scan thread (the only writer of the counters and of the state after it
// starts), the io thread and query threads (readers: Status, Scan --wait). Counters are relaxed
// atomics: each is exact by itself and a snapshot may mix values a batch apart, which is fine for
// progress. State changes take the mutex so a snapshot sees state, ids and times together.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/walk_result.hpp"
#include "core/walker.hpp"
#include "ipc/methods.hpp"

namespace wsindex::daemon {

// Rebuild: a damaged index set aside. Live: the live index lost changes (overflow) or met a
// subtree too large to walk in memory, or the daemon catches up after a restart.
enum class ScanOrigin { Client, Schedule, Rebuild, Live };

class ScanJob {
  public:
    ScanJob(std::uint64_t ticket, std::string root, ScanOrigin origin)
        : ticket_(ticket), root_(std::move(root)), origin_(origin) {}

    // Immutable.
    [[nodiscard]] std::uint64_t ticket() const { return ticket_; }  // daemon-local sequence
    [[nodiscard]] const std::string& root() const { return root_; }
    [[nodiscard]] ScanOrigin origin() const { return origin_; }
    [[nodiscard]] const core::CancelToken& cancel_token() const { return cancel_; }

    // Scan thread.
    void mark_running();
    void set_scan_id(std::int64_t id);
    // Before the batch is handed to the writer (which moves from it).
    void count(std::span<const core::WalkResult> batch);
    // Any thread holding the service lock for queued jobs; the scan thread for the running one.
    void finish(ipc::ScanState state, std::string error);

    // Scan thread: the walk of this job, for live pool statistics. attach before run(), detach
    // before the Walker is destroyed (detach keeps its final statistics).
    void attach_walker(const core::Walker* walker);
    void detach_walker();

    // Per-worker pool counters and the walker pool's hand-off queue (result batches the workers
    // handed off that the scan thread, the walk's consumer, has not taken yet; not the
    // ScanIngest's own queue): live while the walk runs, the final values after it, empty
    // before it started.
    struct PoolStats {
        std::vector<ipc::PoolWorkerStatus> workers;
        std::uint64_t ready_batches = 0;  // Walker::ready_batches(); sent as `queue_depth`
    };

    // Any thread.
    [[nodiscard]] ipc::ScanInfo info() const;
    [[nodiscard]] PoolStats pool_stats() const;
    [[nodiscard]] bool finished() const;
    [[nodiscard]] ipc::ScanState state() const;
    [[nodiscard]] std::int64_t scan_id() const;

  private:
    const std::uint64_t ticket_;
    const std::string root_;
    const ScanOrigin origin_;
    core::CancelToken cancel_;

    mutable std::mutex mutex_;
    ipc::ScanState state_ = ipc::ScanState::Queued;  // guarded
    std::int64_t scan_id_ = 0;                       // guarded: the database's scans.id
    std::int64_t started_ns_ = 0;                    // guarded: wall clock, for people
    std::int64_t finished_ns_ = 0;                   // guarded
    std::chrono::steady_clock::time_point started_;  // guarded: for elapsed and the rate
    std::chrono::steady_clock::duration elapsed_{};  // guarded: frozen at finish
    std::string error_;                              // guarded

    // Its own lock, so that a status request reading the pool (which takes the pool's hand-off
    // lock) never holds the state lock.
    mutable std::mutex walker_mutex_;
    const core::Walker* walker_ = nullptr;  // guarded by walker_mutex_
    PoolStats final_pool_;                  // guarded by walker_mutex_

    // Written by the scan thread only (no read-modify-write needed, but fetch_add is clearer).
    std::atomic<std::uint64_t> entries_{0};
    std::atomic<std::uint64_t> dirs_{0};
    std::atomic<std::uint64_t> errors_{0};
    std::atomic<std::uint64_t> bytes_{0};
};

}  // namespace wsindex::daemon
