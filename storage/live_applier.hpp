// The live index's batch applier, internal to storage/: what storage/live_update.cpp (plan,
// write, apply) and storage/live_subtrees.cpp (subtrees moved in and out) share. Not part of
// the storage API: storage/live_update.hpp is.
#pragma once

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "storage/dir_digest.hpp"
#include "storage/entry_binding.hpp"
#include "storage/index_version.hpp"
#include "storage/inode_sync.hpp"
#include "storage/live_listing.hpp"
#include "storage/live_update.hpp"
#include "storage/path_range.hpp"
#include "storage/statement.hpp"
#include "storage/totals_adjuster.hpp"
#include "storage/transaction_guard.hpp"
#include "storage/tree_totals.hpp"

namespace wsindex::storage::live_detail {

// A walk of "/" joins "/" + "/" + name: keep one slash so prefixes stay canonical (as the scan
// writer does).
inline void canonical_path(core::WalkResult& r) {
    if (r.path.size() > 1 && r.path[0] == '/' && r.path[1] == '/') {
        r.path.erase(0, 1);
        if (r.name_offset > 0) --r.name_offset;
    }
}

struct IndexedDir {
    std::int64_t id = 0;
    std::int64_t parent = 0;
    std::int64_t scan_id = 0;
    std::int64_t depth = 0;
    std::optional<std::uint64_t> digest;  // NULL in rows of schema version 1
};

// What a non-directory adds to its directory's single part (storage/tree_totals.cpp, add()).
inline Totals single_of_file(const core::WalkResult& r) {
    if (r.has_stat && r.nlink > 1) return {};  // counted once per inode, from `links`
    return Totals{r.has_stat ? static_cast<std::int64_t>(r.size) : 0,
                  r.has_stat ? static_cast<std::int64_t>(r.blocks) : 0, 1, 0};
}

inline Totals own_size(const core::WalkResult& r) {
    return Totals{r.has_stat ? static_cast<std::int64_t>(r.size) : 0,
                  r.has_stat ? static_cast<std::int64_t>(r.blocks) : 0, 0, 0};
}

class Applier {
  public:
    Applier(Database& db, LiveReport& report) : db_(db), report_(report), totals_(db) {}

    core::Status prepare();
    core::Status apply(LiveBatch& batch);

  private:
    // What one re-listed directory changes (phase 1, read-only).
    struct Plan {
        RelistedDir* dir = nullptr;
        IndexedDir indexed;
        std::string name_in_parent;  // key of its own entry row in its parent
        std::optional<core::WalkResult> old_self;
        std::vector<core::WalkResult> removed;      // old rows whose names are gone or replaced
        std::vector<std::int64_t> removed_dir_ids;  // parallel to removed: dirs id or 0
        std::vector<std::pair<core::WalkResult*, core::WalkResult>> changed;  // fresh, old
        std::vector<std::int64_t> changed_dir_ids;  // parallel: dirs id of a same directory
        std::vector<core::WalkResult*> added;
        // A partial re-listing: the hashes of the indexed rows it read (every row the digest
        // loses; the rows it keeps come back through the fresh entries' hashes).
        std::uint64_t old_hash_sum = 0;
    };
    core::Status lookup_dir(std::string_view path, IndexedDir* out, bool* found);
    core::Status plan_dir(RelistedDir& dir, Plan* plan, bool* applies);
    core::Status write_plan(Plan& plan);
    // A directory's entry row now says `now`; it said `old` when the batch read it (its plan's
    // old_self, or its parent's row of it) unless a plan of this batch wrote it since. Adds the
    // change of its own size to its totals against what the row said last, so that the change
    // enters the totals once however many plans of the batch write the row (its parent's
    // listing and its own re-listing both do).
    void own_size_written(std::int64_t dir_id, const core::WalkResult& old,
                          const core::WalkResult& now) {
        const auto [it, first] = own_size_in_row_.try_emplace(dir_id, own_size(old));
        Totals d = own_size(now);
        d -= it->second;
        totals_.add(dir_id, d);
        it->second = own_size(now);
    }
    core::Status remove_subtree(const Plan& plan, const core::WalkResult& old, std::int64_t id);
    core::Status insert_subtree(const Plan& plan, core::WalkResult& entry);
    core::Status insert_entry(std::int64_t dir, std::string_view name, const core::WalkResult& r);
    core::Status update_entry(std::int64_t dir, std::string_view name, const core::WalkResult& r);
    core::Status delete_entry(std::int64_t dir, std::string_view name);
    core::Status record_error(std::int64_t scan_id, const core::WalkResult& r);
    core::Status forget_error(std::string_view path);
    core::Status next_dir_id(std::int64_t* out);

    Database& db_;
    LiveReport& report_;
    TotalsAdjuster totals_;
    Statement find_dir_;
    Statement read_entries_;
    Statement read_entry_;
    Statement insert_entry_;
    Statement update_entry_;
    Statement delete_entry_;
    Statement insert_error_;
    Statement delete_error_;
    Statement insert_link_;
    Statement insert_dir_;
    Statement set_digest_;
    std::vector<std::string> removed_prefixes_;  // subtrees this batch deletes or replaces
    std::unordered_map<std::string, WalkedSubtree*> subtrees_;  // by the subtree root's path
    // Hard-linked inodes whose names this batch wrote or removed, and the directories it wrote
    // (re-listed or inserted): their other names elsewhere are synced (inode_sync.hpp).
    std::vector<InodeChange> inodes_;
    std::unordered_map<std::int64_t, bool> fresh_dirs_;
    // Own size and blocks of each directory whose entry row a plan of this batch wrote, as
    // written (own_size_written).
    std::unordered_map<std::int64_t, Totals> own_size_in_row_;
    void note_inode(const core::WalkResult& r, bool removed) {
        if (r.is_dir() || !r.has_stat || r.nlink <= 1) return;
        if (removed) {
            inodes_.push_back(InodeChange{r.dev, r.ino, std::nullopt});
        } else {
            inodes_.push_back(inode_change_of(r));
        }
    }
    std::int64_t next_id_ = 0;  // 0: not read yet
    // Directories whose rows changed without a listing of them in this batch (a subdirectory's
    // own row moved): their digests are summed again from their rows once everything is written.
    std::vector<std::int64_t> digest_stale_;
    core::Status recompute_digests();
};

}  // namespace wsindex::storage::live_detail
