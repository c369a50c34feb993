// QueryPool: the threads, their connections, and the name index refresh.
#include "daemon/query_pool.hpp"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <utility>

#include "daemon/thread_priority.hpp"
#include "storage/warm_pages.hpp"

namespace wsindex::daemon {

core::Status QueryPool::open(const std::string& db_path, unsigned threads, std::size_t max_pending,
                             std::unique_ptr<QueryPool>* out, unsigned search_workers,
                             std::size_t trigram_min_names, unsigned max_per_uid) {
    std::unique_ptr<QueryPool> pool(new QueryPool());
    pool->max_pending_ = max_pending;
    pool->max_pending_per_uid_ = std::max<std::size_t>(1, max_pending / 2);
    pool->max_per_uid_ = max_per_uid != 0 ? max_per_uid : std::max(1u, threads - 1);
    pool->trigram_min_names_ = trigram_min_names;
    pool->db_path_ = db_path;
    for (unsigned i = 0; i < std::max(1u, threads); ++i) {
        auto db = std::make_unique<storage::Database>();
        if (auto st = storage::Database::open(db_path, storage::OpenMode::read_only, db.get());
            !st) {
            return st;
        }
        pool->dbs_.push_back(std::move(db));
    }
    pool->names_db_ = std::make_unique<storage::Database>();
    if (auto st =
            storage::Database::open(db_path, storage::OpenMode::read_only, pool->names_db_.get());
        !st) {
        return st;
    }
    core::RangeOptions search;
    search.workers = search_workers;
    try {
        pool->search_ = std::make_unique<core::RangeExecutor>(search);
    } catch (const std::exception& e) {
        return core::Status(std::make_error_code(std::errc::resource_unavailable_try_again),
                            std::string("name search workers: ") + e.what());
    }
    // Opened here, used only by its thread from now on (a connection moves between threads
    // only while nobody uses it; the thread start orders the hand-over).
    for (auto& db : pool->dbs_) {
        pool->threads_.emplace_back([p = pool.get(), d = db.get()] { p->main(*d); });
    }
    pool->names_thread_ = std::thread([p = pool.get()] { p->names_main(); });
    if (trigram_min_names != SIZE_MAX) {
        pool->trigrams_thread_ = std::thread([p = pool.get()] { p->trigrams_main(); });
    }
    *out = std::move(pool);
    return {};
}

QueryPool::~QueryPool() { stop(); }

bool QueryPool::submit(uid_t uid, Job job) {
    {
        std::lock_guard lock(mutex_);
        if (stopping_ || queued_ >= max_pending_) return false;
        Lane& lane = lanes_[uid];
        if (lane.jobs.size() >= max_pending_per_uid_) return false;
        if (lane.jobs.empty()) turns_.push_back(uid);
        lane.jobs.push_back(std::move(job));
        ++queued_;
    }
    interrupts_.fetch_add(1, std::memory_order_relaxed);
    ready_.notify_one();
    return true;
}

void QueryPool::refresh_names() {
    {
        std::lock_guard lock(mutex_);
        if (stopping_ || !names_enabled_) return;
        names_refresh_ = true;
    }
    names_wake_.notify_one();
}

void QueryPool::names_changed(std::vector<std::int64_t> dirs, std::int64_t generation) {
    {
        std::lock_guard lock(mutex_);
        if (stopping_ || !names_enabled_) return;
        names_reported_generation_ = std::max(names_reported_generation_, generation);
        names_pending_.insert(names_pending_.end(), dirs.begin(), dirs.end());
        if (dirs.empty()) names_refresh_ = true;  // the generation may still have moved
    }
    names_wake_.notify_one();
}

NameIndexStats QueryPool::name_stats() const {
    NameIndexStats out;
    std::shared_ptr<const storage::NameIndex> names;
    {
        std::lock_guard lock(mutex_);
        names = names_;
        out.base_builds = base_builds_;
        out.layer_updates = layer_updates_;
        out.trigram_builds = trigram_builds_;
    }
    if (names) {
        out.loaded = true;
        out.file_backed = names->file_backed();
        out.generation = names->generation();
        out.names = names->size();
        out.layer_names = names->layer_names();
        out.layer_dirs = names->layer_dirs();
        out.base_bytes = names->base_bytes();
        out.memory_bytes = names->memory_bytes();
        out.trigrams = names->has_trigrams();
        out.trigram_bytes = names->trigram_bytes();
    }
    if (search_) {
        out.search_workers = search_->size();
        out.last_search = search_->stats();
    }
    return out;
}

namespace {

// The layer is merged into a new base (rebuilt from the database) past this many names, or
// past a twentieth of the base: beyond, each search pays for it, and its memory is anonymous.
constexpr std::size_t kMinLayerBound = 256 * 1024;

}  // namespace

void QueryPool::names_main() {
    const std::string path = db_path_ + ".names";
    std::uint64_t opened = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
        names_wake_.wait(lock, [&] {
            return stopping_ || names_refresh_ || !names_pending_.empty() || opened != open_epoch_;
        });
        if (stopping_) return;
        if (opened != open_epoch_) {
            opened = open_epoch_;
            lock.unlock();
            storage::Database fresh;
            if (auto st = storage::Database::open(db_path_, storage::OpenMode::read_only, &fresh);
                !st) {
                spdlog::error("name index connection: reopening {}: {}", db_path_, st.to_string());
            } else {
                *names_db_ = std::move(fresh);
            }
            lock.lock();
            continue;
        }
        std::vector<std::int64_t> dirs = std::move(names_pending_);
        names_pending_.clear();
        bool rebuild = std::exchange(names_refresh_, false);
        if (!names_enabled_) continue;
        layering_ = !dirs.empty();
        const std::shared_ptr<const storage::NameIndex> current = names_;
        const std::int64_t reported = names_reported_generation_;
        lock.unlock();

        storage::Database& db = *names_db_;
        std::shared_ptr<const storage::NameIndex> next;
        bool built = false;
        if (!dirs.empty() && current) {
            std::sort(dirs.begin(), dirs.end());
            dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
            auto layered = std::make_shared<storage::NameIndex>();
            std::int64_t read = -1;
            if (auto st = current->with_dirs(db, dirs, layered.get(), &read); !st) {
                spdlog::warn("name index: re-reading {} directories failed (rebuilding): {}",
                             dirs.size(), st.to_string());
                rebuild = true;
            } else {
                // A batch committed but not reported yet may have changed directories that
                // were not re-read: the snapshot is then not current for what the read saw
                // (finds use SQL until that batch's report brings its directories).
                if (read != reported) layered->set_generation(-1);
                if (layered->layer_names() > std::max(kMinLayerBound, layered->base_size() / 20)) {
                    rebuild = true;  // merge: a new base with the layer's names in it
                }
                next = std::move(layered);
            }
        }
        if (rebuild) {
            std::int64_t generation = -1;
            const auto& candidate = next ? next : current;
            const core::Status st =
                db.query_int64("SELECT value FROM meta WHERE key = 'generation'", &generation);
            if (!st) {
                spdlog::warn("name index: cannot read the index generation: {}", st.to_string());
            } else if (!candidate || candidate->generation() != generation ||
                       candidate->layer_names() >
                           std::max(kMinLayerBound, candidate->base_size() / 20)) {
                auto fresh = std::make_shared<storage::NameIndex>();
                bool rebuilt = false;
                core::Status write_error;
                if (auto s = storage::NameIndex::open_or_build(db, path, fresh.get(), &rebuilt,
                                                               &write_error);
                    !s) {
                    spdlog::warn("name index: load failed (queries use SQL): {}", s.to_string());
                } else {
                    if (!write_error) {
                        spdlog::warn("name index: cannot write {} (kept in memory): {}", path,
                                     write_error.to_string());
                    }
                    spdlog::info("name index {}: {} names, {} MiB{}", rebuilt ? "built" : "opened",
                                 fresh->size(), fresh->base_bytes() >> 20,
                                 fresh->file_backed() ? " (mapped file)" : " (in memory)");
                    built = rebuilt;
                    next = std::move(fresh);
                }
            }
        }
        lock.lock();
        if (next && names_enabled_ && opened == open_epoch_) {
            if (next->layer_names() == 0 && next->generation() >= 0) {
                names_reported_generation_ =
                    std::max(names_reported_generation_, next->generation());
            }
            if (!names_ || names_->base() != next->base()) {
                // A new base: lists being built for the old one are of no further use.
                trigrams_cancel_.store(true, std::memory_order_relaxed);
            }
            names_ = with_known_trigrams(std::move(next));
            if (built) ++base_builds_;
            if (!dirs.empty()) ++layer_updates_;
            trigrams_wake_.notify_one();
        }
        layering_ = false;
        names_published_.notify_all();
        if (built) {
            // The old snapshot is freed once the last query holding it ends; give what malloc
            // keeps of a build's arrays back to the system (glibc: malloc_trim).
            lock.unlock();
            names_db_->release_memory();  // the pages of the whole-table read
            ::malloc_trim(0);
            lock.lock();
        }
    }
}

bool QueryPool::trigrams_wanted() const {
    if (!names_enabled_ || !names_ || names_->has_trigrams() || !names_->base() ||
        names_->base_size() < trigram_min_names_) {
        return false;
    }
    // Tried already (built, opened, or failed): only a new base is worth another try. The
    // weak pointer compares owners, so a new base at a freed one's address is still new.
    const auto& base = names_->base();
    return trigrams_tried_.owner_before(base) || base.owner_before(trigrams_tried_);
}

std::shared_ptr<const storage::NameIndex> QueryPool::with_known_trigrams(
    std::shared_ptr<const storage::NameIndex> next) const {
    if (next && !next->has_trigrams() && trigrams_ && next->base() &&
        trigrams_->built_for(*next->base())) {
        return std::make_shared<storage::NameIndex>(next->with_trigrams(trigrams_));
    }
    return next;
}

void QueryPool::trigrams_main() {
    // Below the scans (nice 10) and the queries: the lists are an optimisation the scan
    // already answers without.
    if (auto st = set_thread_priority(19, IoClass::Idle); !st) {
        spdlog::debug("trigram thread priority: {}", st.to_string());
    }
    const std::string path = db_path_ + ".names.tri";
    std::unique_lock lock(mutex_);
    for (;;) {
        trigrams_wake_.wait(lock, [&] { return stopping_ || trigrams_wanted(); });
        if (stopping_) return;
        const std::shared_ptr<const storage::NameFile> base = names_->base();
        trigrams_tried_ = base;
        trigrams_cancel_.store(false, std::memory_order_relaxed);
        lock.unlock();

        const auto started = std::chrono::steady_clock::now();
        std::shared_ptr<const storage::NameTrigrams> lists;
        bool built = false;
        // Any failure to open (missing, of another base, damaged) means: build.
        if (auto opened = storage::NameTrigrams::open(path, *base, &lists); !opened) {
            lists.reset();
            core::Status st = storage::NameTrigrams::build(*base, path, &trigrams_cancel_);
            if (st) st = storage::NameTrigrams::open(path, *base, &lists);
            if (!st) {
                lists.reset();
                if (st.code() == std::errc::operation_canceled) {
                    spdlog::debug("name index: trigram lists of a replaced base abandoned");
                } else {
                    spdlog::warn("name index: trigram lists not built (searches scan): {}",
                                 st.to_string());
                }
            }
            built = lists != nullptr;
        }
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

        lock.lock();
        if (!lists) continue;
        trigrams_ = lists;
        if (built) ++trigram_builds_;
        names_ = with_known_trigrams(names_);
        spdlog::info("name index: trigram lists {} for {} names: {} trigrams, {} MiB in {:.1f} s",
                     built ? "built" : "opened", base->size(), lists->trigrams(),
                     lists->file_bytes() >> 20, seconds);
    }
}

std::shared_ptr<const storage::NameIndex> QueryPool::names_at_least(
    std::int64_t generation, std::chrono::milliseconds max_wait) {
    std::unique_lock lock(mutex_);
    const auto current = [&] { return names_ && names_->generation() >= generation; };
    // Worth waiting for only a layer on its way: a live batch's directories (a few
    // milliseconds); a base build takes about a second per million names.
    names_published_.wait_for(lock, max_wait, [&] {
        return stopping_ || current() || (!layering_ && names_pending_.empty());
    });
    return names_;
}

void QueryPool::warm() {
    {
        std::lock_guard lock(mutex_);
        ++warm_epoch_;
    }
    ready_.notify_all();
}

void QueryPool::reopen() {
    {
        std::lock_guard lock(mutex_);
        ++open_epoch_;
        names_.reset();  // names of the old file; refresh_names() loads the new file's
        trigrams_cancel_.store(true, std::memory_order_relaxed);
    }
    ready_.notify_all();
    names_wake_.notify_all();
}

void QueryPool::disable_names() {
    std::lock_guard lock(mutex_);
    names_enabled_ = false;
    names_.reset();
}

void QueryPool::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        trigrams_cancel_.store(true, std::memory_order_relaxed);
    }
    interrupts_.fetch_add(1, std::memory_order_relaxed);
    ready_.notify_all();
    names_wake_.notify_all();
    names_published_.notify_all();
    trigrams_wake_.notify_all();
    for (auto& t : threads_) {
        if (t.joinable()) t.join();
    }
    if (names_thread_.joinable()) names_thread_.join();
    if (trigrams_thread_.joinable()) trigrams_thread_.join();
    threads_.clear();
    dbs_.clear();
    names_db_.reset();
    search_.reset();
}

bool QueryPool::runnable() const {
    for (const uid_t uid : turns_) {
        if (lanes_.at(uid).running < max_per_uid_) return true;
    }
    return false;
}

bool QueryPool::take_next(Job* job, uid_t* uid) {
    auto best = turns_.end();
    unsigned fewest = max_per_uid_;
    for (auto it = turns_.begin(); it != turns_.end(); ++it) {
        const unsigned running = lanes_.at(*it).running;
        if (running < fewest) {  // strictly: on a tie the uid served longest ago goes first
            fewest = running;
            best = it;
        }
    }
    if (best == turns_.end()) return false;
    *uid = *best;
    turns_.erase(best);
    Lane& lane = lanes_.at(*uid);
    *job = std::move(lane.jobs.front());
    lane.jobs.pop_front();
    ++lane.running;
    --queued_;
    if (!lane.jobs.empty()) turns_.push_back(*uid);
    return true;
}

void QueryPool::main(storage::Database& db) {
    std::uint64_t warmed = 0;  // the warm_epoch_ this thread's connection last warmed up for
    std::uint64_t opened = 0;  // the open_epoch_ this thread's connection was opened for
    for (;;) {
        Job job;
        uid_t uid = 0;
        std::shared_ptr<const storage::NameIndex> names;
        {
            std::unique_lock lock(mutex_);
            // A job held back by its uid's bound does not wake anyone: the thread that ends
            // one of that uid's jobs comes back here and takes it.
            ready_.wait(lock, [&] {
                return (stopping_ && queued_ == 0) || runnable() ||
                       (warmed != warm_epoch_ && running_ == 0) ||
                       (!stopping_ && opened != open_epoch_);
            });
            // Order: the file to read first, then the queued jobs, then the warm-up, which
            // only makes later jobs faster.
            if (!stopping_ && opened != open_epoch_) {
                opened = open_epoch_;
                lock.unlock();
                storage::Database fresh;
                if (auto st =
                        storage::Database::open(db_path_, storage::OpenMode::read_only, &fresh);
                    !st) {
                    // Keep the old connection: it still answers, and the next reopen retries.
                    spdlog::error("query connection: reopening {}: {}", db_path_, st.to_string());
                } else {
                    db = std::move(fresh);
                }
                continue;
            }
            // Not beside a running job either: a warm-up reads the whole index on a CPU the
            // job's search workers need (a 10M-entry find by the parallel scan took 86 ms
            // with the warm-ups running beside it, more than on one worker: 69 ms).
            if (queued_ == 0 && !stopping_ && warmed != warm_epoch_ && running_ == 0) {
                const std::uint64_t epoch = warm_epoch_;
                lock.unlock();
                // A job queued (or stop()) meanwhile interrupts it: on an index beyond the
                // mapped size the reads take long (~17 s at 100M entries), and no query waits
                // behind them. Tried again once no job is queued or running; a warm-up that
                // failed otherwise (a damaged file: the first query reports it) is not
                // retried, or this thread would retry it without end.
                warm_ups_started_.fetch_add(1, std::memory_order_relaxed);
                const std::uint64_t at_start = interrupts_.load(std::memory_order_relaxed);
                const bool complete = storage::warm_pages(
                    db, [&] { return interrupts_.load(std::memory_order_relaxed) != at_start; });
                if (complete || interrupts_.load(std::memory_order_relaxed) == at_start) {
                    warmed = epoch;
                }
                continue;
            }
            if (queued_ == 0 && stopping_) return;  // everything queued has run
            if (!take_next(&job, &uid)) continue;
            names = names_;
            ++running_;
        }
        QueryContext ctx{db, std::move(names), search_.get(), this};
        try {
            job(ctx);
        } catch (const std::exception& e) {
            // The job's Responder, dropped unanswered, tells the caller Internal.
            spdlog::error("query failed: {}", e.what());
        } catch (...) {
            spdlog::error("query failed: unknown exception");
        }
        job = nullptr;  // what it captured (a Responder, buffers) goes before the next job
        bool idle = false;
        {
            std::lock_guard lock(mutex_);
            idle = --running_ == 0;
            auto lane = lanes_.find(uid);
            if (--lane->second.running == 0 && lane->second.jobs.empty()) lanes_.erase(lane);
        }
        if (idle) ready_.notify_all();  // warm-ups held back by this job may start
    }
}

}  // namespace wsindex::daemon
