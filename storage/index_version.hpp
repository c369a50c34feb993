// The two counters in `meta` that tell readers the index changed (docs/schema.md):
//   generation: moves when a key (directory, name) may have been added or removed, so that
//               name indexes reload; a write that changes only metadata leaves it alone.
//   revision:   moves with every committed write that may change a visible row (a scan's
//               swap, a live batch, a forget), metadata included: the fleet publisher
//               compares it to what it last published.
// Both move inside the writer's transaction, so a reader sees them with the rows they count.
#pragma once

#include <cstdint>

#include "core/status.hpp"
#include "storage/database.hpp"

namespace wsindex::storage {

// In the writer's open transaction: revision + 1, and generation + 1 when `keys_changed`.
core::Status note_index_change(Database& db, bool keys_changed);

// Both counters, in the caller's transaction (revision 0 in an index that never had one).
core::Status read_index_version(Database& db, std::int64_t* generation, std::int64_t* revision);

}  // namespace wsindex::storage
