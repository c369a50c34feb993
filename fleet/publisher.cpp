// publish: the local SQLite index, read in one read transaction, published in one PostgreSQL
// transaction: a delta (fleet/publish_delta.cpp) or in full, with COPY into staging tables
// that then replace the host's partitions.
#include "fleet/publisher.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>
#include <vector>

#include "fleet/publish_delta.hpp"
#include "fleet/publish_rows.hpp"
#include "fleet/schema.hpp"
#include "storage/database.hpp"
#include "storage/index_version.hpp"
#include "storage/statement.hpp"

namespace wsindex::fleet {

namespace {

// The staging tables of a full publish, which replace the host's partitions at the end.
class FullPublish {
  public:
    FullPublish(PgConnection& conn, const std::string& host) : conn_(conn), host_(host) {
        lit_ = conn.literal(host);
    }

    core::Status stage(std::string_view table) {
        const std::string stage = staging(table);
        return conn_.exec("DROP TABLE IF EXISTS " + stage + "; CREATE TABLE " + stage + " (LIKE " +
                          std::string(table) + " INCLUDING DEFAULTS, CHECK (host = " + lit_ + "))");
    }

    std::string copy_sql(std::string_view table, std::string_view columns) const {
        return "COPY " + staging(table) + " (" + std::string(columns) + ") FROM STDIN";
    }

    // Indexes on the staging table first, so that ATTACH finds them and only links them.
    core::Status swap(std::string_view table, std::string_view indexes) {
        const std::string stage = staging(table);
        const std::string part = partition_name(table, host_);
        std::string sql;
        std::string_view rest = indexes;
        while (!rest.empty()) {
            const std::size_t end = std::min(rest.find(';'), rest.size());
            sql += "CREATE INDEX ON " + stage + " " + std::string(rest.substr(0, end)) + ";";
            rest.remove_prefix(std::min(end + 1, rest.size()));
        }
        // Statistics before the table serves: without them the planner took the delta's
        // `dir_id = ANY(...)` over 101 directories for a parallel scan of all 1M rows (250-330
        // ms, against 5 ms through the (dir_id, name) index once analyzed), and autovacuum's
        // analyze comes a minute later or more. 0.2-0.6 s per 1M rows (a 30,000-row sample).
        sql += "ANALYZE " + stage + ";";
        sql += "DROP TABLE IF EXISTS " + conn_.identifier(part) + ";";
        sql += "ALTER TABLE " + stage + " RENAME TO " + conn_.identifier(part) + ";";
        sql += "ALTER TABLE " + std::string(table) + " ATTACH PARTITION " + conn_.identifier(part) +
               " FOR VALUES IN (" + lit_ + ")";
        return conn_.exec(sql);
    }

  private:
    std::string staging(std::string_view table) const {
        return conn_.identifier(partition_name(std::string(table) + "_s", host_));
    }

    PgConnection& conn_;
    const std::string& host_;
    std::string lit_;
};

// The entries go to their staging table in name order: then the rows of one name share a few
// pages, and a search reads a page per name it finds rather than one per row. A new connection
// reads each page once more (PostgreSQL's per-backend cost of first touching a shared buffer,
// ~25 us here), so for `wsctl fleet find`, one connection per command, pages are most of the
// time: 10 hosts x 1M entries, "arse17", 5,700 rows from 5,660 pages took 190 ms in a fresh
// session (23 ms in a warm one), 46-55 ms once the rows were in name order (docs/fleet.md,
// "Measured"). SQLite sorts (its sorter spills to temporary files past the connection's cache
// size: bounded memory, and ~130 bytes of disk per entry in SQLite's temporary directory while
// it runs), and the rows are copied straight into the staging table: sorting on
// the server instead (COPY into a temporary table, then INSERT ... ORDER BY) wrote every row
// twice and took 7.5 s of a 1M-entry publish against 2.2 s for the sorted COPY.
core::Status copy_entries(PgConnection& conn, storage::Database& db, FullPublish& p,
                          const std::string& host, PublishResult* result) {
    storage::Statement s;
    if (auto st = db.prepare(std::string(kEntrySelect) + " ORDER BY e.name, e.dir", &s); !st) {
        return st;
    }
    CopyStream copy(conn);
    if (auto st = copy.begin(p.copy_sql("entries", kEntryColumns)); !st) return st;
    for (bool more = true;;) {
        if (auto st = s.step(&more); !st) return st;
        if (!more) break;
        entry_row(copy.buffer(), host, s);
        ++result->rows_written;
        if (auto st = copy.row_done(); !st) return st;
    }
    result->entries = result->rows_written;
    return copy.end();
}

core::Status copy_dirs(PgConnection& conn, storage::Database& db, const FullPublish& p,
                       const std::string& host, const std::vector<Root>& roots,
                       PublishResult* result) {
    storage::Statement s;
    if (auto st = db.prepare(kDirSelect, &s); !st) return st;
    CopyStream copy(conn);
    if (auto st = copy.begin(p.copy_sql("dirs", kDirColumns)); !st) return st;
    for (bool more = true;;) {
        if (auto st = s.step(&more); !st) return st;
        if (!more) break;
        const LocalDir d = read_dir(s);
        const Root* root = root_of(roots, d.prefix);
        if (root == nullptr) continue;  // not below any root: nothing du would show
        dir_row(copy.buffer(), host, d, *root);
        ++result->dirs;
        if (d.prefix == root->prefix) result->bytes += d.size;
        if (auto st = copy.row_done(); !st) return st;
    }
    return copy.end();
}

core::Status publish_full_in_transaction(PgConnection& conn, storage::Database& db,
                                         const std::string& host, const std::vector<Root>& roots,
                                         PublishResult* result) {
    FullPublish p(conn, host);
    // The index builds of a big host dominate a publish; GIN builds in memory when it fits.
    if (auto st = conn.exec("SET LOCAL maintenance_work_mem = '256MB'"); !st) {
        return st;
    }
    if (auto st = p.stage("entries"); !st) return st;
    if (auto st = copy_entries(conn, db, p, host, result); !st) return st;
    if (auto st = p.stage("dirs"); !st) return st;
    if (auto st = copy_dirs(conn, db, p, host, roots, result); !st) return st;
    if (auto st = p.swap("entries", kEntryPartitionIndexes); !st) {
        return st;
    }
    return p.swap("dirs", "(host, prefix);(host, rel_depth)");
}

core::Status publish_in_transaction(PgConnection& conn, storage::Database& db,
                                    const std::string& host, const std::string& instance,
                                    PublishResult* result) {
    std::vector<Root> roots;
    if (auto st = read_roots(db, &roots); !st) return st;
    if (auto st = lock_host(conn, host); !st) return st;
    if (auto st = check_claim(conn, host, instance); !st) return st;
    DeltaPlan plan;
    if (auto st = plan_delta(conn, db, host, roots, &plan); !st) return st;
    if (plan.usable) {
        DeltaResult delta;
        if (auto st = apply_delta(conn, db, host, roots, plan, &delta); !st) return st;
        result->delta = true;
        result->entries = static_cast<std::uint64_t>(std::max<std::int64_t>(delta.entries, 0));
        result->bytes = plan.bytes;
        result->dirs = delta.dirs_written;
        result->rows_written = delta.rows_written;
        result->rows_deleted = delta.rows_deleted;
    } else {
        result->why_full = plan.why_full;
        if (auto st = publish_full_in_transaction(conn, db, host, roots, result); !st) return st;
    }
    const std::string lit = conn.literal(host);
    return conn.exec(
        "INSERT INTO hosts(host, generation, published_at, entries, bytes, roots, instance) "
        "VALUES (" +
        lit + ", " + std::to_string(result->generation) + ", now(), " +
        std::to_string(result->entries) + ", " + std::to_string(result->bytes) + ", " +
        roots_literal(roots) + ", " + conn.literal(instance) +
        ") ON CONFLICT (host) DO UPDATE SET generation = excluded.generation,"
        " published_at = excluded.published_at, entries = excluded.entries,"
        " bytes = excluded.bytes, roots = excluded.roots, instance = excluded.instance");
}

}  // namespace

core::Status publish(PgConnection& conn, const std::string& index_path, const std::string& host,
                     const std::string& instance, PublishResult* result) {
    *result = PublishResult{};
    storage::Database db;
    if (auto st = storage::Database::open(index_path, storage::OpenMode::read_only, &db); !st) {
        return st;
    }
    // One read transaction: the counters and every row come from one state of the index.
    if (auto st = db.exec("BEGIN"); !st) return st;
    if (auto st = storage::read_index_version(db, &result->generation, &result->revision); !st) {
        return st;
    }
    if (auto st = conn.exec("BEGIN"); !st) return st;
    core::Status st = publish_in_transaction(conn, db, host, instance, result);
    if (st) st = conn.exec("COMMIT");
    if (!st) (void)conn.exec("ROLLBACK");
    (void)db.exec("COMMIT");
    return st;
}

std::string instance_of(const std::string& index_path) {
    std::string machine;
    if (std::ifstream in("/etc/machine-id"); !(in >> machine)) machine.clear();
    if (machine.empty()) {
        char name[256] = {};
        if (::gethostname(name, sizeof name - 1) == 0) machine = name;
    }
    std::error_code ec;
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(index_path, ec);
    return machine + ":" + (ec ? index_path : canonical.string());
}

core::Status release_host(PgConnection& conn, const std::string& host, bool* found) {
    *found = false;
    if (auto st = conn.exec("BEGIN"); !st) return st;
    PgResult r{nullptr, &PQclear};
    core::Status st = lock_host(conn, host);
    if (st) st = conn.query("DELETE FROM hosts WHERE host = $1 RETURNING 1", {host.c_str()}, &r);
    if (st) {
        *found = PQntuples(r.get()) > 0;
        st = conn.exec("DROP TABLE IF EXISTS " + conn.identifier(partition_name("entries", host)) +
                       ", " + conn.identifier(partition_name("dirs", host)));
    }
    if (st) st = conn.exec("COMMIT");
    if (!st) (void)conn.exec("ROLLBACK");
    return st;
}

}  // namespace wsindex::fleet
