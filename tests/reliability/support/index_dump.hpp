// What the index shows, read straight from the database file with SQLite (read-only), to compare
// before and after a fault without going through the daemon.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wsindex::reliability::test {

struct IndexDump {
    std::string error;         // non-empty when the database could not be read
    std::string integrity;     // PRAGMA integrity_check's answer ("ok")
    std::uint64_t files = 0;   // rows of the files view
    std::uint64_t dirs = 0;    // rows of the dir_totals view
    std::uint64_t digest = 0;  // FNV-1a over every column of both views, in path order
    // Every row of both views as text ("files|PATH|COLUMN|..." then "dirs|PATH|..."), in path
    // order: what two dumps are compared by, row for row. Left empty past kRowsKept rows (the
    // long runs' trees of a million entries), where the counts and the digest stand for them.
    static constexpr std::size_t kRowsKept = 300'000;
    std::vector<std::string> rows;

    bool operator==(const IndexDump& o) const {
        return error.empty() && o.error.empty() && files == o.files && dirs == o.dirs &&
               digest == o.digest && rows == o.rows;
    }
};

// Opens `db` with SQLITE_OPEN_READONLY, runs PRAGMA integrity_check and digests the files and
// dir_totals views (one read transaction). Works on a database whose writer was just killed.
IndexDump dump_index(const std::string& db);

// The `state` column of scan `id` in the scans table ("" if absent or unreadable): the database's
// own record, which keeps "interrupted" (the protocol shows it as failed).
std::string scan_state(const std::string& db, long long id);

// "files=N dirs=N digest=HEX integrity=..." for failure messages.
std::string describe(const IndexDump& d);

// The rows only in `a` and only in `b` (at most `limit` of each), for failure messages.
std::string describe_difference(const IndexDump& a, const IndexDump& b, std::size_t limit = 10);

}  // namespace wsindex::reliability::test
