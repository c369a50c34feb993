// QueryPool: the threads, their connections, and the name index refresh.
#include "daemon/query_pool.hpp"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <exception>

namespace wsindex::daemon {

core::Status QueryPool::open(const std::string& db_path, unsigned threads, std::size_t max_pending,
                             std::unique_ptr<QueryPool>* out) {
    std::unique_ptr<QueryPool> pool(new QueryPool());
    pool->max_pending_ = max_pending;
    pool->db_path_ = db_path;
    for (unsigned i = 0; i < std::max(1u, threads); ++i) {
        auto db = std::make_unique<storage::Database>();
        if (auto st = storage::Database::open(db_path, storage::OpenMode::read_only, db.get());
            !st) {
            return st;
        }
        pool->dbs_.push_back(std::move(db));
    }
    // Opened here, used only by its thread from now on (a connection moves between threads
    // only while nobody uses it; the thread start orders the hand-over).
    for (auto& db : pool->dbs_) {
        pool->threads_.emplace_back([p = pool.get(), d = db.get()] { p->main(*d); });
    }
    *out = std::move(pool);
    return {};
}

QueryPool::~QueryPool() { stop(); }

bool QueryPool::submit(Job job) {
    {
        std::lock_guard lock(mutex_);
        if (stopping_ || jobs_.size() >= max_pending_) return false;
        jobs_.push_back(std::move(job));
    }
    ready_.notify_one();
    return true;
}

void QueryPool::refresh_names() {
    {
        std::lock_guard lock(mutex_);
        if (stopping_ || !names_enabled_ || refresh_queued_) return;
        refresh_queued_ = true;
        // Not bounded by max_pending_: one at most, and it must not be lost to a busy queue.
        // At the front: behind a queue that busy clients keep full it waited minutes (measured
        // with 100 clients during a 1M-entry rescan), and meanwhile every find fell back to SQL.
        jobs_.push_front([this](QueryContext& ctx) {
            {
                std::lock_guard l(mutex_);
                refresh_queued_ = false;
            }
            std::int64_t generation = -1;
            if (auto st = ctx.db.query_int64("SELECT value FROM meta WHERE key = 'generation'",
                                             &generation);
                !st) {
                spdlog::warn("name index: cannot read the index generation: {}", st.to_string());
                return;
            }
            if (ctx.names && ctx.names->generation() == generation) return;
            auto index = std::make_shared<storage::NameIndex>();
            if (auto st = storage::NameIndex::load(ctx.db, index.get()); !st) {
                spdlog::warn("name index: load failed (queries use SQL): {}", st.to_string());
                return;
            }
            spdlog::info("name index loaded: {} names, {} MiB", index->size(),
                         index->memory_bytes() >> 20);
            {
                std::lock_guard l(mutex_);
                if (names_enabled_) names_ = std::move(index);
            }
            // The old index (~30 bytes per name) is freed once the last query holding it ends;
            // give what malloc keeps of it back to the system (glibc: malloc_trim).
            ::malloc_trim(0);
        });
    }
    ready_.notify_one();
}

void QueryPool::warm() {
    {
        std::lock_guard lock(mutex_);
        ++warm_epoch_;
    }
    ready_.notify_all();
}

namespace {

void warm_connection(storage::Database& db) {
    for (const char* sql : {"SELECT count(*) FROM entries", "SELECT count(*) FROM dirs"}) {
        std::int64_t rows = 0;
        if (auto st = db.query_int64(sql, &rows); !st) {
            spdlog::debug("query connection warm-up: {}", st.to_string());
            return;
        }
    }
}

}  // namespace

void QueryPool::reopen() {
    {
        std::lock_guard lock(mutex_);
        ++open_epoch_;
        names_.reset();  // names of the old file; refresh_names() loads the new file's
    }
    ready_.notify_all();
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
    }
    ready_.notify_all();
    for (auto& t : threads_) {
        if (t.joinable()) t.join();
    }
    threads_.clear();
    dbs_.clear();
}

void QueryPool::main(storage::Database& db) {
    std::uint64_t warmed = 0;  // the warm_epoch_ this thread's connection last warmed up for
    std::uint64_t opened = 0;  // the open_epoch_ this thread's connection was opened for
    for (;;) {
        Job job;
        std::shared_ptr<const storage::NameIndex> names;
        {
            std::unique_lock lock(mutex_);
            ready_.wait(lock, [&] {
                return stopping_ || !jobs_.empty() || warmed != warm_epoch_ ||
                       opened != open_epoch_;
            });
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
            if (!stopping_ && warmed != warm_epoch_) {
                warmed = warm_epoch_;
                lock.unlock();
                warm_connection(db);
                continue;
            }
            if (jobs_.empty()) return;  // stopping, and everything queued has run
            job = std::move(jobs_.front());
            jobs_.pop_front();
            names = names_;
        }
        QueryContext ctx{db, std::move(names)};
        try {
            job(ctx);
        } catch (const std::exception& e) {
            // The job's Responder, dropped unanswered, tells the caller Internal.
            spdlog::error("query failed: {}", e.what());
        } catch (...) {
            spdlog::error("query failed: unknown exception");
        }
    }
}

}  // namespace wsindex::daemon
