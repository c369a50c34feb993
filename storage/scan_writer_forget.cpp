// ScanWriter::forget: taking an indexed top-level root out of the index in one transaction.
#include "storage/index_version.hpp"
#include "storage/path_range.hpp"
#include "storage/scan_writer.hpp"
#include "storage/sqlite_error.hpp"
#include "storage/transaction_guard.hpp"

namespace wsindex::storage {

// Walks up from the deepest indexed directory at or above `path` along dirs.parent to the row
// below the sentinel (parent 0): the top-level root whose tree holds `path`.
core::Status ScanWriter::top_level_root_of(std::string_view path, std::string* out) {
    out->clear();
    Statement by_prefix;
    Statement by_id;
    if (auto s = db_.prepare("SELECT id, parent, prefix FROM dirs WHERE prefix = ?", &by_prefix);
        !s) {
        return s;
    }
    if (auto s = db_.prepare("SELECT id, parent, prefix FROM dirs WHERE id = ?", &by_id); !s) {
        return s;
    }
    bool row = false;
    for (std::string_view up = path; !up.empty() && !row; up = parent_path(up)) {
        by_prefix.reset();
        by_prefix.bind_blob(1, dir_prefix(up));
        if (auto s = by_prefix.step(&row); !s) return s;
    }
    if (!row) return {};
    std::int64_t parent = by_prefix.column_int64(1);
    std::string prefix(by_prefix.column_bytes(2));
    while (parent != 0) {
        by_id.reset();
        by_id.bind_int64(1, parent);
        if (auto s = by_id.step(&row); !s) return s;
        if (!row) return {};  // a broken chain: treat as not indexed
        parent = by_id.column_int64(1);
        prefix.assign(by_id.column_bytes(2));
    }
    if (prefix.size() > 1) prefix.pop_back();  // stored with a trailing '/'
    *out = std::move(prefix);
    return {};
}

core::Status ScanWriter::forget(std::string_view root, ForgetReport* report) {
    *report = {};
    if (scan_id_ != 0) {
        return storage_status(StorageErrc::scan_in_progress,
                              "scan " + std::to_string(scan_id_) + " of " + root_ + " is running");
    }
    if (!is_normalized_root(root)) {
        return storage_status(StorageErrc::bad_root,
                              "'" + std::string(root) + "' is not a normalized absolute path");
    }
    const std::string path(root);
    const PrefixRange range = subtree_range(path);

    TransactionGuard txn(db_);
    // IMMEDIATE: nothing may change between the checks and the deletes.
    if (auto s = txn.begin("BEGIN IMMEDIATE"); !s) return s;

    // Is it a top-level root: a dirs row below the sentinel, or (a root that is not a
    // directory) a root entry in the sentinel directory 0?
    Statement root_dir;
    if (auto s =
            db_.prepare("SELECT parent, dirs, files, size FROM dirs WHERE prefix = ?", &root_dir);
        !s) {
        return s;
    }
    root_dir.bind_blob(1, range.lo);
    bool row = false;
    if (auto s = root_dir.step(&row); !s) return s;
    bool top_level = row && root_dir.column_int64(0) == 0;
    if (top_level) {
        report->entries =
            static_cast<std::uint64_t>(root_dir.column_int64(1) + root_dir.column_int64(2) + 1);
        report->size = root_dir.column_int64(3);
    } else if (!row) {
        Statement root_entry;
        if (auto s = db_.prepare("SELECT 1 FROM entries WHERE dir = 0 AND name = ?", &root_entry);
            !s) {
            return s;
        }
        root_entry.bind_blob(1, path);
        bool found = false;
        if (auto s = root_entry.step(&found); !s) return s;
        const bool root_entries = found;
        top_level = root_entries;
        if (top_level) report->entries = 1;
    }
    root_dir.reset();
    if (!top_level) {
        std::string holder;
        if (auto s = top_level_root_of(path, &holder); !s) return s;
        if (!holder.empty()) {
            report->inside_root = holder;
            return storage_status(StorageErrc::not_indexed, path + " is inside indexed root " +
                                                                holder + "; rescan " + holder +
                                                                ", or forget " + holder);
        }
        return storage_status(StorageErrc::not_indexed,
                              path + " is not an indexed root (wsctl status lists them)");
    }

    // The root's directories (top-level roots below it cannot exist: a scan of a root
    // replaces them) go to garbage; their entries and links are deleted after the commit.
    Statement stmt;
    const char* dir_deletes[] = {
        "INSERT OR IGNORE INTO garbage(dir)"
        " SELECT id FROM dirs WHERE prefix >= ?1 AND prefix < ?2",
        "DELETE FROM dirs WHERE prefix >= ?1 AND prefix < ?2",
    };
    for (const char* sql : dir_deletes) {
        if (auto s = db_.prepare(sql, &stmt); !s) return s;
        stmt.bind_blob(1, range.lo).bind_blob(2, range.hi);
        if (auto s = stmt.run(); !s) return s;
    }
    report->dirs = static_cast<std::uint64_t>(db_.changes());
    // The root entry (and any below it) in the sentinel directory, the errors recorded below
    // it, and its history: the errors of its scans, then the scans. A failed scan whose rows
    // are not cleared yet keeps its row, so that recovery still finds and clears them.
    const char* deletes[] = {
        "DELETE FROM entries WHERE dir = 0 AND (name = ?3 OR (name >= ?1 AND name < ?2))",
        "DELETE FROM errors WHERE path = ?3 OR (path >= ?1 AND path < ?2)",
        "DELETE FROM errors WHERE scan_id IN (SELECT id FROM scans WHERE"
        " (root = ?3 OR (root >= ?1 AND root < ?2)) AND (state = 'complete' OR cleared = 1))",
        "DELETE FROM scans WHERE (root = ?3 OR (root >= ?1 AND root < ?2))"
        " AND (state = 'complete' OR cleared = 1)",
    };
    for (const char* sql : deletes) {
        if (auto s = db_.prepare(sql, &stmt); !s) return s;
        stmt.bind_blob(1, range.lo).bind_blob(2, range.hi).bind_blob(3, path);
        if (auto s = stmt.run(); !s) return s;
    }
    report->scans = static_cast<std::uint64_t>(db_.changes());
    // Keys went away: name indexes reload.
    if (auto s = note_index_change(db_, /*keys_changed=*/true); !s) return s;
    if (auto s = txn.commit(); !s) return s;
    report->garbage_collected = collect_garbage().is_ok();
    return {};
}

}  // namespace wsindex::storage
