// LiveUpdate's subtrees: a directory that left the index with everything below it (its rows,
// totals, errors and inodes), and a new directory inserted with the subtree walked below it.
#include "storage/live_applier.hpp"

namespace wsindex::storage::live_detail {

core::Status Applier::remove_subtree(const Plan& plan, const core::WalkResult& old,
                                     std::int64_t id) {
    Totals gone = totals_.single_before(id);
    gone.dirs += 1;  // the directory itself, counted in its parent's `dirs`
    totals_.add(plan.indexed.id, Totals{-gone.size, -gone.blocks, -gone.files, -gone.dirs});
    const PrefixRange range = subtree_range(old.path);
    Statement ids;
    if (auto s = db_.prepare("SELECT id FROM dirs WHERE prefix >= ? AND prefix < ?", &ids); !s)
        return s;
    ids.bind_blob(1, range.lo).bind_blob(2, range.hi);
    std::vector<std::int64_t> dir_ids;
    for (bool row = true;;) {
        if (auto s = ids.step(&row); !s) return s;
        if (!row) break;
        dir_ids.push_back(ids.column_int64(0));
    }
    report_.name_dirs.insert(report_.name_dirs.end(), dir_ids.begin(), dir_ids.end());
    // Hard-linked inodes with a name below: their other names lose a link.
    Statement linked;
    if (auto s = db_.prepare("SELECT DISTINCT l.dev, l.ino FROM links AS l JOIN dirs AS d"
                             " ON d.id = l.dir WHERE d.prefix >= ? AND d.prefix < ?",
                             &linked);
        !s) {
        return s;
    }
    linked.bind_blob(1, range.lo).bind_blob(2, range.hi);
    for (bool row = true;;) {
        if (auto s = linked.step(&row); !s) return s;
        if (!row) break;
        inodes_.push_back(InodeChange{static_cast<std::uint64_t>(linked.column_int64(0)),
                                      static_cast<std::uint64_t>(linked.column_int64(1)),
                                      std::nullopt});
    }
    Statement to_garbage;
    Statement delete_dir;
    if (auto s = db_.prepare("INSERT OR IGNORE INTO garbage(dir) VALUES (?)", &to_garbage); !s)
        return s;
    if (auto s = db_.prepare("DELETE FROM dirs WHERE id = ?", &delete_dir); !s) return s;
    for (std::int64_t d : dir_ids) {
        totals_.removed(d);
        to_garbage.bind_int64(1, d);
        if (auto s = to_garbage.run(); !s) return s;
        delete_dir.bind_int64(1, d);
        if (auto s = delete_dir.run(); !s) return s;
    }
    Statement errors;
    if (auto s = db_.prepare("DELETE FROM errors WHERE path >= ? AND path < ?", &errors); !s)
        return s;
    errors.bind_blob(1, range.lo).bind_blob(2, range.hi);
    if (auto s = errors.run(); !s) return s;
    ++report_.subtrees_removed;
    return {};
}

core::Status Applier::insert_subtree(const Plan& plan, core::WalkResult& entry) {
    const auto it = subtrees_.find(entry.path);
    std::vector<core::WalkResult> lone;
    std::vector<core::WalkResult>* records = nullptr;
    if (it != subtrees_.end() && !it->second->records.empty()) {
        records = &it->second->records;
    } else {
        // Not walked (the caller's race with the file system): its own record, not descended.
        // Its listing's next change, or the next scan, fills it in.
        core::WalkResult self = entry;
        self.parent_id = 0;
        self.dir_id = 1;
        self.depth = 0;
        self.children = 0;
        lone.push_back(std::move(self));
        records = &lone;
    }
    TreeTotals tree;
    std::uint64_t max_walk_id = 0;
    for (core::WalkResult& r : *records) {
        canonical_path(r);
        tree.add(r);
        max_walk_id = std::max(max_walk_id, r.dir_id);
    }
    tree.finish();
    std::vector<std::uint64_t> digests(max_walk_id + 1, 0);
    std::vector<std::int64_t> ids(max_walk_id + 1, 0);
    for (const core::WalkResult& r : *records) {
        if (r.parent_id != 0 && r.parent_id <= max_walk_id) digests[r.parent_id] += entry_hash(r);
    }
    for (const core::WalkResult& r : *records) {
        if (r.is_dir() && r.dir_id != 0) {
            if (auto s = next_dir_id(&ids[r.dir_id]); !s) return s;
        }
    }
    std::int64_t max_id = 0;
    for (const core::WalkResult& r : *records) {
        const bool is_root = r.parent_id == 0;
        const std::int64_t parent = is_root ? plan.indexed.id : ids[r.parent_id];
        if (auto s = insert_entry(parent, is_root ? base_name(r.path) : r.name(), r); !s) return s;
        if (auto s = record_error(plan.indexed.scan_id, r); !s) return s;
        note_inode(r, false);
        if (!r.is_dir() && r.has_stat && r.nlink > 1) {
            bind_link_row(insert_link_, parent, r);
            if (auto s = insert_link_.run(); !s) return s;
        }
        if (!r.is_dir() || r.dir_id == 0) continue;
        const std::int64_t id = ids[r.dir_id];
        fresh_dirs_[id] = true;
        report_.name_dirs.push_back(id);
        max_id = std::max(max_id, id);
        const Totals t = tree.total(r.dir_id);
        insert_dir_.bind_int64(1, id)
            .bind_int64(2, parent)
            .bind_int64(3, plan.indexed.scan_id)
            .bind_int64(4, plan.indexed.depth + 1 + static_cast<std::int64_t>(r.depth))
            .bind_blob(5, dir_prefix(r.path))
            .bind_int64(6, t.size)
            .bind_int64(7, t.blocks)
            .bind_int64(8, t.files)
            .bind_int64(9, t.dirs)
            .bind_int64(10, static_cast<std::int64_t>(digests[r.dir_id]));
        if (auto s = insert_dir_.run(); !s) return s;
    }
    // Ids at or below a complete scan's dir_max are never handed out again.
    Statement reserve;
    if (auto s = db_.prepare("UPDATE scans SET dir_max = max(dir_max, ?) WHERE id = ?", &reserve);
        !s) {
        return s;
    }
    reserve.bind_int64(1, max_id).bind_int64(2, plan.indexed.scan_id);
    if (auto s = reserve.run(); !s) return s;
    Totals added = tree.single(1);
    added.dirs += 1;
    totals_.add(plan.indexed.id, added);
    return {};
}

}  // namespace wsindex::storage::live_detail
