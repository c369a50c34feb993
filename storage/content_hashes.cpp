// Content hashes: dupes candidates from the index, and the hash cache (content_hashes.hpp).
#include "storage/content_hashes.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

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

// Keeps the rows of `group` (one size) if they hold more than one inode.
void flush_group(std::vector<DupeCandidate>& group, std::vector<DupeCandidate>* out) {
    bool several = false;
    for (const DupeCandidate& c : group) {
        if (c.dev != group.front().dev || c.ino != group.front().ino) several = true;
    }
    if (several) {
        std::sort(group.begin(), group.end(), [](const DupeCandidate& a, const DupeCandidate& b) {
            if (a.dev != b.dev) return a.dev < b.dev;
            if (a.ino != b.ino) return a.ino < b.ino;
            return a.path < b.path;
        });
        for (DupeCandidate& c : group) out->push_back(std::move(c));
    }
    group.clear();
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
    // The cached hash joins only while it describes the inode as indexed now.
    const std::string sql =
        "SELECT d.prefix || e.name, e.size, e.mtime_ns, coalesce(e.ctime_ns, e.mtime_ns),"
        " e.dev, e.ino, h.partial, h.full"
        " FROM entries AS e JOIN dirs AS d ON d.id = e.dir"
        " LEFT JOIN content_hashes AS h ON h.dev = e.dev AND h.ino = e.ino AND h.size = e.size"
        "  AND h.mtime_ns = e.mtime_ns AND h.ctime_ns = coalesce(e.ctime_ns, e.mtime_ns)"
        " WHERE e.type = 'f' AND e.size >= ?1 AND e.dev IS NOT NULL AND e.ino IS NOT NULL"
        "  AND e.mtime_ns IS NOT NULL AND d.id != 0 AND " +
        where + " ORDER BY e.size DESC";
    ReadTransaction txn(db);
    if (auto st = txn.begin(); !st) return st;
    Statement s;
    if (auto st = db.prepare(sql, &s); !st) return st;
    s.bind_int64(1, std::max<std::int64_t>(q.min_size, 0));
    for (std::size_t i = 0; i < ranges.size(); ++i) {
        s.bind_blob(static_cast<int>(2 * i + 2), ranges[i].lo);
        s.bind_blob(static_cast<int>(2 * i + 3), ranges[i].hi);
    }
    std::vector<DupeCandidate> group;
    for (bool row = true;;) {
        if (auto st = s.step(&row); !st) return st;
        if (!row) break;
        DupeCandidate c;
        c.path.assign(s.column_bytes(0));
        c.size = s.column_int64(1);
        c.mtime_ns = s.column_int64(2);
        c.ctime_ns = s.column_int64(3);
        c.dev = static_cast<std::uint64_t>(s.column_int64(4));
        c.ino = static_cast<std::uint64_t>(s.column_int64(5));
        c.partial = read_hash(s, 6);
        c.full = read_hash(s, 7);
        if (!group.empty() && group.front().size != c.size) flush_group(group, out);
        group.push_back(std::move(c));
    }
    flush_group(group, out);
    return {};
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
