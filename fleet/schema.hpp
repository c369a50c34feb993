// The central schema of the fleet index (docs/fleet.md): created by `wsctl fleet init` or by a
// publishing daemon, checked at every connection; a database of a newer schema is refused.
#pragma once

#include <string>
#include <string_view>

#include "core/status.hpp"
#include "fleet/pg_connection.hpp"

namespace wsindex::fleet {

// Bumped with every change of the tables or views; the migrations go in schema.cpp.
inline constexpr int kFleetSchemaVersion = 4;

// The indexes of each host's entries partition (since version 4 the partition's own, not a
// partitioned index on entries; see kMigrateV4 in schema.cpp), as the full publish creates them
// on its staging table: each "CREATE INDEX ON <table> " + one of these, ';'-separated. The
// trigram index over the names stays partitioned (defined on entries).
inline constexpr const char* kEntryPartitionIndexes =
    "USING gin (encode(name, 'escape') gin_trgm_ops);(path);(dir_id, name)";

// Creates the schema if the database has none, checks its version otherwise. Safe to run from
// several hosts at once (an advisory lock orders them).
core::Status ensure_schema(PgConnection& conn);

// The schema version of the database: 0 when it has none.
core::Status schema_version(PgConnection& conn, int* version);

// The names of one host's partitions: "<table>_h_<16 hex digits of a hash of the host name>",
// so that any host name (quotes, slashes, non-ASCII) makes a short, plain identifier.
std::string partition_name(std::string_view table, std::string_view host);

}  // namespace wsindex::fleet
