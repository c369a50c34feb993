// compare_indexes and compare_find_outputs: the convergence tests' notion of "the same index".
#include "tests/cli/support/index_compare.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <iterator>
#include <vector>

namespace wsindex::cli::test {

namespace {

// Bytes outside printable ASCII (and the backslash) as \xHH, so rows with newlines or invalid
// UTF-8 in names read unambiguously.
std::string escaped(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\') {
            out += static_cast<char>(p[i]);
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", p[i]);
            out += hex;
        }
    }
    return out;
}

std::string escaped(const std::string& s) { return escaped(s.data(), s.size()); }

struct Row {
    std::string path;                  // raw bytes: the key rows are matched by
    std::vector<std::string> columns;  // every column rendered ("NULL", decimal, escaped text)
};

struct View {
    const char* name;
    std::vector<const char*> columns;  // the first is the path
};

const std::array<View, 2> kViews = {
    View{"files",
         {"path", "name", "type", "size", "blocks", "mtime_ns", "ctime_ns", "mode", "uid", "gid",
          "dev", "ino", "nlink", "errno"}},
    View{"dir_totals", {"path", "size", "blocks", "files", "dirs", "depth"}}};

std::string render(sqlite3_stmt* st, int c) {
    switch (sqlite3_column_type(st, c)) {
        case SQLITE_NULL:
            return "NULL";
        case SQLITE_INTEGER:
            return std::to_string(sqlite3_column_int64(st, c));
        case SQLITE_FLOAT:
            return std::to_string(sqlite3_column_double(st, c));
        default: {
            const void* bytes = sqlite3_column_blob(st, c);
            const auto n = static_cast<std::size_t>(sqlite3_column_bytes(st, c));
            // The type is part of the value: a TEXT path never equals a BLOB one.
            return (sqlite3_column_type(st, c) == SQLITE_BLOB ? "blob:" : "") + escaped(bytes, n);
        }
    }
}

class ReadOnlyDb {
  public:
    explicit ReadOnlyDb(const std::string& path) {
        if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
            error_ = "open " + path + ": " + (db_ ? sqlite3_errmsg(db_) : "out of memory");
            return;
        }
        sqlite3_busy_timeout(db_, 10000);
        // One snapshot for both views, even while the daemon writes.
        if (sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK) {
            error_ = "begin on " + path + ": " + sqlite3_errmsg(db_);
        }
    }
    ReadOnlyDb(const ReadOnlyDb&) = delete;
    ReadOnlyDb& operator=(const ReadOnlyDb&) = delete;
    ~ReadOnlyDb() {
        if (db_ != nullptr) sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
        sqlite3_close(db_);
    }

    // The rows of `view` at or below `root`, in byte order of the path.
    std::vector<Row> rows(const View& view, const std::string& root) {
        std::vector<Row> out;
        if (!error_.empty()) return out;
        std::string sql = "SELECT ";
        for (std::size_t i = 0; i < view.columns.size(); ++i) {
            sql += std::string(i ? ", " : "") + view.columns[i];
        }
        // '0' is the byte after '/': [root/, root0) is everything strictly below root.
        sql += std::string(" FROM ") + view.name +
               " WHERE path = ?1 OR (path >= ?2 AND path < ?3) ORDER BY CAST(path AS BLOB)";
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
            error_ = sql + ": " + sqlite3_errmsg(db_);
            return out;
        }
        const std::string below = root + "/";
        const std::string after = root + "0";
        sqlite3_bind_text(st, 1, root.data(), static_cast<int>(root.size()), SQLITE_STATIC);
        sqlite3_bind_text(st, 2, below.data(), static_cast<int>(below.size()), SQLITE_STATIC);
        sqlite3_bind_text(st, 3, after.data(), static_cast<int>(after.size()), SQLITE_STATIC);
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            Row row;
            row.path.assign(static_cast<const char*>(sqlite3_column_blob(st, 0)),
                            static_cast<std::size_t>(sqlite3_column_bytes(st, 0)));
            for (int c = 0; c < sqlite3_column_count(st); ++c) row.columns.push_back(render(st, c));
            out.push_back(std::move(row));
        }
        if (rc != SQLITE_DONE) error_ = std::string(view.name) + ": " + sqlite3_errmsg(db_);
        sqlite3_finalize(st);
        return out;
    }

    [[nodiscard]] const std::string& error() const { return error_; }

  private:
    sqlite3* db_ = nullptr;
    std::string error_;
};

std::string describe_row(const View& view, const Row& row) {
    std::string out;
    for (std::size_t c = 0; c < row.columns.size(); ++c) {
        out += std::string(c ? " " : "") + view.columns[c] + "=" + row.columns[c];
    }
    return out;
}

// Merges two path-ordered row lists; appends the differences to `report`; true if equal.
bool compare_rows(const View& view, const std::vector<Row>& a, const std::vector<Row>& b,
                  std::size_t max_shown, std::string& report) {
    std::vector<std::string> only_a;
    std::vector<std::string> only_b;
    std::vector<std::string> differ;
    std::size_t n_only_a = 0;
    std::size_t n_only_b = 0;
    std::size_t n_differ = 0;
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < a.size() || j < b.size()) {
        if (j == b.size() || (i < a.size() && a[i].path < b[j].path)) {
            if (n_only_a++ < max_shown) only_a.push_back(describe_row(view, a[i]));
            ++i;
        } else if (i == a.size() || b[j].path < a[i].path) {
            if (n_only_b++ < max_shown) only_b.push_back(describe_row(view, b[j]));
            ++j;
        } else {
            if (a[i].columns != b[j].columns && n_differ++ < max_shown) {
                std::string d = escaped(a[i].path) + ":";
                for (std::size_t c = 1; c < a[i].columns.size(); ++c) {
                    if (a[i].columns[c] != b[j].columns[c]) {
                        d += std::string(" ") + view.columns[c] + " A=" + a[i].columns[c] +
                             " B=" + b[j].columns[c];
                    }
                }
                differ.push_back(d + "\n      A: " + describe_row(view, a[i]) +
                                 "\n      B: " + describe_row(view, b[j]));
            }
            ++i;
            ++j;
        }
    }
    if (n_only_a + n_only_b + n_differ == 0) return true;
    report += std::string(view.name) + ": " + std::to_string(n_only_a) + " rows only in A, " +
              std::to_string(n_only_b) + " only in B, " + std::to_string(n_differ) + " differ (A " +
              std::to_string(a.size()) + " rows, B " + std::to_string(b.size()) + ")\n";
    for (const auto& r : only_a) report += "  only in A: " + r + "\n";
    for (const auto& r : only_b) report += "  only in B: " + r + "\n";
    for (const auto& r : differ) report += "  differs: " + r + "\n";
    return false;
}

}  // namespace

IndexComparison compare_indexes(const std::string& db_a, const std::string& db_b,
                                const std::string& root, const std::string& totals_root,
                                std::size_t max_shown) {
    IndexComparison result;
    ReadOnlyDb a(db_a);
    ReadOnlyDb b(db_b);
    bool equal = true;
    for (const View& view : kViews) {
        const bool is_files = std::string(view.name) == "files";
        const std::string& top = is_files || totals_root.empty() ? root : totals_root;
        const auto rows_a = a.rows(view, top);
        const auto rows_b = b.rows(view, top);
        (is_files ? result.files_a : result.dirs_a) = rows_a.size();
        (is_files ? result.files_b : result.dirs_b) = rows_b.size();
        equal = compare_rows(view, rows_a, rows_b, max_shown, result.report) && equal;
    }
    for (const auto* db : {&a, &b}) {
        if (!db->error().empty()) {
            result.report += "error: " + db->error() + "\n";
            equal = false;
        }
    }
    result.equal = equal;
    return result;
}

std::string compare_find_outputs(const std::string& a, const std::string& b,
                                 std::size_t max_shown) {
    const auto records = [](const std::string& text) {
        std::vector<std::string> out;
        std::size_t start = 0;
        while (start < text.size()) {
            std::size_t nul = text.find('\0', start);
            if (nul == std::string::npos) nul = text.size();
            out.push_back(text.substr(start, nul - start));
            start = nul + 1;
        }
        std::sort(out.begin(), out.end());
        return out;
    };
    std::string out;
    for (const auto* text : {&a, &b}) {
        if (!text->empty() && text->back() != '\0') {
            out += std::string("  ") + (text == &a ? "A" : "B") + " does not end with a NUL\n";
        }
    }
    const auto list_a = records(a);
    const auto list_b = records(b);
    std::vector<std::string> only_a;
    std::vector<std::string> only_b;
    std::set_difference(list_a.begin(), list_a.end(), list_b.begin(), list_b.end(),
                        std::back_inserter(only_a));
    std::set_difference(list_b.begin(), list_b.end(), list_a.begin(), list_a.end(),
                        std::back_inserter(only_b));
    for (std::size_t i = 0; i < only_a.size() && i < max_shown; ++i) {
        out += "  only in A: " + escaped(only_a[i]) + "\n";
    }
    for (std::size_t i = 0; i < only_b.size() && i < max_shown; ++i) {
        out += "  only in B: " + escaped(only_b[i]) + "\n";
    }
    if (out.empty()) return {};
    return "find -0 answers differ (A " + std::to_string(list_a.size()) + " paths, B " +
           std::to_string(list_b.size()) + "; " + std::to_string(only_a.size()) + " only in A, " +
           std::to_string(only_b.size()) + " only in B, a path twice counts " + "twice):\n" + out;
}

}  // namespace wsindex::cli::test
