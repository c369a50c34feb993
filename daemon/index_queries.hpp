// The scans, errors and roots of the index as protocol types: storage::Queries runs the SQL,
// this maps its rows (state names, the text of an interrupted scan, elapsed time and rate).
// Reader connection owned by the caller (a query thread).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/status.hpp"
#include "ipc/methods.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"

namespace wsindex::daemon {

// Scans, newest first; limit 0: all. States map as: complete -> done, interrupted -> failed
// (with "interrupted: wsindexd stopped during the scan" when no error text was stored).
core::Status list_scans(storage::Database& db, std::uint64_t limit,
                        std::vector<ipc::ScanInfo>* out);

// One scan by id; found == false if there is none.
core::Status get_scan(storage::Database& db, std::uint64_t scan_id, ipc::ScanInfo* out,
                      bool* found);

// The newest scan that ended failed, cancelled or interrupted (as failed); found == false if none.
core::Status latest_unsuccessful_scan(storage::Database& db, ipc::ScanInfo* out, bool* found);

// The id of the newest completed scan, 0 when there is none.
core::Status latest_complete_scan(storage::Database& db, std::uint64_t* out);

using ErrorRow = storage::ErrorRow;

// scan_id: that scan's errors; nullopt: every error of the current index (rows of completed
// scans that later rescans did not replace). In path order.
core::Status list_errors(storage::Database& db, std::optional<std::uint64_t> scan_id,
                         std::vector<ErrorRow>* out);

// The indexed top-level roots with their totals and the scan that produced them.
core::Status list_roots(storage::Database& db, std::vector<ipc::RootInfo>* out);

}  // namespace wsindex::daemon
