// Database: RAII over one sqlite3 connection, configured for the index (WAL, synchronous=NORMAL).
//
// A connection belongs to one thread at a time (SQLite is built serialized, but the statements
// prepared on it and its transaction state are not meant to be shared). The writer owns one
// connection; every reader opens its own.
#pragma once

#include <string>
#include <string_view>

#include "core/status.hpp"
#include "storage/statement.hpp"

struct sqlite3;

namespace wsindex::storage {

enum class OpenMode {
    read_write,  // creates the file if missing, creates or migrates the schema
    read_only,   // the schema must exist and be current
};

class Database {
  public:
    Database() = default;
    Database(Database&& other) noexcept;
    Database& operator=(Database&& other) noexcept;
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    // Opens `path`, applies the connection pragmas, registers the REGEXP function, and creates
    // or migrates the schema (read_write) or checks its version (read_only).
    static core::Status open(const std::string& path, OpenMode mode, Database* out);

    [[nodiscard]] bool is_open() const { return db_ != nullptr; }
    [[nodiscard]] sqlite3* handle() const { return db_; }
    [[nodiscard]] const std::string& path() const { return path_; }

    // Runs one or more statements without results.
    core::Status exec(std::string_view sql);
    // Frees the pages this connection's cache holds and no statement uses
    // (sqlite3_db_release_memory). Why: each connection keeps up to cache_size (16 MiB) of
    // pages in the daemon's anonymous memory for as long as it lives; one that has just read a
    // whole table (a scan's writer, the name index build) and now idles keeps them for nothing.
    void release_memory();
    core::Status prepare(std::string_view sql, Statement* out);
    // A single integer from a one-row query (e.g. a PRAGMA); errors if there is no row.
    core::Status query_int64(std::string_view sql, std::int64_t* out);

    // True outside an explicit transaction.
    [[nodiscard]] bool autocommit() const;
    [[nodiscard]] std::int64_t last_insert_rowid() const;
    // Rows changed by the last INSERT/UPDATE/DELETE.
    [[nodiscard]] std::int64_t changes() const;

    void close();

  private:
    sqlite3* db_ = nullptr;  // owned
    std::string path_;
};

}  // namespace wsindex::storage
