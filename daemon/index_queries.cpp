// Index queries over scans, errors and the top-level dirs rows (docs/schema.md).
#include "daemon/index_queries.hpp"

#include <string_view>

#include "storage/statement.hpp"

namespace wsindex::daemon {
namespace {

ipc::ScanState state_from_db(std::string_view s) {
    if (s == "running") return ipc::ScanState::Running;
    if (s == "complete") return ipc::ScanState::Done;
    if (s == "cancelled") return ipc::ScanState::Cancelled;
    return ipc::ScanState::Failed;  // failed, interrupted
}

constexpr const char* kScanColumns =
    "SELECT id, root, state, started_ns, coalesce(finished_ns, 0), entries, errors,"
    " coalesce(error, '') FROM scans";

ipc::ScanInfo read_scan(const storage::Statement& s) {
    ipc::ScanInfo info;
    info.scan_id = static_cast<std::uint64_t>(s.column_int64(0));
    info.root = std::string(s.column_bytes(1));
    const std::string_view state = s.column_bytes(2);
    info.state = state_from_db(state);
    info.started_ns = s.column_int64(3);
    info.finished_ns = s.column_int64(4);
    info.entries = static_cast<std::uint64_t>(s.column_int64(5));
    info.errors = static_cast<std::uint64_t>(s.column_int64(6));
    info.error = std::string(s.column_bytes(7));
    if (state == "interrupted" && info.error.empty()) {
        info.error = "interrupted: wsindexd stopped during the scan";
    }
    if (info.finished_ns > info.started_ns) {
        info.elapsed_ms = static_cast<std::uint64_t>((info.finished_ns - info.started_ns) / 1000000);
    }
    if (info.elapsed_ms > 0) {
        info.entries_per_second =
            static_cast<double>(info.entries) * 1000.0 / static_cast<double>(info.elapsed_ms);
    }
    return info;
}

template <typename F>
core::Status for_each_row(storage::Statement& s, F&& f) {
    for (bool row = true;;) {
        if (auto st = s.step(&row); !st) return st;
        if (!row) return {};
        f(s);
    }
}

}  // namespace

core::Status list_scans(storage::Database& db, std::uint64_t limit, std::vector<ipc::ScanInfo>* out) {
    out->clear();
    storage::Statement s;
    if (auto st = db.prepare(std::string(kScanColumns) + " ORDER BY id DESC LIMIT ?", &s); !st) {
        return st;
    }
    s.bind_int64(1, limit == 0 ? -1 : static_cast<std::int64_t>(limit));  // -1: no limit
    return for_each_row(s, [&](const storage::Statement& row) { out->push_back(read_scan(row)); });
}

core::Status get_scan(storage::Database& db, std::uint64_t scan_id, ipc::ScanInfo* out, bool* found) {
    *found = false;
    storage::Statement s;
    if (auto st = db.prepare(std::string(kScanColumns) + " WHERE id = ?", &s); !st) return st;
    s.bind_int64(1, static_cast<std::int64_t>(scan_id));
    return for_each_row(s, [&](const storage::Statement& row) {
        *out = read_scan(row);
        *found = true;
    });
}

core::Status latest_complete_scan(storage::Database& db, std::uint64_t* out) {
    std::int64_t id = 0;
    auto st = db.query_int64("SELECT coalesce(max(id), 0) FROM scans WHERE state = 'complete'", &id);
    *out = static_cast<std::uint64_t>(id);
    return st;
}

core::Status list_errors(storage::Database& db, std::optional<std::uint64_t> scan_id,
                         std::vector<ErrorRow>* out) {
    out->clear();
    storage::Statement s;
    const char* sql =
        scan_id ? "SELECT path, errno, message FROM errors WHERE scan_id = ? ORDER BY path"
                : "SELECT path, errno, message FROM errors WHERE scan_id IN"
                  " (SELECT id FROM scans WHERE state = 'complete') ORDER BY path";
    if (auto st = db.prepare(sql, &s); !st) return st;
    if (scan_id) s.bind_int64(1, static_cast<std::int64_t>(*scan_id));
    return for_each_row(s, [&](const storage::Statement& row) {
        out->push_back(ErrorRow{std::string(row.column_bytes(0)),
                                static_cast<int>(row.column_int64(1)),
                                std::string(row.column_bytes(2))});
    });
}

core::Status list_roots(storage::Database& db, std::vector<ipc::RootInfo>* out) {
    out->clear();
    storage::Statement s;
    // Top-level roots hang below the sentinel dirs row 0; their totals are recursive.
    if (auto st = db.prepare("SELECT d.prefix, d.scan_id, coalesce(s.finished_ns, 0),"
                             " d.files + d.dirs + 1, d.size"
                             " FROM dirs AS d LEFT JOIN scans AS s ON s.id = d.scan_id"
                             " WHERE d.parent = 0 AND d.id != 0 ORDER BY d.prefix",
                             &s);
        !st) {
        return st;
    }
    return for_each_row(s, [&](const storage::Statement& row) {
        ipc::RootInfo r;
        std::string_view prefix = row.column_bytes(0);
        if (prefix.size() > 1) prefix.remove_suffix(1);  // stored with a trailing '/'
        r.root = std::string(prefix);
        r.last_scan_id = static_cast<std::uint64_t>(row.column_int64(1));
        r.last_finished_ns = row.column_int64(2);
        r.entries = static_cast<std::uint64_t>(row.column_int64(3));
        r.bytes = static_cast<std::uint64_t>(row.column_int64(4));
        out->push_back(std::move(r));
    });
}

}  // namespace wsindex::daemon
