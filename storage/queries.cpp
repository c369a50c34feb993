// Queries: SQL assembly for filtered finds, the name-index path, and directory totals.
#include "storage/queries.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "storage/database.hpp"
#include "storage/name_index.hpp"
#include "storage/path_range.hpp"
#include "storage/read_transaction.hpp"

namespace wsindex::storage {
namespace {

// Above this many name-index candidates, point lookups (a few µs each) cost more than one
// sequential scan of the table with the filters pushed down.
constexpr std::size_t kMaxIndexCandidates = 50000;

constexpr const char* kFileColumns =
    "d.prefix, e.name, e.type, e.size, e.blocks, e.mtime_ns, coalesce(e.ctime_ns, e.mtime_ns),"
    " e.mode, e.uid, e.gid, e.dev, e.ino, e.nlink, e.error";

// The entry's own columns, from column `first` of `s` on (kEntryColumns' order). A NULL
// ctime_ns is the same as mtime_ns (schema version 3).
constexpr const char* kEntryColumns =
    "e.type, e.size, e.blocks, e.mtime_ns, coalesce(e.ctime_ns, e.mtime_ns), e.mode, e.uid,"
    " e.gid, e.dev, e.ino, e.nlink, e.error";

void read_entry_columns(const Statement& s, int first, FileRow* out) {
    FileRow& r = *out;
    const std::string_view type = s.column_bytes(first);
    r.type = type.empty() ? '?' : type[0];
    r.has_stat = !s.column_is_null(first + 1);
    r.size = s.column_int64(first + 1);
    r.blocks = s.column_int64(first + 2);
    r.mtime_ns = s.column_int64(first + 3);
    r.ctime_ns = s.column_int64(first + 4);
    r.mode = static_cast<std::uint32_t>(s.column_int64(first + 5));
    r.uid = static_cast<std::uint32_t>(s.column_int64(first + 6));
    r.gid = static_cast<std::uint32_t>(s.column_int64(first + 7));
    r.dev = static_cast<std::uint64_t>(s.column_int64(first + 8));
    r.ino = static_cast<std::uint64_t>(s.column_int64(first + 9));
    r.nlink = static_cast<std::uint64_t>(s.column_int64(first + 10));
    r.error = static_cast<int>(s.column_int64(first + 11));
}

// A row of kFileColumns: prefix, name, then the entry's columns.
FileRow read_file_row(const Statement& s) {
    FileRow r;
    r.path.assign(s.column_bytes(0));
    r.name.assign(s.column_bytes(1));
    r.path += r.name;
    read_entry_columns(s, 2, &r);
    return r;
}

DirTotalsRow read_dir_row(const Statement& s) {
    DirTotalsRow r;
    std::string_view prefix = s.column_bytes(0);
    if (prefix.size() > 1) prefix.remove_suffix(1);
    r.path.assign(prefix);
    r.size = s.column_int64(1);
    r.blocks = s.column_int64(2);
    r.files = s.column_int64(3);
    r.dirs = s.column_int64(4);
    r.depth = static_cast<std::uint32_t>(s.column_int64(5));
    return r;
}

// The WHERE clause of the metadata filters, with its parameters in `binds` (blob or int).
struct Bind {
    enum class Kind { text, blob, integer } kind;
    std::string bytes;
    std::int64_t value;
};

// `with_under`: false when the caller checks the subtree itself (the name index knows each
// name's prefix, and then the statement needs no join with dirs).
std::string metadata_filters(const FindQuery& q, std::vector<Bind>* binds, bool with_under = true) {
    std::string where;
    auto add_int = [&](const char* sql, std::int64_t v) {
        where += sql;
        binds->push_back({Bind::Kind::integer, {}, v});
    };
    if (!q.types.empty()) {
        where += " AND e.type IN (";
        for (std::size_t i = 0; i < q.types.size(); ++i) {
            where += i == 0 ? "?" : ",?";
            binds->push_back({Bind::Kind::text, std::string(1, q.types[i]), 0});
        }
        where += ")";
    }
    if (q.min_size) add_int(" AND e.size >= ?", *q.min_size);
    if (q.max_size) add_int(" AND e.size <= ?", *q.max_size);
    if (q.min_mtime_ns) add_int(" AND e.mtime_ns >= ?", *q.min_mtime_ns);
    if (q.max_mtime_ns) add_int(" AND e.mtime_ns <= ?", *q.max_mtime_ns);
    if (q.uid) add_int(" AND e.uid = ?", *q.uid);
    if (with_under && !q.under.empty()) {
        const PrefixRange r = subtree_range(q.under);
        where += " AND d.prefix >= ? AND d.prefix < ?";
        binds->push_back({Bind::Kind::blob, r.lo, 0});
        binds->push_back({Bind::Kind::blob, r.hi, 0});
    }
    return where;
}

void bind_all(Statement& s, const std::vector<Bind>& binds, int first) {
    int i = first;
    // The type letter is TEXT in the table, paths are BLOBs: a BLOB never equals a TEXT.
    for (const Bind& b : binds) {
        switch (b.kind) {
            case Bind::Kind::text:
                s.bind_text(i++, b.bytes);
                break;
            case Bind::Kind::blob:
                s.bind_blob(i++, b.bytes);
                break;
            case Bind::Kind::integer:
                s.bind_int64(i++, b.value);
                break;
        }
    }
}

const char* order_sql(Order order) {
    switch (order) {
        case Order::none:
            return "";
        case Order::path:
            return " ORDER BY CAST(d.prefix || e.name AS BLOB)";
        case Order::size_desc:
            return " ORDER BY e.size DESC";
        case Order::mtime_desc:
            return " ORDER BY e.mtime_ns DESC";
    }
    return "";
}

void sort_rows(Order order, std::vector<FileRow>* rows) {
    auto& v = *rows;
    switch (order) {
        case Order::none:
            return;
        case Order::path:
            // Byte order of the whole path, as SQL's memcmp order of the BLOB.
            std::sort(v.begin(), v.end(),
                      [](const FileRow& a, const FileRow& b) { return a.path < b.path; });
            return;
        case Order::size_desc:
            std::stable_sort(v.begin(), v.end(),
                             [](const FileRow& a, const FileRow& b) { return a.size > b.size; });
            return;
        case Order::mtime_desc:
            std::stable_sort(v.begin(), v.end(), [](const FileRow& a, const FileRow& b) {
                return a.mtime_ns > b.mtime_ns;
            });
            return;
    }
}

}  // namespace

core::Status Queries::find(const FindQuery& q, std::vector<FileRow>* out) {
    out->clear();
    return find(q, [out](FileRow& row) {
        out->push_back(std::move(row));
        return true;
    });
}

core::Status Queries::find(const FindQuery& q, const RowSink& sink) {
    last_used_index_ = false;
    // One snapshot for the generation check and every lookup.
    ReadTransaction txn(db_);
    if (auto s = txn.begin(); !s) return s;
    // An empty pattern lists every name: only a paths-only find gains from the index then.
    if (index_ != nullptr && q.match == NameMatch::substring &&
        (!q.pattern.empty() || !q.metadata)) {
        std::int64_t generation = -1;
        if (auto s =
                db_.query_int64("SELECT value FROM meta WHERE key = 'generation'", &generation);
            !s) {
            return s;
        }
        if (generation == index_->generation()) {
            bool done = false;
            if (auto s = find_with_index(q, sink, &done); !s) return s;
            if (done) {
                last_used_index_ = true;
                return {};
            }
        }
    }
    return find_with_sql(q, sink);
}

namespace {

// Whether the name index alone can answer `q`: it holds each name's directory prefix and type,
// nothing else of the entry.
bool index_alone_answers(const FindQuery& q) {
    return !q.metadata && !q.min_size && !q.max_size && !q.min_mtime_ns && !q.max_mtime_ns &&
           !q.uid && (q.order == Order::none || q.order == Order::path);
}

// prefix + name of `a` before that of `b`, in byte order (SQL's BLOB order), without building
// either path.
bool path_less(const NameIndex::Key& a, const NameIndex::Key& b) {
    const auto byte = [](const NameIndex::Key& k, std::size_t i) {
        return static_cast<unsigned char>(i < k.prefix.size() ? k.prefix[i]
                                                              : k.name[i - k.prefix.size()]);
    };
    const std::size_t na = a.prefix.size() + a.name.size();
    const std::size_t nb = b.prefix.size() + b.name.size();
    // Most keys differ inside the prefixes, or share the prefix and differ in the name.
    if (a.prefix == b.prefix) return a.name < b.name;
    for (std::size_t i = 0, n = std::min(na, nb); i < n; ++i) {
        if (byte(a, i) != byte(b, i)) return byte(a, i) < byte(b, i);
    }
    return na < nb;
}

}  // namespace

core::Status Queries::find_paths_in_index(const FindQuery& q, const RowSink& sink, bool* done) {
    const std::optional<PrefixRange> under =
        q.under.empty() ? std::nullopt : std::optional<PrefixRange>(subtree_range(q.under));
    auto wanted = [&](const NameIndex::Key& key) {
        if (under && !(key.prefix >= under->lo && key.prefix < under->hi)) return false;
        return q.types.empty() || q.types.find(key.type) != std::string::npos;
    };
    FileRow row;  // reused: the sink takes it by reference, and its strings keep their room
    auto send = [&](const NameIndex::Key& key) {
        row.path.assign(key.prefix).append(key.name);
        row.name.assign(key.name);
        row.type = key.type;
        return sink(row);
    };
    if (q.order == Order::none) {
        // Streamed as found: memory stays flat whatever the number of matches.
        std::size_t sent = 0;
        index_->for_each_substring(
            q.pattern, q.ignore_case,
            [&](const NameIndex::Key& key) {
                if (!wanted(key)) return true;
                return send(key) && (q.limit == 0 || ++sent < q.limit);
            },
            executor_);
        *done = true;
        return {};
    }
    // Path order: the keys are sorted first (small, no row built), up to the threshold past
    // which SQLite sorts on disk instead (bounded memory).
    std::vector<NameIndex::Key> keys;
    bool too_many = false;
    index_->for_each_substring(
        q.pattern, q.ignore_case,
        [&](const NameIndex::Key& key) {
            if (!wanted(key)) return true;
            if (keys.size() == kMaxIndexCandidates) {
                too_many = true;
                return false;
            }
            keys.push_back(key);
            return true;
        },
        executor_);
    if (too_many) return {};  // *done stays false: SQL answers
    std::sort(keys.begin(), keys.end(), path_less);
    if (q.limit != 0 && keys.size() > q.limit) keys.resize(q.limit);
    for (const NameIndex::Key& key : keys) {
        if (!send(key)) break;
    }
    *done = true;
    return {};
}

core::Status Queries::find_with_index(const FindQuery& q, const RowSink& sink, bool* done) {
    if (index_alone_answers(q)) return find_paths_in_index(q, sink, done);
    // The candidates' keys first (memmem over the names: milliseconds). Past the threshold (a
    // fragment that is in a large share of all names) one SQL scan is cheaper than the point
    // lookups; knowing the count before the first lookup lets the rows of a small answer go to
    // the sink as they are read, so the caller sends the first batch while the rest is read.
    std::vector<NameIndex::Key> keys;
    bool too_many = false;
    // The subtree filter on the prefix the index holds (the same byte order as SQL's BLOB
    // comparison): a name outside costs no lookup.
    const std::optional<PrefixRange> under =
        q.under.empty() ? std::nullopt : std::optional<PrefixRange>(subtree_range(q.under));
    index_->for_each_substring(
        q.pattern, q.ignore_case,
        [&](const NameIndex::Key& key) {
            if (under && !(key.prefix >= under->lo && key.prefix < under->hi)) return true;
            if (keys.size() == kMaxIndexCandidates) {
                too_many = true;
                return false;
            }
            keys.push_back(key);
            return true;
        },
        executor_);
    // The entries' own rows only: the path comes from the index (no lookup in dirs). The keys
    // go kLookupBatch to a statement, as a VALUES list joined to `entries` (CROSS JOIN: in
    // that order, one primary-key search per key, on one cursor): a statement per key opened
    // and closed its cursor every time and cost about half of a 19k-match find (wsbench-query).
    constexpr std::size_t kLookupBatch = 64;
    std::string sql = "WITH k(i, dir, name) AS (VALUES ";
    for (std::size_t i = 0; i < kLookupBatch; ++i) {
        sql += (i == 0 ? "(" : ",(") + std::to_string(i) + ",?,?)";
    }
    sql += std::string(") SELECT k.i, ") + kEntryColumns +
           " FROM k CROSS JOIN entries AS e ON e.dir = k.dir AND e.name = k.name WHERE 1";
    std::vector<Bind> binds;
    sql += metadata_filters(q, &binds, false);
    Statement lookup;
    if (auto s = db_.prepare(sql, &lookup); !s) return s;
    // Calls `row` for each candidate that passes the filters, until it returns false.
    auto look_up = [&](const auto& row) -> core::Status {
        for (std::size_t first = 0; first < keys.size(); first += kLookupBatch) {
            const std::size_t n = std::min(kLookupBatch, keys.size() - first);
            for (std::size_t i = 0; i < kLookupBatch; ++i) {
                const int at = static_cast<int>(2 * i) + 1;
                if (i < n) {
                    lookup.bind_int64(at, keys[first + i].dir)
                        .bind_blob_static(at + 1, keys[first + i].name);
                } else {
                    lookup.bind_null(at).bind_null(at + 1);  // matches nothing
                }
            }
            bind_all(lookup, binds, static_cast<int>(2 * kLookupBatch) + 1);  // reset() clears
            bool more = true;
            for (bool found = true; more;) {
                if (auto s = lookup.step(&found); !s) return s;
                if (!found) break;
                const auto i = static_cast<std::size_t>(lookup.column_int64(0));
                if (i >= n) continue;
                const NameIndex::Key& key = keys[first + i];
                FileRow r;
                r.path.reserve(key.prefix.size() + key.name.size());
                r.path.append(key.prefix).append(key.name);
                r.name.assign(key.name);
                read_entry_columns(lookup, 1, &r);
                more = row(std::move(r));
            }
            lookup.reset();
            if (!more) break;
        }
        return {};
    };
    if (!too_many && q.order == Order::none) {
        std::size_t sent = 0;
        if (auto s =
                look_up([&](FileRow&& r) { return sink(r) && (q.limit == 0 || ++sent < q.limit); });
            !s) {
            return s;
        }
        *done = true;
        return {};
    }
    // Buffered: an order needs every row; and with too many candidates the index still answers
    // a limited query if the first `limit` matches are among the candidates seen (then nothing
    // may have reached the sink before the SQL scan takes over).
    if (too_many && (q.order != Order::none || q.limit == 0)) return {};
    std::vector<FileRow> rows;
    const std::size_t wanted = q.order == Order::none ? q.limit : static_cast<std::size_t>(-1);
    if (auto s = look_up([&](FileRow&& r) {
            rows.push_back(std::move(r));
            return rows.size() < wanted;
        });
        !s) {
        return s;
    }
    if (too_many && rows.size() < wanted) return {};  // *done stays false: SQL answers
    sort_rows(q.order, &rows);
    if (q.limit != 0 && rows.size() > q.limit) rows.resize(q.limit);
    for (FileRow& row : rows) {
        if (!sink(row)) break;
    }
    *done = true;
    return {};
}

core::Status Queries::find_with_sql(const FindQuery& q, const RowSink& sink) {
    std::vector<Bind> binds;
    std::string name_filter;
    if (!q.pattern.empty()) {
        switch (q.match) {
            case NameMatch::substring:
                // instr() on BLOBs compares bytes; lower() folds ASCII only (no ICU).
                name_filter = q.ignore_case ? " AND instr(lower(e.name), lower(?)) > 0"
                                            : " AND instr(e.name, ?) > 0";
                break;
            case NameMatch::glob:
                // CAST: Debian's SQLite is built with SQLITE_LIKE_DOESNT_MATCH_BLOBS, so GLOB
                // and LIKE never match a BLOB operand; the cast keeps the bytes. A pattern
                // with a '/' is about the path (locate's rule), else about the name.
                if (q.pattern.find('/') != std::string::npos) {
                    name_filter = q.ignore_case ? " AND lower(d.prefix || e.name) GLOB lower(?)"
                                                : " AND CAST(d.prefix || e.name AS TEXT) GLOB ?";
                } else {
                    name_filter = q.ignore_case ? " AND lower(e.name) GLOB lower(?)"
                                                : " AND CAST(e.name AS TEXT) GLOB ?";
                }
                break;
            case NameMatch::regex:
                // The whole path, like locate --regex and find -regex ('||' keeps the bytes).
                name_filter = q.ignore_case ? " AND iregexp(?, d.prefix || e.name)"
                                            : " AND regexp(?, d.prefix || e.name)";
                break;
        }
    }
    const std::string metadata = metadata_filters(q, &binds);
    std::string sql = std::string("SELECT ") + kFileColumns +
                      " FROM entries AS e JOIN dirs AS d ON d.id = e.dir WHERE 1" + name_filter +
                      metadata + order_sql(q.order);
    if (q.limit != 0) sql += " LIMIT " + std::to_string(q.limit);
    Statement stmt;
    if (auto s = db_.prepare(sql, &stmt); !s) return s;
    int next = 1;
    if (!name_filter.empty()) {
        // Substring wants bytes (BLOB instr); GLOB and REGEXP take the pattern as text.
        if (q.match == NameMatch::substring && !q.ignore_case) {
            stmt.bind_blob(next++, q.pattern);
        } else {
            stmt.bind_text(next++, q.pattern);
        }
    }
    bind_all(stmt, binds, next);
    for (bool row = true;;) {
        if (auto s = stmt.step(&row); !s) return s;
        if (!row) break;
        FileRow r = read_file_row(stmt);
        if (!sink(r)) break;
    }
    return {};
}

core::Status Queries::entry(std::string_view path, FileRow* out, bool* found) {
    *found = false;
    // A root's entry is (dir 0, its whole path); any other is (its parent's prefix, its name).
    // Point lookups on the primary key; an OR of both would make SQLite scan the table.
    Statement s;
    if (auto st = db_.prepare(std::string("SELECT ") + kFileColumns +
                                  " FROM entries AS e JOIN dirs AS d ON d.id = e.dir"
                                  " WHERE e.dir = ?1 AND e.name = ?2",
                              &s);
        !st) {
        return st;
    }
    auto lookup = [&](std::int64_t dir, std::string_view name) -> core::Status {
        s.bind_int64(1, dir).bind_blob(2, name);
        bool row = false;
        if (auto st = s.step(&row); !st) return st;
        if (row) {
            *out = read_file_row(s);
            *found = true;
        }
        s.reset();
        return {};
    };
    if (auto st = lookup(0, path); !st || *found) return st;
    Statement parent;
    if (auto st = db_.prepare("SELECT id FROM dirs WHERE prefix = ? AND id != 0", &parent); !st) {
        return st;
    }
    parent.bind_blob(1, dir_prefix(parent_path(path)));
    bool row = false;
    if (auto st = parent.step(&row); !st || !row) return st;
    return lookup(parent.column_int64(0), base_name(path));
}

core::Status Queries::entries_in(std::string_view dir, std::vector<FileRow>* out) {
    out->clear();
    // One range of the primary key (dir, name): the directory's id by its prefix first.
    Statement s;
    if (auto st = db_.prepare(std::string("SELECT ") + kFileColumns +
                                  " FROM entries AS e JOIN dirs AS d ON d.id = e.dir"
                                  " WHERE e.dir = (SELECT id FROM dirs WHERE prefix = ?1 AND"
                                  " id != 0) ORDER BY e.name",
                              &s);
        !st) {
        return st;
    }
    s.bind_blob(1, dir_prefix(dir));
    for (bool row = true;;) {
        if (auto st = s.step(&row); !st) return st;
        if (!row) break;
        out->push_back(read_file_row(s));
    }
    return {};
}

core::Status Queries::biggest_files(std::string_view under, std::size_t limit,
                                    std::vector<FileRow>* out) {
    FindQuery q;
    q.types = "f";
    q.under.assign(under);
    q.order = Order::size_desc;
    q.limit = limit;
    return find(q, out);
}

core::Status Queries::biggest_dirs(std::string_view under, std::size_t limit,
                                   std::vector<DirTotalsRow>* out, std::uint32_t max_depth) {
    out->clear();
    const std::string_view base = under.empty() ? std::string_view("/") : under;
    const PrefixRange r = subtree_range(base);
    Statement s;
    if (auto st = db_.prepare("SELECT prefix, size, blocks, files, dirs, depth FROM dirs"
                              " WHERE id != 0 AND prefix > ? AND prefix < ? AND depth <= ?"
                              " ORDER BY size DESC LIMIT ?",
                              &s);
        !st) {
        return st;
    }
    // depth is absolute (path components); max_depth 0 is "any depth".
    const std::int64_t deepest = max_depth == 0 ? std::numeric_limits<std::int64_t>::max()
                                                : std::int64_t{path_depth(base)} + max_depth;
    s.bind_blob(1, r.lo)
        .bind_blob(2, r.hi)
        .bind_int64(3, deepest)
        .bind_int64(4, static_cast<std::int64_t>(limit));
    for (bool row = true;;) {
        if (auto st = s.step(&row); !st) return st;
        if (!row) break;
        out->push_back(read_dir_row(s));
    }
    return {};
}

core::Status Queries::dir_totals(std::string_view path, std::uint32_t depth,
                                 std::vector<DirTotalsRow>* out) {
    out->clear();
    // The directory by its prefix, then its children by dirs(parent) (schema.cpp,
    // ensure_query_indexes), a level at a time: only the rows answered are read, where one
    // range over the subtree's prefixes read every directory below `path` to keep a few.
    // Levels stop at the first empty one.
    constexpr const char* kColumns =
        "SELECT prefix, size, blocks, files, dirs, depth, id FROM dirs";
    Statement self;
    Statement children;
    if (auto st = db_.prepare(std::string(kColumns) + " WHERE prefix = ? AND id != 0", &self);
        !st) {
        return st;
    }
    if (auto st = db_.prepare(std::string(kColumns) + " WHERE parent = ? AND id != 0", &children);
        !st) {
        return st;
    }
    std::vector<std::pair<std::string, DirTotalsRow>> rows;  // by stored prefix
    std::vector<std::int64_t> level;                         // ids of the last level read
    std::vector<std::int64_t> next;
    auto read = [&](Statement& s) -> core::Status {
        for (bool row = true;;) {
            if (auto st = s.step(&row); !st) return st;
            if (!row) break;
            rows.emplace_back(std::string(s.column_bytes(0)), read_dir_row(s));
            next.push_back(s.column_int64(6));
        }
        s.reset();
        return {};
    };
    self.bind_blob(1, dir_prefix(path));
    if (auto st = read(self); !st) return st;
    for (std::uint32_t d = 0; d < depth && !next.empty(); ++d) {
        level.swap(next);
        next.clear();
        for (const std::int64_t id : level) {
            children.bind_int64(1, id);
            if (auto st = read(children); !st) return st;
        }
    }
    // Prefix order ("/a-b/" before "/a/"), not path order: depth-first, as documented.
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    out->reserve(rows.size());
    for (auto& [prefix, row] : rows) out->push_back(std::move(row));
    return {};
}

}  // namespace wsindex::storage
