// Publishing one host's local index into the fleet database: one state of it, in one
// transaction (readers see the old copy or the new one, never a mix), as a delta of the
// directories that changed or in full.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.hpp"
#include "fleet/pg_connection.hpp"

namespace wsindex::fleet {

struct PublishResult {
    std::int64_t generation = 0;     // the local meta.generation published
    std::int64_t revision = 0;       // and meta.revision (storage/index_version.hpp)
    bool delta = false;              // only the changed directories were written
    std::string why_full;            // when not a delta: why (fleet/publish_delta.hpp)
    std::uint64_t entries = 0;       // the host's entries in the fleet copy afterwards
    std::int64_t bytes = 0;          // apparent size of every root
    std::uint64_t dirs = 0;          // full: directories copied; delta: dirs rows written
    std::uint64_t rows_written = 0;  // entries copied
    std::uint64_t rows_deleted = 0;  // delta: entries removed first
};

// Reads the local index at `index_path` (read-only, in one read transaction: one state of the
// index) and publishes it as host `host` in one PostgreSQL transaction: as a delta (only the
// directories that differ from the host's copy: fleet/publish_delta.hpp) when the host has a
// copy and the difference is small, else in full (COPY into staging tables that replace the
// host's partitions). The schema must exist (ensure_schema).
// `instance` says which daemon publishes (instance_of()): the first to publish a host name
// claims it, and a publish of a name another instance claimed fails (errc::address_in_use,
// a message that says what to do) and leaves that copy alone, until the claim is released
// (release_host).
core::Status publish(PgConnection& conn, const std::string& index_path, const std::string& host,
                     const std::string& instance, PublishResult* result);

// The identity of the daemon whose index is at `index_path`: this machine's id
// (/etc/machine-id, else its host name) and the index's canonical path. Stable across
// restarts and rebuilds of the index; different for a system and a user daemon, and for two
// machines that share a host name.
std::string instance_of(const std::string& index_path);

// Removes host `host` from the fleet database: its row (and so its claim) and its partitions.
// `found` says whether it had a row.
core::Status release_host(PgConnection& conn, const std::string& host, bool* found);

}  // namespace wsindex::fleet
