// Dupes finder: groups of indexed files with identical content, for wsindex.Dupes
// (docs/dupes.md).
//
// Steps: candidates from the index (regular files that share their size with another inode:
// storage/content_hashes.hpp) -> names the caller may see (the visibility filter) -> a partial
// hash of each inode (first and last kPartialBytes; cached hashes reused) -> a full hash of the
// inodes whose partial hashes still collide -> a check (stat, permission; no content) of the
// group members this run did not open -> optionally a byte comparison within each group.
// The reading steps run on a RangeExecutor, one inode per index: costs are very uneven (a few
// large files among many small ones), which is what range stealing balances. New hashes are
// stored in the index after each step, so a second run over an unchanged tree reads nothing.
// Hard links of one inode are one file with several names, never duplicates of each other.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "core/range_executor.hpp"
#include "core/status.hpp"
#include "daemon/file_hash.hpp"

namespace wsindex::storage {
class Database;
}

namespace wsindex::daemon {

class DupesCandidateCache;

struct DupesRequest {
    std::vector<std::string> roots;  // absolute normalized directories; empty: everywhere
    std::int64_t min_size = 1;       // bytes; 1 leaves empty files out
    bool paranoid = false;           // compare bytes within each group after hashing
};

// One file: an inode and its names that the caller may see (sorted).
struct DupesFile {
    IndexedInode inode;
    std::vector<std::string> names;
};

struct DupesGroup {
    std::int64_t size = 0;
    std::vector<DupesFile> files;  // at least two, ordered by first name
    [[nodiscard]] std::uint64_t wasted() const {
        return static_cast<std::uint64_t>(size) * (files.size() - 1);
    }
};

struct DupesResult {
    std::vector<DupesGroup> groups;    // largest wasted space first
    std::vector<std::string> changed;  // a name of each inode that changed since it was indexed
    std::uint64_t candidates = 0;      // inodes that shared a size (visible to the caller)
    std::uint64_t unreadable = 0;      // inodes left out: the caller may not read them, or failed
    std::uint64_t hidden = 0;          // candidate names left out: the caller may not see them
    std::uint64_t cached = 0;          // hashes taken from the index instead of reading
    std::uint64_t hashed = 0;          // hashes computed (partial and full)
    ReadCounters read;                 // content read by this run
    // Wall time of each step, in microseconds, indexed by DupesPhase (for the daemon's log).
    std::array<std::uint64_t, 6> phase_us{};
    bool listing_kept = false;  // the candidates came from the kept listing (no rows read)
};

enum class DupesPhase : int { Listing, Checking, Partial, Full, Compare, Done };
std::string_view to_string(DupesPhase phase);

// Live progress of one run, read by other threads (wsindex.Status) while it runs.
class DupesProgress {
  public:
    struct Worker {
        std::uint64_t items = 0;  // inodes handled in the current phase
        std::uint64_t bytes = 0;  // content read in the current phase
    };
    struct Snapshot {
        DupesPhase phase = DupesPhase::Listing;
        std::uint64_t files_total = 0;  // of the current phase
        std::uint64_t files_done = 0;
        std::uint64_t bytes_total = 0;  // file sizes of the current phase
        std::uint64_t bytes_done = 0;   // sizes of the files done
        std::uint64_t bytes_read = 0;   // content read so far, all phases
        std::vector<Worker> workers;
        // The executor's per-worker statistics of the last finished reading phase.
        std::vector<core::RangeWorkerStats> executor;
    };

    explicit DupesProgress(unsigned workers);
    void start_phase(DupesPhase phase, std::uint64_t files, std::uint64_t bytes);
    // Worker `w` finished one file of `size` bytes, having read `read` bytes.
    void file_done(unsigned w, std::uint64_t size, std::uint64_t read);
    // Worker `w` finished `files` files of `sizes` bytes in all, having read `read` bytes.
    void files_done(unsigned w, std::uint64_t files, std::uint64_t sizes, std::uint64_t read);
    void set_executor_stats(std::vector<core::RangeWorkerStats> stats);
    [[nodiscard]] Snapshot snapshot() const;

  private:
    struct alignas(64) Slot {
        std::atomic<std::uint64_t> items{0};
        std::atomic<std::uint64_t> bytes{0};
    };
    std::atomic<int> phase_{0};
    std::atomic<std::uint64_t> files_total_{0};
    std::atomic<std::uint64_t> files_done_{0};
    std::atomic<std::uint64_t> bytes_total_{0};
    std::atomic<std::uint64_t> bytes_done_{0};
    std::atomic<std::uint64_t> bytes_read_{0};
    unsigned worker_count_;
    std::unique_ptr<Slot[]> slots_;
    mutable std::mutex mu_;
    std::vector<core::RangeWorkerStats> executor_;  // guarded by mu_
};

// May the caller learn that `path` exists? Empty: yes.
using NameFilter = std::function<bool(std::string_view path)>;

struct DupesEnvironment {
    // Read-write: candidates, and the hashes it stores, when `candidates` (below) is null.
    storage::Database* db;
    core::RangeExecutor& executor;  // the steps that read no content (the check)
    NameFilter can_see;             // the visibility filter; empty: every name
    ReadPermission may_read;        // the file read check; empty: every file
    DupesProgress& progress;
    // The executor of the steps that read content (partial, full, compare), asked for only when
    // there is something to read. Empty: `executor`. Readers wait for the disk on a cold cache,
    // so this one may have more threads than CPUs (more requests in flight).
    std::function<core::RangeExecutor&()> readers;
    // Where candidates are listed and hashes stored: the daemon's copy of the last listing
    // (daemon/dupes_candidate_cache.hpp), with a connection of its own. Null: `db`.
    DupesCandidateCache* candidates = nullptr;
    // The caller's check of every directory from "/" down to a file's, made on the descriptors
    // the file is then opened from (daemon/file_hash.hpp): r and x, as `can_see` judged by path
    // when the names were listed. Empty: every directory.
    DirJudge may_list;
};

// Runs the steps above. operation_canceled when `stop` was requested (nothing is reported;
// hashes already computed are kept in the index).
core::Status find_dupes(DupesEnvironment& env, const DupesRequest& request, std::stop_token stop,
                        DupesResult* out);

}  // namespace wsindex::daemon
