// QueryPool: a few threads that run index queries off the io thread, each on its own read
// connection, sharing one name index (a mapped file plus a layer of live changes, kept current by
// one maintenance thread) and one RangeExecutor that searches it in parallel.
//
// Why threads and not the io thread: a find over a cold cache or a regex over every name takes
// milliseconds to seconds, and the io thread must keep serving everyone else (and must never
// block in Responder::more()). Why a bounded queue: a flood of queries gets Busy instead of
// growing memory without bound.
//
// Fairness between users: each job belongs to a uid (the caller's). A uid has at most
// `max_per_uid` jobs running, and at most half of `max_pending` queued; a free thread takes the
// next job of the uid with the fewest jobs running, and among those of the uid served longest
// ago. So one user's flood queues behind itself: another user's query waits for at most the
// jobs already running, not for the flood (30 concurrent regex finds of one user made another
// user's find take 9-10 s instead of 0.06 s when the queue was one FIFO). Root and the daemon's
// own user are uids like any other here: fairness is about threads, not rights, and a root cron
// job's flood must not stall the users either.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/range_executor.hpp"
#include "core/status.hpp"
#include "storage/database.hpp"
#include "storage/name_index.hpp"

namespace wsindex::daemon {

class QueryPool;

struct QueryContext {
    storage::Database& db;  // this thread's read connection
    // The name index current when the job started (may be null or stale: queries check).
    std::shared_ptr<const storage::NameIndex> names;
    core::RangeExecutor* search = nullptr;  // the name search's workers (shared, serialized)
    QueryPool* pool = nullptr;              // the pool running the job
};

// The name index as wsindex.Status shows it.
struct NameIndexStats {
    bool loaded = false;
    bool file_backed = false;       // the base is the mapped file (else in memory)
    std::int64_t generation = -1;   // -1: no current snapshot (finds use SQL)
    std::uint64_t names = 0;        // visible names (base minus masked plus layer)
    std::uint64_t layer_names = 0;  // names of directories re-read since the base was built
    std::uint64_t layer_dirs = 0;
    std::uint64_t base_bytes = 0;      // the base image (page cache when file-backed)
    std::uint64_t memory_bytes = 0;    // anonymous memory of the snapshot
    std::uint64_t base_builds = 0;     // bases built from the database by this process
    std::uint64_t layer_updates = 0;   // live batches layered
    bool trigrams = false;             // the base's trigram lists answer searches of >= 3 bytes
    std::uint64_t trigram_bytes = 0;   // the trigram file (page cache)
    std::uint64_t trigram_builds = 0;  // trigram files built by this process
    unsigned search_workers = 1;
    std::vector<core::RangeWorkerStats> last_search;  // per worker, of the last parallel window
};

class QueryPool {
  public:
    using Job = std::function<void(QueryContext&)>;

    // Opens `threads` read-only connections (the schema must exist: open the writer first) and
    // starts the threads.
    // `search_workers`: the name search's RangeExecutor (0: one per core). Bases of at least
    // `trigram_min_names` names get trigram lists (`<db>.names.tri`, opened or built in the
    // background at idle priority); SIZE_MAX: never. `max_per_uid`: jobs of one uid running at
    // once (0: one less than the threads, at least one).
    static core::Status open(const std::string& db_path, unsigned threads, std::size_t max_pending,
                             std::unique_ptr<QueryPool>* out, unsigned search_workers = 1,
                             std::size_t trigram_min_names = SIZE_MAX, unsigned max_per_uid = 0);
    QueryPool(const QueryPool&) = delete;
    QueryPool& operator=(const QueryPool&) = delete;
    ~QueryPool();  // stop()

    // Any thread. Queues `job` for `uid` (the caller's; see the fairness rule above). False when
    // the queue is full, `uid` holds its share of it, or the pool stopped (the caller answers
    // Busy or ShuttingDown). Jobs must not throw; one that does is logged and dropped.
    [[nodiscard]] bool submit(uid_t uid, Job job);
    // The bound on one uid's running jobs, as open() settled it.
    [[nodiscard]] unsigned max_per_uid() const { return max_per_uid_; }

    // Any thread. The maintenance thread checks the name index against the index generation
    // and, if it moved (a scan completed), opens the file `<db>.names` if it holds that
    // generation or builds it from the database and writes it. The old index serves until
    // the new one is in place.
    void refresh_names();
    // Any thread (the scan thread after a live batch). The maintenance thread re-reads these
    // directories' names into the layer; `generation` is meta.generation after the batch.
    // When the layer outgrows its bound, the base is rebuilt (a merge).
    void names_changed(std::vector<std::int64_t> dirs, std::int64_t generation);
    // Any thread.
    [[nodiscard]] NameIndexStats name_stats() const;
    // Query thread. The name index once it holds `generation` or newer, waiting at most
    // `max_wait` and only while the directories of a live batch are being layered (what a find
    // right after a live change meets: the layer is milliseconds away, the SQL fallback a scan
    // of every name). Otherwise, or on timeout, the current one (possibly null or stale).
    [[nodiscard]] std::shared_ptr<const storage::NameIndex> names_at_least(
        std::int64_t generation, std::chrono::milliseconds max_wait);
    // Any thread. Each query thread, once no job is queued or running (a job submitted
    // meanwhile interrupts it: it starts over when all jobs are done), reads every page of the
    // tables a find looks rows up in once (`count(*)`: no row is decoded).
    // Why: each connection maps the database on its own, and the first find on a cold mapping
    // took page faults for each of its thousands of random lookups (~30-40 ms more than the
    // next one, 1M entries); sequential reads fault 64 KiB at a time. Call after a scan's log
    // was checkpointed, and at start-up.
    void warm();
    // Any thread. Warm-ups begun so far, one per query thread per warm() that got to run.
    [[nodiscard]] std::uint64_t warm_ups_started() const {
        return warm_ups_started_.load(std::memory_order_relaxed);
    }
    // Any thread. Drops the name index (name_index = false in the configuration).
    void disable_names();
    // Any thread. Each query thread opens the database path again before its next job (the
    // file there was replaced: a damaged index set aside and rebuilt), and the name index is
    // dropped until the next refresh_names(). Jobs already running finish on the old file.
    void reopen();

    // Any thread but a query thread. Runs the jobs already queued, then joins. Idempotent.
    void stop();

  private:
    QueryPool() = default;
    void main(storage::Database& db);
    // Guarded. Whether some queued job may start (its uid is below the bound).
    [[nodiscard]] bool runnable() const;
    // Guarded. Takes the next job by the fairness rule, or returns false.
    bool take_next(Job* job, uid_t* uid);
    void names_main();
    void trigrams_main();
    // Guarded. Whether the current base wants lists the trigram thread has not tried yet.
    [[nodiscard]] bool trigrams_wanted() const;
    // Guarded. `next` with the lists of its base if the pool holds them.
    std::shared_ptr<const storage::NameIndex> with_known_trigrams(
        std::shared_ptr<const storage::NameIndex> next) const;

    std::string db_path_;
    std::vector<std::unique_ptr<storage::Database>> dbs_;  // one per thread
    std::vector<std::thread> threads_;
    std::size_t max_pending_ = 0;
    std::size_t max_pending_per_uid_ = 0;
    unsigned max_per_uid_ = 1;

    mutable std::mutex mutex_;
    std::condition_variable ready_;
    struct Lane {
        std::deque<Job> jobs;  // queued, in the order they came
        unsigned running = 0;
    };
    std::unordered_map<uid_t, Lane> lanes_;  // guarded: uids with a job queued or running
    std::deque<uid_t> turns_;       // guarded: uids with a job queued, served longest ago first
    std::size_t queued_ = 0;        // guarded: jobs in all lanes
    unsigned running_ = 0;          // guarded: jobs being run
    bool stopping_ = false;         // guarded
    bool names_enabled_ = true;     // guarded
    std::uint64_t warm_epoch_ = 0;  // guarded: bumped by warm()
    std::uint64_t open_epoch_ = 0;  // guarded: bumped by reopen()
    std::shared_ptr<const storage::NameIndex> names_;  // guarded
    // Bumped by submit() and stop(): a warm-up in progress gives way (storage::warm_pages).
    std::atomic<std::uint64_t> interrupts_{0};
    std::atomic<std::uint64_t> warm_ups_started_{0};  // relaxed: a statistic

    // The name index's maintenance: its own thread and read connection.
    std::unique_ptr<storage::Database> names_db_;
    std::thread names_thread_;
    std::condition_variable names_wake_;
    std::condition_variable names_published_;      // names_ replaced or layering_ ended
    bool layering_ = false;                        // guarded: a live batch's dirs being read
    bool names_refresh_ = false;                   // guarded
    std::vector<std::int64_t> names_pending_;      // guarded: directories to re-read
    std::int64_t names_reported_generation_ = -1;  // guarded: newest generation known
    std::uint64_t base_builds_ = 0;                // guarded
    std::uint64_t layer_updates_ = 0;              // guarded
    std::unique_ptr<core::RangeExecutor> search_;  // set by open(), then read-only

    // The trigram lists of the base: their own thread (a build takes ~0.6 us per name).
    std::size_t trigram_min_names_ = SIZE_MAX;
    std::thread trigrams_thread_;
    std::condition_variable trigrams_wake_;
    std::shared_ptr<const storage::NameTrigrams> trigrams_;  // guarded: of some base, or null
    std::weak_ptr<const storage::NameFile> trigrams_tried_;  // guarded: the last base tried
    std::atomic<bool> trigrams_cancel_{false};  // a build in progress is for a replaced base
    std::uint64_t trigram_builds_ = 0;          // guarded
};

}  // namespace wsindex::daemon
