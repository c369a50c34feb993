// ScanWriter: starting a scan (its id range, the directories it replaces) and its memory.
#include <sqlite3.h>

#include <algorithm>

#include "core/clock.hpp"
#include "storage/path_range.hpp"
#include "storage/scan_writer.hpp"
#include "storage/sqlite_error.hpp"
#include "storage/transaction_guard.hpp"

namespace wsindex::storage {

core::Status ScanWriter::begin(std::string_view root, const ScanOptions& options) {
    if (scan_id_ != 0) {
        return storage_status(StorageErrc::scan_in_progress,
                              "scan " + std::to_string(scan_id_) + " of " + root_ + " is running");
    }
    if (!is_normalized_root(root)) {
        return storage_status(StorageErrc::bad_root, "scan root '" + std::string(root) +
                                                         "' is not a normalized absolute path");
    }
    // A previous scan in this process may have failed to record its end (disk full).
    if (auto s = recover(); !s) return s;

    root_.assign(root);
    root_depth_ = path_depth(root_);
    root_parent_ = 0;
    root_name_ = root_;
    if (root_ != "/") {
        // Subtree rescan when the parent directory is indexed; otherwise a top-level root,
        // unless some indexed root contains it (then the gap would break ancestor totals).
        Statement find;
        if (auto s = db_.prepare("SELECT id FROM dirs WHERE prefix = ?", &find); !s) return s;
        std::string_view parent = parent_path(root_);
        bool row = false;
        find.bind_blob(1, dir_prefix(parent));
        if (auto s = find.step(&row); !s) return s;
        if (row) {
            root_parent_ = find.column_int64(0);
            root_name_.assign(base_name(root_));
        } else {
            for (std::string_view up = parent_path(parent); !up.empty(); up = parent_path(up)) {
                find.reset();
                find.bind_blob(1, dir_prefix(up));
                if (auto s = find.step(&row); !s) return s;
                if (row) {
                    return storage_status(StorageErrc::bad_root,
                                          "cannot rescan " + root_ + ": its parent " +
                                              std::string(parent) + " is not in the index of " +
                                              std::string(up) + "; rescan a parent");
                }
            }
        }
    }

    std::int64_t next = 0;
    if (auto s = db_.query_int64("SELECT max(coalesce((SELECT max(dir_max) FROM scans), 0),"
                                 " coalesce((SELECT max(id) FROM dirs), 0)) + 1",
                                 &next);
        !s) {
        return s;
    }
    Statement insert;
    if (auto s = db_.prepare("INSERT INTO scans(root, state, started_ns, dir_base, dir_max)"
                             " VALUES (?, 'running', ?, ?, ?)",
                             &insert);
        !s) {
        return s;
    }
    insert.bind_blob(1, root_)
        .bind_int64(2, core::wall_clock_ns())
        .bind_int64(3, next)
        .bind_int64(4, next - 1);
    if (auto s = insert.run(); !s) return s;
    scan_id_ = db_.last_insert_rowid();
    options_ = options;
    base_ = next;
    dir_max_ = next - 1;
    entries_ = errors_ = rows_written_ = 0;
    have_root_ = false;
    keys_changed_ = false;
    root_record_ = {};
    totals_ = {};
    pending_.clear();
    pending_.reserve(options_.rows_per_transaction);
    release_scan_memory();
    reused_dirs_ = reused_rows_ = 0;
    first_write_error_ = {};
    if (auto s = load_old_dirs(); !s) return s;
    start_checkpointer();
    return {};
}

// What a scan keeps per directory, given back once the swap or the abort no longer needs it
// (the daemon lives on between scans).
void ScanWriter::release_scan_memory() {
    open_dirs_ = {};
    digests_ = {};
    new_dirs_ = {};
    paths_.clear();
    old_dirs_ = {};
    linked_written_ = {};
}

// The indexed directories this scan replaces, with their digests (rows written before the
// digest existed have none and are never reused).
core::Status ScanWriter::load_old_dirs() {
    old_dirs_.clear();
    const PrefixRange range = subtree_range(root_);
    // A top-level root's range usually holds most of the table: one pass over the table in id
    // order is cheaper than a search of the table for each entry of the prefix index (that
    // was ~45% of a 0.19 s load of 47k directories, perf). A subtree rescan uses the index.
    const std::string sql =
        std::string(
            "SELECT prefix, id, digest, parent, depth, size, blocks, files, dirs FROM dirs") +
        (root_parent_ == 0 ? " NOT INDEXED" : "") + " WHERE prefix >= ? AND prefix < ?";
    Statement dirs;
    if (auto s = db_.prepare(sql, &dirs); !s) return s;
    dirs.bind_blob(1, range.lo).bind_blob(2, range.hi);
    // Read first, then build the map at its final size (no rehash while it grows).
    std::vector<std::pair<std::string_view, OldDir>> rows;
    for (bool row = true;;) {
        if (auto s = dirs.step(&row); !s) return s;
        if (!row) break;
        std::optional<std::int64_t> digest;
        if (!dirs.column_is_null(2)) digest = dirs.column_int64(2);
        rows.emplace_back(
            paths_.store(dirs.column_bytes(0)),
            OldDir{dirs.column_int64(1), digest, dirs.column_int64(3), dirs.column_int64(4),
                   Totals{dirs.column_int64(5), dirs.column_int64(6), dirs.column_int64(7),
                          dirs.column_int64(8)}});
    }
    old_dirs_.reserve(rows.size());
    for (auto& [prefix, old] : rows) old_dirs_.emplace(prefix, old);
    return {};
}

// During a scan, a Checkpointer thread copies the WAL instead of this connection's automatic
// checkpoints (see checkpointer.hpp). Without one (it failed to open), autocheckpoint stays.
void ScanWriter::start_checkpointer() {
    if (options_.checkpoint_period.count() <= 0) return;
    if (Checkpointer::start(db_.path(), options_.checkpoint_period, &checkpointer_) &&
        db_.exec("PRAGMA wal_autocheckpoint=0")) {
        return;
    }
    checkpointer_.reset();
}

void ScanWriter::stop_checkpointer() {
    if (checkpointer_ == nullptr) return;
    checkpointer_.reset();
    (void)db_.exec("PRAGMA wal_autocheckpoint=1000");  // SQLite's default
}

}  // namespace wsindex::storage
