// Publishing one host's local index into the fleet database: a whole generation, in one
// transaction, into staging tables that then replace the host's partitions (readers see the old
// generation or the new one, never a mix).
#pragma once

#include <cstdint>
#include <string>

#include "core/status.hpp"
#include "fleet/pg_connection.hpp"

namespace wsindex::fleet {

struct PublishResult {
    std::int64_t generation = 0;  // the local meta.generation published
    std::uint64_t entries = 0;
    std::int64_t bytes = 0;  // apparent size of every root
    std::uint64_t dirs = 0;
};

// Reads the local index at `index_path` (read-only, in one read transaction: one generation)
// and publishes all of it as host `host`. The schema must exist (ensure_schema).
core::Status publish_full(PgConnection& conn, const std::string& index_path,
                          const std::string& host, PublishResult* result);

}  // namespace wsindex::fleet
