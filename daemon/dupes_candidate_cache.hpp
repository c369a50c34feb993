// Dupes candidate cache: the last listing of dupes candidates (storage/content_hashes.hpp) kept
// in memory while the index is unchanged, so that a second `wsctl dupes` over an unchanged index
// reads no rows (docs/dupes.md).
//
// When is the copy current? The cache owns one connection and reads `PRAGMA data_version` on it
// before each listing. SQLite changes that value whenever another connection (of this process or
// any other: the scan writer, a live update, a sqlite3 shell deleting hashes) commits to the
// database, and leaves it alone for this connection's own commits. So:
//   1. The version is read before the listing's read transaction begins: a commit that lands in
//      between makes the listing newer than its version, never older; the next run sees another
//      version and lists again (conservative).
//   2. Hashes that runs store go through this connection (store()), and the same records are
//      applied to the copy exactly as the SQL upsert applies them to the table: the copy stays
//      what a new listing would return, and the version stays valid because own commits do not
//      change it.
//   3. The connection reads the file at the path as it was when opened: an index set aside as
//      damaged and built anew (daemon/scan_service_rebuild.cpp) is another file at the same
//      path. Each listing stats the path first and opens it again when it is another file, as
//      the runs did when each opened its own connection.
// Equal file, equal version and equal query therefore mean equal rows. Whether the files on disk
// still match the index is not this cache's question: the finder's check step asks the file system
// as before.
//
// Memory: one listing, about 200 bytes a candidate (its path, inode and hashes); a listing of
// more than `max_kept` candidates is not kept (a tree of millions of duplicates would pin
// hundreds of MB between runs for a gain of a few hundred ms on a run that takes longer anyway).
//
// Threads: any; one mutex guards the connection and the copy (a run that lists while another
// stores waits for it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/status.hpp"
#include "storage/content_hashes.hpp"
#include "storage/database.hpp"
#include "storage/visible_totals.hpp"

namespace wsindex::daemon {

class DupesCandidateCache {
  public:
    static constexpr std::size_t kDefaultMaxKept = 250000;  // candidates; about 50 MB

    explicit DupesCandidateCache(std::string db_path, std::size_t max_kept = kDefaultMaxKept)
        : db_path_(std::move(db_path)), max_kept_(max_kept) {}

    // What storage::dupe_candidates(q) returns now; from memory when the index has not changed
    // since the same query was listed. *from_memory (optional) says which.
    core::Status list(const storage::CandidateQuery& q, std::vector<storage::DupeCandidate>* out,
                      bool* from_memory = nullptr);
    // storage::store_content_hashes on the cache's connection, and the same records applied to
    // the copy.
    core::Status store(const std::vector<storage::HashRecord>& records);
    // storage::subtree_all_listable on the cache's connection: may `listable` list every
    // directory the index holds below `path`?
    core::Status subtree_all_listable(const std::string& path,
                                      const storage::DirPredicate& listable, bool* all);

  private:
    core::Status open_locked();
    void apply_locked(const std::vector<storage::HashRecord>& records);

    std::string db_path_;
    std::size_t max_kept_;  // candidates
    std::mutex mu_;
    storage::Database db_;  // guarded by mu_; opened on first use
    // The file db_ reads (st_dev, st_ino of the path when it was opened); guarded by mu_.
    std::pair<std::uint64_t, std::uint64_t> file_{};
    bool valid_ = false;  // guarded by mu_: copy_ is the listing of query_ at version_
    std::int64_t version_ = 0;
    storage::CandidateQuery query_;
    std::vector<storage::DupeCandidate> copy_;  // as dupe_candidates orders them
};

}  // namespace wsindex::daemon
