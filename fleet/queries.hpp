// The queries of `wsctl fleet`: find by name substring, directory totals, the hosts. Each is one
// statement over the partitioned tables, filtered by host when asked: valid on a single server,
// with postgres_fdw partitions, and on Citus tables distributed by host (no cross-host joins).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.hpp"
#include "fleet/pg_connection.hpp"

namespace wsindex::fleet {

// How PATTERN matches, as in `wsctl find` (docs/wsctl.md).
enum class FleetMatch {
    substring,  // a substring of the name
    glob,       // SQLite's GLOB over the name, or over the path if the pattern holds a '/'
    regex,      // a POSIX extended regex over the whole path, unanchored
};

// The filters of `wsctl find`, each bound as a parameter (never pasted into the SQL).
struct FleetFindQuery {
    std::string pattern;  // bytes; empty: every entry
    FleetMatch match = FleetMatch::substring;
    bool ignore_case = false;                  // ASCII letters only, as the daemon folds them
    std::string types;                         // type letters ("fd"); empty: every type
    std::optional<std::int64_t> min_size;      // bytes, inclusive
    std::optional<std::int64_t> max_size;      // bytes, inclusive
    std::optional<std::int64_t> min_mtime_ns;  // inclusive
    std::string under;  // absolute, no trailing '/' ("/" for everything); empty: everywhere
    std::optional<std::string> host;  // only this host
    std::uint64_t limit = 0;          // 0: all
};

struct FleetFindRow {
    std::string_view host;
    std::string_view path;
    char type = '?';
    std::int64_t size = 0;
    std::int64_t mtime_ns = 0;
};

// Rows by host name, then in the order the host's own `wsctl find` lists them (the order of its
// index: directory by directory). A pattern this cannot translate (fleet/find_patterns.hpp) is
// an invalid_argument error before any query.
core::Status fleet_find(PgConnection& conn, const FleetFindQuery& query,
                        const std::function<void(const FleetFindRow&)>& row);

struct FleetDuRow {
    std::string host;
    std::string path;  // without the trailing '/' (except "/")
    std::int64_t size = 0;
    std::int64_t blocks = 0;
    std::int64_t files = 0;
    std::int64_t dirs = 0;
};

// Each root of each host (or of `host`), then its directories down to `depth` levels below it,
// in the order wsctl du lists them on the host (roots by prefix, then prefix order).
core::Status fleet_du(PgConnection& conn, const std::optional<std::string>& host,
                      std::uint32_t depth, const std::function<void(const FleetDuRow&)>& row);

struct FleetHostRow {
    std::string host;
    std::int64_t generation = 0;
    std::string published_at;  // PostgreSQL's text of the timestamp (UTC)
    std::int64_t entries = 0;
    std::int64_t bytes = 0;
    std::vector<std::string> roots;
};

core::Status fleet_hosts(PgConnection& conn, const std::function<void(const FleetHostRow&)>& row);

// The text encode(name, 'escape') gives for `bytes` (each byte alone: NUL and bytes >= 0x80 as
// \ooo, a backslash doubled), then escaped for LIKE: what the trigram index can answer.
std::string escape_encoded_like(std::string_view bytes);

}  // namespace wsindex::fleet
