// Binding one walk record's type and metadata to the parameters of an `entries` row: shared by
// the single-row and the multi-row inserts of the scan writer.
#pragma once

#include <sqlite3.h>

#include <string_view>

#include "core/walk_result.hpp"
#include "storage/statement.hpp"

namespace wsindex::storage {

// The type letters as static bytes: binding them SQLITE_STATIC avoids a copy per row.
constexpr std::string_view kTypeLetters = "fdlpscb?";

inline std::string_view type_letter(core::EntryType type) {
    const std::size_t i = kTypeLetters.find(static_cast<char>(type));
    return kTypeLetters.substr(i == std::string_view::npos ? kTypeLetters.size() - 1 : i, 1);
}

// Binds through a Statement directly (the interface BindCache has, without the cache).
struct DirectBinder {
    Statement& statement;
    void bind_int64(int index, std::int64_t value) { statement.bind_int64(index, value); }
    void bind_null(int index) { statement.bind_null(index); }
    void bind_static_text(int index, std::string_view text) {
        sqlite3_bind_text(statement.handle(), index, text.data(), static_cast<int>(text.size()),
                          SQLITE_STATIC);
    }
};

// Binds columns 3..14 (type and metadata; NULL metadata without a stat) of an entries row
// whose first parameter is base + 1, through a DirectBinder or a BindCache. Every parameter
// is bound, so the statement can run without clearing its bindings.
template <class Binder>
inline void bind_entry_metadata(Binder&& b, const core::WalkResult& r, int base = 0) {
    b.bind_static_text(base + 3, type_letter(r.type));
    if (r.has_stat) {
        b.bind_int64(base + 4, static_cast<std::int64_t>(r.size));
        b.bind_int64(base + 5, static_cast<std::int64_t>(r.blocks));
        b.bind_int64(base + 6, r.mtime_ns);
        // NULL when equal to mtime (a file written and never chmod'ed, renamed or linked
        // since): 8 bytes less per row, ~10% of an index; the views and queries read
        // coalesce(ctime_ns, mtime_ns) (schema version 3).
        if (r.ctime_ns == r.mtime_ns) {
            b.bind_null(base + 7);
        } else {
            b.bind_int64(base + 7, r.ctime_ns);
        }
        b.bind_int64(base + 8, r.mode);
        b.bind_int64(base + 9, r.uid);
        b.bind_int64(base + 10, r.gid);
        b.bind_int64(base + 11, static_cast<std::int64_t>(r.dev));
        b.bind_int64(base + 12, static_cast<std::int64_t>(r.ino));
        b.bind_int64(base + 13, static_cast<std::int64_t>(r.nlink));
    } else {
        for (int i = 4; i <= 13; ++i) b.bind_null(base + i);
    }
    if (r.error != 0) {
        b.bind_int64(base + 14, r.error);
    } else {
        b.bind_null(base + 14);
    }
}

constexpr int kEntryColumns = 14;

// The inverse of bind_entry_metadata: an entries row's type and metadata columns (type, size,
// blocks, mtime_ns, ctime_ns, mode, uid, gid, dev, ino, nlink, error, in that order from
// `type_column`) read back into a record without a path. A NULL ctime_ns reads as mtime_ns.
inline core::WalkResult read_entry_metadata(const Statement& s, int type_column) {
    const int c = type_column;
    core::WalkResult r;
    const std::string_view type = s.column_bytes(c);
    r.type = type.empty() ? core::EntryType::Unknown : static_cast<core::EntryType>(type[0]);
    r.has_stat = !s.column_is_null(c + 1);
    if (r.has_stat) {
        r.size = static_cast<std::uint64_t>(s.column_int64(c + 1));
        r.blocks = static_cast<std::uint64_t>(s.column_int64(c + 2));
        r.mtime_ns = s.column_int64(c + 3);
        r.ctime_ns = s.column_is_null(c + 4) ? r.mtime_ns : s.column_int64(c + 4);
        r.mode = static_cast<std::uint32_t>(s.column_int64(c + 5));
        r.uid = static_cast<std::uint32_t>(s.column_int64(c + 6));
        r.gid = static_cast<std::uint32_t>(s.column_int64(c + 7));
        r.dev = static_cast<std::uint64_t>(s.column_int64(c + 8));
        r.ino = static_cast<std::uint64_t>(s.column_int64(c + 9));
        r.nlink = static_cast<std::uint64_t>(s.column_int64(c + 10));
    }
    r.error = s.column_is_null(c + 11) ? 0 : static_cast<int>(s.column_int64(c + 11));
    return r;
}

// Whether two records would be stored as the same entries row (the path aside).
inline bool same_entry_metadata(const core::WalkResult& a, const core::WalkResult& b) {
    return a.type == b.type && a.has_stat == b.has_stat && a.size == b.size &&
           a.blocks == b.blocks && a.mtime_ns == b.mtime_ns && a.ctime_ns == b.ctime_ns &&
           a.mode == b.mode && a.uid == b.uid && a.gid == b.gid && a.dev == b.dev &&
           a.ino == b.ino && a.nlink == b.nlink && a.error == b.error;
}

// Binds a `links` row (dir, dev, ino, size, blocks) for a multi-link name in `dir`.
inline Statement& bind_link_row(Statement& s, std::int64_t dir, const core::WalkResult& r) {
    return s.bind_int64(1, dir)
        .bind_int64(2, static_cast<std::int64_t>(r.dev))
        .bind_int64(3, static_cast<std::int64_t>(r.ino))
        .bind_int64(4, static_cast<std::int64_t>(r.size))
        .bind_int64(5, static_cast<std::int64_t>(r.blocks));
}

}  // namespace wsindex::storage
