// Schema: DDL of every version and the migration loop. docs/schema.md documents the result.
#include "storage/schema.hpp"

#include <array>
#include <string>

#include "storage/database.hpp"
#include "storage/sqlite_error.hpp"

namespace wsindex::storage {
namespace {

// Version 1. Layout decisions (measured, see docs/schema.md):
// - entries is keyed (dir, name) WITHOUT ROWID: one B-tree, no secondary index to maintain.
//   Directory ids come from a global sequence handed out per scan, so a scan's rows append at
//   the right edge of the tree instead of landing at scattered keys.
// - dirs holds only *visible* directories. A running scan writes its entries under fresh
//   directory ids that no visible dirs row references, so they are invisible; completion
//   inserts the new dirs rows and deletes the replaced ones in one transaction (the swap), and
//   the replaced entries are removed afterwards through `garbage`.
// - Names and prefixes are BLOBs: byte-exact, never validated as UTF-8.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE meta(
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO meta(key, value) VALUES ('generation', 0);

CREATE TABLE scans(
    id INTEGER PRIMARY KEY,
    root BLOB NOT NULL,
    state TEXT NOT NULL
        CHECK (state IN ('running', 'complete', 'failed', 'cancelled', 'interrupted')),
    started_ns INTEGER NOT NULL,
    finished_ns INTEGER,
    entries INTEGER NOT NULL DEFAULT 0,
    errors INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    dir_base INTEGER NOT NULL,
    dir_max INTEGER NOT NULL,
    cleared INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE dirs(
    id INTEGER PRIMARY KEY,
    parent INTEGER NOT NULL,
    scan_id INTEGER NOT NULL,
    depth INTEGER NOT NULL,
    prefix BLOB NOT NULL,
    size INTEGER NOT NULL,
    blocks INTEGER NOT NULL,
    files INTEGER NOT NULL,
    dirs INTEGER NOT NULL
);
CREATE UNIQUE INDEX dirs_prefix ON dirs(prefix);
INSERT INTO dirs VALUES (0, 0, 0, 0, X'', 0, 0, 0, 0);

CREATE TABLE entries(
    dir INTEGER NOT NULL,
    name BLOB NOT NULL,
    type TEXT NOT NULL,
    size INTEGER,
    blocks INTEGER,
    mtime_ns INTEGER,
    ctime_ns INTEGER,
    mode INTEGER,
    uid INTEGER,
    gid INTEGER,
    dev INTEGER,
    ino INTEGER,
    nlink INTEGER,
    error INTEGER,
    PRIMARY KEY (dir, name)
) WITHOUT ROWID;

CREATE TABLE links(
    dir INTEGER NOT NULL,
    dev INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    size INTEGER NOT NULL,
    blocks INTEGER NOT NULL,
    PRIMARY KEY (dir, dev, ino)
) WITHOUT ROWID;

CREATE TABLE errors(
    scan_id INTEGER NOT NULL,
    path BLOB NOT NULL,
    errno INTEGER NOT NULL,
    message TEXT NOT NULL
);
CREATE INDEX errors_scan ON errors(scan_id);

CREATE TABLE garbage(dir INTEGER PRIMARY KEY);

CREATE VIEW files AS
SELECT CAST(d.prefix || e.name AS TEXT) AS path,
       CAST(e.name AS TEXT) AS name,
       e.type AS type, e.size AS size, e.blocks AS blocks,
       e.mtime_ns AS mtime_ns, e.ctime_ns AS ctime_ns, e.mode AS mode,
       e.uid AS uid, e.gid AS gid, e.dev AS dev, e.ino AS ino, e.nlink AS nlink,
       e.error AS errno
FROM entries AS e JOIN dirs AS d ON d.id = e.dir;

CREATE VIEW dir_totals AS
SELECT CAST(CASE WHEN prefix = X'2F' THEN prefix
                 ELSE substr(prefix, 1, length(prefix) - 1) END AS TEXT) AS path,
       size, blocks, files, dirs, depth
FROM dirs WHERE id != 0;

CREATE VIEW scan_errors AS
SELECT scan_id, CAST(path AS TEXT) AS path, errno, message
FROM errors WHERE scan_id IN (SELECT id FROM scans WHERE state = 'complete');
)sql";

// Version 2: each directory's digest of its entries, so that a rescan keeps the rows of
// directories that did not change (scan_writer.hpp). NULL in rows from version 1: those
// directories are written again once, by the next scan.
constexpr const char* kSchemaV2 = R"sql(
ALTER TABLE dirs ADD COLUMN digest INTEGER;
)sql";

// Version 3: entries.ctime_ns is NULL when it equals mtime_ns (most files: written once, never
// chmod'ed, renamed or linked since), 8 bytes less per row. Rows written before keep their
// value, which reads the same; only the view changes. A NULL mtime_ns (an entry without
// metadata) still gives a NULL ctime_ns.
constexpr const char* kSchemaV3 = R"sql(
DROP VIEW files;
CREATE VIEW files AS
SELECT CAST(d.prefix || e.name AS TEXT) AS path,
       CAST(e.name AS TEXT) AS name,
       e.type AS type, e.size AS size, e.blocks AS blocks,
       e.mtime_ns AS mtime_ns, coalesce(e.ctime_ns, e.mtime_ns) AS ctime_ns, e.mode AS mode,
       e.uid AS uid, e.gid AS gid, e.dev AS dev, e.ino AS ino, e.nlink AS nlink,
       e.error AS errno
FROM entries AS e JOIN dirs AS d ON d.id = e.dir;
)sql";

// Version 4: content hashes for `wsctl dupes` (storage/content_hashes.hpp), one row per inode.
// A row is valid only while size, mtime and ctime (and so the inode) match the inode's entries;
// every reader checks that, so a stale row is never used, only wasted until pruned.
constexpr const char* kSchemaV4 = R"sql(
CREATE TABLE IF NOT EXISTS content_hashes(
    dev INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    partial BLOB,
    full BLOB,
    PRIMARY KEY (dev, ino)
) WITHOUT ROWID;
)sql";

// migrations[v] takes a database from version v to v + 1.
constexpr std::array<const char*, kSchemaVersion> kMigrations = {kSchemaV1, kSchemaV2, kSchemaV3,
                                                                 kSchemaV4};

core::Status read_version(Database& db, std::int64_t* version) {
    return db.query_int64("PRAGMA user_version", version);
}

core::Status too_new(std::int64_t version) {
    return storage_status(StorageErrc::schema_too_new,
                          "database schema version " + std::to_string(version) +
                              " is newer than this program's version " +
                              std::to_string(kSchemaVersion) + "; upgrade wsindexd");
}

}  // namespace

core::Status migrate_schema(Database& db) {
    std::int64_t version = 0;
    if (auto status = read_version(db, &version); !status) return status;
    if (version > kSchemaVersion) return too_new(version);
    if (version == 0) {
        std::int64_t objects = 0;
        if (auto status = db.query_int64("SELECT count(*) FROM sqlite_master", &objects); !status) {
            return status;
        }
        if (objects != 0) {
            return storage_status(StorageErrc::schema_corrupt,
                                  db.path() + " has tables but no wsindex schema version");
        }
    }
    for (auto v = version; v < kSchemaVersion; ++v) {
        // BEGIN IMMEDIATE: two processes migrating at once serialize instead of racing.
        if (auto status = db.exec("BEGIN IMMEDIATE"); !status) return status;
        // Re-read under the lock: another process may have migrated meanwhile.
        std::int64_t now = 0;
        core::Status status = read_version(db, &now);
        if (status && now == v) status = db.exec(kMigrations[static_cast<std::size_t>(v)]);
        if (status && now == v) {
            status = db.exec("PRAGMA user_version = " + std::to_string(v + 1));
        }
        if (!status) {
            (void)db.exec("ROLLBACK");
            return status;
        }
        if (auto commit = db.exec("COMMIT"); !commit) return commit;
        if (now > v) v = now - 1;
        if (v + 1 > kSchemaVersion) return too_new(v + 1);
    }
    return {};
}

// links(dev, ino): the other names of a hard-linked inode that a subtree rescan or a live update
// rewrote (storage/inode_sync.hpp), without a pass over `links`. One key per multi-link name,
// so a tree without hard links pays nothing; an index on entries(dev, ino) would instead add
// a key per entry to every scan.
// dirs(parent): `du PATH --depth N` reads PATH's children, then theirs, level by level
// (Queries::dir_totals) instead of every directory of the subtree; for a 1M-entry tree's root
// at depth 1 that is ~20 rows instead of 47,626. An integer key: inserting the 47k dirs rows
// of a 1M-entry scan into it costs a third of what the earlier dirs(depth, prefix) index did
// (whose keys repeat the paths), and the swap that inserts them is serial (docs/schema.md).
// errors(path): a live update removes the error of an entry or of a removed subtree (a path
// range) by path; without it each such delete reads every errors row. Errors are few per
// scan, so the index costs the scan nearly nothing.
core::Status ensure_query_indexes(Database& db) {
    return db.exec(
        "DROP INDEX IF EXISTS dirs_depth_prefix;"
        " CREATE INDEX IF NOT EXISTS dirs_parent ON dirs(parent);"
        " CREATE INDEX IF NOT EXISTS links_inode ON links(dev, ino);"
        " CREATE INDEX IF NOT EXISTS errors_path ON errors(path)");
}

core::Status check_schema_version(Database& db) {
    std::int64_t version = 0;
    if (auto status = read_version(db, &version); !status) return status;
    if (version > kSchemaVersion) return too_new(version);
    if (version < kSchemaVersion) {
        return storage_status(StorageErrc::schema_corrupt,
                              "database schema version " + std::to_string(version) +
                                  " is older than " + std::to_string(kSchemaVersion) +
                                  "; open it once read-write to migrate");
    }
    return {};
}

}  // namespace wsindex::storage
