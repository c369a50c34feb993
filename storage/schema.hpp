// Schema: the tables and views of the index, its version (PRAGMA user_version) and migrations.
#pragma once

#include "core/status.hpp"

namespace wsindex::storage {

class Database;

// The schema version this program writes and reads.
inline constexpr int kSchemaVersion = 4;

// Creates the schema in an empty database or migrates an older one, one version per
// transaction. A newer version than kSchemaVersion is StorageErrc::schema_too_new (never touched).
core::Status migrate_schema(Database& db);

// Indexes that only speed up queries (no data, no layout): created if missing, idempotent, on
// every read-write open of a current database, so that they need no schema version of their own.
core::Status ensure_query_indexes(Database& db);

// For read-only connections: the version must be exactly kSchemaVersion.
core::Status check_schema_version(Database& db);

}  // namespace wsindex::storage
