// LiveUpdate: one re-listed directory at a time — compare, then insert, update and delete in
// place — with totals adjusted for the directory and its ancestors, all in one transaction.
#include "storage/live_update.hpp"

#include "storage/live_applier.hpp"

namespace wsindex::storage {
namespace live_detail {

core::Status Applier::prepare() {
    struct Sql {
        Statement* statement;
        const char* text;
    };
    const Sql all[] = {
        {&find_dir_, "SELECT id, parent, scan_id, depth, digest FROM dirs WHERE prefix = ?"},
        {&read_entries_,
         "SELECT name, type, size, blocks, mtime_ns, coalesce(ctime_ns, mtime_ns),"
         " mode, uid, gid, dev, ino, nlink, error FROM entries WHERE dir = ?"},
        {&read_entry_,
         "SELECT type, size, blocks, mtime_ns, coalesce(ctime_ns, mtime_ns), mode,"
         " uid, gid, dev, ino, nlink, error FROM entries WHERE dir = ? AND name = ?"},
        {&insert_entry_,
         "INSERT INTO entries(dir, name, type, size, blocks, mtime_ns, ctime_ns,"
         " mode, uid, gid, dev, ino, nlink, error)"
         " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
        {&update_entry_,
         "UPDATE entries SET type = ?3, size = ?4, blocks = ?5, mtime_ns = ?6,"
         " ctime_ns = ?7, mode = ?8, uid = ?9, gid = ?10, dev = ?11, ino = ?12,"
         " nlink = ?13, error = ?14 WHERE dir = ?1 AND name = ?2"},
        {&delete_entry_, "DELETE FROM entries WHERE dir = ? AND name = ?"},
        {&insert_error_, "INSERT INTO errors(scan_id, path, errno, message) VALUES (?, ?, ?, ?)"},
        {&delete_error_, "DELETE FROM errors WHERE path = ?"},
        {&insert_link_,
         "INSERT OR REPLACE INTO links(dir, dev, ino, size, blocks)"
         " VALUES (?, ?, ?, ?, ?)"},
        {&insert_dir_,
         "INSERT INTO dirs(id, parent, scan_id, depth, prefix, size, blocks, files,"
         " dirs, digest) VALUES (?,?,?,?,?,?,?,?,?,?)"},
        {&set_digest_, "UPDATE dirs SET digest = ? WHERE id = ?"},
    };
    for (const Sql& s : all) {
        if (auto st = db_.prepare(s.text, s.statement); !st) return st;
    }
    return {};
}

core::Status Applier::lookup_dir(std::string_view path, IndexedDir* out, bool* found) {
    find_dir_.bind_blob(1, dir_prefix(path));
    if (auto s = find_dir_.step(found); !s) return s;
    if (*found) {
        *out = IndexedDir{find_dir_.column_int64(0), find_dir_.column_int64(1),
                          find_dir_.column_int64(2), find_dir_.column_int64(3), std::nullopt};
        if (!find_dir_.column_is_null(4)) {
            out->digest = static_cast<std::uint64_t>(find_dir_.column_int64(4));
        }
    }
    find_dir_.reset();
    return {};
}

core::Status Applier::next_dir_id(std::int64_t* out) {
    if (next_id_ == 0) {
        // Above every id a scan reserved, a directory holds, or garbage still names: an id in
        // garbage still owns entries rows until they are collected.
        if (auto s = db_.query_int64("SELECT max(coalesce((SELECT max(dir_max) FROM scans), 0),"
                                     " coalesce((SELECT max(id) FROM dirs), 0),"
                                     " coalesce((SELECT max(dir) FROM garbage), 0)) + 1",
                                     &next_id_);
            !s) {
            return s;
        }
    }
    *out = next_id_++;
    return {};
}

core::Status Applier::plan_dir(RelistedDir& dir, Plan* plan, bool* applies) {
    *applies = false;
    canonical_path(dir.self);
    const std::string& path = dir.self.path;
    if (!dir.self.is_dir() || !dir.self.has_stat) return {};  // replaced: its parent says so
    const std::string prefix = dir_prefix(path);
    for (const std::string& gone : removed_prefixes_) {
        if (prefix.compare(0, gone.size(), gone) == 0) return {};  // inside a replaced subtree
    }
    bool found = false;
    if (auto s = lookup_dir(path, &plan->indexed, &found); !s) return s;
    if (!found) return {};
    plan->dir = &dir;
    plan->name_in_parent =
        plan->indexed.parent == 0 ? std::string(path) : std::string(base_name(path));
    read_entry_.bind_int64(1, plan->indexed.parent).bind_blob(2, plan->name_in_parent);
    bool row = false;
    if (auto s = read_entry_.step(&row); !s) return s;
    if (row) plan->old_self = read_entry_metadata(read_entry_, 0);
    read_entry_.reset();
    if (plan->old_self && !same_directory(*plan->old_self, dir.self)) {
        // Another directory now has this path: its parent's re-listing replaces the subtree.
        return {};
    }
    if (auto s = totals_.touch(plan->indexed.id); !s) return s;

    std::unordered_map<std::string_view, core::WalkResult*> fresh;
    fresh.reserve(dir.entries.size());
    for (core::WalkResult& e : dir.entries) {
        canonical_path(e);
        fresh.emplace(e.name(), &e);
    }
    std::unordered_map<std::string_view, bool> seen;  // fresh names that have an old row
    bool hard_links = false;  // a partial re-listing touched an inode with several names
    // One indexed row against the fresh listing: unchanged, changed, or removed.
    const auto consider = [&](core::WalkResult old) {
        if (dir.partial) {
            plan->old_hash_sum += entry_hash(old);
            hard_links = hard_links || (old.has_stat && old.nlink > 1 && !old.is_dir());
        }
        const auto it = fresh.find(old.name());
        core::WalkResult* now = it == fresh.end() ? nullptr : it->second;
        // A subdirectory walked again (RelistedDir::rewalk: it may have moved out of every
        // root and back with its inode, and changed meanwhile unseen): its subtree is replaced
        // by the walk, as for another directory under the same name.
        const bool rewalked = now != nullptr && now->is_dir() && walked_again(dir, old, *now) &&
                              subtrees_.find(now->path) != subtrees_.end();
        if (now != nullptr && !rewalked && (!old.is_dir() || same_directory(old, *now)) &&
            old.is_dir() == now->is_dir()) {
            seen.emplace(now->name(), true);
            if (same_entry_metadata(old, *now)) return;
            plan->changed.emplace_back(now, std::move(old));
            plan->changed_dir_ids.push_back(0);
            return;
        }
        plan->removed.push_back(std::move(old));
        plan->removed_dir_ids.push_back(0);
    };
    if (!dir.partial) {
        read_entries_.bind_int64(1, plan->indexed.id);
        for (;;) {
            if (auto s = read_entries_.step(&row); !s) return s;
            if (!row) break;
            core::WalkResult old = read_entry_metadata(read_entries_, 1);
            old.path = child_path(path, read_entries_.column_bytes(0));
            old.name_offset =
                static_cast<std::uint32_t>(old.path.size() - read_entries_.column_bytes(0).size());
            consider(std::move(old));
        }
        read_entries_.reset();
    } else {
        // Only the named rows: those of the fresh entries, and those of the names now gone.
        const auto read_named = [&](std::string_view name) -> core::Status {
            read_entry_.bind_int64(1, plan->indexed.id).bind_blob(2, name);
            if (auto s = read_entry_.step(&row); !s) return s;
            if (row) {
                core::WalkResult old = read_entry_metadata(read_entry_, 0);
                old.path = child_path(path, name);
                old.name_offset = static_cast<std::uint32_t>(old.path.size() - name.size());
                consider(std::move(old));
            }
            read_entry_.reset();
            return {};
        };
        for (const core::WalkResult& e : dir.entries) {
            hard_links = hard_links || (e.has_stat && e.nlink > 1 && !e.is_dir());
            if (auto s = read_named(e.name()); !s) return s;
        }
        for (const std::string& name : dir.gone) {
            if (fresh.count(name) != 0) continue;  // named twice: the listing wins
            if (auto s = read_named(name); !s) return s;
        }
        if (hard_links) {
            WholeRelisting whole{path, {}};
            for (const core::WalkResult& e : dir.entries) {
                if (e.is_dir()) whole.rewalk.emplace_back(e.name());
            }
            std::sort(whole.rewalk.begin(), whole.rewalk.end());
            report_.relist_whole.push_back(std::move(whole));
            return {};
        }
    }
    for (core::WalkResult& e : dir.entries) {
        if (seen.find(e.name()) == seen.end()) plan->added.push_back(&e);
    }
    // Directories below that lose their subtree or change their own size: their totals as
    // they are now, before any write.
    for (std::size_t i = 0; i < plan->removed.size(); ++i) {
        const core::WalkResult& old = plan->removed[i];
        if (!old.is_dir()) continue;
        IndexedDir sub;
        if (auto s = lookup_dir(old.path, &sub, &found); !s) return s;
        if (!found) continue;
        plan->removed_dir_ids[i] = sub.id;
        removed_prefixes_.push_back(dir_prefix(old.path));
        if (auto s = totals_.touch(sub.id); !s) return s;
    }
    for (std::size_t i = 0; i < plan->changed.size(); ++i) {
        const core::WalkResult& old = plan->changed[i].second;
        if (!old.is_dir()) continue;
        IndexedDir sub;
        if (auto s = lookup_dir(old.path, &sub, &found); !s) return s;
        if (!found) continue;
        plan->changed_dir_ids[i] = sub.id;
        if (auto s = totals_.touch(sub.id); !s) return s;
    }
    *applies = true;
    return {};
}

core::Status Applier::insert_entry(std::int64_t dir, std::string_view name,
                                   const core::WalkResult& r) {
    insert_entry_.bind_int64(1, dir).bind_blob(2, name);
    bind_entry_metadata(DirectBinder{insert_entry_}, r);
    ++report_.rows_inserted;
    return insert_entry_.run();
}

core::Status Applier::update_entry(std::int64_t dir, std::string_view name,
                                   const core::WalkResult& r) {
    update_entry_.bind_int64(1, dir).bind_blob(2, name);
    bind_entry_metadata(DirectBinder{update_entry_}, r);
    ++report_.rows_updated;
    return update_entry_.run();
}

core::Status Applier::delete_entry(std::int64_t dir, std::string_view name) {
    delete_entry_.bind_int64(1, dir).bind_blob(2, name);
    ++report_.rows_deleted;
    return delete_entry_.run();
}

core::Status Applier::record_error(std::int64_t scan_id, const core::WalkResult& r) {
    if (r.error == 0) return {};
    insert_error_.bind_int64(1, scan_id)
        .bind_blob(2, r.path)
        .bind_int64(3, r.error)
        .bind_text(4, std::strerror(r.error));
    return insert_error_.run();
}

core::Status Applier::forget_error(std::string_view path) {
    delete_error_.bind_blob(1, path);
    return delete_error_.run();
}

core::Status Applier::write_plan(Plan& plan) {
    const std::int64_t id = plan.indexed.id;
    RelistedDir& dir = *plan.dir;
    bool links_changed = false;
    bool names_changed = !plan.removed.empty() || !plan.added.empty();
    for (const auto& [now, old] : plan.changed)
        names_changed = names_changed || now->type != old.type;
    if (names_changed) report_.name_dirs.push_back(id);
    for (std::size_t i = 0; i < plan.removed.size(); ++i) {
        const core::WalkResult& old = plan.removed[i];
        if (auto s = delete_entry(id, old.name()); !s) return s;
        // Only an entry recorded with an error has an errors row (a directory's may also come
        // from reading it): a removed file without one needs no lookup.
        if (old.error != 0 || old.is_dir()) {
            if (auto s = forget_error(old.path); !s) return s;
        }
        report_.keys_changed = true;
        if (old.is_dir()) {
            if (plan.removed_dir_ids[i] != 0) {
                if (auto s = remove_subtree(plan, old, plan.removed_dir_ids[i]); !s) return s;
            } else {
                totals_.add(id, Totals{0, 0, 0, -1});
            }
            continue;
        }
        const Totals t = single_of_file(old);
        totals_.add(id, Totals{-t.size, -t.blocks, -t.files, 0});
        note_inode(old, true);
        links_changed = links_changed || (old.has_stat && old.nlink > 1);
    }
    for (std::size_t i = 0; i < plan.changed.size(); ++i) {
        const core::WalkResult& now = *plan.changed[i].first;
        const core::WalkResult& old = plan.changed[i].second;
        if (auto s = update_entry(id, now.name(), now); !s) return s;
        if (old.error != now.error) {
            if (auto s = forget_error(now.path); !s) return s;
            if (auto s = record_error(plan.indexed.scan_id, now); !s) return s;
        }
        if (now.is_dir()) {
            // Its own size is in its own total (and so in every total above it).
            const std::int64_t child = plan.changed_dir_ids[i];
            if (child == 0) {
                Totals d = own_size(now);
                d -= own_size(old);
                totals_.add(id, d);
            } else {
                own_size_written(child, old, now);
            }
            continue;
        }
        Totals d = single_of_file(now);
        d -= single_of_file(old);
        totals_.add(id, d);
        if (now.has_stat && now.nlink > 1) {
            note_inode(now, false);
        } else if (old.has_stat && old.nlink > 1) {
            // Its link count fell to one: the names it had elsewhere are gone or elsewhere.
            inodes_.push_back(InodeChange{old.dev, old.ino, std::nullopt});
        }
        links_changed =
            links_changed || (old.has_stat && old.nlink > 1) || (now.has_stat && now.nlink > 1);
    }
    for (core::WalkResult* e : plan.added) {
        report_.keys_changed = true;
        if (e->is_dir()) {
            if (auto s = insert_subtree(plan, *e); !s) return s;
            continue;
        }
        if (auto s = insert_entry(id, e->name(), *e); !s) return s;
        if (auto s = record_error(plan.indexed.scan_id, *e); !s) return s;
        totals_.add(id, single_of_file(*e));
        note_inode(*e, false);
        links_changed = links_changed || (e->has_stat && e->nlink > 1);
    }
    if (links_changed) {
        // This directory's `links` rows: one per multi-link inode named in it, as listed now.
        Statement clear;
        if (auto s = db_.prepare("DELETE FROM links WHERE dir = ?", &clear); !s) return s;
        clear.bind_int64(1, id);
        if (auto s = clear.run(); !s) return s;
        for (const core::WalkResult& e : dir.entries) {
            if (e.is_dir() || !e.has_stat || e.nlink <= 1) continue;
            bind_link_row(insert_link_, id, e);
            if (auto s = insert_link_.run(); !s) return s;
        }
    }
    // The directory's own entry (its mtime moves with every name added or removed) and error.
    if (plan.old_self && !same_entry_metadata(*plan.old_self, dir.self)) {
        if (auto s = update_entry(plan.indexed.parent, plan.name_in_parent, dir.self); !s) return s;
        // That row is an entry of the parent: the parent's digest follows (at the end).
        if (plan.indexed.parent != 0) digest_stale_.push_back(plan.indexed.parent);
        own_size_written(id, *plan.old_self, dir.self);
        if (plan.old_self->error != dir.self.error) {
            if (auto s = forget_error(dir.self.path); !s) return s;
            if (auto s = record_error(plan.indexed.scan_id, dir.self); !s) return s;
        }
    }
    // The digest a scan would store, so that the next rescan keeps this directory's rows. A
    // sum over the entries: a partial re-listing takes out the rows it read and adds their
    // fresh records (a NULL digest stays NULL: the next rescan rewrites that directory).
    std::uint64_t digest = 0;
    if (dir.partial) {
        if (!plan.indexed.digest) {
            ++report_.dirs_applied;
            return {};
        }
        digest = *plan.indexed.digest - plan.old_hash_sum;
    }
    for (const core::WalkResult& e : dir.entries) digest += entry_hash(e);
    set_digest_.bind_int64(1, static_cast<std::int64_t>(digest)).bind_int64(2, id);
    if (auto s = set_digest_.run(); !s) return s;
    ++report_.dirs_applied;
    return {};
}

core::Status Applier::recompute_digests() {
    std::sort(digest_stale_.begin(), digest_stale_.end());
    digest_stale_.erase(std::unique(digest_stale_.begin(), digest_stale_.end()),
                        digest_stale_.end());
    for (const std::int64_t id : digest_stale_) {
        std::uint64_t digest = 0;
        read_entries_.bind_int64(1, id);
        for (bool row = true;;) {
            if (auto s = read_entries_.step(&row); !s) return s;
            if (!row) break;
            core::WalkResult r = read_entry_metadata(read_entries_, 1);
            r.path = read_entries_.column_bytes(0);  // name_offset 0: name() is the name
            digest += entry_hash(r);
        }
        read_entries_.reset();
        set_digest_.bind_int64(1, static_cast<std::int64_t>(digest)).bind_int64(2, id);
        if (auto s = set_digest_.run(); !s) return s;
    }
    return {};
}

core::Status Applier::apply(LiveBatch& batch) {
    for (WalkedSubtree& t : batch.subtrees) {
        if (t.records.empty()) continue;
        for (core::WalkResult& r : t.records) {
            if (r.parent_id == 0) {
                canonical_path(r);
                subtrees_[r.path] = &t;
            }
        }
    }
    // Parents before children: a prefix sorts before its extensions, so a subtree that a
    // parent's listing removes or replaces is known before its directories come up.
    for (RelistedDir& d : batch.dirs) canonical_path(d.self);
    std::sort(batch.dirs.begin(), batch.dirs.end(), [](const RelistedDir& a, const RelistedDir& b) {
        return dir_prefix(a.self.path) < dir_prefix(b.self.path);
    });
    TransactionGuard txn(db_);
    if (auto s = txn.begin("BEGIN IMMEDIATE"); !s) return s;
    if (auto s = prepare(); !s) return s;
    std::vector<Plan> plans;
    plans.reserve(batch.dirs.size());
    for (RelistedDir& d : batch.dirs) {
        Plan plan;
        bool applies = false;
        if (auto s = plan_dir(d, &plan, &applies); !s) return s;
        if (!applies) {
            ++report_.dirs_skipped;
            continue;
        }
        plans.push_back(std::move(plan));
    }
    for (Plan& plan : plans) {
        // A partial re-listing writes only the names it was given: its directory's other names
        // are as stale as any outside the batch, so the inode sync must not skip them.
        if (!plan.dir->partial) fresh_dirs_[plan.indexed.id] = true;
        if (auto s = write_plan(plan); !s) return s;
    }
    if (auto s = totals_.finish(); !s) return s;
    if (!inodes_.empty()) {
        InodeSyncReport synced;
        const IsFreshDir is_fresh = [this](std::int64_t dir, std::string_view) {
            return fresh_dirs_.count(dir) != 0;
        };
        if (auto s = sync_inode_names(db_, inodes_, is_fresh, &synced); !s) return s;
        report_.rows_updated += synced.names_updated;
    }
    if (auto s = recompute_digests(); !s) return s;
    if (auto s = note_index_change(db_, report_.keys_changed); !s) return s;
    if (auto s =
            db_.query_int64("SELECT value FROM meta WHERE key = 'generation'", &report_.generation);
        !s) {
        return s;
    }
    std::sort(report_.name_dirs.begin(), report_.name_dirs.end());
    report_.name_dirs.erase(std::unique(report_.name_dirs.begin(), report_.name_dirs.end()),
                            report_.name_dirs.end());
    return txn.commit();
}

}  // namespace live_detail

core::Status apply_live_batch(Database& db, LiveBatch& batch, LiveReport* report) {
    *report = {};
    live_detail::Applier applier(db, *report);
    return applier.apply(batch);
}

}  // namespace wsindex::storage
