// Content hashes: dupes candidates from the index, and the hash cache (content_hashes.hpp).
#include "storage/content_hashes.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>

#include "storage/database.hpp"
#include "storage/path_range.hpp"
#include "storage/read_transaction.hpp"
#include "storage/statement.hpp"
#include "storage/transaction_guard.hpp"

namespace wsindex::storage {
namespace {

std::optional<Hash128> read_hash(const Statement& s, int column) {
    if (s.column_is_null(column)) return std::nullopt;
    const std::string_view bytes = s.column_bytes(column);
    if (bytes.size() != 16) return std::nullopt;
    Hash128 h{};
    std::memcpy(h.data(), bytes.data(), h.size());
    return h;
}

std::string_view hash_bytes(const Hash128& h) {
    return {reinterpret_cast<const char*>(h.data()), h.size()};
}

// Below this many candidates their cached hashes are looked up one by one; from it on the
// cache is read in key order beside the candidates sorted the same way (one pass, no lookups).
constexpr std::size_t kPointLookups = 2048;

// The inode of `c` as SQLite orders the cache's primary key (signed integers).
std::pair<std::int64_t, std::int64_t> key_of(const DupeCandidate& c) {
    return {static_cast<std::int64_t>(c.dev), static_cast<std::int64_t>(c.ino)};
}

// Sets c.partial/c.full from a cache row (columns from `first`: size, mtime_ns, ctime_ns,
// partial, full) when the row describes the inode as indexed now.
void take_hashes(const Statement& s, int first, DupeCandidate* c) {
    if (s.column_int64(first) != c->size || s.column_int64(first + 1) != c->mtime_ns ||
        s.column_int64(first + 2) != c->ctime_ns) {
        return;
    }
    c->partial = read_hash(s, first + 3);
    c->full = read_hash(s, first + 4);
}

// A candidate (index into the output) by its inode's key.
struct InodeRef {
    std::pair<std::int64_t, std::int64_t> key;
    std::size_t index;
};

// Attaches the valid cached hashes to the candidates (any order; `by_inode` lists them sorted
// by key).
core::Status attach_hashes(Database& db, std::vector<DupeCandidate>* out,
                           const std::vector<InodeRef>& by_inode) {
    Statement s;
    if (by_inode.size() < kPointLookups) {
        if (auto st = db.prepare("SELECT size, mtime_ns, ctime_ns, partial, full"
                                 " FROM content_hashes WHERE dev = ?1 AND ino = ?2",
                                 &s);
            !st) {
            return st;
        }
        for (const InodeRef& r : by_inode) {
            DupeCandidate& c = (*out)[r.index];
            s.bind_int64(1, r.key.first).bind_int64(2, r.key.second);
            bool row = false;
            if (auto st = s.step(&row); !st) return st;
            if (row) take_hashes(s, 0, &c);
            s.reset();
        }
        return {};
    }
    if (auto st = db.prepare("SELECT dev, ino, size, mtime_ns, ctime_ns, partial, full"
                             " FROM content_hashes ORDER BY dev, ino",
                             &s);
        !st) {
        return st;
    }
    std::size_t k = 0;
    for (bool row = true; k < by_inode.size();) {
        if (auto st = s.step(&row); !st) return st;
        if (!row) break;
        const std::pair<std::int64_t, std::int64_t> key{s.column_int64(0), s.column_int64(1)};
        while (k < by_inode.size() && by_inode[k].key < key) ++k;
        // Several names of one inode are consecutive candidates.
        for (; k < by_inode.size() && by_inode[k].key == key; ++k) {
            take_hashes(s, 2, &(*out)[by_inode[k].index]);
        }
    }
    return {};
}

}  // namespace

core::Status dupe_candidates(Database& db, const CandidateQuery& q,
                             std::vector<DupeCandidate>* out) {
    out->clear();
    // Roots as prefix ranges of the dirs table; a root below another adds nothing.
    std::vector<std::string> roots = q.roots;
    if (roots.empty()) roots.emplace_back("/");
    std::sort(roots.begin(), roots.end());
    std::vector<PrefixRange> ranges;
    for (const std::string& root : roots) {
        const PrefixRange r = subtree_range(root);
        if (!ranges.empty() && r.lo.compare(0, ranges.back().lo.size(), ranges.back().lo) == 0)
            continue;
        ranges.push_back(r);
    }
    std::string where;
    for (std::size_t i = 0; i < ranges.size(); ++i) {
        where += i == 0 ? "(" : " OR ";
        where += "(d.prefix >= ?" + std::to_string(2 * i + 2) + " AND d.prefix < ?" +
                 std::to_string(2 * i + 3) + ")";
    }
    where += ")";
    // Every file row comes back as its directory's id and its name: most rows are no candidates
    // (and a path per row, built in SQL, costs an allocation per row), so paths are built below
    // only for the candidates, from each directory's prefix (copied once per directory: rows come
    // directory by directory, as the join walks dirs). Grouping and ordering are
    // done here rather than in SQL: a sort of small keys costs less than SQLite's sorter over rows.
    const std::string sql =
        "SELECT e.dir, e.name, e.size, e.mtime_ns, coalesce(e.ctime_ns, e.mtime_ns), e.dev, e.ino,"
        " d.prefix FROM entries AS e JOIN dirs AS d ON d.id = e.dir"
        " WHERE e.type = 'f' AND e.size >= ?1 AND e.dev IS NOT NULL AND e.ino IS NOT NULL"
        "  AND e.mtime_ns IS NOT NULL AND d.id != 0 AND " +
        where;
    ReadTransaction txn(db);
    if (auto st = txn.begin(); !st) return st;
    Statement s;
    if (auto st = db.prepare(sql, &s); !st) return st;
    s.bind_int64(1, std::max<std::int64_t>(q.min_size, 0));
    for (std::size_t i = 0; i < ranges.size(); ++i) {
        s.bind_blob(static_cast<int>(2 * i + 2), ranges[i].lo);
        s.bind_blob(static_cast<int>(2 * i + 3), ranges[i].hi);
    }
    struct Row {
        std::int64_t size;
        std::uint64_t dev;
        std::uint64_t ino;
        std::int64_t mtime_ns;
        std::int64_t ctime_ns;
        std::int64_t dir;
        std::size_t name_at;  // in `names`
        std::size_t name_len;
    };
    std::vector<Row> rows;
    std::string names;                                           // every row's name, back to back
    std::vector<std::pair<std::int64_t, std::string>> prefixes;  // (dir id, prefix)
    for (bool row = true;;) {
        if (auto st = s.step(&row); !st) return st;
        if (!row) break;
        const std::int64_t dir = s.column_int64(0);
        if (prefixes.empty() || prefixes.back().first != dir) {
            prefixes.emplace_back(dir, std::string(s.column_bytes(7)));
        }
        const std::string_view name = s.column_bytes(1);
        rows.push_back({s.column_int64(2), static_cast<std::uint64_t>(s.column_int64(5)),
                        static_cast<std::uint64_t>(s.column_int64(6)), s.column_int64(3),
                        s.column_int64(4), dir, names.size(), name.size()});
        names.append(name);
    }
    // By size descending, then inode; the rows themselves stay where they are.
    std::vector<std::uint32_t> order(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
    std::sort(order.begin(), order.end(), [&rows](std::uint32_t x, std::uint32_t y) {
        const Row& a = rows[x];
        const Row& b = rows[y];
        if (a.size != b.size) return a.size > b.size;
        if (a.dev != b.dev) return a.dev < b.dev;
        return a.ino < b.ino;
    });
    // Keep the sizes held by more than one inode.
    std::vector<std::uint32_t> kept;
    for (std::size_t i = 0; i < order.size();) {
        const Row& first = rows[order[i]];
        std::size_t j = i;
        bool several = false;
        for (; j < order.size() && rows[order[j]].size == first.size; ++j) {
            several |= rows[order[j]].dev != first.dev || rows[order[j]].ino != first.ino;
        }
        if (several) kept.insert(kept.end(), order.begin() + i, order.begin() + j);
        i = j;
    }
    // A directory seen again later (no order is promised) gives the same prefix.
    std::sort(prefixes.begin(), prefixes.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    prefixes.erase(std::unique(prefixes.begin(), prefixes.end(),
                               [](const auto& a, const auto& b) { return a.first == b.first; }),
                   prefixes.end());
    const auto prefix_of = [&prefixes](std::int64_t dir) -> const std::string& {
        return std::lower_bound(prefixes.begin(), prefixes.end(), dir,
                                [](const auto& p, std::int64_t id) { return p.first < id; })
            ->second;
    };
    out->reserve(kept.size());
    for (std::uint32_t r : kept) {
        const Row& row = rows[r];
        DupeCandidate& c = out->emplace_back();
        const std::string& prefix = prefix_of(row.dir);
        c.path.reserve(prefix.size() + row.name_len);
        c.path.append(prefix).append(names, row.name_at, row.name_len);
        c.size = row.size;
        c.mtime_ns = row.mtime_ns;
        c.ctime_ns = row.ctime_ns;
        c.dev = row.dev;
        c.ino = row.ino;
    }
    // The names of one inode (its hard links) by path.
    for (std::size_t i = 0; i < out->size();) {
        std::size_t j = i + 1;
        while (j < out->size() && (*out)[j].dev == (*out)[i].dev && (*out)[j].ino == (*out)[i].ino)
            ++j;
        if (j - i > 1) {
            std::sort(
                out->begin() + static_cast<std::ptrdiff_t>(i),
                out->begin() + static_cast<std::ptrdiff_t>(j),
                [](const DupeCandidate& a, const DupeCandidate& b) { return a.path < b.path; });
        }
        i = j;
    }
    std::vector<InodeRef> by_inode;
    by_inode.reserve(out->size());
    for (std::size_t i = 0; i < out->size(); ++i) by_inode.push_back({key_of((*out)[i]), i});
    std::sort(by_inode.begin(), by_inode.end(),
              [](const InodeRef& a, const InodeRef& b) { return a.key < b.key; });
    return attach_hashes(db, out, by_inode);
}

core::Status store_content_hashes(Database& db, const std::vector<HashRecord>& records) {
    if (records.empty()) return {};
    TransactionGuard txn(db);
    if (auto st = txn.begin("BEGIN IMMEDIATE"); !st) return st;
    Statement s;
    // A full hash stays when the new record has none and the row describes the same inode state.
    if (auto st = db.prepare(
            "INSERT INTO content_hashes(dev, ino, size, mtime_ns, ctime_ns, partial, full)"
            " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
            " ON CONFLICT(dev, ino) DO UPDATE SET"
            "  full = CASE WHEN excluded.full IS NULL AND size = excluded.size"
            "   AND mtime_ns = excluded.mtime_ns AND ctime_ns = excluded.ctime_ns"
            "   THEN full ELSE excluded.full END,"
            "  partial = excluded.partial, size = excluded.size,"
            "  mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns",
            &s);
        !st) {
        return st;
    }
    for (const HashRecord& r : records) {
        s.bind_int64(1, static_cast<std::int64_t>(r.dev))
            .bind_int64(2, static_cast<std::int64_t>(r.ino))
            .bind_int64(3, r.size)
            .bind_int64(4, r.mtime_ns)
            .bind_int64(5, r.ctime_ns);
        if (r.partial) {
            s.bind_blob(6, hash_bytes(*r.partial));
        } else {
            s.bind_null(6);
        }
        if (r.full) {
            s.bind_blob(7, hash_bytes(*r.full));
        } else {
            s.bind_null(7);
        }
        if (auto st = s.run(); !st) return st;
    }
    return txn.commit();
}

core::Status prune_content_hashes(Database& db, std::int64_t* removed) {
    if (removed != nullptr) *removed = 0;
    std::int64_t rows = 0;
    if (auto st = db.query_int64("SELECT EXISTS (SELECT 1 FROM content_hashes)", &rows); !st)
        return st;
    if (rows == 0) return {};
    // Only entries of the sizes that have rows are looked at (a row of another size can never be
    // valid again), so the subquery's temporary index stays as small as the cache.
    if (auto st = db.exec("DELETE FROM content_hashes WHERE (dev, ino, size) NOT IN"
                          " (SELECT dev, ino, size FROM entries WHERE type = 'f'"
                          "  AND size IN (SELECT size FROM content_hashes))");
        !st) {
        return st;
    }
    if (removed != nullptr) *removed = db.changes();
    return {};
}

}  // namespace wsindex::storage
