// Linked names: the indexed names of a hard-linked inode, by device and inode number.
//
// Why: the live index learns of a change to a hard-linked file that was made through a name
// outside every root only as "this inode changed" (monitor::DirChange::inode); its names inside
// the roots, which hold the same metadata, are re-stat'ed from what the index says they are.
// linked_names() finds only names stored with nlink > 1 (through `links`, indexed); an inode
// indexed with one name that has since gained another outside the roots is found by
// names_by_entries_pass(), one pass over `entries` for many inodes at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "storage/database.hpp"
#include "storage/statement.hpp"

namespace wsindex::storage {

struct LinkedName {
    std::string dir;   // the directory's path, no trailing '/' (but "/" itself)
    std::string name;  // the entry's name in it
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
};

// Appends the indexed names of inode `ino` on device `dev` to `out`.
core::Status linked_names(Database& db, std::uint64_t dev, std::uint64_t ino,
                          std::vector<LinkedName>* out);

struct InodeNumber {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
};

// Appends every indexed name of the given inodes to `out`: one pass over `entries` per few
// hundred inodes (~0.1-0.3 s per million entries), for callers that bound how often they ask.
core::Status names_by_entries_pass(Database& db, const std::vector<InodeNumber>& inodes,
                                   std::vector<LinkedName>* out);

}  // namespace wsindex::storage
