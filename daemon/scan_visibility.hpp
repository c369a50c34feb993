// What a caller may learn about scans and indexed roots (wsindex.Status, wsindex.Scans).
//
// A scan's root is a path, and its counters (entries, dirs, errors, bytes) and failure text are
// facts about everything below that path. The rule is the one find/du/errors follow
// (docs/security.md, "Scans and status"):
// - a root the caller cannot see (CallerView::can_see) is withheld: the scan stays in the answer
//   with its id, state and times, but `root` is empty and root_hidden is set; an indexed root
//   (RootInfo) is left out;
// - the counters and the failure text are shown only if the caller may list every directory of
//   the root's subtree in the index (the test du uses before it shows the precomputed totals),
//   and the index holds the root as a directory: a root scanned for the first time, or whose
//   first scan failed, has no directories to check, so nothing proves the caller could see what
//   the counters count. Otherwise they are zeroed and counts_hidden is set.
// Root (sees_everything) sees everything and costs nothing.
//
// Why redact scans rather than drop them: scan ids are handles (wsctl cancel ID, wsctl errors
// --scan-id ID), and a gap in the ids and the busy workers in Status would tell that a scan
// exists anyway; its id, state and times say nothing about any file.
#pragma once

#include <string>
#include <unordered_map>

#include "core/status.hpp"
#include "daemon/seams.hpp"
#include "ipc/methods.hpp"
#include "storage/database.hpp"

namespace wsindex::daemon {

// Zeroes the counters, bytes and failure text of `scan` and sets counts_hidden.
void hide_counts(ipc::ScanInfo* scan);

// One caller's view of scans for one call; decisions are cached per root (a history holds many
// scans of few roots). Same thread rules as CallerView: the query thread of that call.
class ScanRedactor {
  public:
    ScanRedactor(storage::Database& db, const CallerView& view);

    // Withholds what the caller may not learn from `scan` (see the header comment).
    core::Status redact(ipc::ScanInfo* scan);
    // False if the caller may not see `root` at all (leave it out); else withholds its totals
    // unless the caller may list the whole subtree.
    core::Status redact(ipc::RootInfo* root, bool* keep);
    // Whether the caller may see the counters of a scan of `root` (the rule above), judged
    // now: for `wsctl scan --wait`, whose progress replies are sent from the io thread, which
    // must not run this check itself.
    core::Status counts_visible(const std::string& root, bool* out);

  private:
    struct Decision {
        bool root_visible = false;
        bool counts_visible = false;
    };
    core::Status decide(const std::string& root, Decision* out);

    storage::Database& db_;
    const CallerView& view_;
    std::unordered_map<std::string, Decision> cache_;
};

}  // namespace wsindex::daemon
