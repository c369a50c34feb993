// The directory digest: an order-free sum of a 64-bit hash of each entry's name and metadata,
// stored with every directory so that a rescan can tell an unchanged directory without
// rewriting it (storage/scan_writer.hpp).
#pragma once

#include <cstdint>

#include "core/walk_result.hpp"

namespace wsindex::storage {

// The hash of one entry; a directory's digest is the sum of its entries' hashes.
std::uint64_t entry_hash(const core::WalkResult& r);

}  // namespace wsindex::storage
