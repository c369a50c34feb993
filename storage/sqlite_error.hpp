// SQLite result codes as std::error_code, and Status values that carry SQLite's own message.
#pragma once

#include <string_view>
#include <system_error>

#include "core/status.hpp"

struct sqlite3;

namespace wsindex::storage {

// The category of extended SQLite result codes (SQLITE_FULL, SQLITE_IOERR_WRITE, ...).
const std::error_category& sqlite_category();

inline std::error_code make_sqlite_error_code(int rc) { return {rc, sqlite_category()}; }

// A Status for a failed SQLite call: the extended code of `db` (or `rc` when db is null) and
// "context: <sqlite3_errmsg>", so that the user sees what SQLite said, not only a number.
core::Status sqlite_status(sqlite3* db, int rc, std::string_view context);

// Project errors that are not SQLite's (bad arguments, schema too new, ...).
enum class StorageErrc {
    schema_too_new = 1,
    schema_corrupt,
    bad_root,
    scan_in_progress,
    no_scan,
    cancelled,
    injected_failure,
    writer_failed,
    not_indexed,
};
const std::error_category& storage_category();
inline std::error_code make_error_code(StorageErrc e) {
    return {static_cast<int>(e), storage_category()};
}
inline core::Status storage_status(StorageErrc e, std::string message) {
    return {make_error_code(e), std::move(message)};
}

}  // namespace wsindex::storage
