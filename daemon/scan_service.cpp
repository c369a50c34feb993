// ScanService: the queue, the scan thread, the periodic schedule and the walk -> writer wiring.
#include "daemon/scan_service.hpp"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <system_error>

#include "core/clock.hpp"
#include "core/walker.hpp"
#include "daemon/scan_root.hpp"
#include "daemon/thread_priority.hpp"
#include "ipc/bytes_codec.hpp"
#include "storage/statement.hpp"

namespace wsindex::daemon {
namespace {

// A periodic root that could not be resolved (not mounted yet, say) is retried after this when
// its own interval is zero ("index once"), so that a late mount is still indexed.
constexpr std::chrono::hours kRetryUnresolved{1};

// Nice value of the scan thread and its walker and writer threads: below interactive work, so
// that a scan on a busy machine gives way, yet it still progresses (19 would starve it).
constexpr int kScanNice = 10;

// The live index settles (checkpoint, name index reload) at most this often.
constexpr std::chrono::seconds kLiveSettleEvery{2};

core::Status load_last_done(storage::Database& db, std::map<std::string, std::int64_t>* out) {
    storage::Statement s;
    if (auto st = db.prepare("SELECT root, max(finished_ns) FROM scans"
                             " WHERE state = 'complete' GROUP BY root",
                             &s);
        !st) {
        return st;
    }
    for (bool row = true;;) {
        if (auto st = s.step(&row); !st) return st;
        if (!row) break;
        (*out)[std::string(s.column_bytes(0))] = s.column_int64(1);
    }
    return {};
}

std::string shown(const std::string& path) { return ipc::log_bytes(path); }

}  // namespace

ScanService::ScanService(ScanServiceOptions options) : options_(std::move(options)) {}

core::Status ScanService::open(ScanServiceOptions options, std::unique_ptr<ScanService>* out) {
    std::unique_ptr<ScanService> service(new ScanService(std::move(options)));
    // A damaged file is set aside here and rebuilt by the scans queued below.
    if (auto st = service->open_writer(); !st) return st;
    // Before the thread starts: the writer's connection is still ours to use here.
    if (auto st = load_last_done(service->writer_->writer().database(), &service->last_done_ns_);
        !st) {
        return st;
    }
    {
        std::lock_guard lock(service->mutex_);
        service->rebuild_due_locked();
        service->queue_rebuild_locked();
    }
    service->settle();
    service->thread_ = std::thread([s = service.get()] { s->main(); });
    *out = std::move(service);
    return {};
}

ScanService::~ScanService() { stop(); }

void ScanService::notify(const ScanJob& job) const {
    if (options_.on_change) options_.on_change(job);
}

std::shared_ptr<ScanJob> ScanService::enqueue_locked(std::string root, ScanOrigin origin,
                                                     bool* added) {
    *added = false;
    for (const auto& queued : queue_) {
        if (queued->root() == root) return queued;  // coalesced
    }
    if (queue_.size() >= options_.max_queued) return nullptr;
    auto job = std::make_shared<ScanJob>(next_ticket_++, std::move(root), origin);
    queue_.push_back(job);
    *added = true;
    return job;
}

ipc::Result<std::shared_ptr<const ScanJob>> ScanService::enqueue(std::string root,
                                                                 ScanOrigin origin) {
    std::shared_ptr<ScanJob> job;
    bool added = false;
    {
        std::lock_guard lock(mutex_);
        if (stopping_) return ipc::make_error(ipc::ErrorKind::ShuttingDown, "wsindexd is stopping");
        job = enqueue_locked(root, origin, &added);
        if (!job) {
            return ipc::make_error(ipc::ErrorKind::Busy, "the scan queue is full (" +
                                                             std::to_string(options_.max_queued) +
                                                             " waiting); retry later");
        }
    }
    if (added) {
        wake_.notify_all();
        spdlog::info("scan queued: {}", shown(job->root()));
        notify(*job);
    }
    return std::shared_ptr<const ScanJob>(job);
}

ipc::Result<std::vector<std::shared_ptr<const ScanJob>>> ScanService::cancel(
    std::optional<std::uint64_t> scan_id, bool queued_too) {
    std::vector<std::shared_ptr<const ScanJob>> cancelled;
    std::vector<std::shared_ptr<ScanJob>> dropped;
    bool replaced = false;  // a dropped job was the last of a rebuild
    {
        std::lock_guard lock(mutex_);
        if (scan_id && (!running_ || running_->scan_id() != static_cast<std::int64_t>(*scan_id))) {
            return ipc::make_error(ipc::ErrorKind::NoSuchScan,
                                   "no running scan with id " + std::to_string(*scan_id),
                                   nlohmann::json{{"scan_id", *scan_id}});
        }
        if (running_) {
            running_->cancel_token().cancel();
            cancelled.push_back(running_);
        }
        if (queued_too) {
            dropped.assign(queue_.begin(), queue_.end());
            queue_.clear();
            for (const auto& job : dropped) replaced = rebuild_job_ended_locked(*job) || replaced;
        }
    }
    if (replaced && options_.on_index_replaced) options_.on_index_replaced();
    for (const auto& job : dropped) {
        job->finish(ipc::ScanState::Cancelled, "cancelled while queued");
        cancelled.push_back(job);
        notify(*job);
    }
    if (!dropped.empty()) idle_.notify_all();
    for (const auto& job : cancelled) {
        spdlog::info("scan cancel requested: {}", shown(job->root()));
    }
    return cancelled;
}

ScanSnapshot ScanService::snapshot() const {
    ScanSnapshot snap;
    std::lock_guard lock(mutex_);
    snap.running = running_;
    snap.queued.assign(queue_.begin(), queue_.end());
    snap.ended.assign(ended_.begin(), ended_.end());
    return snap;
}

void ScanService::reconfigure(ScanSettings settings) {
    {
        std::lock_guard lock(mutex_);
        options_.settings = std::move(settings);
        rebuild_due_locked();
    }
    wake_.notify_all();
}

bool ScanService::wait_idle(std::chrono::milliseconds timeout) const {
    std::unique_lock lock(mutex_);
    return idle_.wait_for(lock, timeout,
                          [&] { return !running_ && queue_.empty() && tasks_pending_ == 0; });
}

void ScanService::request_stop() {
    std::vector<std::shared_ptr<ScanJob>> dropped;
    std::deque<std::function<void(bool)>> tasks;
    {
        std::lock_guard lock(mutex_);
        if (stopping_) return;
        stopping_ = true;
        if (running_) running_->cancel_token().cancel();
        dropped.assign(queue_.begin(), queue_.end());
        queue_.clear();
        tasks.swap(tasks_);
        tasks_pending_ -= tasks.size();
    }
    wake_.notify_all();
    for (const auto& job : dropped) {
        job->finish(ipc::ScanState::Cancelled, "wsindexd stopped");
        notify(*job);
    }
    for (auto& task : tasks) task(false);
    idle_.notify_all();
}

void ScanService::stop() {
    request_stop();
    if (thread_.joinable()) thread_.join();
    writer_.reset();  // closes the database (a scan still open would be recorded as cancelled)
}

// ---- the schedule (mutex_ held) ----------------------------------------------------------------

void ScanService::rebuild_due_locked() {
    const Clock::time_point now = Clock::now();
    const std::int64_t now_ns = core::wall_clock_ns();
    std::vector<Due> due;
    for (const ScheduledRoot& root : options_.settings.roots) {
        Due d{root, root.path, now};
        // realpath only: cheap, and a root that is not there yet is simply due (and retried).
        if (auto resolved = resolve_scan_root(root.path)) d.canonical = resolved.value();
        // A root that was on the schedule keeps its slot, so a reload does not rescan everything.
        for (const Due& old : due_) {
            if (old.canonical == d.canonical && old.root.interval == root.interval) d.at = old.at;
        }
        if (d.at == now) {
            const auto last = last_done_ns_.find(d.canonical);
            if (last != last_done_ns_.end()) {
                if (root.interval.count() == 0) {
                    d.at.reset();  // indexed once already, no timer
                } else {
                    const auto age = std::chrono::nanoseconds(now_ns - last->second);
                    const auto wait = std::chrono::duration_cast<Clock::duration>(root.interval) -
                                      std::chrono::duration_cast<Clock::duration>(age);
                    d.at = now + std::max(Clock::duration::zero(), wait);
                }
            }
        }
        due.push_back(std::move(d));
    }
    due_ = std::move(due);
}

void ScanService::reschedule_locked(const std::string& root, bool completed) {
    if (completed) last_done_ns_[root] = core::wall_clock_ns();
    for (Due& d : due_) {
        if (d.canonical != root) continue;
        if (d.root.interval.count() > 0) {
            d.at = Clock::now() + d.root.interval;
        } else if (completed) {
            d.at.reset();
        } else {
            d.at = Clock::now() + kRetryUnresolved;
        }
    }
}

std::optional<ScanService::Clock::time_point> ScanService::next_due_locked() const {
    std::optional<Clock::time_point> next;
    for (const Due& d : due_) {
        if (d.at && (!next || *d.at < *next)) next = d.at;
    }
    return next;
}

void ScanService::queue_due_roots(std::unique_lock<std::mutex>& lock) {
    const Clock::time_point now = Clock::now();
    std::vector<ScheduledRoot> due;
    for (Due& d : due_) {
        if (!d.at || *d.at > now) continue;
        due.push_back(d.root);
        // Provisional: rescheduled properly when its scan ends; covers a root that fails to
        // resolve below, so it is not retried in a hot loop.
        d.at = now + (d.root.interval.count() > 0 ? Clock::duration(d.root.interval)
                                                  : Clock::duration(kRetryUnresolved));
    }
    if (due.empty()) return;
    lock.unlock();  // realpath/lstat without the lock: enqueue and snapshot stay quick
    std::vector<std::string> roots;
    for (const ScheduledRoot& root : due) {
        auto resolved = resolve_scan_root(root.path);
        if (!resolved) {
            spdlog::warn("periodic scan of {} skipped: {}", shown(root.path),
                         resolved.error().message);
            continue;
        }
        roots.push_back(std::move(resolved.value()));
    }
    lock.lock();
    std::vector<std::shared_ptr<ScanJob>> added;
    for (std::string& root : roots) {
        bool is_new = false;
        std::shared_ptr<ScanJob> job = enqueue_locked(root, ScanOrigin::Schedule, &is_new);
        if (!job) {
            spdlog::warn("periodic scan of {} skipped: the scan queue is full", shown(root));
        } else if (is_new) {
            added.push_back(std::move(job));
        }
    }
    lock.unlock();
    for (const auto& job : added) {
        spdlog::info("scan queued: {} (periodic)", shown(job->root()));
        notify(*job);
    }
    lock.lock();
}

// ---- the scan thread -------------------------------------------------------------------------

void ScanService::main() {
    if (options_.low_priority) {
        if (auto st = set_thread_priority(kScanNice, IoClass::Idle); !st) {
            // Not fatal: the scan still works, it just competes with queries.
            spdlog::warn("cannot lower the scan threads' priority: {}", st.to_string());
        }
    }
    std::unique_lock lock(mutex_);
    for (;;) {
        if (stopping_) break;
        if (damage_reported_) {
            lock.unlock();
            handle_reported_damage();
            lock.lock();
            damage_reported_ = false;  // after the check: reports meanwhile were about this file
            continue;
        }
        if (!tasks_.empty()) {
            auto task = std::move(tasks_.front());
            tasks_.pop_front();
            lock.unlock();
            task(true);
            lock.lock();
            --tasks_pending_;
            idle_.notify_all();
            continue;
        }
        queue_due_roots(lock);
        if (stopping_) break;
        const bool unlinked_due = !unlinked_inodes_.empty() && Clock::now() >= unlinked_pass_at_;
        if (!live_dirs_.empty() || !live_inodes_.empty() || unlinked_due) {
            // Before the next queued scan: a batch takes milliseconds, a scan may take minutes.
            std::vector<ChangedDir> dirs = take_live_batch_locked();
            std::vector<monitor::InodeId> inodes(live_inodes_.begin(), live_inodes_.end());
            live_inodes_.clear();
            const Clock::time_point oldest = live_oldest_;
            live_stats_.pending_dirs = live_dirs_.size();
            lock.unlock();
            run_live(std::move(dirs), std::move(inodes), oldest);
            lock.lock();
            // Settle (checkpoint; the name index reloads) once changes pause, at most every
            // kLiveSettleEvery: a reload reads every name, and a trickle of changes would
            // otherwise reload it each time.
            if (!live_settle_at_)
                live_settle_at_ = std::max(Clock::now(), last_settle_ + kLiveSettleEvery);
            continue;
        }
        if (live_settle_at_ && queue_.empty() && Clock::now() >= *live_settle_at_) {
            live_settle_at_.reset();
            lock.unlock();
            settle();
            last_settle_ = Clock::now();
            lock.lock();
            continue;
        }
        if (queue_.empty()) {
            // Sleep until a request, a stop, a reconfigure, the next periodic root is due, or
            // the live index's settle time.
            std::optional<Clock::time_point> next = next_due_locked();
            if (live_settle_at_ && (!next || *live_settle_at_ < *next)) next = live_settle_at_;
            if (!unlinked_inodes_.empty() && (!next || unlinked_pass_at_ < *next)) {
                next = unlinked_pass_at_;
            }
            if (next) {
                wake_.wait_until(lock, *next);
            } else {
                wake_.wait(lock);
            }
            continue;
        }
        std::shared_ptr<ScanJob> job = queue_.front();
        queue_.pop_front();
        running_ = job;
        lock.unlock();
        const Outcome outcome = run_job(job);
        lock.lock();
        // Ended and no longer running in one step: a snapshot never shows an ended job running.
        job->finish(outcome.state, outcome.error);
        running_.reset();
        ended_.push_back(job);
        if (ended_.size() > kEndedKept) ended_.pop_front();
        reschedule_locked(job->root(), outcome.state == ipc::ScanState::Done);
        const bool replaced = rebuild_job_ended_locked(*job);
        lock.unlock();
        log_outcome(*job);
        notify(*job);
        idle_.notify_all();
        if (replaced && options_.on_index_replaced) options_.on_index_replaced();
        // After the waiters were told: the checkpoint writes the whole log once more.
        settle();
        lock.lock();
    }
}

ScanService::Outcome ScanService::run_job(const std::shared_ptr<ScanJob>& job) {
    core::WalkOptions walk;
    {
        std::lock_guard lock(mutex_);
        const ScanSettings& s = options_.settings;
        walk.workers = s.workers;
        walk.prune = s.prune;
        walk.one_file_system = s.one_file_system;
        for (const Due& d : due_) {
            if (d.canonical == job->root()) walk.one_file_system = d.root.one_file_system;
        }
    }
    walk.cancel = job->cancel_token();
    walk.full_paths = false;  // the index stores files by directory id and name
    walk.result_batch = options_.result_batch;
    walk.fs = options_.fs;

    job->mark_running();
    notify(*job);
    const std::string root = shown(job->root());
    if (options_.before_begin) options_.before_begin(*job);

    if (auto st = writer_->begin(job->root()); !st) {
        report_damage(st);
        return Outcome{ipc::ScanState::Failed, st.to_string()};
    }
    job->set_scan_id(writer_->scan_id());
    spdlog::info("scan {} started: {} ({} workers{})", writer_->scan_id(), root,
                 walk.workers == 0 ? core::default_walk_workers() : walk.workers,
                 walk.one_file_system ? ", one file system" : "");
    if (options_.before_walk) options_.before_walk(*job);

    core::Status walked;
    {
        core::Walker walker(walk);  // its threads inherit this thread's priority
        // Status reads the pool live; detached (keeping the final counts) before it goes away.
        struct Attached {
            ScanJob& job;
            ~Attached() { job.detach_walker(); }
        } attached{*job};
        job->attach_walker(&walker);
        walked = walker.run(job->root(), [&](std::span<core::WalkResult> batch) {
            job->count(batch);  // first: consume() moves from the records
            core::Status st = writer_->consume(batch);
            if (options_.after_batch) options_.after_batch(*job);
            return st;
        });
    }

    ipc::ScanState state = ipc::ScanState::Done;
    std::string error;
    if (walked) {
        if (auto st = writer_->finish(); !st) {
            report_damage(st);
            state = ipc::ScanState::Failed;
            error = st.to_string();
        }
    } else {
        // The walk's status is its first error: a cancel that came after a fatal error (or the
        // writer's failure) does not hide it.
        const bool cancelled = walked.code() == std::errc::operation_canceled;
        // abort() returns what ended the scan: the walk's error, or the writer's if it failed
        // first (then the walk only stopped because consume() failed).
        const core::Status ended = writer_->abort(walked, cancelled);
        report_damage(ended ? walked : ended);
        state = cancelled ? ipc::ScanState::Cancelled : ipc::ScanState::Failed;
        error = cancelled ? "cancelled" : (ended ? walked : ended).to_string();
    }
    return Outcome{state, std::move(error)};
}

void ScanService::settle() {
    if (auto st = writer_->writer().checkpoint(); !st) {
        // Not fatal: readers still read the log, only slower; the next scan's writes fail
        // (and say why) if the disk is the trouble.
        spdlog::warn("checkpoint after the scan failed: {}", st.to_string());
    }
    // The scan's memory (directories, paths, pending rows) went back to malloc, which keeps
    // it, and the writer's page cache is full of the scan's pages; a daemon idles between
    // scans, so hand both back to the system.
    writer_->writer().database().release_memory();
    ::malloc_trim(0);
    if (options_.on_settled) options_.on_settled();
}

void ScanService::log_outcome(const ScanJob& job) {
    const ipc::ScanInfo info = job.info();
    const std::string root = shown(info.root);
    switch (info.state) {
        case ipc::ScanState::Done:
            spdlog::info("scan {} done: {}: {} entries, {} dirs, {} errors in {:.1f} s ({:.0f}/s)",
                         info.scan_id, root, info.entries, info.dirs.value_or(0), info.errors,
                         static_cast<double>(info.elapsed_ms) / 1000.0, info.entries_per_second);
            break;
        case ipc::ScanState::Cancelled:
            spdlog::info("scan {} cancelled: {} after {} entries in {:.1f} s", info.scan_id, root,
                         info.entries, static_cast<double>(info.elapsed_ms) / 1000.0);
            break;
        default:
            spdlog::error("scan {} failed: {}: {}", info.scan_id, root, info.error);
            break;
    }
}

}  // namespace wsindex::daemon
