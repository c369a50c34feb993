// Queries over the scan history, the errors of completed scans, and the indexed roots.
#include <string>

#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/statement.hpp"

namespace wsindex::storage {

namespace {

// root_size, root_dirs: the current dirs row of the root, only for the newest completed scan of
// that root (one GROUP BY over scans, not a subquery per scan). A root "/" is stored as prefix
// "/", any other with one trailing '/'; '||' gives TEXT, hence the CAST back to the BLOB of
// dirs.prefix. dirs.dirs excludes the directory itself; a scan counts its root too, hence + 1.
constexpr const char* kScanSelect =
    "WITH latest AS (SELECT max(id) AS id FROM scans WHERE state = 'complete' GROUP BY root)"
    " SELECT s.id, s.root, s.state, s.started_ns, coalesce(s.finished_ns, 0), s.entries,"
    " s.errors, coalesce(s.error, ''), d.size, d.dirs + 1"
    " FROM scans AS s LEFT JOIN dirs AS d ON s.id IN (SELECT id FROM latest) AND"
    "  d.prefix = CAST(CASE WHEN s.root = X'2F' THEN s.root ELSE s.root || X'2F' END AS BLOB)";

ScanRow read_scan_row(const Statement& s) {
    ScanRow r;
    r.id = static_cast<std::uint64_t>(s.column_int64(0));
    r.root.assign(s.column_bytes(1));
    r.state.assign(s.column_bytes(2));
    r.started_ns = s.column_int64(3);
    r.finished_ns = s.column_int64(4);
    r.entries = static_cast<std::uint64_t>(s.column_int64(5));
    r.errors = static_cast<std::uint64_t>(s.column_int64(6));
    r.error.assign(s.column_bytes(7));
    if (!s.column_is_null(8)) r.root_size = s.column_int64(8);
    if (!s.column_is_null(9)) r.root_dirs = s.column_int64(9);
    return r;
}

template <typename F>
core::Status for_each_row(Statement& s, F&& f) {
    for (bool row = true;;) {
        if (auto st = s.step(&row); !st) return st;
        if (!row) return {};
        f(s);
    }
}

}  // namespace

core::Status Queries::scans(std::uint64_t limit, std::vector<ScanRow>* out) {
    out->clear();
    Statement s;
    if (auto st = db_.prepare(std::string(kScanSelect) + " ORDER BY s.id DESC LIMIT ?", &s); !st) {
        return st;
    }
    s.bind_int64(1, limit == 0 ? -1 : static_cast<std::int64_t>(limit));  // -1: no limit
    return for_each_row(s, [&](const Statement& row) { out->push_back(read_scan_row(row)); });
}

core::Status Queries::scan(std::uint64_t scan_id, ScanRow* out, bool* found) {
    *found = false;
    Statement s;
    if (auto st = db_.prepare(std::string(kScanSelect) + " WHERE s.id = ?", &s); !st) return st;
    s.bind_int64(1, static_cast<std::int64_t>(scan_id));
    return for_each_row(s, [&](const Statement& row) {
        *out = read_scan_row(row);
        *found = true;
    });
}

core::Status Queries::latest_complete_scan(std::uint64_t* out) {
    std::int64_t id = 0;
    auto st =
        db_.query_int64("SELECT coalesce(max(id), 0) FROM scans WHERE state = 'complete'", &id);
    *out = static_cast<std::uint64_t>(id);
    return st;
}

core::Status Queries::latest_unsuccessful_scan(ScanRow* out, bool* found) {
    *found = false;
    Statement s;
    if (auto st = db_.prepare(std::string(kScanSelect) +
                                  " WHERE s.state IN ('failed', 'cancelled', 'interrupted')"
                                  " ORDER BY s.id DESC LIMIT 1",
                              &s);
        !st) {
        return st;
    }
    return for_each_row(s, [&](const Statement& row) {
        *out = read_scan_row(row);
        *found = true;
    });
}

core::Status Queries::errors(std::optional<std::uint64_t> scan_id, std::vector<ErrorRow>* out) {
    out->clear();
    Statement s;
    const char* sql =
        scan_id ? "SELECT path, errno, message FROM errors WHERE scan_id = ? ORDER BY path"
                : "SELECT path, errno, message FROM errors WHERE scan_id IN"
                  " (SELECT id FROM scans WHERE state = 'complete') ORDER BY path";
    if (auto st = db_.prepare(sql, &s); !st) return st;
    if (scan_id) s.bind_int64(1, static_cast<std::int64_t>(*scan_id));
    return for_each_row(s, [&](const Statement& row) {
        out->push_back(ErrorRow{std::string(row.column_bytes(0)),
                                static_cast<int>(row.column_int64(1)),
                                std::string(row.column_bytes(2))});
    });
}

core::Status Queries::roots(std::vector<RootRow>* out) {
    out->clear();
    Statement s;
    // Top-level roots hang below the sentinel dirs row 0; their totals are recursive.
    if (auto st = db_.prepare("SELECT d.prefix, d.scan_id, coalesce(s.finished_ns, 0),"
                              " d.files + d.dirs + 1, d.size"
                              " FROM dirs AS d LEFT JOIN scans AS s ON s.id = d.scan_id"
                              " WHERE d.parent = 0 AND d.id != 0 ORDER BY d.prefix",
                              &s);
        !st) {
        return st;
    }
    return for_each_row(s, [&](const Statement& row) {
        RootRow r;
        std::string_view prefix = row.column_bytes(0);
        if (prefix.size() > 1) prefix.remove_suffix(1);  // stored with a trailing '/'
        r.path.assign(prefix);
        r.scan_id = static_cast<std::uint64_t>(row.column_int64(1));
        r.finished_ns = row.column_int64(2);
        r.entries = static_cast<std::uint64_t>(row.column_int64(3));
        r.size = row.column_int64(4);
        out->push_back(std::move(r));
    });
}

}  // namespace wsindex::storage
