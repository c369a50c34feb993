// Index damage: telling a damaged database file from other failures, checking a file, and
// setting a damaged one aside so that a fresh index can be built in its place.
//
// Why set aside and rebuild instead of repairing: the index is a copy of the file system, so
// nothing in it is lost that a rescan cannot bring back, while a file SQLite calls malformed may
// fail any query at any time. The damaged file is renamed, not deleted, so that it can still be
// looked at ("what happened to this disk?").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace wsindex::storage {

// True for a failure that says the database file itself is damaged: SQLITE_CORRUPT (and its
// extended codes), SQLITE_NOTADB, and a schema this project cannot read (schema_corrupt).
// False for everything else (a full disk, a busy lock, a bad query).
[[nodiscard]] bool is_damage(const core::Status& status);

struct IndexCheck {
    bool damaged = false;
    std::string detail;  // what SQLite reported (first line of quick_check, or the error)
    // Roots of the scans the file recorded as complete, when they could still be read: the
    // roots a rebuild scans again.
    std::vector<std::string> roots;
};

// Any thread; opens its own connection. Checks `db_path` with `PRAGMA quick_check` (every page
// of every table and index read once; no cross-check of index contents against tables, which
// integrity_check adds at several times the cost). A missing file is not damaged. Failures that
// are not damage (the file cannot be opened for another reason) are returned as errors.
core::Status check_index_file(const std::string& db_path, IndexCheck* out);

// Renames `db_path` and its -wal and -shm files to "<db_path>.damaged-<UTC time>" (with the same
// suffixes), and returns the new name of the database file in `set_aside_as`. No connection to
// the file may be open for writing (a reader may still read the renamed file).
core::Status set_aside_damaged(const std::string& db_path, std::int64_t now_ns,
                               std::string* set_aside_as);

}  // namespace wsindex::storage
