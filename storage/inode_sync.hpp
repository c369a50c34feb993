// Inode sync: after a writer rewrote some names of hard-linked inodes, gives every other indexed
// name of those inodes the same fresh metadata and keeps `links` and the totals consistent.
//
// Why: a fresh scan stats every name of an inode and finds the same metadata (nlink, ctime,
// size, ...), and counts the inode once per directory total (docs/schema.md). A writer that
// rewrites only part of the index (a subtree rescan, a live re-listing of one directory) sees
// only the names inside its part: after `ln outside/f inside/g` the name outside still says
// nlink 1, is counted in the additive part of its directories, and the inode is counted twice
// in every common ancestor. This module repairs the names outside the writer's part, in the
// writer's transaction.
//
// The contract with a writer:
//   - Call it inside the writer's write transaction, after the writer's own rows, `links` rows
//     and `dirs` totals are written and consistent with each other (every stored total equals
//     its additive part plus the `links` part recounted; the scan swap's steps 1-4 leave it so).
//   - Pass every inode whose names the writer wrote or removed with nlink > 1 on either side
//     (before or after), with the metadata it just read when it has it.
//   - `is_fresh(dir, prefix)` says which directories the writer has just written: their names
//     are never touched.
// Then, for each other indexed name of each inode (found through `links`, and, when the
// inode's link count says names are missing, through one pass over `entries`):
//   - its metadata becomes the fresh metadata (given, or lstat of that name when the writer
//     only saw the inode leave: a name whose lstat fails or shows another inode is left alone
//     and its directory reported in `stale_dirs`; only a re-listing of it can fix it);
//   - its directory's digest follows (a later rescan still recognizes it as unchanged);
//   - a name that becomes multi-link moves from its directory's additive ("single") part to
//     `links`, one that becomes single-link moves back, and a `links` row's size and blocks
//     follow the inode;
//   - the totals of its directory and of every ancestor change by the additive difference
//     plus the recounted `links` part (an inode counted once per total).
// The report says what changed: per directory, the change of its own additive part (for a
// caller that keeps counts of its own), the dirs rows whose totals moved, and the directories
// that hold a name this could not verify (schedule a re-listing of them).
//
// Cost: per inode, one search of `links` (index links_inode) and one read of each directory
// holding a multi-link name of it; the pass over `entries` (~0.1-0.3 s per million entries)
// only when an inode's names found fall short of its link count: a link just made to a name
// that still says nlink 1, or a name outside every indexed root (then on every call that
// passes that inode; pass only inodes whose names changed).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/status.hpp"
#include "core/walk_result.hpp"
#include "storage/database.hpp"
#include "storage/tree_totals.hpp"

namespace wsindex::storage {

// One inode whose names a writer changed.
struct InodeChange {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    // The metadata the writer just read through one of the inode's names (has_stat; the
    // path is not used), or none when it saw the inode only in rows it removed: each other
    // name is then lstat'ed.
    std::optional<core::WalkResult> fresh;
};

// The change a writer records for a multi-link name it wrote: its metadata without the path.
InodeChange inode_change_of(const core::WalkResult& r);

// The change of one directory's additive part (its own single-link entries, not what lies
// below it): what a name moving into or out of `links`, or changing size, did to it.
struct SingleDelta {
    std::int64_t dir = 0;
    Totals single;
};

struct InodeSyncReport {
    std::vector<SingleDelta> single;  // directories whose additive part changed, by how much
    std::vector<std::int64_t> totals_rewritten;  // dirs rows whose totals changed (any part)
    std::vector<std::int64_t> stale_dirs;        // hold a name that is no longer the inode
    std::uint64_t names_updated = 0;             // entries rows given fresh metadata
    bool scanned_entries = false;                // a pass over `entries` was needed to find names
};

// Whether the directory with this id and stored prefix was just written by the caller.
using IsFreshDir = std::function<bool(std::int64_t dir, std::string_view prefix)>;

// See the file comment. Runs inside the caller's transaction; on error the caller rolls back.
core::Status sync_inode_names(Database& db, std::span<const InodeChange> inodes,
                              const IsFreshDir& is_fresh, InodeSyncReport* report);

}  // namespace wsindex::storage
