// LiveUpdate: applies the live index's changes — directories re-listed one level, and new
// subdirectories walked in full — to the visible index in ONE transaction, in place.
//
// Where a scan writes a whole new copy of a subtree and swaps it in, a live update changes only
// the rows that differ: for each re-listed directory it compares the fresh listing with the
// indexed entries, inserts what is new, updates what changed, deletes what is gone (a removed
// subdirectory takes its subtree: its dirs rows go at once, its entries through `garbage`),
// and keeps `dir_totals` of the directory and all its ancestors exact (TotalsAdjuster). Readers
// see the index before or after a batch, never half of it.
//
// What a fresh scan would store is what a live update stores: the same rows, totals, digests
// (so that a later rescan keeps the unchanged directories) and errors. Errors found by a live
// update are recorded under the scan id of the directory's dirs row, so `scan_errors` shows them
// and the next scan of the root replaces them.
//
// Single writer: call on the writer's connection while no scan is open (the daemon's scan
// thread runs scans and live updates one after the other).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "core/walk_result.hpp"
#include "storage/database.hpp"
#include "storage/statement.hpp"

namespace wsindex::storage {

// One directory listed again: the walk of it with max_depth 1 (full paths), or — `partial` —
// only the entries whose names the change monitor reported, stat'ed one by one.
struct RelistedDir {
    core::WalkResult self;                  // its own record: stat, and the listing's error
    std::vector<core::WalkResult> entries;  // one record per entry of the listing
    // Only the named entries changed: `entries` holds those that exist, `gone` the names that
    // no longer do; every other row of the directory is as indexed. A change to a name whose
    // inode has other names (nlink > 1) needs the whole listing (the directory's `links` rows
    // and the once-per-inode totals are per directory): such a directory is skipped and listed
    // in LiveReport::relist_whole, for the caller to re-list it whole.
    bool partial = false;
    std::vector<std::string> gone;
    // Subdirectories walked again even if indexed as the same directory (device and inode). A
    // directory that left every root and came back keeps its inode, and what changed below it
    // meanwhile was never reported: the change that names it in its parent is the only sign.
    // A partial re-listing walks every named subdirectory again; a whole one those named here
    // (the subdirectories of a partial re-listing it replaces). Sorted.
    std::vector<std::string> rewalk;
    // Names of changes were dropped (more than the monitor keeps): any subdirectory may be one
    // `rewalk` would have named. Each whose row differs from the listing in change time is
    // walked again too (a rename changes the ctime of the directory moved; one replaced by
    // another directory differs in identity and is walked again anyway).
    bool rewalk_changed = false;
};

// A partial re-listing that must be done whole (RelistedDir::partial), and the subdirectories
// it named (RelistedDir::rewalk of the whole re-listing).
struct WholeRelisting {
    std::string path;
    std::vector<std::string> rewalk;
};

// A subdirectory that is not in the index (new, or replaced by another directory): the records
// of a full walk of it (full paths; its own record has parent_id 0 and dir_id 1).
struct WalkedSubtree {
    std::vector<core::WalkResult> records;
};

struct LiveBatch {
    std::vector<RelistedDir> dirs;
    std::vector<WalkedSubtree> subtrees;  // each named by an entry of one of `dirs`
};

struct LiveReport {
    std::uint64_t dirs_applied = 0;   // re-listed directories found in the index
    std::uint64_t dirs_skipped = 0;   // not indexed, or inside a subtree this batch replaced
    std::uint64_t rows_inserted = 0;  // entries rows (subtrees included)
    std::uint64_t rows_updated = 0;
    std::uint64_t rows_deleted = 0;  // entries rows of re-listed directories
    std::uint64_t subtrees_removed = 0;
    bool keys_changed = false;                 // a name was added or removed: meta.generation moved
    std::vector<WholeRelisting> relist_whole;  // partial directories not applied (RelistedDir)
    // The directories whose names or types changed (added, removed or retyped names, removed
    // subtrees' directories, new directories), sorted and unique: what the name index re-reads.
    std::vector<std::int64_t> name_dirs;
    std::int64_t generation = -1;  // meta.generation after the batch
};

// Which subdirectories of a re-listed directory need a full walk: those not indexed under the
// same name as the same directory (device and inode), those RelistedDir::rewalk asks for, and
// with RelistedDir::rewalk_changed those whose change time differs from their row.
// Empty when `dir` itself is not indexed.
// One object per batch: its statements are prepared once for all of the batch's directories.
class UnindexedSubdirs {
  public:
    explicit UnindexedSubdirs(Database& db) : db_(db) {}
    core::Status find(const RelistedDir& dir, std::vector<std::string>* paths);

  private:
    Database& db_;
    Statement find_dir_;
    Statement read_entry_;
    bool prepared_ = false;
};

// One directory's answer (tests; a batch uses UnindexedSubdirs).
core::Status unindexed_subdirs(Database& db, const RelistedDir& dir,
                               std::vector<std::string>* paths);

// Applies the batch in one transaction (rolled back on any failure: the index is then as it
// was). `batch` is consumed (records are moved from).
core::Status apply_live_batch(Database& db, LiveBatch& batch, LiveReport* report);

}  // namespace wsindex::storage
