// dump_index: integrity check and a digest of the views, through the SQLite C API read-only.
#include "tests/reliability/support/index_dump.hpp"

#include <sqlite3.h>

#include <cstdio>

namespace wsindex::reliability::test {

namespace {

class Db {
  public:
    explicit Db(const std::string& path) {
        if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
            error_ = db_ ? sqlite3_errmsg(db_) : "out of memory";
        } else {
            sqlite3_busy_timeout(db_, 10000);
        }
    }
    Db(const Db&) = delete;
    Db& operator=(const Db&) = delete;
    ~Db() { sqlite3_close(db_); }
    [[nodiscard]] sqlite3* get() const { return db_; }
    [[nodiscard]] const std::string& error() const { return error_; }

  private:
    sqlite3* db_ = nullptr;
    std::string error_;
};

void mix(std::uint64_t& h, const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
}

// Every row of `sql` into the digest (column type, then bytes); the row count, or -1.
long long digest_rows(sqlite3* db, const char* sql, std::uint64_t& h, std::string& error) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
        error = sqlite3_errmsg(db);
        return -1;
    }
    long long rows = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        ++rows;
        for (int c = 0; c < sqlite3_column_count(st); ++c) {
            const int type = sqlite3_column_type(st, c);
            mix(h, &type, sizeof type);
            const auto* bytes = sqlite3_column_blob(st, c);
            const int n = sqlite3_column_bytes(st, c);
            if (n > 0) mix(h, bytes, static_cast<std::size_t>(n));
        }
    }
    if (rc != SQLITE_DONE) {
        error = sqlite3_errmsg(db);
        rows = -1;
    }
    sqlite3_finalize(st);
    return rows;
}

}  // namespace

IndexDump dump_index(const std::string& path) {
    IndexDump d;
    Db db(path);
    if (!db.error().empty()) {
        d.error = "open " + path + ": " + db.error();
        return d;
    }
    // integrity_check answers one row per problem, or one "ok".
    {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(db.get(), "PRAGMA integrity_check", -1, &st, nullptr) != SQLITE_OK) {
            d.error = sqlite3_errmsg(db.get());
            return d;
        }
        while (sqlite3_step(st) == SQLITE_ROW) {
            if (!d.integrity.empty()) d.integrity += "; ";
            d.integrity += reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
        }
        sqlite3_finalize(st);
    }
    if (sqlite3_exec(db.get(), "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK) {
        d.error = sqlite3_errmsg(db.get());
        return d;
    }
    d.digest = 14695981039346656037ULL;
    const long long files =
        digest_rows(db.get(),
                    "SELECT CAST(path AS BLOB), type, size, blocks, mtime_ns, ctime_ns, mode, uid, "
                    "gid, dev, ino, nlink, errno FROM files ORDER BY CAST(path AS BLOB)",
                    d.digest, d.error);
    const long long dirs =
        digest_rows(db.get(),
                    "SELECT CAST(path AS BLOB), size, blocks, files, dirs, depth FROM dir_totals "
                    "ORDER BY CAST(path AS BLOB)",
                    d.digest, d.error);
    sqlite3_exec(db.get(), "COMMIT", nullptr, nullptr, nullptr);
    d.files = files < 0 ? 0 : static_cast<std::uint64_t>(files);
    d.dirs = dirs < 0 ? 0 : static_cast<std::uint64_t>(dirs);
    return d;
}

std::string scan_state(const std::string& path, long long id) {
    Db db(path);
    if (!db.error().empty()) return {};
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db.get(), "SELECT state FROM scans WHERE id = ?", -1, &st, nullptr) !=
        SQLITE_OK) {
        return {};
    }
    sqlite3_bind_int64(st, 1, id);
    std::string state;
    if (sqlite3_step(st) == SQLITE_ROW) {
        state = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    return state;
}

std::string describe(const IndexDump& d) {
    char digest[32];
    std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(d.digest));
    return "files=" + std::to_string(d.files) + " dirs=" + std::to_string(d.dirs) +
           " digest=" + digest + " integrity=" + d.integrity +
           (d.error.empty() ? "" : " error=" + d.error);
}

}  // namespace wsindex::reliability::test
