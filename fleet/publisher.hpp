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
// `instance` says which daemon publishes (instance_of()): the first to publish a host name
// claims it, and a publish of a name another instance claimed fails (errc::address_in_use,
// a message that says what to do) and leaves that copy alone, until the claim is released
// (release_host).
core::Status publish_full(PgConnection& conn, const std::string& index_path,
                          const std::string& host, const std::string& instance,
                          PublishResult* result);

// The identity of the daemon whose index is at `index_path`: this machine's id
// (/etc/machine-id, else its host name) and the index's canonical path. Stable across
// restarts and rebuilds of the index; different for a system and a user daemon, and for two
// machines that share a host name.
std::string instance_of(const std::string& index_path);

// Removes host `host` from the fleet database: its row (and so its claim) and its partitions.
// `found` says whether it had a row.
core::Status release_host(PgConnection& conn, const std::string& host, bool* found);

}  // namespace wsindex::fleet
