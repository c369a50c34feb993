// Schema: the tables and views of the index, its version (PRAGMA user_version) and migrations.
#pragma once

#include "core/status.hpp"

namespace wsindex::storage {

class Database;

// The schema version this program writes and reads.
inline constexpr int kSchemaVersion = 2;

// Creates the schema in an empty database or migrates an older one, one version per
// transaction. A newer version than kSchemaVersion is StorageErrc::schema_too_new (never touched).
core::Status migrate_schema(Database& db);

// For read-only connections: the version must be exactly kSchemaVersion.
core::Status check_schema_version(Database& db);

}  // namespace wsindex::storage
