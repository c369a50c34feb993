// ScanWriter: completing a scan and swapping it in, in one transaction of six steps.
#include <sqlite3.h>

#include <algorithm>
#include <chrono>

#include "core/clock.hpp"
#include "storage/entry_binding.hpp"
#include "storage/index_version.hpp"
#include "storage/path_range.hpp"
#include "storage/scan_writer.hpp"
#include "storage/sqlite_error.hpp"
#include "storage/transaction_guard.hpp"

namespace wsindex::storage {

core::Status ScanWriter::complete() {
    if (scan_id_ == 0) return storage_status(StorageErrc::no_scan, "complete without a scan");
    core::Status s = first_write_error_;
    // Every directory's records have arrived (the walk finished); a count that never matched
    // would be a walker bug: write such a directory rather than lose its rows.
    while (!open_dirs_.empty()) {
        OpenDir& d = open_dirs_.begin()->second;
        d.changed = true;
        resolve_dir(open_dirs_.begin()->first);
    }
    if (s) s = flush();
    if (s && (!have_root_ || !root_record_.is_dir() || root_record_.dir_id != 1)) {
        s = storage_status(StorageErrc::bad_root,
                           "the walk of " + root_ + " produced no root directory record");
    }
    if (s) {
        const auto t0 = std::chrono::steady_clock::now();
        totals_.finish();
        s = swap_in();
        swap_seconds_ =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    stop_checkpointer();
    if (!s) {
        (void)abort(s, false);
        return s;
    }
    last_scan_id_ = scan_id_;
    scan_id_ = 0;
    totals_ = {};
    release_scan_memory();
    return {};
}

// What step 1 of the swap reads before step 2 deletes it, for step 4; and the query of the
// part of a total that is not additive.
struct ScanWriter::SwapPlan {
    // Multi-link inodes counted once below a prefix range: the part of a total that is not
    // additive, so it is recomputed for each ancestor instead of adjusted.
    Statement multi;
    struct Ancestor {
        std::int64_t id;
        Totals single;  // its total without multi-link inodes
    };
    std::vector<Ancestor> ancestors;  // root's parent first, up to the top-level root
    Totals old_single;                // what the replaced root contributed, multi-link part aside

    core::Status prepare(Database& db) {
        return db.prepare(
            "SELECT coalesce(sum(s), 0), coalesce(sum(b), 0), count(*) FROM"
            " (SELECT max(l.size) AS s, max(l.blocks) AS b FROM links AS l"
            "  JOIN dirs AS d ON d.id = l.dir WHERE d.prefix >= ?1 AND d.prefix < ?2"
            "  GROUP BY l.dev, l.ino)",
            &multi);
    }
    // The multi-link part of the totals below the directory whose stored prefix is `prefix`.
    core::Status multi_of(std::string_view prefix, Totals* out) {
        const PrefixRange r =
            subtree_range(prefix.size() > 1 ? prefix.substr(0, prefix.size() - 1) : prefix);
        multi.bind_blob(1, r.lo).bind_blob(2, r.hi);
        bool row = false;
        if (auto s = multi.step(&row); !s) return s;
        *out = Totals{multi.column_int64(0), multi.column_int64(1), multi.column_int64(2), 0};
        multi.reset();
        return {};
    }
};

// One transaction, six steps; readers see the index before it or after it.
core::Status ScanWriter::swap_in() {
    const PrefixRange range = subtree_range(root_);
    TransactionGuard txn(db_);
    // IMMEDIATE: take the write lock before reading what the swap depends on.
    if (auto s = txn.begin("BEGIN IMMEDIATE"); !s) return s;
    SwapPlan plan;
    if (auto s = plan.prepare(db_); !s) return s;
    if (auto s = swap_read_ancestors(range, plan); !s) return s;
    if (auto s = swap_delete_replaced(range); !s) return s;
    if (auto s = swap_insert_new(); !s) return s;
    if (auto s = swap_adjust_ancestors(plan); !s) return s;
    if (auto s = swap_sync_other_names(range); !s) return s;
    if (auto s = swap_mark_complete(); !s) return s;
    return txn.commit();
}

core::Status ScanWriter::swap_read_ancestors(const PrefixRange& range, SwapPlan& plan) {
    // 1. Subtree rescan: read the ancestors and the old root's contribution before deleting.
    if (root_parent_ != 0) {
        Statement dir;
        if (auto s = db_.prepare("SELECT parent, prefix, size, blocks, files, dirs FROM dirs"
                                 " WHERE id = ?",
                                 &dir);
            !s) {
            return s;
        }
        for (std::int64_t id = root_parent_; id != 0;) {
            dir.bind_int64(1, id);
            bool row = false;
            if (auto s = dir.step(&row); !s) return s;
            if (!row) break;
            Totals total{dir.column_int64(2), dir.column_int64(3), dir.column_int64(4),
                         dir.column_int64(5)};
            const std::int64_t parent = dir.column_int64(0);
            const std::string prefix(dir.column_bytes(1));
            dir.reset();
            Totals m;
            if (auto s = plan.multi_of(prefix, &m); !s) return s;
            total -= m;
            plan.ancestors.push_back({id, total});
            id = parent;
        }
        Statement old;
        if (auto s = db_.prepare("SELECT type, size, blocks, nlink FROM entries"
                                 " WHERE dir = ? AND name = ?",
                                 &old);
            !s) {
            return s;
        }
        old.bind_int64(1, root_parent_).bind_blob(2, root_name_);
        bool row = false;
        if (auto s = old.step(&row); !s) return s;
        if (row) {
            const bool was_dir = old.column_bytes(0) == "d";
            const std::int64_t size = old.column_int64(1);
            const std::int64_t blocks = old.column_int64(2);
            const std::int64_t nlink = old.column_int64(3);
            old.reset();
            if (was_dir) {
                dir.reset();
                Statement by_prefix;
                if (auto s = db_.prepare("SELECT size, blocks, files, dirs FROM dirs"
                                         " WHERE prefix = ?",
                                         &by_prefix);
                    !s) {
                    return s;
                }
                by_prefix.bind_blob(1, range.lo);
                if (auto s = by_prefix.step(&row); !s) return s;
                if (row) {
                    plan.old_single = Totals{by_prefix.column_int64(0), by_prefix.column_int64(1),
                                             by_prefix.column_int64(2), by_prefix.column_int64(3)};
                    Totals m;
                    if (auto s = plan.multi_of(range.lo, &m); !s) return s;
                    plan.old_single -= m;
                } else {
                    plan.old_single = Totals{size, blocks, 0, 0};
                }
                plan.old_single.dirs += 1;
            } else if (nlink <= 1) {
                plan.old_single = Totals{size, blocks, 1, 0};
            }
            // A multi-link non-directory lives in `links` under the parent and is recounted
            // by multi_of; its row there stays (another name in the parent may share it).
        }
    }
    return {};
}

core::Status ScanWriter::swap_delete_replaced(const PrefixRange& range) {
    // 2. Delete what the scan replaces: directories at or below root (old_dirs_ holds them
    //    all; reused ones keep their id and rows, and are updated below), top-level roots
    //    below it, the old root entry, and the errors recorded there by earlier scans.
    {
        Statement to_garbage;
        Statement delete_dir;
        if (auto s = db_.prepare("INSERT OR IGNORE INTO garbage(dir) VALUES (?)", &to_garbage);
            !s) {
            return s;
        }
        if (auto s = db_.prepare("DELETE FROM dirs WHERE id = ?", &delete_dir); !s) return s;
        for (const auto& [prefix, old] : old_dirs_) {
            if (old.reused) continue;
            keys_changed_ = true;
            to_garbage.bind_int64(1, old.id);
            if (auto s = to_garbage.run(); !s) return s;
            delete_dir.bind_int64(1, old.id);
            if (auto s = delete_dir.run(); !s) return s;
        }
        Statement stmt;
        const char* deletes[] = {
            "DELETE FROM entries WHERE dir = 0 AND name >= ?1 AND name < ?2",
            "DELETE FROM entries WHERE dir = ?4 AND name = ?5",
            "DELETE FROM errors WHERE scan_id != ?6 AND (path = ?3 OR (path >= ?1 AND path < ?2))",
        };
        for (const char* sql : deletes) {
            if (auto s = db_.prepare(sql, &stmt); !s) return s;
            const int params = stmt.parameter_count();
            if (params >= 1) stmt.bind_blob(1, range.lo);
            if (params >= 2) stmt.bind_blob(2, range.hi);
            if (params >= 3) stmt.bind_blob(3, root_);
            if (params >= 4) stmt.bind_int64(4, root_parent_);
            if (params >= 5) stmt.bind_blob(5, root_name_);
            if (params >= 6) stmt.bind_int64(6, scan_id_);
            if (auto s = stmt.run(); !s) return s;
        }
    }
    return {};
}

core::Status ScanWriter::swap_insert_new() {
    // 3. The new root entry, then the new directories with their totals (ascending ids:
    //    they append to dirs).
    insert_entry_.bind_int64(1, root_parent_).bind_blob(2, root_name_);
    bind_entry_metadata(DirectBinder{insert_entry_}, root_record_);
    if (auto s = insert_entry_.run(); !s) return s;
    {
        // A reused directory's row is replaced in place (same id); a new one is inserted.
        // Plain INSERT for the new ones: OR REPLACE probed both keys before every insert. New
        // ones go kDirRowsPerInsert to a statement: starting and halting a statement cost a
        // fifth of a row's ~13k instructions (callgrind), and this loop is the serial end of
        // every scan.
        constexpr std::size_t kDirRowsPerInsert = 32;
        constexpr const char* kDirsInsert =
            " INTO dirs(id, parent, scan_id, depth, prefix, size, blocks, files, dirs, digest)"
            " VALUES ";
        constexpr const char* kDirsRow = "(?,?,?,?,?,?,?,?,?,?)";
        Statement replace;
        Statement insert;
        Statement insert_many;
        std::string many = std::string("INSERT OR FAIL") + kDirsInsert;  // prepare_statements()
        for (std::size_t i = 0; i < kDirRowsPerInsert; ++i)
            many += (i == 0 ? "" : ",") + std::string(kDirsRow);
        if (auto s =
                db_.prepare(std::string("INSERT OR REPLACE") + kDirsInsert + kDirsRow, &replace);
            !s) {
            return s;
        }
        if (auto s = db_.prepare(std::string("INSERT") + kDirsInsert + kDirsRow, &insert); !s)
            return s;
        if (auto s = db_.prepare(many, &insert_many); !s) return s;
        struct DirRow {
            std::int64_t id;
            std::int64_t parent;
            std::int64_t depth;
            std::string_view prefix;
            Totals totals;
            std::uint64_t digest;
        };
        auto bind_row = [this](Statement& stmt, int base, const DirRow& r) {
            stmt.bind_int64(base + 1, r.id)
                .bind_int64(base + 2, r.parent)
                .bind_int64(base + 3, scan_id_)
                .bind_int64(base + 4, r.depth)
                .bind_blob_static(base + 5, r.prefix)
                .bind_int64(base + 6, r.totals.size)
                .bind_int64(base + 7, r.totals.blocks)
                .bind_int64(base + 8, r.totals.files)
                .bind_int64(base + 9, r.totals.dirs)
                .bind_int64(base + 10, static_cast<std::int64_t>(r.digest));
        };
        std::vector<DirRow> staged;  // new rows for the next insert_many
        staged.reserve(kDirRowsPerInsert);
        auto flush_staged = [&]() -> core::Status {
            if (staged.size() == kDirRowsPerInsert) {
                for (std::size_t i = 0; i < staged.size(); ++i) {
                    bind_row(insert_many, static_cast<int>(i) * 10, staged[i]);
                }
                if (auto s = insert_many.run(); !s) return s;
            } else {
                for (const DirRow& r : staged) {
                    bind_row(insert, 0, r);
                    if (auto s = insert.run(); !s) return s;
                }
            }
            staged.clear();
            return {};
        };
        // A reused directory keeps its old id, and its children's parent follows it.
        auto final_id = [this](std::uint64_t walk_id) {
            const NewDir& d = new_dirs_[walk_id];
            return d.old != nullptr ? d.old->id : gid(walk_id);
        };
        // Ascending walk ids, so that new rows append to dirs.
        for (std::uint64_t walk_id = 1; walk_id < new_dirs_.size(); ++walk_id) {
            const NewDir& d = new_dirs_[walk_id];
            if (!d.seen) continue;
            const DirRow row{final_id(walk_id),
                             d.parent == 0 ? root_parent_ : final_id(d.parent),
                             d.depth,
                             d.prefix,
                             totals_.total(walk_id),
                             walk_id < digests_.size() ? digests_[walk_id] : 0};
            if (d.old == nullptr) {
                keys_changed_ = true;
                staged.push_back(row);
                if (staged.size() == kDirRowsPerInsert) {
                    if (auto s = flush_staged(); !s) return s;
                }
                continue;
            }
            // A reused directory whose row would not change is left alone: a rescan of an
            // unchanged tree rewrites no dirs rows but the root's (its scan_id moves).
            if (walk_id != 1 && d.old->parent == row.parent && d.old->depth == row.depth &&
                d.old->totals == row.totals) {
                continue;
            }
            bind_row(replace, 0, row);
            if (auto s = replace.run(); !s) return s;
        }
        if (auto s = flush_staged(); !s) return s;
    }
    return {};
}

core::Status ScanWriter::swap_adjust_ancestors(SwapPlan& plan) {
    // 4. Ancestors: additive part adjusted by the difference, multi-link part recounted.
    if (!plan.ancestors.empty()) {
        Totals new_single = totals_.single(1);
        new_single.dirs += 1;
        Statement prefix_of;
        Statement update;
        if (auto s = db_.prepare("SELECT prefix FROM dirs WHERE id = ?", &prefix_of); !s) return s;
        if (auto s = db_.prepare("UPDATE dirs SET size = ?, blocks = ?, files = ?, dirs = ?"
                                 " WHERE id = ?",
                                 &update);
            !s) {
            return s;
        }
        for (const SwapPlan::Ancestor& a : plan.ancestors) {
            prefix_of.bind_int64(1, a.id);
            bool row = false;
            if (auto s = prefix_of.step(&row); !s) return s;
            const std::string prefix(prefix_of.column_bytes(0));
            prefix_of.reset();
            Totals t = a.single;
            t -= plan.old_single;
            t += new_single;
            Totals m;
            if (auto s = plan.multi_of(prefix, &m); !s) return s;
            t += m;
            update.bind_int64(1, t.size)
                .bind_int64(2, t.blocks)
                .bind_int64(3, t.files)
                .bind_int64(4, t.dirs)
                .bind_int64(5, a.id);
            if (auto s = update.run(); !s) return s;
        }
    }
    return {};
}

core::Status ScanWriter::swap_mark_complete() {
    // 6. The scan is complete, and the index generation moves if any key (directory, name)
    //    may have changed (name indexes reload).
    {
        Statement done;
        if (auto s = db_.prepare("UPDATE scans SET state = 'complete', finished_ns = ?,"
                                 " entries = ?, errors = ?, dir_max = ? WHERE id = ?",
                                 &done);
            !s) {
            return s;
        }
        done.bind_int64(1, core::wall_clock_ns())
            .bind_int64(2, static_cast<std::int64_t>(entries_))
            .bind_int64(3, static_cast<std::int64_t>(errors_))
            .bind_int64(4, dir_max_)
            .bind_int64(5, scan_id_);
        if (auto s = done.run(); !s) return s;
        if (auto s = note_index_change(db_, keys_changed_); !s) return s;
    }
    return {};
}

}  // namespace wsindex::storage
