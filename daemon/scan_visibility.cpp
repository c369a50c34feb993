// ScanRedactor: scans and roots as one caller may see them (rule in scan_visibility.hpp).
#include "daemon/scan_visibility.hpp"

#include <vector>

#include "daemon/visible_du.hpp"
#include "storage/queries.hpp"

namespace wsindex::daemon {

void hide_counts(ipc::ScanInfo* scan) {
    scan->entries = 0;
    scan->dirs = 0;
    scan->errors = 0;
    scan->bytes.reset();
    scan->entries_per_second = 0;
    scan->error.clear();  // a walk error names a path below the root
    scan->counts_hidden = true;
}

ScanRedactor::ScanRedactor(storage::Database& db, const CallerView& view) : db_(db), view_(view) {}

core::Status ScanRedactor::decide(const std::string& root, Decision* out) {
    if (view_.sees_everything) {
        *out = Decision{true, true};
        return {};
    }
    if (auto it = cache_.find(root); it != cache_.end()) {
        *out = it->second;
        return {};
    }
    Decision d;
    d.root_visible = view_.can_see(root);
    if (d.root_visible) {
        // Counts are facts about the whole subtree: only for a caller who may list all of it,
        // judged on the directories the index holds, so the root must be one of them.
        std::vector<storage::DirTotalsRow> self;
        if (auto st = storage::Queries(db_).dir_totals(root, 0, &self); !st) return st;
        if (!self.empty()) {
            if (auto st = sees_whole_subtree(db_, root, view_, &d.counts_visible); !st) return st;
        }
    }
    cache_.emplace(root, d);
    *out = d;
    return {};
}

core::Status ScanRedactor::redact(ipc::ScanInfo* scan) {
    Decision d;
    if (auto st = decide(scan->root, &d); !st) return st;
    if (!d.counts_visible) hide_counts(scan);
    if (!d.root_visible) {
        scan->root.clear();
        scan->root_hidden = true;
    }
    return {};
}

core::Status ScanRedactor::counts_visible(const std::string& root, bool* out) {
    Decision d;
    if (auto st = decide(root, &d); !st) return st;
    *out = d.counts_visible;
    return {};
}

core::Status ScanRedactor::redact(ipc::RootInfo* root, bool* keep) {
    Decision d;
    if (auto st = decide(root->root, &d); !st) return st;
    *keep = d.root_visible;
    if (d.root_visible && !d.counts_visible) {
        root->entries = 0;
        root->bytes = 0;
        root->counts_hidden = true;
    }
    return {};
}

}  // namespace wsindex::daemon
