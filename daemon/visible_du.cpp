// Du answers over visible entries only (storage/visible_totals.* does the counting).
#include "daemon/visible_du.hpp"

#include <algorithm>
#include <optional>

#include "storage/path_range.hpp"
#include "storage/visible_totals.hpp"

namespace wsindex::daemon {
namespace {

ipc::DuEntry to_entry(const storage::VisibleTotalsRow& row, std::uint32_t base_depth) {
    const storage::DirTotalsRow& t = row.totals;
    ipc::DuEntry e;
    e.path = t.path;
    e.depth = t.depth >= base_depth ? t.depth - base_depth : 0;
    e.size = static_cast<std::uint64_t>(std::max<std::int64_t>(0, t.size));
    e.disk = static_cast<std::uint64_t>(std::max<std::int64_t>(0, t.blocks)) * 512;
    e.files = static_cast<std::uint64_t>(std::max<std::int64_t>(0, t.files));
    e.dirs = static_cast<std::uint64_t>(std::max<std::int64_t>(0, t.dirs));
    e.partial = row.partial;
    return e;
}

}  // namespace

core::Status sees_whole_subtree(storage::Database& db, const std::string& path,
                                const CallerView& view, bool* whole) {
    *whole = view.sees_everything;
    if (*whole) return {};
    return storage::subtree_all_listable(db, path, view.can_list, whole);
}

core::Status visible_du_rows(storage::Database& db, const std::string& path, const CallerView& view,
                             std::uint32_t depth, std::uint64_t top,
                             std::vector<ipc::DuEntry>* out) {
    const std::uint32_t base = storage::path_depth(path);
    const std::uint64_t max_depth =
        depth == 0 && top > 0 ? UINT64_MAX : static_cast<std::uint64_t>(base) + depth;
    std::vector<storage::VisibleTotalsRow> rows;
    std::optional<storage::VisibleTotalsRow> self;
    auto st = storage::visible_dir_totals(
        db, path, view.can_see(path), view.can_list, [&](storage::VisibleTotalsRow&& row) {
            if (row.totals.depth == base) {
                self = std::move(row);
                return;
            }
            // Rows by name: hidden names are neither listed nor ranked.
            if (row.totals.depth <= max_depth && view.can_see(row.totals.path)) {
                rows.push_back(std::move(row));
            }
        });
    if (!st) return st;
    if (self && view.can_see(path)) out->push_back(to_entry(*self, base));
    if (top > 0) {
        const std::size_t keep =
            static_cast<std::size_t>(std::min<std::uint64_t>(top, rows.size()));
        std::partial_sort(
            rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(keep), rows.end(),
            [](const auto& a, const auto& b) { return a.totals.size > b.totals.size; });
        rows.resize(keep);
    } else {
        // The order of the precomputed answer: by stored prefix (path + '/'), i.e. depth-first.
        std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
            return storage::dir_prefix(a.totals.path) < storage::dir_prefix(b.totals.path);
        });
    }
    for (const auto& row : rows) out->push_back(to_entry(row, base));
    return {};
}

}  // namespace wsindex::daemon
