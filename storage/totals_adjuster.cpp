// TotalsAdjuster: single parts adjusted by differences, multi-link parts recounted.
#include "storage/totals_adjuster.hpp"

#include "storage/path_range.hpp"

namespace wsindex::storage {

core::Status TotalsAdjuster::prepare() {
    if (prepared_) return {};
    if (auto s = db_.prepare("SELECT parent, prefix, size, blocks, files, dirs FROM dirs"
                             " WHERE id = ?",
                             &read_dir_);
        !s) {
        return s;
    }
    // The same count as the scan's swap (scan_swap.cpp): each inode once, at its largest size.
    if (auto s =
            db_.prepare("SELECT coalesce(sum(s), 0), coalesce(sum(b), 0), count(*) FROM"
                        " (SELECT max(l.size) AS s, max(l.blocks) AS b FROM links AS l"
                        "  JOIN dirs AS d ON d.id = l.dir WHERE d.prefix >= ?1 AND d.prefix < ?2"
                        "  GROUP BY l.dev, l.ino)",
                        &multi_);
        !s) {
        return s;
    }
    if (auto s = db_.prepare("UPDATE dirs SET size = ?, blocks = ?, files = ?, dirs = ?"
                             " WHERE id = ?",
                             &update_);
        !s) {
        return s;
    }
    std::int64_t any = 0;
    if (auto s = db_.query_int64("SELECT EXISTS (SELECT 1 FROM links)", &any); !s) return s;
    links_before_ = any != 0;
    prepared_ = true;
    return {};
}

core::Status TotalsAdjuster::multi_of(const std::string& prefix, Totals* out) {
    const PrefixRange r =
        subtree_range(prefix.size() > 1 ? std::string_view(prefix).substr(0, prefix.size() - 1)
                                        : std::string_view(prefix));
    multi_.bind_blob(1, r.lo).bind_blob(2, r.hi);
    bool row = false;
    if (auto s = multi_.step(&row); !s) return s;
    *out = Totals{multi_.column_int64(0), multi_.column_int64(1), multi_.column_int64(2), 0};
    multi_.reset();
    return {};
}

core::Status TotalsAdjuster::touch(std::int64_t dir) {
    if (auto s = prepare(); !s) return s;
    for (std::int64_t id = dir; id != 0 && nodes_.find(id) == nodes_.end();) {
        read_dir_.bind_int64(1, id);
        bool row = false;
        if (auto s = read_dir_.step(&row); !s) return s;
        if (!row) {
            read_dir_.reset();
            break;
        }
        Node n;
        n.parent = read_dir_.column_int64(0);
        n.prefix.assign(read_dir_.column_bytes(1));
        n.single = Totals{read_dir_.column_int64(2), read_dir_.column_int64(3),
                          read_dir_.column_int64(4), read_dir_.column_int64(5)};
        read_dir_.reset();
        if (links_before_) {
            Totals m;
            if (auto s = multi_of(n.prefix, &m); !s) return s;
            n.single -= m;
        }
        const std::int64_t parent = n.parent;
        nodes_.emplace(id, std::move(n));
        id = parent;
    }
    return {};
}

Totals TotalsAdjuster::single_before(std::int64_t dir) const {
    const auto it = nodes_.find(dir);
    return it == nodes_.end() ? Totals{} : it->second.single;
}

void TotalsAdjuster::add(std::int64_t dir, const Totals& single_delta) {
    for (auto it = nodes_.find(dir); it != nodes_.end(); it = nodes_.find(it->second.parent)) {
        it->second.single += single_delta;
        if (it->second.parent == 0) break;
    }
}

void TotalsAdjuster::removed(std::int64_t dir) {
    if (auto it = nodes_.find(dir); it != nodes_.end()) it->second.gone = true;
}

core::Status TotalsAdjuster::finish() {
    if (!prepared_) return {};
    std::int64_t any = 0;
    if (auto s = db_.query_int64("SELECT EXISTS (SELECT 1 FROM links)", &any); !s) return s;
    for (auto& [id, n] : nodes_) {
        if (n.gone) continue;
        Totals t = n.single;
        if (any != 0) {
            Totals m;
            if (auto s = multi_of(n.prefix, &m); !s) return s;
            t += m;
        }
        update_.bind_int64(1, t.size)
            .bind_int64(2, t.blocks)
            .bind_int64(3, t.files)
            .bind_int64(4, t.dirs)
            .bind_int64(5, id);
        if (auto s = update_.run(); !s) return s;
    }
    nodes_.clear();
    return {};
}

}  // namespace wsindex::storage
