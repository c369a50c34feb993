// Index rows (storage::Queries) as protocol types.
#include "daemon/index_queries.hpp"

#include <algorithm>
#include <string_view>

namespace wsindex::daemon {
namespace {

ipc::ScanState state_from_db(std::string_view s) {
    if (s == "running") return ipc::ScanState::Running;
    if (s == "complete") return ipc::ScanState::Done;
    if (s == "cancelled") return ipc::ScanState::Cancelled;
    return ipc::ScanState::Failed;  // failed, interrupted
}

ipc::ScanInfo to_info(storage::ScanRow row) {
    ipc::ScanInfo info;
    info.scan_id = row.id;
    info.root = std::move(row.root);
    info.state = state_from_db(row.state);
    info.started_ns = row.started_ns;
    info.finished_ns = row.finished_ns;
    info.entries = row.entries;
    info.errors = row.errors;
    if (row.root_size)
        info.bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, *row.root_size));
    if (row.root_dirs)
        info.dirs = static_cast<std::uint64_t>(std::max<std::int64_t>(0, *row.root_dirs));
    info.error = std::move(row.error);
    if (row.state == "interrupted" && info.error.empty()) {
        info.error = "interrupted: wsindexd stopped during the scan";
    }
    if (info.finished_ns > info.started_ns) {
        info.elapsed_ms =
            static_cast<std::uint64_t>((info.finished_ns - info.started_ns) / 1000000);
    }
    if (info.elapsed_ms > 0) {
        info.entries_per_second =
            static_cast<double>(info.entries) * 1000.0 / static_cast<double>(info.elapsed_ms);
    }
    return info;
}

}  // namespace

core::Status list_scans(storage::Database& db, std::uint64_t limit,
                        std::vector<ipc::ScanInfo>* out) {
    out->clear();
    std::vector<storage::ScanRow> rows;
    if (auto st = storage::Queries(db).scans(limit, &rows); !st) return st;
    for (storage::ScanRow& row : rows) out->push_back(to_info(std::move(row)));
    return {};
}

core::Status get_scan(storage::Database& db, std::uint64_t scan_id, ipc::ScanInfo* out,
                      bool* found) {
    storage::ScanRow row;
    if (auto st = storage::Queries(db).scan(scan_id, &row, found); !st) return st;
    if (*found) *out = to_info(std::move(row));
    return {};
}

core::Status latest_unsuccessful_scan(storage::Database& db, ipc::ScanInfo* out, bool* found) {
    storage::ScanRow row;
    if (auto st = storage::Queries(db).latest_unsuccessful_scan(&row, found); !st) return st;
    if (*found) *out = to_info(std::move(row));
    return {};
}

core::Status latest_complete_scan(storage::Database& db, std::uint64_t* out) {
    return storage::Queries(db).latest_complete_scan(out);
}

core::Status list_errors(storage::Database& db, std::optional<std::uint64_t> scan_id,
                         std::vector<ErrorRow>* out) {
    return storage::Queries(db).errors(scan_id, out);
}

core::Status list_roots(storage::Database& db, std::vector<ipc::RootInfo>* out) {
    out->clear();
    std::vector<storage::RootRow> rows;
    if (auto st = storage::Queries(db).roots(&rows); !st) return st;
    for (storage::RootRow& row : rows) {
        ipc::RootInfo r;
        r.root = std::move(row.path);
        r.last_scan_id = row.scan_id;
        r.last_finished_ns = row.finished_ns;
        r.entries = row.entries;
        r.bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, row.size));
        out->push_back(std::move(r));
    }
    return {};
}

}  // namespace wsindex::daemon
