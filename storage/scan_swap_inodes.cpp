// ScanWriter: step 5 of the swap, the other names of the hard-linked inodes the scan rewrote.
#include <algorithm>

#include "storage/inode_sync.hpp"
#include "storage/scan_writer.hpp"
#include "storage/statement.hpp"

namespace wsindex::storage {

core::Status ScanWriter::swap_sync_other_names(const PrefixRange& range) {
    // The inodes of the multi-link names written (with their fresh metadata), and of those in
    // the directories this scan replaced (a name removed, e.g. by rm or mv, lowers the link
    // count of the names left outside). Reused directories did not change: nothing to do.
    // An inode whose every name this scan wrote has no other name to sync.
    std::vector<InodeChange> changes;
    std::sort(linked_written_.begin(), linked_written_.end(),
              [](const LinkedName& a, const LinkedName& b) {
                  return a.dev != b.dev ? a.dev < b.dev : a.ino < b.ino;
              });
    for (std::size_t i = 0, end = 0; i < linked_written_.size(); i = end) {
        const LinkedName& n = linked_written_[i];
        for (end = i + 1; end < linked_written_.size() && linked_written_[end].dev == n.dev &&
                          linked_written_[end].ino == n.ino;
             ++end) {
        }
        if (end - i >= n.nlink) continue;
        core::WalkResult fresh;
        fresh.type = n.type;
        fresh.has_stat = true;
        fresh.size = n.size;
        fresh.blocks = n.blocks;
        fresh.dev = n.dev;
        fresh.ino = n.ino;
        fresh.nlink = n.nlink;
        fresh.mode = n.mode;
        fresh.uid = n.uid;
        fresh.gid = n.gid;
        fresh.mtime_ns = n.mtime_ns;
        fresh.ctime_ns = n.ctime_ns;
        changes.push_back(InodeChange{n.dev, n.ino, std::move(fresh)});
    }
    linked_written_ = {};
    // Most indexes hold no hard link at all: then no replaced directory held one either.
    std::int64_t any_links = 0;
    if (auto s = db_.query_int64("SELECT EXISTS (SELECT 1 FROM links)", &any_links); !s) return s;
    if (any_links == 0) return {};
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
