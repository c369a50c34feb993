// Index damage: the damage test of a failure, quick_check of a file, and the rename aside.
#include "storage/index_damage.hpp"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <ctime>

#include "storage/sqlite_error.hpp"

namespace wsindex::storage {
namespace {

// One connection for the check, closed on every path out.
struct CheckConnection {
    sqlite3* db = nullptr;
    ~CheckConnection() {
        if (db != nullptr) sqlite3_close_v2(db);
    }
};

std::string first_text_column(sqlite3_stmt* s) {
    const auto* text = sqlite3_column_text(s, 0);
    return text != nullptr ? std::string(reinterpret_cast<const char*>(text)) : std::string();
}

// Damage found while checking: recorded in `out`, not returned as an error.
core::Status damaged(sqlite3* db, int rc, IndexCheck* out) {
    out->damaged = true;
    out->detail = sqlite_status(db, rc, "quick_check").to_string();
    return {};
}

std::string utc_stamp(std::int64_t now_ns) {
    const std::time_t secs = static_cast<std::time_t>(now_ns / 1'000'000'000);
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
    return buf;
}

}  // namespace

bool is_damage(const core::Status& status) {
    if (status) return false;
    const std::error_code code = status.code();
    if (code.category() == sqlite_category()) {
        const int primary = code.value() & 0xff;
        return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
    }
    return code == make_error_code(StorageErrc::schema_corrupt);
}

core::Status check_index_file(const std::string& db_path, IndexCheck* out) {
    *out = IndexCheck{};
    struct stat st {};
    if (::stat(db_path.c_str(), &st) != 0) {
        if (errno == ENOENT) return {};
        return core::Status::from_errno(errno, "checking " + db_path);
    }
    CheckConnection c;
    // Read-write without create: a check may have to read the log, which needs the WAL index.
    int rc = sqlite3_open_v2(db_path.c_str(), &c.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                             nullptr);
    if (rc != SQLITE_OK) {
        core::Status failed = sqlite_status(c.db, rc, "opening " + db_path);
        if (is_damage(failed)) return damaged(c.db, rc, out);
        return failed;
    }
    sqlite3_extended_result_codes(c.db, 1);
    sqlite3_busy_timeout(c.db, 5000);

    sqlite3_stmt* s = nullptr;
    rc = sqlite3_prepare_v2(c.db, "PRAGMA quick_check(1)", -1, &s, nullptr);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) {
            const std::string verdict = first_text_column(s);
            if (verdict != "ok") {
                out->damaged = true;
                out->detail = "quick_check: " + verdict;
            }
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_OK && rc != SQLITE_DONE) {
        core::Status failed = sqlite_status(c.db, rc, "quick_check of " + db_path);
        if (is_damage(failed)) return damaged(c.db, rc, out);
        return failed;
    }
    // Best effort: the roots to scan again. A damaged scans table gives what it can.
    s = nullptr;
    if (sqlite3_prepare_v2(c.db,
                           "SELECT DISTINCT root FROM scans WHERE state = 'complete' ORDER BY root",
                           -1, &s, nullptr) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            const void* blob = sqlite3_column_blob(s, 0);
            const int n = sqlite3_column_bytes(s, 0);
            if (blob != nullptr && n > 0) {
                out->roots.emplace_back(static_cast<const char*>(blob),
                                        static_cast<std::size_t>(n));
            }
        }
    }
    sqlite3_finalize(s);
    return {};
}

core::Status set_aside_damaged(const std::string& db_path, std::int64_t now_ns,
                               std::string* set_aside_as) {
    const std::string target = db_path + ".damaged-" + utc_stamp(now_ns);
    // The log first: a database file without its log is what a later open must not pair with
    // another file's log.
    for (const char* suffix : {"-wal", "-shm"}) {
        const std::string from = db_path + suffix;
        if (::rename(from.c_str(), (target + suffix).c_str()) != 0 && errno != ENOENT) {
            return core::Status::from_errno(errno, "setting aside " + from);
        }
    }
    if (::rename(db_path.c_str(), target.c_str()) != 0) {
        return core::Status::from_errno(errno, "setting aside " + db_path);
    }
    *set_aside_as = target;
    return {};
}

}  // namespace wsindex::storage
