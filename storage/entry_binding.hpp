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

}  // namespace wsindex::storage
