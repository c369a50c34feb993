// ScanWriter: step 5 of the swap, the other names of the hard-linked inodes the scan rewrote.
#include "storage/inode_sync.hpp"
#include "storage/scan_writer.hpp"
#include "storage/statement.hpp"

namespace wsindex::storage {

core::Status ScanWriter::swap_sync_other_names(const PrefixRange& range) {
    // The inodes of the multi-link names written (with their fresh metadata), and of those in
    // the directories this scan replaced (a name removed, e.g. by rm or mv, lowers the link
    // count of the names left outside). Reused directories did not change: nothing to do.
    std::vector<InodeChange> changes = std::move(linked_written_);
    linked_written_ = {};
    Statement old_links;
    if (auto s = db_.prepare("SELECT dev, ino FROM links WHERE dir = ?", &old_links); !s) return s;
    for (const auto& [prefix, old] : old_dirs_) {
        if (old.reused) continue;
        old_links.bind_int64(1, old.id);
        for (bool row = true;;) {
            if (auto s = old_links.step(&row); !s) return s;
            if (!row) break;
            changes.push_back(InodeChange{static_cast<std::uint64_t>(old_links.column_int64(0)),
                                          static_cast<std::uint64_t>(old_links.column_int64(1)),
                                          std::nullopt});
        }
        old_links.reset();
    }
    if (changes.empty()) return {};
    InodeSyncReport report;
    return sync_inode_names(
        db_, changes,
        [&range](std::int64_t, std::string_view prefix) {
            return prefix >= range.lo && prefix < range.hi;
        },
        &report);
}

}  // namespace wsindex::storage
