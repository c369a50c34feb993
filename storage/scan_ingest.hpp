// ScanIngest: plugs the ScanWriter into the walk's consumer — inline on the consumer thread
// (the default), or on a writer thread of its own behind a bounded queue.
//
// Why inline by default (measured, docs/schema.md): the walk's consumer is already a thread of
// its own, off the workers, behind the walk's bounded result queue — that queue is the
// backpressure. A second hand-off costs ~0.3-0.5 s of CPU per 1M rows (every record moved into
// a queue-owned vector, a wake-up per batch) and, with the walk keeping both cores busy, won no
// wall-clock time. The thread pays off only when the disk makes commits block (a slow
// checkpoint), which the queue then absorbs: keep it for such storage.
//
// Use (daemon, one scan at a time):
//     std::unique_ptr<ScanIngest> w;  ScanIngest::open(db, {}, &w);
//     w->begin("/home");
//     core::Status walked = core::walk("/home", opts,
//         [&](std::span<core::WalkResult> b) { return w->consume(b); });
//     core::Status result = walked ? w->finish() : w->abort(walked, was_cancelled);
//
// consume() returns the writer's error once a write failed (disk full, I/O error), so the walk
// stops; finish()/abort() then report what the scan became.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/status.hpp"
#include "core/walk_result.hpp"
#include "storage/bounded_queue.hpp"
#include "storage/scan_writer.hpp"

namespace wsindex::storage {

struct ScanIngestOptions {
    // false: the consumer thread writes itself (the walk's own queue is the backpressure);
    // true: a writer thread owns the connection and the consumer only enqueues.
    bool threaded = false;
    // Rows queued between the consumer and the writer thread (~200 bytes each): the bound on
    // the memory a slow disk can make the walk pile up here.
    std::size_t queue_rows = 32768;
    ScanOptions scan;
};

class ScanIngest {
  public:
    static core::Status open(const std::string& db_path, const ScanIngestOptions& options,
                             std::unique_ptr<ScanIngest>* out);
    ScanIngest(const ScanIngest&) = delete;
    ScanIngest& operator=(const ScanIngest&) = delete;
    // A scan still running is recorded as cancelled.
    ~ScanIngest();

    // Any thread, one at a time with the calls below (the scan service's thread).
    core::Status begin(std::string_view root);
    // The walk's consumer thread only. Moves from the batch's elements.
    core::Status consume(std::span<core::WalkResult> batch);
    // After the walk returned ok: drain, swap the scan in, collect the replaced rows.
    core::Status finish();
    // After the walk failed (`reason`) or was cancelled: record it, remove the scan's rows.
    // Returns the error that ended the scan (the writer's own, if it failed first).
    core::Status abort(const core::Status& reason, bool cancelled);

    [[nodiscard]] std::int64_t scan_id() const { return scan_id_; }
    // The underlying writer, for use while no scan runs (tests, garbage collection).
    [[nodiscard]] ScanWriter& writer() { return *writer_; }

  private:
    ScanIngest() = default;
    void run();  // the writer thread
    core::Status stop(bool complete, const core::Status& reason, bool cancelled);

    std::unique_ptr<ScanWriter> writer_;
    ScanIngestOptions options_;
    std::int64_t scan_id_ = 0;
    bool running_ = false;

    // Threaded mode.
    using Batch = std::vector<core::WalkResult>;
    std::optional<BoundedQueue<Batch>> queue_;
    std::thread thread_;
    std::atomic<bool> failed_{false};  // release by the writer thread after setting error_
    std::mutex mutex_;
    core::Status error_;       // guarded by mutex_: the writer thread's first error
    bool complete_ = false;    // guarded by mutex_: how the writer thread ends the scan
    core::Status end_reason_;  // guarded by mutex_
    bool cancelled_ = false;   // guarded by mutex_
    core::Status result_;      // written by the writer thread before it exits (join orders)
};

}  // namespace wsindex::storage
