// ScanWriter: taking the walk's records, holding back unchanged directories, and batched inserts.
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "core/clock.hpp"
#include "storage/dir_digest.hpp"
#include "storage/entry_binding.hpp"
#include "storage/path_range.hpp"
#include "storage/scan_writer.hpp"
#include "storage/sqlite_error.hpp"
#include "storage/transaction_guard.hpp"

namespace wsindex::storage {

core::Status ScanWriter::write(std::span<core::WalkResult> batch) {
    if (scan_id_ == 0) return storage_status(StorageErrc::no_scan, "write without a scan");
    if (!first_write_error_) return first_write_error_;
    if (pending_.empty()) pending_since_ = std::chrono::steady_clock::now();
    for (core::WalkResult& r : batch) {
        if (auto s = accept(r); !s) return s;
        if (pending_.size() >= options_.rows_per_transaction) {
            if (auto s = flush(); !s) return s;
            pending_since_ = std::chrono::steady_clock::now();
        }
    }
    return flush_if_due();
}

// Keeps a written or dropped row's path buffer for take_row (bounded; SSO and huge ones go).
void ScanWriter::recycle_path(std::string& path) {
    const std::size_t cap = path.capacity();
    if (cap <= 15 || cap > 256 || spare_paths_.size() >= options_.rows_per_transaction) return;
    path.clear();
    spare_paths_.push_back(std::move(path));
}

// Moves r into `into`, giving r an empty path buffer back (see spare_paths_).
void ScanWriter::take_row(core::WalkResult& r, std::vector<core::WalkResult>& into) {
    into.push_back(std::move(r));
    if (!spare_paths_.empty()) {
        r.path = std::move(spare_paths_.back());
        spare_paths_.pop_back();
    }
}

// One record of the walk: totals, its directory's digest, and (unless it is the root, kept for
// the swap) a row to write now or, in an incremental scan, once its directory is complete.
core::Status ScanWriter::accept(core::WalkResult& r) {
    totals_.add(r);
    if (root_ == "/" && r.path.size() > 1 && r.path[0] == '/' && r.path[1] == '/') {
        // A walker that joins "/" + "/" + name: keep one slash so prefixes stay canonical.
        r.path.erase(0, 1);
        if (r.name_offset > 0) --r.name_offset;
    }
    ++entries_;
    const bool is_root = r.parent_id == 0;
    const std::uint64_t own_id = r.is_dir() ? r.dir_id : 0;
    if (own_id != 0) {
        dir_max_ = std::max(dir_max_, gid(own_id));
        NewDir& d = new_dir(own_id);
        d.seen = true;
        d.parent = is_root ? 0 : r.parent_id;
        d.depth = root_depth_ + r.depth;
        const bool slash = r.path.empty() || r.path.back() != '/';
        d.prefix = paths_.store(r.path, slash ? "/" : "");
        if (incremental()) {
            OpenDir& open = open_dirs_[own_id];
            open.expected = r.children;
            open.rows.reserve(r.children);  // one allocation instead of log2(children)
            open.changed = open.changed || r.error != 0;  // a partial listing is never "unchanged"
        }
    }
    if (is_root) {
        // Its key collides with the visible old root entry: it is written by the swap.
        root_record_ = std::move(r);
        have_root_ = true;
    } else {
        const std::uint64_t parent = r.parent_id;
        if (digests_.size() <= parent) digests_.resize(parent + 1 + parent / 2, 0);
        digests_[parent] += entry_hash(r);
        if (!incremental()) {
            take_row(r, pending_);
        } else {
            OpenDir& p = open_dirs_[parent];
            ++p.received;
            p.changed = p.changed || r.error != 0;
            take_row(r, p.rows);
            if (p.received == p.expected) resolve_dir(parent);
        }
    }
    if (own_id != 0 && incremental()) {
        const auto it = open_dirs_.find(own_id);
        if (it != open_dirs_.end() && it->second.received == it->second.expected) {
            resolve_dir(own_id);
        }
    }
    return {};
}

// All records of a directory arrived: keep the indexed one if nothing changed, else queue its
// rows for writing.
void ScanWriter::resolve_dir(std::uint64_t walk_id) {
    const auto it = open_dirs_.find(walk_id);
    OpenDir& d = it->second;
    bool reuse = false;
    if (!d.changed && walk_id < new_dirs_.size() && new_dirs_[walk_id].seen) {
        NewDir& dir = new_dirs_[walk_id];
        const auto old = old_dirs_.find(dir.prefix);
        const std::uint64_t digest = walk_id < digests_.size() ? digests_[walk_id] : 0;
        reuse = old != old_dirs_.end() && old->second.digest &&
                static_cast<std::uint64_t>(*old->second.digest) == digest;
        if (reuse) {
            dir.old = &old->second;
            old->second.reused = true;
            ++reused_dirs_;
            reused_rows_ += d.rows.size();
        }
    }
    if (!reuse) {
        for (core::WalkResult& row : d.rows) pending_.push_back(std::move(row));
    } else {
        for (core::WalkResult& row : d.rows) recycle_path(row.path);
    }
    open_dirs_.erase(it);
}

core::Status ScanWriter::flush_if_due() {
    if (!first_write_error_) return first_write_error_;
    if (pending_.empty()) return {};
    if (std::chrono::steady_clock::now() - pending_since_ < options_.max_transaction_age) {
        return {};
    }
    return flush();
}

core::Status ScanWriter::flush() {
    if (pending_.empty()) return {};
    keys_changed_ = true;
    // Key order inside the transaction: each batch then touches a few B-tree leaves at the
    // right edge instead of scattered pages (ANCHORS: scattered keys cost 12x).
    // Small keys, not the 100-byte records, are what the sort moves; comparing the names'
    // first 8 bytes as one integer settles almost every comparison without touching the
    // strings (the string comparator cost ~1.5k instructions per row, 12% of the writer).
    order_.resize(pending_.size());
    for (std::uint32_t i = 0; i < order_.size(); ++i) {
        const std::string_view name = pending_[i].name();
        std::uint64_t prefix = 0;
        for (std::size_t k = 0; k < 8; ++k) {
            const auto byte = k < name.size() ? static_cast<unsigned char>(name[k]) : 0u;
            prefix = (prefix << 8) | byte;
        }
        order_[i] = SortKey{pending_[i].parent_id, prefix, i};
    }
    std::sort(order_.begin(), order_.end(), [this](const SortKey& a, const SortKey& b) {
        if (a.dir != b.dir) return a.dir < b.dir;
        if (a.name_prefix != b.name_prefix) return a.name_prefix < b.name_prefix;
        // Equal first 8 bytes (or a name shorter than 8 bytes padded with zeros, which memcmp
        // order puts first too): the full names decide.
        return pending_[a.index].name() < pending_[b.index].name();
    });
    TransactionGuard txn(db_);
    core::Status s = txn.begin();
    staged_.clear();
    for (std::size_t i = 0; s && i < order_.size(); ++i) s = insert_row(pending_[order_[i].index]);
    if (s) s = insert_staged_rows();
    if (s) {
        update_progress_.bind_int64(1, static_cast<std::int64_t>(entries_))
            .bind_int64(2, static_cast<std::int64_t>(errors_))
            .bind_int64(3, dir_max_)
            .bind_int64(4, scan_id_);
        s = update_progress_.run();
    }
    if (s) s = txn.commit();
    for (core::WalkResult& r : pending_) recycle_path(r.path);
    pending_.clear();
    if (!s) {
        first_write_error_ =
            core::Status(s.code(), "index write failed for scan " + std::to_string(scan_id_) +
                                       " of " + root_ + ": " + s.message());
        return first_write_error_;
    }
    return {};
}

core::Status ScanWriter::insert_row(core::WalkResult& r) {
    if (options_.fail_after_rows != 0 && ++rows_written_ > options_.fail_after_rows) {
        return storage_status(StorageErrc::injected_failure, "injected write failure");
    }
    if (r.error != 0) {
        insert_error_.bind_int64(1, scan_id_)
            .bind_blob_static(2, r.path)
            .bind_int64(3, r.error)
            .bind_text(4, std::strerror(r.error));
        if (auto s = insert_error_.run(); !s) return s;
        ++errors_;
    }
    const std::int64_t parent = gid(r.parent_id);
    dir_max_ = std::max(dir_max_, parent);
    // Staged into the next free row of the multi-row insert; the record stays alive in
    // pending_ (its name is bound without a copy) until flush() ends.
    const int base = static_cast<int>(staged_.size()) * kEntryColumns;
    insert_entries_bound_.bind_int64(base + 1, parent);
    insert_entries_.bind_blob_static(base + 2, r.name());
    bind_entry_metadata(insert_entries_bound_, r, base);
    staged_.push_back(StagedRow{&r, parent});
    if (staged_.size() == kRowsPerInsert) {
        staged_.clear();
        if (auto s = insert_entries_.run_keep_bindings(); !s) return s;
    }
    if (!r.is_dir() && r.has_stat && r.nlink > 1) {
        linked_written_.push_back({r.dev, r.ino, r.size, r.blocks, r.nlink, r.mtime_ns, r.ctime_ns,
                                   r.mode, r.uid, r.gid, r.type});
        bind_link_row(insert_link_, parent, r);
        if (auto s = insert_link_.run(); !s) return s;
    }
    return {};
}

// Rows left in a partly filled multi-row insert, one by one.
core::Status ScanWriter::insert_staged_rows() {
    for (const StagedRow& row : staged_) {
        insert_entry_.bind_int64(1, row.parent).bind_blob_static(2, row.record->name());
        bind_entry_metadata(DirectBinder{insert_entry_}, *row.record);
        if (auto s = insert_entry_.run_keep_bindings(); !s) return s;
    }
    staged_.clear();
    return {};
}

}  // namespace wsindex::storage
