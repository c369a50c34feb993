// ScanWriter: checkpoints, recording how a scan ended, abort, and garbage collection.
#include <sqlite3.h>

#include "core/clock.hpp"
#include "storage/content_hashes.hpp"
#include "storage/path_range.hpp"
#include "storage/scan_writer.hpp"
#include "storage/sqlite_error.hpp"
#include "storage/transaction_guard.hpp"

namespace wsindex::storage {

core::Status ScanWriter::checkpoint() {
    if (scan_id_ != 0) {
        return storage_status(StorageErrc::scan_in_progress, "checkpoint during a scan");
    }
    const int rc = sqlite3_wal_checkpoint_v2(db_.handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                             nullptr, nullptr);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY) return sqlite_status(db_.handle(), rc, "checkpoint");
    return {};
}

core::Status ScanWriter::mark_finished(const char* state, const std::string& error) {
    Statement stmt;
    if (auto s = db_.prepare("UPDATE scans SET state = ?, finished_ns = ?, entries = ?,"
                             " errors = ?, error = ? WHERE id = ?",
                             &stmt);
        !s) {
        return s;
    }
    stmt.bind_text(1, state)
        .bind_int64(2, core::wall_clock_ns())
        .bind_int64(3, static_cast<std::int64_t>(entries_))
        .bind_int64(4, static_cast<std::int64_t>(errors_))
        .bind_text(5, error)
        .bind_int64(6, scan_id_);
    return stmt.run();
}

core::Status ScanWriter::abort(const core::Status& reason, bool cancelled) {
    if (scan_id_ == 0) return storage_status(StorageErrc::no_scan, "abort without a scan");
    stop_checkpointer();
    pending_.clear();
    pending_.shrink_to_fit();
    totals_ = {};
    // On a full disk the WAL holds the space: checkpointing and truncating it may free enough
    // to record the failure. Best effort; recovery at the next open finishes the job.
    (void)db_.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    core::Status first =
        mark_finished(cancelled ? "cancelled" : "failed",
                      reason.is_ok() ? std::string("cancelled") : reason.to_string());
    core::Status cleared = clear_scan_rows(scan_id_, base_, dir_max_);
    release_scan_memory();
    last_scan_id_ = scan_id_;
    scan_id_ = 0;
    return first ? cleared : first;
}

core::Status ScanWriter::collect_garbage(std::size_t batch_dirs) {
    const auto t0 = std::chrono::steady_clock::now();
    struct Timer {
        std::chrono::steady_clock::time_point t0;
        double* out;
        ~Timer() {
            *out = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
    } timer{t0, &gc_seconds_};
    Statement pick;
    Statement del_entries;
    Statement del_links;
    Statement del_garbage;
    core::Status s = db_.prepare("SELECT dir FROM garbage ORDER BY dir LIMIT ?", &pick);
    if (s) s = db_.prepare("DELETE FROM entries WHERE dir = ?", &del_entries);
    if (s) s = db_.prepare("DELETE FROM links WHERE dir = ?", &del_links);
    if (s) s = db_.prepare("DELETE FROM garbage WHERE dir = ?", &del_garbage);
    if (!s) return s;
    std::vector<std::int64_t> ids;
    bool collected = false;
    for (;;) {
        ids.clear();
        pick.bind_int64(1, static_cast<std::int64_t>(batch_dirs));
        for (bool row = true;;) {
            if (auto st = pick.step(&row); !st) return st;
            if (!row) break;
            ids.push_back(pick.column_int64(0));
        }
        pick.reset();
        if (ids.empty()) return prune_hashes_after_gc(collected);
        collected = true;
        TransactionGuard txn(db_);
        if (auto st = txn.begin(); !st) return st;
        for (std::int64_t id : ids) {
            del_entries.bind_int64(1, id);
            del_links.bind_int64(1, id);
            del_garbage.bind_int64(1, id);
            if (auto st = del_entries.run(); !st) return st;
            if (auto st = del_links.run(); !st) return st;
            if (auto st = del_garbage.run(); !st) return st;
        }
        if (auto st = txn.commit(); !st) return st;
    }
}

core::Status ScanWriter::prune_hashes_after_gc(bool collected_dirs) {
    constexpr auto kLivePruneInterval = std::chrono::minutes(1);
    const auto now = std::chrono::steady_clock::now();
    if (!collected_dirs && last_hash_prune_ && now - *last_hash_prune_ < kLivePruneInterval) {
        return {};
    }
    last_hash_prune_ = now;
    return prune_content_hashes(db_);
}

}  // namespace wsindex::storage
