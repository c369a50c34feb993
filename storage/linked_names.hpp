// Linked names: the indexed names of a hard-linked inode, by device and inode number.
//
// Why: the live index learns of a change to a hard-linked file that was made through a name
// outside every root only as "this inode changed" (monitor::DirChange::inode); its names inside
// the roots, which hold the same metadata, are re-stat'ed from what the index says they are.
// Only names stored with nlink > 1 are found (through `links`): an inode indexed with one name
// that gained another outside the roots looks like any single file until its next change or
// rescan (docs/live-index.md, limits).
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
};

// Appends the indexed names of inode `ino` on device `dev` to `out`.
core::Status linked_names(Database& db, std::uint64_t dev, std::uint64_t ino,
                          std::vector<LinkedName>* out);

}  // namespace wsindex::storage
