// ScanWriter: opening the index for writing, and the recovery of scans a dead process left.
#include "storage/scan_writer.hpp"

#include <sqlite3.h>

#include "core/clock.hpp"
#include "storage/entry_binding.hpp"
#include "storage/sqlite_error.hpp"
#include "storage/transaction_guard.hpp"

namespace wsindex::storage {

core::Status ScanWriter::open(const std::string& db_path, std::unique_ptr<ScanWriter>* out) {
    std::unique_ptr<ScanWriter> writer(new ScanWriter());
    if (auto s = WriterLock::acquire(db_path, &writer->lock_); !s) return s;
    if (auto s = Database::open(db_path, OpenMode::read_write, &writer->db_); !s) return s;
    if (auto s = writer->prepare_statements(); !s) return s;
    if (auto s = writer->recover(); !s) return s;
    *out = std::move(writer);
    return {};
}

core::Status ScanWriter::prepare_statements() {
    // OR FAIL on the inserts that write many rows per statement: with the default (ABORT)
    // SQLite keeps a statement journal so that a conflict can undo just that statement,
    // copying every existing page the statement touches first (a temp file once it passes
    // 64 KiB). A conflict here is fatal to the scan anyway (the transaction is rolled back
    // and the scan's rows removed), so the journal bought nothing: without it the swap of
    // the lopsided 1M tree went 0.25 -> 0.14 s (docs/schema.md).
    core::Status s = db_.prepare(
        "INSERT OR FAIL INTO entries(dir, name, type, size, blocks, mtime_ns, ctime_ns, mode,"
        " uid, gid, dev, ino, nlink, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
        "?12, ?13,"
        " ?14)",
        &insert_entry_);
    if (s) {
        // The same insert for kRowsPerInsert rows: one statement execution (start, halt,
        // reset: ~1k instructions) per kRowsPerInsert rows instead of per row.
        std::string sql =
            "INSERT OR FAIL INTO entries(dir, name, type, size, blocks, mtime_ns, ctime_ns,"
            " mode, uid, gid, dev, ino, nlink, error) VALUES ";
        for (std::size_t row = 0; row < kRowsPerInsert; ++row) {
            sql += row == 0 ? "(" : ",(";
            for (int c = 0; c < kEntryColumns; ++c) sql += c == 0 ? "?" : ",?";
            sql += ")";
        }
        s = db_.prepare(sql, &insert_entries_);
        insert_entries_bound_.attach(&insert_entries_, insert_entries_.parameter_count());
    }
    if (s) {
        // OR IGNORE: two names of one inode in one directory count once there anyway.
        s = db_.prepare(
            "INSERT OR IGNORE INTO links(dir, dev, ino, size, blocks) VALUES (?,?,?,?,?)",
            &insert_link_);
    }
    if (s) {
        s = db_.prepare("INSERT INTO errors(scan_id, path, errno, message) VALUES (?,?,?,?)",
                        &insert_error_);
    }
    if (s) {
        s = db_.prepare("UPDATE scans SET entries = ?, errors = ?, dir_max = ? WHERE id = ?",
                        &update_progress_);
    }
    return s;
}

core::Status ScanWriter::recover() {
    // We hold the writer lock, so a `running` scan belongs to a process that died.
    if (auto s = db_.exec("UPDATE scans SET state = 'interrupted', finished_ns = " +
                          std::to_string(core::wall_clock_ns()) +
                          ", error = 'the indexing process ended during the scan'"
                          " WHERE state = 'running'");
        !s) {
        return s;
    }
    Statement leftovers;
    if (auto s = db_.prepare("SELECT id, dir_base, dir_max FROM scans"
                             " WHERE state != 'complete' AND cleared = 0",
                             &leftovers);
        !s) {
        return s;
    }
    std::vector<std::array<std::int64_t, 3>> scans;
    for (bool row = true;;) {
        if (auto s = leftovers.step(&row); !s) return s;
        if (!row) break;
        scans.push_back(
            {leftovers.column_int64(0), leftovers.column_int64(1), leftovers.column_int64(2)});
    }
    leftovers.reset();
    // After a disk-full failure the WAL holds the failed scan's batches: checkpoint first, so
    // that the deletes below append to an empty WAL.
    if (!scans.empty()) (void)db_.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    for (const auto& [id, base, max] : scans) {
        if (auto s = clear_scan_rows(id, base, max); !s) return s;
    }
    return collect_garbage();
}

// The rows of an unsuccessful scan: its own directory-id range, which nothing visible uses.
// Deleted directory by directory in transactions of ~kClearRows rows with a checkpoint after
// each, so that the WAL stays small: this runs after a disk-full failure, where a single big
// delete transaction would need as much free space as the scan wrote.
core::Status ScanWriter::clear_scan_rows(std::int64_t scan_id, std::int64_t base,
                                         std::int64_t max) {
    constexpr std::int64_t kClearRows = 5000;
    Statement del_entries;
    Statement del_links;
    core::Status s = db_.prepare("DELETE FROM entries WHERE dir = ?", &del_entries);
    if (s) s = db_.prepare("DELETE FROM links WHERE dir = ?", &del_links);
    if (!s) return s;
    std::int64_t deleted = 0;
    for (std::int64_t dir = base; dir <= max;) {
        TransactionGuard txn(db_);
        if (auto st = txn.begin(); !st) return st;
        for (deleted = 0; dir <= max && deleted < kClearRows; ++dir) {
            del_entries.bind_int64(1, dir);
            if (auto st = del_entries.run(); !st) return st;
            deleted += db_.changes() + 1;  // +1: empty ids cost a lookup too
            del_links.bind_int64(1, dir);
            if (auto st = del_links.run(); !st) return st;
        }
        if (auto st = txn.commit(); !st) return st;
        (void)db_.exec("PRAGMA wal_checkpoint(PASSIVE)");
    }
    const std::string id = std::to_string(scan_id);
    TransactionGuard txn(db_);
    if (auto st = txn.begin(); !st) return st;
    if (auto st = db_.exec("DELETE FROM errors WHERE scan_id = " + id +
                           "; UPDATE scans SET cleared = 1 WHERE id = " + id);
        !st) {
        return st;
    }
    return txn.commit();
}

}  // namespace wsindex::storage
