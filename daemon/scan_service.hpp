// ScanService: one scan at a time on its own thread — a queue of requested roots, the periodic
// rescans of configured roots, the walk into the index, and cancellation.
//
// ## Choices
//
// - Queue, not refuse: a request while a scan runs is queued (up to max_queued, then Busy), so
//   `wsctl scan /a /b` and a timer firing during a scan both just work. A root already waiting
//   in the queue is coalesced: the caller gets the queued job (and can wait on it). A root that
//   is *running* is queued again, because the running walk may already have passed the change
//   that prompted the request.
// - One thread: the scan thread pops a job, runs the Walker (its workers are created by this
//   thread, so they inherit its low CPU and idle I/O priority, see thread_priority.hpp) and
//   feeds the ScanIngest, which owns the write connection. Nothing here runs on the io thread:
//   enqueue, cancel and snapshot only take a mutex briefly.
// - Cancel sets the running job's CancelToken (the walk stops at its next task) and the writer
//   records the scan as cancelled, leaving the previous index of that root untouched. Queued
//   jobs can be dropped too (they never reach the database: they have no scan id).
// - Periodic rescans: each configured root is due when it was never indexed, else its last
//   completed scan's end plus its interval (read from the database at open, then tracked). The
//   scan thread sleeps until the earliest due time or a request, whichever comes first.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include "core/fs_ops.hpp"
#include "core/prune.hpp"
#include "core/status.hpp"
#include "daemon/changed_dir.hpp"
#include "daemon/forget_root.hpp"
#include "daemon/scan_job.hpp"
#include "ipc/result.hpp"
#include "monitor/change_sink.hpp"
#include "storage/index_damage.hpp"
#include "storage/scan_ingest.hpp"

namespace wsindex::daemon {

struct ScheduledRoot {
    std::string path;                 // as configured; resolved when due
    std::chrono::seconds interval{};  // zero: only when never indexed
    bool one_file_system = false;
};

// What a configuration reload may change.
struct ScanSettings {
    unsigned workers = 0;  // 0: core::default_walk_workers()
    core::PruneRules prune;
    bool one_file_system = false;  // for roots requested by clients
    std::vector<ScheduledRoot> roots;
};

// A damaged index file that was set aside and is being (or was) rebuilt by rescanning its roots
// (docs/reliability.md, "A damaged index").
struct IndexRebuild {
    std::int64_t at_ns = 0;          // wall clock: when the damage was found
    std::string set_aside_as;        // the damaged file's new name
    std::string detail;              // what SQLite reported
    std::vector<std::string> roots;  // roots queued for the rebuild (configured roots come too)
    std::size_t pending = 0;         // of those, scans that have not ended yet
};

// What the live index has applied (scan_service_live.cpp), for Status.
struct LiveApplyStats {
    std::uint64_t batches = 0;
    std::uint64_t dirs = 0;            // directories re-listed and applied
    std::uint64_t rows_changed = 0;    // entries rows inserted, updated or deleted
    std::uint64_t failures = 0;        // batches that failed (their roots were rescanned)
    std::int64_t last_applied_ns = 0;  // wall clock of the last batch that changed something
    std::uint64_t last_lag_ms = 0;     // its oldest change's settle-to-visible time
    std::uint64_t pending_dirs = 0;    // waiting for the scan thread
    // Scan-thread time spent on batches (listing, walking new subtrees, the transaction):
    // rows_changed / busy_ms is the rate the index takes changes at, apart from the writers.
    std::uint64_t busy_ms = 0;
};

struct ScanServiceOptions {
    std::string db_path;
    ScanSettings settings;
    std::size_t max_queued = 64;
    // nice 10 and the idle I/O class for the scan thread and everything it starts.
    bool low_priority = true;
    storage::ScanIngestOptions writer;
    std::size_t result_batch = 1024;  // WalkOptions::result_batch (tests make it small)
    const core::FsOps* fs = nullptr;  // WalkOptions::fs (tests inject slow or failing calls)
    // Called after every state change of a job (queued, started, ended), without locks held, on
    // the thread that made it. Must not block; may call snapshot().
    std::function<void(const ScanJob&)> on_change;
    // Called on the scan thread after each job ended and its log was checkpointed into the
    // database (and once at start-up): the moment readers can warm up. Must not block.
    std::function<void()> on_settled;
    // Called on the scan thread once the scans of a rebuilt index (a damaged file set aside at
    // run time) have ended: the moment readers should open the new file. Must not block.
    std::function<void()> on_index_replaced;
    // Called on the scan thread after a live batch changed names or types: the directories
    // whose names the name index must re-read, and meta.generation after the batch. Must not
    // block.
    std::function<void(std::vector<std::int64_t> dirs, std::int64_t generation)> on_names_changed;
    // Test seams, on the scan thread: once the job runs but before its scan row (and id)
    // exists, before the walk starts, and after each batch was counted.
    std::function<void(const ScanJob&)> before_begin;
    std::function<void(const ScanJob&)> before_walk;
    std::function<void(const ScanJob&)> after_batch;
};

struct ScanSnapshot {
    std::shared_ptr<const ScanJob> running;  // null when idle
    std::vector<std::shared_ptr<const ScanJob>> queued;
    // The last few scans this process ended (oldest first): the Scans answer shows them as they
    // ended when the database could not record it (a full disk leaves the row `running`).
    std::vector<std::shared_ptr<const ScanJob>> ended;
};

class ScanService {
  public:
    // Opens the writer (creating or migrating the database, taking its writer lock, recovering
    // from a crash), reads when each configured root was last indexed, and starts the thread.
    static core::Status open(ScanServiceOptions options, std::unique_ptr<ScanService>* out);
    ScanService(const ScanService&) = delete;
    ScanService& operator=(const ScanService&) = delete;
    ~ScanService();  // stop()

    // Any thread. Queues a scan of `root`, which must already be resolved (resolve_scan_root).
    // Returns the job (an already queued one for the same root), Busy when the queue is full,
    // ShuttingDown after stop().
    ipc::Result<std::shared_ptr<const ScanJob>> enqueue(std::string root,
                                                        ScanOrigin origin = ScanOrigin::Client);

    // Any thread. Cancels the running scan (if `scan_id` is given, only when it is that one:
    // else NoSuchScan), and with `queued_too` drops every queued job. Returns the jobs cancelled.
    ipc::Result<std::vector<std::shared_ptr<const ScanJob>>> cancel(
        std::optional<std::uint64_t> scan_id, bool queued_too);

    // Any thread (scan_service_forget.cpp). Takes the indexed top-level root `root` (normalized)
    // out of the index, as a job the scan thread runs between scans. A scan of `root` or of a
    // path below it that is running is cancelled and queued ones are dropped first (its result
    // would be thrown away). Refused at once: a configured root (InvalidParameter), a stopping
    // daemon. Not an indexed top-level root: NotIndexed. `done` may be empty. For the change
    // monitor: forget(root, ForgetOrigin::Vanished, {}) when a watched root was deleted (the
    // outcome is logged at warn level with the root's path).
    void forget(std::string root, ForgetOrigin origin, ForgetDone done);
    // Any thread. `path` (normalized) is a root of the configuration, as given or resolved.
    [[nodiscard]] bool is_configured_root(std::string_view path) const;

    // Any thread. A storage call failed with `failure`; if it says the file is damaged
    // (storage::is_damage), the scan thread checks the file and, when the check confirms it,
    // sets it aside and rebuilds the index. Cheap; repeated reports coalesce.
    void report_damage(const core::Status& failure);
    // Any thread. Directories the live index found changed: the scan thread re-lists them
    // (one level), walks what is new below them and applies it in one transaction, between
    // scans (changes that arrive during a scan are applied after its swap).
    void submit_live(std::vector<ChangedDir> dirs, std::vector<monitor::InodeId> inodes,
                     std::chrono::steady_clock::time_point oldest);
    [[nodiscard]] LiveApplyStats live_stats() const;
    // A whole re-listing of at least this many entries is large: it gets live batches of its
    // own, taking turns with the other directories' (take_live_batch_locked).
    static constexpr std::size_t kLargeListing = 2048;
    // Any thread. The last rebuild of a damaged index by this process, if any.
    [[nodiscard]] std::optional<IndexRebuild> last_rebuild() const;

    // Any thread.
    [[nodiscard]] ScanSnapshot snapshot() const;
    // Any thread. Takes effect for the next scan (the running one keeps its settings).
    void reconfigure(ScanSettings settings);
    // Any thread. Blocks until nothing runs and nothing is queued, or the timeout (tests).
    bool wait_idle(std::chrono::milliseconds timeout) const;

    // Any thread but the scan thread. Cancels the running scan (recorded as cancelled), drops
    // the queue, joins the scan thread. Idempotent.
    void stop();
    // Any thread: the non-blocking first half of stop() (SIGTERM handler on the io thread).
    void request_stop();

  private:
    using Clock = std::chrono::steady_clock;
    explicit ScanService(ScanServiceOptions options);

    void main();  // the scan thread
    struct Outcome {
        ipc::ScanState state;
        std::string error;
    };
    // Scan thread (or open()), no lock held, no scan open: checkpoint, then on_settled.
    void settle();
    Outcome run_job(const std::shared_ptr<ScanJob>& job);  // scan thread, no lock held
    static void log_outcome(const ScanJob& job);
    void queue_due_roots(std::unique_lock<std::mutex>& lock);
    std::optional<Clock::time_point> next_due_locked() const;
    void rebuild_due_locked();
    void reschedule_locked(const std::string& root, bool completed);
    void notify(const ScanJob& job) const;
    // The live index (scan_service_live.cpp). Scan thread, no lock held.
    void run_live(std::vector<ChangedDir> dirs, std::vector<monitor::InodeId> inodes,
                  Clock::time_point oldest);
    // The indexed names of `inodes` as named changes of their directories, merged into
    // `changed` (scan thread). Inodes the index holds with one name (not in `links`) wait in
    // unlinked_inodes_ for a pass over `entries`, done at most every so often (their cost).
    void add_linked_names(const std::vector<monitor::InodeId>& inodes,
                          std::vector<ChangedDir>* changed);
    // Adds a changed directory to live_dirs_ (names merged; none or too many: whole).
    void merge_changed_locked(ChangedDir dir);
    // More changed names than this in one directory: it is re-listed whole.
    static constexpr std::size_t kMaxNamedChanges = 256;
    // The directories of the next live batch, taken out of live_dirs_ (take_live_batch_locked
    // in scan_service_live.cpp says how large re-listings take turns with the others).
    std::vector<ChangedDir> take_live_batch_locked();
    static constexpr std::size_t kMaxLargeListings = 4096;  // remembered at most (live_large_)
    // Index damage (scan_service_rebuild.cpp). Scan thread or open(), no lock held.
    core::Status open_writer();
    core::Status set_aside(const storage::IndexCheck& check);
    void handle_reported_damage();
    // mutex_ held: queues the rebuild's roots (skipping roots below another one).
    std::vector<std::shared_ptr<ScanJob>> queue_rebuild_locked();
    // mutex_ held: a job ended or was dropped; true when it was the rebuild's last.
    bool rebuild_job_ended_locked(const ScanJob& job);
    std::shared_ptr<ScanJob> enqueue_locked(std::string root, ScanOrigin origin, bool* added);
    // Forgetting a root (scan_service_forget.cpp).
    bool configured_locked(std::string_view path) const;
    void run_forget(const std::string& root, ForgetOrigin origin, std::uint64_t cancelled,
                    const ForgetDone& done);  // scan thread, no lock held

    ScanServiceOptions options_;  // settings guarded by mutex_; the rest immutable after open
    std::unique_ptr<storage::ScanIngest> writer_;  // scan thread only (after open)

    mutable std::mutex mutex_;
    mutable std::condition_variable wake_;        // queue, stop or schedule changed
    mutable std::condition_variable idle_;        // a job ended
    std::deque<std::shared_ptr<ScanJob>> queue_;  // guarded
    std::shared_ptr<ScanJob> running_;            // guarded
    bool stopping_ = false;                       // guarded
    std::uint64_t next_ticket_ = 1;               // guarded
    // Work for the scan thread between scans (a forget); called with false when dropped at
    // stop. Run before the next queued scan. Guarded; pending counts the one running too.
    std::deque<std::function<void(bool run)>> tasks_;
    std::size_t tasks_pending_ = 0;
    // A configured root and when it is due next (nullopt: not on a timer any more).
    struct Due {
        ScheduledRoot root;
        std::string canonical;  // realpath of root.path when it could be resolved, else as given
        std::optional<Clock::time_point> at;
    };
    std::vector<Due> due_;  // guarded; rebuilt on reconfigure
    // Root -> wall-clock end of its last completed scan (ns). Guarded.
    std::map<std::string, std::int64_t> last_done_ns_;
    std::deque<std::shared_ptr<const ScanJob>> ended_;  // guarded; at most kEndedKept
    static constexpr std::size_t kEndedKept = 16;
    bool damage_reported_ = false;         // guarded: report_damage() was called
    std::optional<IndexRebuild> rebuild_;  // guarded
    // guarded: changed directories not applied yet, with their changed names (none: whole)
    struct LiveDirty {
        std::set<std::string> names;   // none: the whole directory
        std::set<std::string> rewalk;  // ChangedDir::rewalk, at most kMaxNamedChanges
        bool names_dropped = false;    // ChangedDir::names_dropped
    };
    std::map<std::string, LiveDirty> live_dirs_;
    // guarded: directories whose last whole re-listing was large (kLargeListing), and whether
    // the last batch was one of theirs (they take turns with the others).
    std::unordered_set<std::string> live_large_;
    bool live_last_large_ = false;
    std::set<monitor::InodeId> live_inodes_;  // guarded: LiveChanges::inodes not applied yet
    // guarded: inodes whose names only a pass over `entries` finds (add_linked_names), and
    // when the next pass may run: a pass costs ~0.1-0.3 s per million entries, and passes
    // take at most a twentieth of the time.
    std::set<monitor::InodeId> unlinked_inodes_;
    Clock::time_point unlinked_pass_at_{};
    static constexpr std::size_t kMaxUnlinkedInodes = 4096;
    Clock::time_point live_oldest_{};                  // guarded: the first change among them
    LiveApplyStats live_stats_;                        // guarded
    std::optional<Clock::time_point> live_settle_at_;  // guarded: settle once quiet, then
    Clock::time_point last_settle_{};                  // scan thread
    std::thread thread_;
};

}  // namespace wsindex::daemon
