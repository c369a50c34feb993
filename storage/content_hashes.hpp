// Content hashes: the candidates of `wsctl dupes` (regular files sharing a size with another
// inode) and the hashes cached for them, one row per inode (schema version 4, docs/dupes.md).
//
// Validity. A cached hash belongs to an inode as it was when read: (dev, ino, size, mtime_ns,
// ctime_ns). It is used only while the inode's entries row still has those values; any write,
// truncate, chmod or rename changes ctime, so a changed file is hashed again. Stale rows are
// never read, and prune_content_hashes removes rows whose inode left the index.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace wsindex::storage {

class Database;

using Hash128 = std::array<std::uint8_t, 16>;

// One name of a candidate inode, with the inode's indexed metadata and its valid cached hashes.
struct DupeCandidate {
    std::string path;  // bytes
    std::int64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::optional<Hash128> partial;  // cached, valid for this size/mtime/ctime
    std::optional<Hash128> full;
};

struct CandidateQuery {
    // Absolute normalized directories; files strictly below any of them. Empty: everywhere.
    std::vector<std::string> roots;
    std::int64_t min_size = 1;  // bytes, inclusive (1: empty files never take part)
};

// Every indexed regular file of at least min_size bytes below the roots whose size is shared
// with another inode (hard links of one inode alone are no candidates), ordered by size
// descending, then (dev, ino), then path. One read transaction.
core::Status dupe_candidates(Database& db, const CandidateQuery& q,
                             std::vector<DupeCandidate>* out);

// A hash to cache for one inode as read.
struct HashRecord {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::int64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;
    std::optional<Hash128> partial;
    std::optional<Hash128> full;
};

// Stores the records in one transaction (a row of another size/mtime/ctime is replaced; a
// record without `full` keeps a full hash the row already has for the same metadata).
core::Status store_content_hashes(Database& db, const std::vector<HashRecord>& records);

// Deletes the rows whose inode has no regular-file entry of the row's size in the index (the
// file left, or it changed and the row could never be valid again). One pass over `entries`;
// nothing when the table is empty. *removed (optional) gets the number of rows deleted.
core::Status prune_content_hashes(Database& db, std::int64_t* removed = nullptr);

}  // namespace wsindex::storage
