// Dupes candidate cache: the last listing in memory while data_version holds
// (dupes_candidate_cache.hpp).
#include "daemon/dupes_candidate_cache.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <utility>

namespace wsindex::daemon {
namespace {

bool same_query(const storage::CandidateQuery& a, const storage::CandidateQuery& b) {
    return a.min_size == b.min_size && a.roots == b.roots;
}

}  // namespace

core::Status DupesCandidateCache::open_locked() {
    // The path's file before opening: when it is replaced in between, the next listing sees
    // another file than the one recorded and opens again (conservative, see the header, 3.).
    struct stat st {};
    const bool found = ::stat(db_path_.c_str(), &st) == 0;
    const std::pair<std::uint64_t, std::uint64_t> file{st.st_dev, st.st_ino};
    if (db_.is_open() && found && file == file_) return {};
    db_.close();
    valid_ = false;
    copy_.clear();
    if (auto opened = storage::Database::open(db_path_, storage::OpenMode::read_write, &db_);
        !opened) {
        return opened;
    }
    file_ = file;
    if (!found) {
        // Created just now: record the new file.
        struct stat created {};
        if (::stat(db_path_.c_str(), &created) == 0) file_ = {created.st_dev, created.st_ino};
    }
    return {};
}

core::Status DupesCandidateCache::list(const storage::CandidateQuery& q,
                                       std::vector<storage::DupeCandidate>* out,
                                       bool* from_memory) {
    if (from_memory != nullptr) *from_memory = false;
    std::lock_guard lock(mu_);
    if (auto st = open_locked(); !st) return st;
    // Read before the listing's transaction (see the header, 1.).
    std::int64_t version = 0;
    if (auto st = db_.query_int64("PRAGMA data_version", &version); !st) {
        valid_ = false;
        return st;
    }
    if (valid_ && version == version_ && same_query(q, query_)) {
        *out = copy_;
        if (from_memory != nullptr) *from_memory = true;
        return {};
    }
    valid_ = false;
    copy_.clear();
    if (auto st = storage::dupe_candidates(db_, q, &copy_); !st) {
        copy_.clear();
        return st;
    }
    if (copy_.size() > max_kept_) {
        *out = std::move(copy_);
        copy_ = {};
        return {};
    }
    version_ = version;
    query_ = q;
    valid_ = true;
    *out = copy_;
    return {};
}

core::Status DupesCandidateCache::store(const std::vector<storage::HashRecord>& records) {
    if (records.empty()) return {};
    std::lock_guard lock(mu_);
    if (auto st = open_locked(); !st) return st;
    if (auto st = storage::store_content_hashes(db_, records); !st) {
        // Whether any of it was committed is not known here: list again next time.
        valid_ = false;
        return st;
    }
    if (valid_) apply_locked(records);
    return {};
}

// What the upsert did to each record's row, as the listing would now read it: a candidate gets
// hashes only from a row with its own size, mtime and ctime (storage::dupe_candidates).
core::Status DupesCandidateCache::subtree_all_listable(const std::string& path,
                                                       const storage::DirPredicate& listable,
                                                       bool* all) {
    *all = false;
    std::lock_guard lock(mu_);
    if (auto st = open_locked(); !st) return st;
    return storage::subtree_all_listable(db_, path, listable, all);
}

void DupesCandidateCache::apply_locked(const std::vector<storage::HashRecord>& records) {
    // The copy's names by inode (an inode's names may in principle carry another size than a
    // record of it: the row is keyed by inode alone).
    std::vector<std::size_t> by_inode(copy_.size());
    for (std::size_t i = 0; i < by_inode.size(); ++i) by_inode[i] = i;
    const auto key = [this](std::size_t i) { return std::pair(copy_[i].dev, copy_[i].ino); };
    std::sort(by_inode.begin(), by_inode.end(),
              [&key](std::size_t a, std::size_t b) { return key(a) < key(b); });
    for (const storage::HashRecord& r : records) {
        const std::pair inode(r.dev, r.ino);
        auto it = std::lower_bound(by_inode.begin(), by_inode.end(), inode,
                                   [&key](std::size_t i, const auto& k) { return key(i) < k; });
        for (; it != by_inode.end() && key(*it) == inode; ++it) {
            storage::DupeCandidate& c = copy_[*it];
            if (c.size != r.size || c.mtime_ns != r.mtime_ns || c.ctime_ns != r.ctime_ns) {
                c.partial.reset();
                c.full.reset();
                continue;
            }
            // A record without a full hash keeps the row's full hash of the same state, which
            // is what the candidate holds (it holds one only from a row of its own state).
            c.partial = r.partial;
            if (r.full) c.full = r.full;
        }
    }
}

}  // namespace wsindex::daemon
