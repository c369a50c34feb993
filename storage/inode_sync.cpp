// Inode sync: fresh metadata for the other names of rewritten hard-linked inodes, with their
// `links` rows, digests and totals (inode_sync.hpp).
#include "storage/inode_sync.hpp"

#include <fcntl.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/fs_ops.hpp"
#include "storage/dir_digest.hpp"
#include "storage/entry_binding.hpp"
#include "storage/statement.hpp"

namespace wsindex::storage {
namespace {

struct InodeKey {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    friend bool operator==(const InodeKey&, const InodeKey&) = default;
    friend auto operator<=>(const InodeKey&, const InodeKey&) = default;
};
struct InodeKeyHash {
    std::size_t operator()(const InodeKey& k) const {
        return std::hash<std::uint64_t>{}(k.dev * 0x9e3779b97f4a7c15ULL ^ k.ino);
    }
};

// The columns of an entries row after its key, as the writer's bind_entry_metadata writes them.
constexpr const char* kEntryColumnsSql =
    "name, type, size, blocks, mtime_ns, ctime_ns, mode, uid, gid, dev, ino, nlink, error";

// An entries row read with kEntryColumnsSql from column `c`, as the walk record it came from
// (so that entry_hash gives the digest term the writer added).
core::WalkResult stored_entry(const Statement& s, int c) {
    core::WalkResult r = read_entry_metadata(s, c + 1);
    r.path = std::string(s.column_bytes(c));
    return r;
}

// What an indexed name adds to its directory's additive part.
Totals single_part(const core::WalkResult& r) {
    if (!r.has_stat || r.nlink > 1) return {};
    return Totals{static_cast<std::int64_t>(r.size), static_cast<std::int64_t>(r.blocks), 1, 0};
}

struct DirInfo {
    bool visible = false;
    bool fresh = false;
    std::int64_t parent = 0;
    std::string prefix;
};

// A name of an inode in a directory the caller did not write.
struct OtherName {
    std::int64_t dir = 0;
    core::WalkResult stored;
};

// One `links` row of an inode: what the inode adds to the multi-link part of the totals above.
struct LinkRow {
    std::int64_t dir = 0;
    std::int64_t size = 0;
    std::int64_t blocks = 0;
};

class InodeSync {
  public:
    InodeSync(Database& db, const IsFreshDir& is_fresh, InodeSyncReport* report)
        : db_(db), is_fresh_(is_fresh), report_(report) {}

    core::Status run(std::span<const InodeChange> inodes) {
        if (auto s = prepare(); !s) return s;
        merge(inodes);
        if (inodes_.empty()) return {};
        if (auto s = find_names(); !s) return s;
        return apply();
    }

  private:
    core::Status prepare() {
        if (auto s = db_.prepare("SELECT parent, prefix FROM dirs WHERE id = ? AND id != 0",
                                 &dir_by_id_);
            !s) {
            return s;
        }
        return db_.prepare("SELECT dir, size, blocks FROM links WHERE dev = ? AND ino = ?",
                           &links_of_inode_);
    }

    // One change per inode; metadata read by the caller wins over none.
    void merge(std::span<const InodeChange> inodes) {
        for (const InodeChange& c : inodes) {
            auto [it, added] = inodes_.try_emplace(InodeKey{c.dev, c.ino}, c.fresh);
            if (!added && !it->second && c.fresh) it->second = c.fresh;
        }
    }

    core::Status dir_info(std::int64_t id, const DirInfo** out) {
        auto it = dirs_.find(id);
        if (it == dirs_.end()) {
            DirInfo d;
            dir_by_id_.bind_int64(1, id);
            bool row = false;
            if (auto s = dir_by_id_.step(&row); !s) return s;
            if (row) {
                d.visible = true;
                d.parent = dir_by_id_.column_int64(0);
                d.prefix = std::string(dir_by_id_.column_bytes(1));
                d.fresh = is_fresh_(id, d.prefix);
            }
            dir_by_id_.reset();
            it = dirs_.emplace(id, std::move(d)).first;
        }
        *out = &it->second;
        return {};
    }

    // The visible `links` rows of an inode.
    core::Status link_rows(const InodeKey& k, std::vector<LinkRow>* out) {
        out->clear();
        links_of_inode_.bind_int64(1, static_cast<std::int64_t>(k.dev))
            .bind_int64(2, static_cast<std::int64_t>(k.ino));
        std::vector<LinkRow> rows;
        for (bool row = true;;) {
            if (auto s = links_of_inode_.step(&row); !s) return s;
            if (!row) break;
            rows.push_back({links_of_inode_.column_int64(0), links_of_inode_.column_int64(1),
                            links_of_inode_.column_int64(2)});
        }
        links_of_inode_.reset();
        for (const LinkRow& l : rows) {
            const DirInfo* d = nullptr;
            if (auto s = dir_info(l.dir, &d); !s) return s;
            if (d->visible) out->push_back(l);
        }
        return {};
    }

    // Every indexed name of each inode outside the fresh directories: the multi-link ones
    // through `links` (each directory holding one is read once for all its inodes; the fresh
    // ones only to count names); when the names found fall short of the inode's link count,
    // the rest (single-link rows that are stale, or names outside every indexed root) through
    // one pass over `entries`.
    core::Status find_names() {
        std::map<std::int64_t, std::set<InodeKey>> dirs;  // those with a links row of an inode
        std::map<InodeKey, std::uint64_t> names;
        std::vector<LinkRow> rows;
        for (const auto& [key, fresh] : inodes_) {
            if (auto s = link_rows(key, &rows); !s) return s;
            links_before_[key] = rows;
            for (const LinkRow& l : rows) dirs[l.dir].insert(key);
        }
        Statement in_dir;
        if (auto s = db_.prepare(std::string("SELECT ") + kEntryColumnsSql +
                                     " FROM entries WHERE dir = ? AND nlink > 1",
                                 &in_dir);
            !s) {
            return s;
        }
        for (const auto& [dir, keys] : dirs) {
            const bool fresh = dirs_.at(dir).fresh;
            in_dir.bind_int64(1, dir);
            for (bool row = true;;) {
                if (auto s = in_dir.step(&row); !s) return s;
                if (!row) break;
                const InodeKey key{static_cast<std::uint64_t>(in_dir.column_int64(9)),
                                   static_cast<std::uint64_t>(in_dir.column_int64(10))};
                if (!keys.contains(key)) continue;
                ++names[key];
                if (!fresh) others_.push_back({dir, stored_entry(in_dir, 0)});
            }
            in_dir.reset();
        }
        std::unordered_set<InodeKey, InodeKeyHash> short_of_names;
        for (const auto& [key, fresh] : inodes_) {
            if (fresh && fresh->nlink > names[key]) short_of_names.insert(key);
        }
        if (short_of_names.empty()) return {};
        report_->scanned_entries = true;
        // A few inodes (the usual case: a link just made) are filtered in SQL, which halves
        // the pass (rows are not handed out one by one); many are filtered here.
        constexpr std::size_t kInodesInSql = 64;
        const bool in_sql = short_of_names.size() <= kInodesInSql;
        std::string sql =
            std::string("SELECT dir, ") + kEntryColumnsSql + " FROM entries WHERE nlink <= 1";
        if (in_sql) {
            sql += " AND ino IN (";
            for (std::size_t i = 0; i < short_of_names.size(); ++i) sql += i == 0 ? "?" : ",?";
            sql += ")";
        }
        Statement pass;
        if (auto s = db_.prepare(sql, &pass); !s) return s;
        if (in_sql) {
            int param = 1;
            for (const InodeKey& k : short_of_names) {
                pass.bind_int64(param++, static_cast<std::int64_t>(k.ino));
            }
        }
        for (bool row = true;;) {
            if (auto s = pass.step(&row); !s) return s;
            if (!row) break;
            const InodeKey key{static_cast<std::uint64_t>(pass.column_int64(10)),
                               static_cast<std::uint64_t>(pass.column_int64(11))};
            if (!short_of_names.contains(key)) continue;
            const std::int64_t dir = pass.column_int64(0);
            const DirInfo* d = nullptr;
            if (auto s = dir_info(dir, &d); !s) return s;
            if (d->visible && !d->fresh) others_.push_back({dir, stored_entry(pass, 1)});
        }
        return {};
    }

    // The metadata `name` should carry now, or false when it cannot be known here.
    bool metadata_now(const OtherName& name, const std::optional<core::WalkResult>& fresh,
                      core::WalkResult* now) {
        *now = name.stored;
        if (fresh) {
            const core::WalkResult& f = *fresh;
            now->type = f.type;
            now->has_stat = true;
            now->error = 0;
            now->size = f.size;
            now->blocks = f.blocks;
            now->dev = f.dev;
            now->ino = f.ino;
            now->nlink = f.nlink;
            now->mode = f.mode;
            now->uid = f.uid;
            now->gid = f.gid;
            now->mtime_ns = f.mtime_ns;
            now->ctime_ns = f.ctime_ns;
            return true;
        }
        // The caller saw the inode only leave: this name's own lstat tells what it is now.
        const std::string path = dirs_.at(name.dir).prefix + name.stored.path;
        core::FileStat st;
        if (core::real_fs_ops().stat_at(AT_FDCWD, path.c_str(), st, false) != 0) return false;
        if (st.dev != name.stored.dev || st.ino != name.stored.ino) return false;
        now->type = core::entry_type_from_mode(st.mode);
        now->has_stat = true;
        now->error = 0;
        now->size = st.size;
        now->blocks = st.blocks;
        now->nlink = st.nlink;
        now->mode = st.mode;
        now->uid = st.uid;
        now->gid = st.gid;
        now->mtime_ns = st.mtime_ns;
        now->ctime_ns = st.ctime_ns;
        return true;
    }

    struct DirChange {
        Totals single;
        std::uint64_t digest_delta = 0;  // modulo 2^64, as the digest is
        std::vector<core::WalkResult> rows;
        // (dev, ino) -> the links row after (size, blocks), or none: no multi-link name left.
        std::map<InodeKey, std::optional<std::pair<std::int64_t, std::int64_t>>> links;
    };

    core::Status apply() {
        std::map<std::int64_t, DirChange> changes;
        for (const OtherName& name : others_) {
            const InodeKey key{name.stored.dev, name.stored.ino};
            core::WalkResult now;
            if (!metadata_now(name, inodes_.at(key), &now)) {
                report_->stale_dirs.push_back(name.dir);
                continue;
            }
            if (same_entry_metadata(now, name.stored)) continue;
            DirChange& c = changes[name.dir];
            c.single -= single_part(name.stored);
            c.single += single_part(now);
            c.digest_delta += entry_hash(now) - entry_hash(name.stored);
            if (now.nlink > 1) {
                c.links[key] = std::pair{static_cast<std::int64_t>(now.size),
                                         static_cast<std::int64_t>(now.blocks)};
            } else {
                c.links.try_emplace(key);
            }
            c.rows.push_back(std::move(now));
        }
        std::sort(report_->stale_dirs.begin(), report_->stale_dirs.end());
        report_->stale_dirs.erase(
            std::unique(report_->stale_dirs.begin(), report_->stale_dirs.end()),
            report_->stale_dirs.end());
        if (changes.empty()) return {};
        if (auto s = write_rows(changes); !s) return s;
        return adjust_totals(changes);
    }

    core::Status write_rows(const std::map<std::int64_t, DirChange>& changes) {
        Statement update_entry;
        Statement read_digest;
        Statement write_digest;
        Statement upsert_link;
        Statement delete_link;
        core::Status s = db_.prepare(
            "UPDATE entries SET type = ?3, size = ?4, blocks = ?5, mtime_ns = ?6, ctime_ns = ?7,"
            " mode = ?8, uid = ?9, gid = ?10, dev = ?11, ino = ?12, nlink = ?13, error = ?14"
            " WHERE dir = ?1 AND name = ?2",
            &update_entry);
        if (s) s = db_.prepare("SELECT digest FROM dirs WHERE id = ?", &read_digest);
        if (s) s = db_.prepare("UPDATE dirs SET digest = ? WHERE id = ?", &write_digest);
        if (s) {
            s = db_.prepare(
                "INSERT INTO links(dir, dev, ino, size, blocks) VALUES (?,?,?,?,?)"
                " ON CONFLICT(dir, dev, ino) DO UPDATE SET size = excluded.size,"
                " blocks = excluded.blocks",
                &upsert_link);
        }
        if (s) {
            s = db_.prepare("DELETE FROM links WHERE dir = ? AND dev = ? AND ino = ?",
                            &delete_link);
        }
        if (!s) return s;
        for (const auto& [dir, c] : changes) {
            for (const core::WalkResult& r : c.rows) {
                update_entry.bind_int64(1, dir).bind_blob(2, r.name());
                bind_entry_metadata(DirectBinder{update_entry}, r);
                if (s = update_entry.run(); !s) return s;
                ++report_->names_updated;
            }
            read_digest.bind_int64(1, dir);
            bool row = false;
            if (s = read_digest.step(&row); !s) return s;
            if (row && !read_digest.column_is_null(0)) {
                const auto digest = static_cast<std::uint64_t>(read_digest.column_int64(0));
                read_digest.reset();
                write_digest.bind_int64(1, static_cast<std::int64_t>(digest + c.digest_delta))
                    .bind_int64(2, dir);
                if (s = write_digest.run(); !s) return s;
            }
            read_digest.reset();
            for (const auto& [key, after] : c.links) {
                if (after) {
                    upsert_link.bind_int64(1, dir)
                        .bind_int64(2, static_cast<std::int64_t>(key.dev))
                        .bind_int64(3, static_cast<std::int64_t>(key.ino))
                        .bind_int64(4, after->first)
                        .bind_int64(5, after->second);
                    if (s = upsert_link.run(); !s) return s;
                } else {
                    delete_link.bind_int64(1, dir)
                        .bind_int64(2, static_cast<std::int64_t>(key.dev))
                        .bind_int64(3, static_cast<std::int64_t>(key.ino));
                    if (s = delete_link.run(); !s) return s;
                }
            }
        }
        return {};
    }

    // What an inode's `links` rows add to the multi-link part of each directory at or above
    // them: the inode once (its largest size and blocks among its names, as the scan's own
    // count and the swap's recount take them), if any of its names lies below.
    core::Status multi_parts(const std::vector<LinkRow>& rows,
                             std::map<std::int64_t, Totals>* out) {
        out->clear();
        for (const LinkRow& l : rows) {
            for (std::int64_t id = l.dir; id != 0;) {
                const DirInfo* d = nullptr;
                if (auto s = dir_info(id, &d); !s) return s;
                if (!d->visible) break;
                auto [it, added] = out->try_emplace(id, Totals{l.size, l.blocks, 1, 0});
                if (!added) {
                    it->second.size = std::max(it->second.size, l.size);
                    it->second.blocks = std::max(it->second.blocks, l.blocks);
                }
                id = d->parent;
            }
        }
        return {};
    }

    // Each changed directory and its ancestors: the additive difference of the names below
    // it, plus the difference of the multi-link part (recounted per changed inode, over the
    // ancestors of its names only).
    core::Status adjust_totals(const std::map<std::int64_t, DirChange>& changes) {
        std::map<std::int64_t, Totals> delta;  // every changed dir and ancestor
        std::set<InodeKey> changed_inodes;
        for (const auto& [dir, c] : changes) {
            for (const auto& [key, after] : c.links) changed_inodes.insert(key);
            if (!(c.single == Totals{})) report_->single.push_back({dir, c.single});
            for (std::int64_t id = dir; id != 0;) {
                const DirInfo* d = nullptr;
                if (auto s = dir_info(id, &d); !s) return s;
                if (!d->visible) break;
                delta[id] += c.single;
                id = d->parent;
            }
        }
        std::vector<LinkRow> rows;
        std::map<std::int64_t, Totals> before;
        std::map<std::int64_t, Totals> after;
        for (const InodeKey& key : changed_inodes) {
            if (auto s = multi_parts(links_before_.at(key), &before); !s) return s;
            if (auto s = link_rows(key, &rows); !s) return s;
            if (auto s = multi_parts(rows, &after); !s) return s;
            for (const auto& [id, t] : after) delta[id] += t;
            for (const auto& [id, t] : before) delta[id] -= t;
        }
        Statement update;
        if (auto s = db_.prepare("UPDATE dirs SET size = size + ?, blocks = blocks + ?,"
                                 " files = files + ?, dirs = dirs + ? WHERE id = ?",
                                 &update);
            !s) {
            return s;
        }
        for (const auto& [id, t] : delta) {
            if (t == Totals{}) continue;
            update.bind_int64(1, t.size)
                .bind_int64(2, t.blocks)
                .bind_int64(3, t.files)
                .bind_int64(4, t.dirs)
                .bind_int64(5, id);
            if (auto s = update.run(); !s) return s;
            report_->totals_rewritten.push_back(id);
        }
        return {};
    }

    Database& db_;
    const IsFreshDir& is_fresh_;
    InodeSyncReport* report_;
    Statement dir_by_id_;
    Statement links_of_inode_;
    std::unordered_map<std::int64_t, DirInfo> dirs_;
    std::map<InodeKey, std::optional<core::WalkResult>> inodes_;
    std::map<InodeKey, std::vector<LinkRow>> links_before_;
    std::vector<OtherName> others_;
};

}  // namespace

InodeChange inode_change_of(const core::WalkResult& r) {
    core::WalkResult m;
    m.type = r.type;
    m.has_stat = r.has_stat;
    m.size = r.size;
    m.blocks = r.blocks;
    m.dev = r.dev;
    m.ino = r.ino;
    m.nlink = r.nlink;
    m.mode = r.mode;
    m.uid = r.uid;
    m.gid = r.gid;
    m.mtime_ns = r.mtime_ns;
    m.ctime_ns = r.ctime_ns;
    return InodeChange{r.dev, r.ino, std::move(m)};
}

core::Status sync_inode_names(Database& db, std::span<const InodeChange> inodes,
                              const IsFreshDir& is_fresh, InodeSyncReport* report) {
    *report = {};
    return InodeSync(db, is_fresh, report).run(inodes);
}

}  // namespace wsindex::storage
