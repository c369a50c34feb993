// ScanWriter: writes one scan at a time into the index — batched transactions, invisible rows,
// the atomic swap at completion, cleanup of failed scans, and crash recovery at open.
//
// Not thread-safe: exactly one thread (the writer thread, or the walk's consumer thread when
// writing inline) calls every member. ScanIngest adds the thread and the bounded queue.
//
// How a scan stays invisible until it completes:
//   - `begin` reserves a fresh range of global directory ids [dir_base, ...) for the scan and
//     records it in `scans` (committed, state `running`).
//   - Entries are inserted under those fresh ids; no row of the visible `dirs` table carries
//     them, so every reader's join drops them. New directories wait in memory (new_dirs_).
//   - The scan's root entry is held in memory: its key (parent dir, name) is the same as the
//     visible old root entry's.
//   - `complete` runs one transaction: delete the replaced dirs (prefix range) and remember
//     them in `garbage`, insert the new dirs with their totals, replace the root entry, adjust
//     the totals of the ancestors, give the other names of rewritten hard-linked inodes their
//     fresh metadata (storage/inode_sync.hpp), mark the scan complete. Readers see before or
//     after.
//   - `collect_garbage` then deletes the replaced entries in small transactions.
//   - A failed, cancelled or interrupted scan deletes the rows of its own id range; until it
//     has, they are invisible anyway.
//
// Unchanged directories are not written again (a rescan of an unchanged tree writes next to
// nothing): every `dirs` row keeps a digest of its entries (the sum of a 64-bit hash of each
// entry's name and metadata). When the scanned range already holds directories, a directory's
// records are held back until all of them arrived (its record's `children` tells how many);
// if the digest equals the indexed directory's at the same path and no entry had an error, the
// records are dropped and the swap keeps the old directory's id and rows (NewDir::old).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.hpp"
#include "core/walk_result.hpp"
#include "storage/bind_cache.hpp"
#include "storage/byte_arena.hpp"
#include "storage/checkpointer.hpp"
#include "storage/database.hpp"
#include "storage/inode_sync.hpp"
#include "storage/path_range.hpp"
#include "storage/tree_totals.hpp"
#include "storage/writer_lock.hpp"

namespace wsindex::storage {

// What ScanWriter::forget removed (the root's totals as they were), or why it refused.
struct ForgetReport {
    std::uint64_t dirs = 0;     // directories removed, the root included
    std::uint64_t entries = 0;  // entries below the root, the root included
    std::int64_t size = 0;      // the root's apparent size
    std::uint64_t scans = 0;    // rows of `scans` (history) removed with it
    // Refused with StorageErrc::not_indexed because the path lies inside this indexed
    // top-level root (empty otherwise).
    std::string inside_root;
    // The removed entries are deleted after the commit (garbage); false if that failed and
    // they are left for the next collection (they are invisible already).
    bool garbage_collected = false;
};

struct ScanOptions {
    // Rows buffered (then sorted by key and inserted) per transaction: 10k-50k amortizes the
    // commit and the WAL sync; more only grows the WAL and memory (~200 bytes per row).
    std::size_t rows_per_transaction = 20000;
    // Buffered rows older than this are committed even if the batch is not full, so that
    // progress (scans.entries) moves and a crash loses little.
    std::chrono::milliseconds max_transaction_age{250};
    // A Checkpointer thread copies the WAL into the database this often during the scan
    // (0: SQLite's automatic checkpoints on the writing connection instead).
    std::chrono::milliseconds checkpoint_period{200};
    // Test hook: fail with StorageErrc::injected_failure when this many rows were written
    // (0: never), as a real I/O error would.
    std::uint64_t fail_after_rows = 0;
};

class ScanWriter {
  public:
    // Opens `db_path` read-write (creating or migrating the schema), takes the writer lock,
    // and recovers: scans left `running` by a dead process become `interrupted`, the rows of
    // unsuccessful scans are removed, pending garbage is collected.
    static core::Status open(const std::string& db_path, std::unique_ptr<ScanWriter>* out);

    // Starts a scan of `root` (absolute, normalized: no trailing '/', no '.', '..' or '//').
    // If root's parent directory is indexed, the scan is a subtree rescan that will replace
    // exactly that subtree; otherwise it is a top-level root that replaces everything at or
    // below `root`. Fails if a scan is already running.
    core::Status begin(std::string_view root, const ScanOptions& options = {});

    // Takes one batch from the walk. May move from the elements (the walk discards them).
    // Records of files may carry only their name (WalkOptions::full_paths == false); those of
    // directories and those with an error must carry the full path.
    // Commits when rows_per_transaction rows are buffered or the oldest is max age old.
    // A non-ok result is fatal for the scan: the caller aborts the walk and calls abort().
    core::Status write(std::span<core::WalkResult> batch);
    // Commits buffered rows if the oldest is older than max_transaction_age.
    core::Status flush_if_due();

    // The walk finished: commit, then swap the scan in atomically. On failure the scan is
    // aborted (marked failed, its rows removed) and the error returned.
    core::Status complete();
    // The walk failed (`reason`) or was cancelled: the scan is marked failed or cancelled
    // with reason's text and its rows are removed; the previous index is untouched. Returns
    // the first error met while recording that (the rows are then removed at next open).
    core::Status abort(const core::Status& reason, bool cancelled);

    // While no scan runs (scan_writer_forget.cpp): removes the indexed top-level root `root`
    // (normalized, as for begin) in one transaction: its directories (to garbage), its root
    // entry and any top-level roots below it, the errors recorded below it, the `scans` rows
    // of it and of subtrees of it, then moves meta.generation; then collects the garbage.
    // StorageErrc::not_indexed when `root` is not an indexed top-level root (a path inside one
    // sets report->inside_root); scan_in_progress during a scan.
    core::Status forget(std::string_view root, ForgetReport* report);

    // Deletes the entries of replaced directories, in transactions of about `batch_dirs`
    // directories so that readers and checkpoints interleave. Called after complete().
    core::Status collect_garbage(std::size_t batch_dirs = 512);
    // The last step of collect_garbage: drops cached content hashes of inodes that left the
    // index (storage/content_hashes.hpp) when directories were collected (a swap, a forget, a
    // live update that replaced directories), and otherwise at most once a minute (a live
    // update deletes single files without garbage; a stale row is never used, only kept).
    core::Status prune_hashes_after_gc(bool collected_dirs);

    // While no scan runs: copies the log into the database file (PASSIVE: never waits for a
    // reader; what a reader still needs stays in the log). Why: a reader looks every page up in
    // the log first and reads the ones it finds there with pread(), not through its memory map;
    // after a 1M-entry scan the log holds ~80 MB, and the first find on each query connection
    // cost ~0.1 s more than the next ones (measured, bench/daemon_compare.sh).
    core::Status checkpoint();

    [[nodiscard]] bool scanning() const { return scan_id_ != 0; }
    [[nodiscard]] std::int64_t scan_id() const { return scan_id_; }
    [[nodiscard]] std::int64_t last_scan_id() const { return last_scan_id_; }
    [[nodiscard]] std::uint64_t entries() const { return entries_; }
    [[nodiscard]] std::uint64_t errors() const { return errors_; }
    [[nodiscard]] Database& database() { return db_; }
    // Wall seconds of the last swap (complete) and garbage collection, for benchmarks.
    [[nodiscard]] double last_swap_seconds() const { return swap_seconds_; }
    [[nodiscard]] double last_gc_seconds() const { return gc_seconds_; }
    // Directories and entry rows of the last or running scan left as they were (unchanged).
    [[nodiscard]] std::uint64_t reused_dirs() const { return reused_dirs_; }
    [[nodiscard]] std::uint64_t reused_rows() const { return reused_rows_; }

  private:
    ScanWriter() = default;
    core::Status prepare_statements();
    core::Status recover();
    core::Status clear_scan_rows(std::int64_t scan_id, std::int64_t base, std::int64_t max);
    core::Status flush();
    core::Status accept(core::WalkResult& r);
    core::Status load_old_dirs();
    void take_row(core::WalkResult& r, std::vector<core::WalkResult>& into);
    void recycle_path(std::string& path);
    void resolve_dir(std::uint64_t walk_id);
    [[nodiscard]] bool incremental() const { return !old_dirs_.empty(); }
    core::Status insert_row(core::WalkResult& r);
    // The swap (scan_swap.cpp): one transaction, the steps in this order.
    struct SwapPlan;
    core::Status swap_in();
    // 1. A subtree rescan reads its ancestors' totals and the old root's contribution.
    core::Status swap_read_ancestors(const PrefixRange& range, SwapPlan& plan);
    // 2. Deletes the replaced directories (to garbage), roots below, the old root entry, and
    //    earlier errors in the range.
    core::Status swap_delete_replaced(const PrefixRange& range);
    // 3. Inserts the new root entry and the new (or changed reused) directories with totals.
    core::Status swap_insert_new();
    // 4. Adjusts every ancestor's totals: additive part by the difference, multi-link recounted.
    core::Status swap_adjust_ancestors(SwapPlan& plan);
    // 5. Gives the names outside the range of the hard-linked inodes the scan rewrote (or saw
    //    leave) their fresh metadata, with `links` and totals (scan_swap_inodes.cpp).
    core::Status swap_sync_other_names(const PrefixRange& range);
    // 6. Marks the scan complete; moves the index generation if any key may have changed.
    core::Status swap_mark_complete();
    core::Status mark_finished(const char* state, const std::string& error);
    // forget(): the indexed top-level root containing `path`, if any (empty: none).
    core::Status top_level_root_of(std::string_view path, std::string* out);
    std::int64_t gid(std::uint64_t walk_id) const {
        return base_ + static_cast<std::int64_t>(walk_id) - 1;
    }

    Database db_;
    WriterLock lock_;

    // Prepared once per connection and reused for every row.
    Statement insert_entry_;
    static constexpr std::size_t kRowsPerInsert = 64;
    Statement insert_entries_;        // kRowsPerInsert rows per execution
    BindCache insert_entries_bound_;  // its bindings (only ever run with run_keep_bindings)
    struct StagedRow {
        const core::WalkResult* record;  // in pending_
        std::int64_t parent;
    };
    std::vector<StagedRow> staged_;  // bound into insert_entries_, not yet executed
    core::Status insert_staged_rows();
    void start_checkpointer();
    void stop_checkpointer();
    std::unique_ptr<Checkpointer> checkpointer_;  // while a scan runs
    Statement insert_link_;
    Statement insert_error_;
    Statement update_progress_;

    // The running scan (scan_id_ == 0: none).
    std::int64_t scan_id_ = 0;
    std::int64_t last_scan_id_ = 0;
    ScanOptions options_;
    std::string root_;
    std::string root_name_;         // key of the root entry in its parent directory
    std::int64_t root_parent_ = 0;  // global id of root's parent dir (0: a top-level root)
    std::uint32_t root_depth_ = 0;  // path components of root_
    std::int64_t base_ = 0;         // global id of walk dir id 1 (the root)
    std::int64_t dir_max_ = 0;      // highest global dir id written so far
    std::uint64_t entries_ = 0;
    std::uint64_t errors_ = 0;
    std::uint64_t rows_written_ = 0;
    bool have_root_ = false;
    // Set when this scan adds or removes an entries row or a directory (other than the root
    // entry, rewritten under the same key by every swap): only then does meta.generation move,
    // so that an unchanged rescan leaves the daemon's name index valid (no 1M-name reload).
    bool keys_changed_ = false;
    core::WalkResult root_record_;
    TreeTotals totals_;
    // The multi-link names written by this scan, with their metadata, for step 5 of the swap:
    // 72 bytes each (a WalkResult would be twice that).
    struct LinkedName {
        std::uint64_t dev, ino, size, blocks, nlink;
        std::int64_t mtime_ns, ctime_ns;
        std::uint32_t mode, uid, gid;
        core::EntryType type;
    };
    std::vector<LinkedName> linked_written_;
    std::vector<core::WalkResult> pending_;  // buffered rows of the next transaction

    // Incremental rescans (class comment). Walk ids index digests_ as they index totals_.
    struct OldDir {
        std::int64_t id;
        std::optional<std::int64_t> digest;  // none in rows from schema version 1
        std::int64_t parent;
        std::int64_t depth;
        Totals totals;
        bool reused = false;  // a directory of this scan keeps it; else the swap deletes it
    };
    // By prefix (in paths_): every indexed directory in the scanned range, loaded by begin().
    // The swap deletes the ones no directory of the scan reused, without a query over the range.
    std::unordered_map<std::string_view, OldDir> old_dirs_;

    // The scan's directories, by walk id (dense: 1 is the root), held for the swap. In memory
    // rather than in a table: ~40 bytes plus the path per directory (~5% of the entries), and
    // the swap of an unchanged tree then runs no statement per directory. A deque: growing a
    // vector would copy it and hold both copies meanwhile.
    struct NewDir {
        bool seen = false;         // its own record arrived
        std::uint64_t parent = 0;  // walk id of its parent; 0 for the root
        std::uint32_t depth = 0;   // path components
        std::string_view prefix;   // path + '/', in paths_
        OldDir* old = nullptr;     // the indexed directory it keeps (same path and digest)
    };
    std::deque<NewDir> new_dirs_;
    ByteArena paths_;  // the prefixes of old_dirs_ and new_dirs_
    NewDir& new_dir(std::uint64_t walk_id) {
        if (new_dirs_.size() <= walk_id) new_dirs_.resize(walk_id + 1);
        return new_dirs_[walk_id];
    }
    void release_scan_memory();
    struct OpenDir {  // a directory whose records are still arriving (incremental only)
        std::int64_t expected = -1;  // its record's `children`; -1: record not seen yet
        std::int64_t received = 0;
        bool changed = false;  // an entry with an error, or its own listing failed
        std::vector<core::WalkResult> rows;
    };
    std::unordered_map<std::uint64_t, OpenDir> open_dirs_;  // by walk id
    std::vector<std::uint64_t> digests_;                    // by walk id
    std::uint64_t reused_dirs_ = 0;
    std::uint64_t reused_rows_ = 0;
    // Path buffers of committed rows, cleared, handed back through write()'s batch so that the
    // walk's PathRecycler returns them to the workers (else each row costs the workers a
    // malloc and this thread a cross-thread free).
    std::vector<std::string> spare_paths_;
    // flush(): pending_ indices in key order, with a cheap integer prefix of the key.
    struct SortKey {
        std::uint64_t dir;          // parent_id
        std::uint64_t name_prefix;  // the name's first 8 bytes, big-endian, zero-padded
        std::uint32_t index;        // into pending_
    };
    std::vector<SortKey> order_;
    std::chrono::steady_clock::time_point pending_since_;
    core::Status first_write_error_;  // sticky: the first write error of this scan
    double swap_seconds_ = 0;
    double gc_seconds_ = 0;
    // When collect_garbage last pruned content_hashes (see prune_hashes_after_gc).
    std::optional<std::chrono::steady_clock::time_point> last_hash_prune_;
};

}  // namespace wsindex::storage
