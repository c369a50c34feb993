// What the full and the delta publish share (fleet/publisher.cpp, fleet/publish_delta.cpp):
// the local index's roots, a COPY stream, and the layout of the rows copied into `entries` and
// `dirs`, so that both publishes write exactly the same rows for the same local state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"
#include "fleet/pg_connection.hpp"
#include "storage/database.hpp"
#include "storage/statement.hpp"

namespace wsindex::fleet {

// A top-level root of the local index.
struct Root {
    std::string prefix;  // stored form: "/a/b/" ("/" for the root directory)
    std::int64_t depth = 0;
};

core::Status read_roots(storage::Database& db, std::vector<Root>* roots);

// The root a directory prefix lies in (the longest root prefix of it); nullptr if none.
const Root* root_of(const std::vector<Root>& roots, std::string_view prefix);

// The roots as a PostgreSQL bytea[] literal (hosts.roots), each without its trailing '/'.
std::string roots_literal(const std::vector<Root>& roots);

// COPY ... FROM STDIN in the binary format (fleet/copy_binary.hpp; begin adds the option and
// the header, end the trailer), the rows sent in 1 MiB chunks: memory stays one chunk.
class CopyStream {
  public:
    explicit CopyStream(PgConnection& conn) : conn_(conn) {}
    core::Status begin(const std::string& copy_sql);
    std::string* buffer() { return &buffer_; }  // append rows with CopyBinaryRow
    core::Status row_done();                    // after each row: sends a full chunk
    core::Status end();                         // sends the rest, ends the COPY

  private:
    PgConnection& conn_;
    std::string buffer_;
};

// Rows of the central `entries`: each local entry with its directory's local id. (dir_id, name)
// orders a host's rows as its own `wsctl find` does (directory by directory, names in key
// order).
inline constexpr const char* kEntryColumns =
    "host, dir_id, path, name, type, size, blocks, mtime_ns, ctime_ns, mode, uid, gid, dev, ino,"
    " nlink, errno";
// The local query (a WHERE / ORDER BY may follow); its columns in the order entry_row reads.
inline constexpr const char* kEntrySelect =
    "SELECT e.dir, d.prefix || e.name, e.name, e.type, e.size, e.blocks, e.mtime_ns,"
    " coalesce(e.ctime_ns, e.mtime_ns), e.mode, e.uid, e.gid, e.dev, e.ino, e.nlink, e.error"
    " FROM dirs AS d JOIN entries AS e ON e.dir = d.id";
// One row of kEntrySelect as a COPY row of kEntryColumns.
void entry_row(std::string* out, std::string_view host, const storage::Statement& s);

// One local directory (a row of `dirs`, id != 0).
struct LocalDir {
    std::int64_t id = 0;
    std::string prefix;
    std::optional<std::int64_t> digest;  // NULL in rows of old local schemas: always rewritten
    std::int64_t size = 0, blocks = 0, files = 0, dirs = 0, depth = 0;
};
inline constexpr const char* kDirSelect =
    "SELECT id, prefix, digest, size, blocks, files, dirs, depth FROM dirs WHERE id != 0";
LocalDir read_dir(const storage::Statement& s);

inline constexpr const char* kDirColumns =
    "host, prefix, root, rel_depth, size, blocks, files, dirs, depth, dir_id, digest";
void dir_row(std::string* out, std::string_view host, const LocalDir& d, const Root& root);

// The transaction's advisory lock on the host name: publishes and releases of one name run
// one at a time.
core::Status lock_host(PgConnection& conn, const std::string& host);

// Fails when another instance claimed `host` (hosts.instance), before anything is written.
core::Status check_claim(PgConnection& conn, const std::string& host, const std::string& instance);

}  // namespace wsindex::fleet
