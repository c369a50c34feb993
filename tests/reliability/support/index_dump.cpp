// dump_index: integrity check and a digest of the views, through the SQLite C API read-only.
#include "tests/reliability/support/index_dump.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <iterator>

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

// A column's value as text: integers in decimal, text and blobs with bytes outside printable
// ASCII (and '|', '\\') escaped as \\xHH, NULL as "NULL".
void append_column(std::string& row, sqlite3_stmt* st, int c) {
    switch (sqlite3_column_type(st, c)) {
        case SQLITE_NULL:
            row += "NULL";
            return;
        case SQLITE_INTEGER:
            row += std::to_string(sqlite3_column_int64(st, c));
            return;
        case SQLITE_FLOAT: {
            char text[32];
            std::snprintf(text, sizeof text, "%.17g", sqlite3_column_double(st, c));
            row += text;
            return;
        }
        default: {
            const auto* bytes = static_cast<const unsigned char*>(sqlite3_column_blob(st, c));
            const int n = sqlite3_column_bytes(st, c);
            for (int i = 0; i < n; ++i) {
                const unsigned char b = bytes[i];
                if (b >= 0x20 && b < 0x7f && b != '|' && b != '\\') {
                    row += static_cast<char>(b);
                } else {
                    char hex[8];
                    std::snprintf(hex, sizeof hex, "\\x%02x", b);
                    row += hex;
                }
            }
            return;
        }
    }
}

// Every row of `sql` into `rows` (prefixed with `view`) and the digest (column type, then
// bytes); the row count, or -1.
long long read_rows(sqlite3* db, const char* view, const char* sql, std::vector<std::string>& out,
                    std::uint64_t& h, std::string& error) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
        error = sqlite3_errmsg(db);
        return -1;
    }
    long long rows = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        ++rows;
        std::string row = view;
        for (int c = 0; c < sqlite3_column_count(st); ++c) {
            const int type = sqlite3_column_type(st, c);
            mix(h, &type, sizeof type);
            const auto* bytes = sqlite3_column_blob(st, c);
            const int n = sqlite3_column_bytes(st, c);
            if (n > 0) mix(h, bytes, static_cast<std::size_t>(n));
            row += '|';
            append_column(row, st, c);
        }
        if (out.size() < IndexDump::kRowsKept) out.push_back(std::move(row));
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
        read_rows(db.get(), "files",
                  "SELECT CAST(path AS BLOB), type, size, blocks, mtime_ns, ctime_ns, mode, uid, "
                  "gid, dev, ino, nlink, errno FROM files ORDER BY CAST(path AS BLOB)",
                  d.rows, d.digest, d.error);
    const long long dirs =
        read_rows(db.get(), "dirs",
                  "SELECT CAST(path AS BLOB), size, blocks, files, dirs, depth FROM dir_totals "
                  "ORDER BY CAST(path AS BLOB)",
                  d.rows, d.digest, d.error);
    sqlite3_exec(db.get(), "COMMIT", nullptr, nullptr, nullptr);
    d.files = files < 0 ? 0 : static_cast<std::uint64_t>(files);
    d.dirs = dirs < 0 ? 0 : static_cast<std::uint64_t>(dirs);
    if (d.files + d.dirs > IndexDump::kRowsKept) d.rows.clear();  // the digest stands for them
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

std::string describe_difference(const IndexDump& a, const IndexDump& b, std::size_t limit) {
    std::vector<std::string> sa = a.rows;
    std::vector<std::string> sb = b.rows;
    std::sort(sa.begin(), sa.end());
    std::sort(sb.begin(), sb.end());
    std::vector<std::string> only_a;
    std::vector<std::string> only_b;
    std::set_difference(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(only_a));
    std::set_difference(sb.begin(), sb.end(), sa.begin(), sa.end(), std::back_inserter(only_b));
    std::string out;
    for (std::size_t i = 0; i < only_a.size() && i < limit; ++i) {
        out += "  only in the first: " + only_a[i] + "\n";
    }
    for (std::size_t i = 0; i < only_b.size() && i < limit; ++i) {
        out += "  only in the second: " + only_b[i] + "\n";
    }
    if (a.rows.empty() && b.rows.empty()) {
        return "  (rows not kept past " + std::to_string(IndexDump::kRowsKept) + ": first " +
               describe(a) + ", second " + describe(b) + ")";
    }
    return out + "  (" + std::to_string(only_a.size()) + " rows only in the first, " +
           std::to_string(only_b.size()) + " only in the second)";
}

}  // namespace wsindex::reliability::test
