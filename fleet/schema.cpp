// The fleet schema: hosts; entries and dirs partitioned by host (LIST, one partition per host,
// replaced whole by a publish); the views files and dir_totals with a host column.
#include "fleet/schema.hpp"

#include <cstdint>
#include <cstdio>
#include <system_error>

namespace wsindex::fleet {

namespace {

// Names and paths are bytea: Linux names are bytes (newlines and invalid UTF-8 included). The
// trigram index is over encode(name, 'escape'), a text form that maps each byte alone, so that
// a substring of the bytes is a substring of the text (queries.cpp rechecks the bytes).
constexpr const char* kSchemaV1 = R"sql(
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TABLE fleet_schema(version integer NOT NULL);
INSERT INTO fleet_schema VALUES (1);
CREATE TABLE hosts(
    host text PRIMARY KEY,
    generation bigint NOT NULL,
    published_at timestamptz NOT NULL,
    entries bigint NOT NULL,
    bytes bigint NOT NULL,
    roots bytea[] NOT NULL DEFAULT '{}'
);
CREATE TABLE entries(
    host text NOT NULL,
    seq bigint NOT NULL,
    path bytea NOT NULL,
    name bytea NOT NULL,
    type text,
    size bigint, blocks bigint, mtime_ns bigint, ctime_ns bigint, mode bigint,
    uid bigint, gid bigint, dev bigint, ino bigint, nlink bigint,
    errno integer
) PARTITION BY LIST (host);
CREATE INDEX entries_name_trgm ON entries USING gin (encode(name, 'escape') gin_trgm_ops);
CREATE INDEX entries_path ON entries(host, path);
CREATE TABLE dirs(
    host text NOT NULL,
    prefix bytea NOT NULL,
    root bytea NOT NULL,
    rel_depth integer NOT NULL,
    size bigint NOT NULL, blocks bigint NOT NULL, files bigint NOT NULL, dirs bigint NOT NULL,
    depth integer NOT NULL
) PARTITION BY LIST (host);
CREATE INDEX dirs_prefix ON dirs(host, root, prefix);
CREATE VIEW files AS
SELECT host, path, name, type, size, blocks, mtime_ns, ctime_ns, mode, uid, gid, dev, ino, nlink,
       errno
FROM entries;
CREATE VIEW dir_totals AS
SELECT host,
       CASE WHEN prefix = '\x2f'::bytea THEN prefix
            ELSE substr(prefix, 1, length(prefix) - 1) END AS path,
       size, blocks, files, dirs, depth
FROM dirs;
)sql";

// Version 2: each host name is claimed by the daemon that publishes it (hosts.instance, see
// publisher.cpp), so that two daemons configured with one name are told instead of
// overwriting each other's copy. Rows from version 1 have none: the next publisher claims them.
constexpr const char* kMigrateV2 = R"sql(
ALTER TABLE hosts ADD COLUMN instance text;
UPDATE fleet_schema SET version = 2;
)sql";

// Version 3: delta publishes (fleet/publish_delta.hpp). Each entry carries its directory's
// local id, and (dir_id, seq) is the order of the host's own find (seq counts within the
// directory, which a publish rewrites whole); each dirs row carries the id and digest it was
// published with, so that the next publish finds the directories that changed. dirs is
// indexed by prefix (the delta's merge and deletes) and by depth (fleet du). Rows of version 2
// have no ids: their hosts' next publish is full.
constexpr const char* kMigrateV3 = R"sql(
ALTER TABLE entries ADD COLUMN dir_id bigint;
ALTER TABLE dirs ADD COLUMN dir_id bigint, ADD COLUMN digest bigint;
CREATE INDEX entries_dir ON entries(host, dir_id, seq);
DROP INDEX dirs_prefix;
CREATE INDEX dirs_prefix ON dirs(host, prefix);
CREATE INDEX dirs_depth ON dirs(host, rel_depth);
UPDATE fleet_schema SET version = 3;
)sql";

// Version 4: a host's entries are indexed by (path) and (dir_id, name) in its own partition,
// not by (host, path) and (host, dir_id, seq) through partitioned indexes on entries; the
// column seq goes. Within a partition the host is one value: as the first key it made every
// comparison of an index build go past it (no abbreviated sort keys), and building the pair
// took 7.4 s of a 1M-entry full publish against 3.9 s without it (docs/fleet.md, "Measured").
// Queries name the host anyway, so partition pruning picks the partition and then its index.
// seq was the name's rank in its directory, so (dir_id, name) is the same order (bytea and the
// local BLOB names both compare as memcmp, the shorter first on a tie); computing it for rows
// sent in name order took SQLite a window function, 2.5 s of CPU per 1M entries. Foreign
// partitions (postgres_fdw) keep the indexes of their own server.
constexpr const char* kMigrateV4 = R"sql(
DROP INDEX IF EXISTS entries_path;
DROP INDEX IF EXISTS entries_dir;
ALTER TABLE entries DROP COLUMN IF EXISTS seq;
DO $$
DECLARE part regclass;
BEGIN
    FOR part IN SELECT c.oid::regclass FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
                WHERE i.inhparent = 'entries'::regclass AND c.relkind = 'r' LOOP
        EXECUTE format('CREATE INDEX ON %s (path)', part);
        EXECUTE format('CREATE INDEX ON %s (dir_id, name)', part);
    END LOOP;
END $$;
UPDATE fleet_schema SET version = 4;
)sql";

// Serializes schema creation between hosts that start at once.
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(7781234501)";

core::Status too_new(int version) {
    return core::Status(std::make_error_code(std::errc::protocol_not_supported),
                        "the fleet database has schema version " + std::to_string(version) +
                            ", newer than this wsindex knows (" +
                            std::to_string(kFleetSchemaVersion) +
                            "): upgrade wsindex on this host");
}

}  // namespace

core::Status schema_version(PgConnection& conn, int* version) {
    PgResult r{nullptr, &PQclear};
    if (auto st = conn.query("SELECT to_regclass('fleet_schema') IS NOT NULL", {}, &r); !st) {
        return st;
    }
    if (first_value(r) != "t") {
        *version = 0;
        return {};
    }
    if (auto st = conn.query("SELECT max(version) FROM fleet_schema", {}, &r); !st) return st;
    const std::string v = first_value(r);
    *version = v.empty() ? 0 : std::stoi(v);
    return {};
}

core::Status ensure_schema(PgConnection& conn) {
    int version = 0;
    if (auto st = schema_version(conn, &version); !st) return st;
    if (version == kFleetSchemaVersion) return {};
    if (version > kFleetSchemaVersion) return too_new(version);
    if (auto st = conn.exec(std::string("BEGIN; ") + kSchemaLock); !st) return st;
    core::Status st = schema_version(conn, &version);
    if (st && version > kFleetSchemaVersion) st = too_new(version);
    if (st && version == 0) {
        st = conn.exec(kSchemaV1);
        version = 1;
    }
    if (st && version == 1) {
        st = conn.exec(kMigrateV2);
        version = 2;
    }
    if (st && version == 2) {
        st = conn.exec(kMigrateV3);
        version = 3;
    }
    if (st && version == 3) st = conn.exec(kMigrateV4);
    if (!st) {
        (void)conn.exec("ROLLBACK");
        return st;
    }
    return conn.exec("COMMIT");
}

std::string partition_name(std::string_view table, std::string_view host) {
    std::uint64_t h = 14695981039346656037ull;  // FNV-1a: stable across builds and hosts
    for (const unsigned char c : host) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return std::string(table) + "_h_" + hex;
}

}  // namespace wsindex::fleet
