// The delta publish: only the directories whose rows differ between the local index and the
// host's copy in the fleet database are rewritten there.
//
// How the difference is found, without a change log: each local `dirs` row carries its
// directory's id and digest (the order-free hash of its entries' names and metadata that
// every local writer keeps current, storage/dir_digest.hpp), and the central `dirs` row of the
// same prefix carries the id and digest it was published with. Both tables are read in prefix
// order and merged: a directory whose id or digest differs, or that exists on one side only,
// has its entries rewritten (by central directory id); a directory whose totals differ too has
// its `dirs` row replaced. The comparison is against whatever the central copy holds, so a
// publish that failed, a copy that a restart of PostgreSQL rolled back, or a daemon restart
// need no bookkeeping: the next publish finds the difference again.
//
// Cost: reading both `dirs` tables (one row per directory: a tenth of the entries in a
// typical tree), plus the rewritten directories' entries. A plan that would rewrite too much
// is not used: the full publish (COPY, index builds, partition swap) is faster then.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "fleet/pg_connection.hpp"
#include "fleet/publish_rows.hpp"
#include "storage/database.hpp"

namespace wsindex::fleet {

struct DeltaPlan {
    bool usable = false;
    std::string why_full;              // when not usable: why the publish is full (for the log)
    std::int64_t central_entries = 0;  // hosts.entries before the delta
    std::int64_t bytes = 0;            // apparent size of every local root
    std::uint64_t local_dirs = 0;      // directories of the local index
    std::vector<std::int64_t> delete_dir_ids;  // central directory ids whose entries go
    std::vector<std::int64_t> rewrite_dirs;    // local directory ids whose entries are copied
    std::vector<std::string> delete_prefixes;  // central dirs rows that go
    struct DirRow {
        LocalDir dir;
        std::size_t root = 0;  // index into the roots
    };
    std::vector<DirRow> write_dirs;    // local dirs rows copied
    std::uint64_t rows_to_write = 0;   // local entries of rewrite_dirs
    std::uint64_t rows_to_delete = 0;  // central entries of delete_dir_ids
};

// Compares the local index (in the caller's read transaction) with the host's central copy
// (in the caller's PostgreSQL transaction, the host's lock held). Not usable, with a reason,
// when the host has no copy yet, the copy predates directory ids (schema version 2), or the
// delta is too big to pay (it would write and delete more than 10,000 rows and more than a
// quarter of the host's).
core::Status plan_delta(PgConnection& conn, storage::Database& db, const std::string& host,
                        const std::vector<Root>& roots, DeltaPlan* plan);

struct DeltaResult {
    std::uint64_t rows_deleted = 0;
    std::uint64_t rows_written = 0;
    std::uint64_t dirs_written = 0;  // dirs rows replaced or added
    std::int64_t entries = 0;        // the host's entries after the delta
};

// Applies a usable plan in the caller's PostgreSQL transaction: deletes, then COPY.
core::Status apply_delta(PgConnection& conn, storage::Database& db, const std::string& host,
                         const std::vector<Root>& roots, const DeltaPlan& plan,
                         DeltaResult* result);

}  // namespace wsindex::fleet
