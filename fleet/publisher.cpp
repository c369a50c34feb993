// publish_full: the local SQLite index, read in one read transaction, copied with COPY into
// staging tables, which then replace the host's partitions inside the same transaction.
#include "fleet/publisher.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>
#include <vector>

#include "fleet/copy_text.hpp"
#include "fleet/schema.hpp"
#include "storage/database.hpp"
#include "storage/statement.hpp"

namespace wsindex::fleet {

namespace {

constexpr std::size_t kCopyChunk = 1 << 20;

struct Root {
    std::string prefix;  // stored form: "/a/b/" ("/" for the root directory)
    std::int64_t depth = 0;
};

// The transaction's publish statements, aborted on the first failure.
class Publish {
  public:
    Publish(PgConnection& conn, const std::string& host) : conn_(conn), host_(host) {
        lit_ = conn.literal(host);
    }

    core::Status stage(std::string_view table) {
        const std::string stage =
            conn_.identifier(partition_name(std::string(table) + "_s", host_));
        return conn_.exec("DROP TABLE IF EXISTS " + stage + "; CREATE TABLE " + stage + " (LIKE " +
                          std::string(table) + " INCLUDING DEFAULTS, CHECK (host = " + lit_ + "))");
    }

    core::Status copy_begin(std::string_view table, std::string_view columns) {
        const std::string stage =
            conn_.identifier(partition_name(std::string(table) + "_s", host_));
        return conn_.copy_begin("COPY " + stage + " (" + std::string(columns) + ") FROM STDIN");
    }

    // Indexes on the staging table first, so that ATTACH finds them and only links them.
    core::Status swap(std::string_view table, std::string_view indexes) {
        const std::string stage =
            conn_.identifier(partition_name(std::string(table) + "_s", host_));
        const std::string part = partition_name(table, host_);
        std::string sql;
        std::string_view rest = indexes;
        while (!rest.empty()) {
            const std::size_t end = std::min(rest.find(';'), rest.size());
            sql += "CREATE INDEX ON " + stage + " " + std::string(rest.substr(0, end)) + ";";
            rest.remove_prefix(std::min(end + 1, rest.size()));
        }
        sql += "DROP TABLE IF EXISTS " + conn_.identifier(part) + ";";
        sql += "ALTER TABLE " + stage + " RENAME TO " + conn_.identifier(part) + ";";
        sql += "ALTER TABLE " + std::string(table) + " ATTACH PARTITION " + conn_.identifier(part) +
               " FOR VALUES IN (" + lit_ + ")";
        return conn_.exec(sql);
    }

    const std::string& host() const { return host_; }

  private:
    PgConnection& conn_;
    const std::string& host_;
    std::string lit_;
};

core::Status flush(PgConnection& conn, std::string* buffer, bool force) {
    if (buffer->size() < kCopyChunk && !force) return {};
    if (!buffer->empty()) {
        if (auto st = conn.copy_put(*buffer); !st) return st;
    }
    buffer->clear();
    return {};
}

core::Status read_roots(storage::Database& db, std::vector<Root>* roots) {
    storage::Statement s;
    if (auto st = db.prepare("SELECT prefix, depth FROM dirs WHERE parent = 0 AND id != 0", &s);
        !st) {
        return st;
    }
    for (bool row = true;;) {
        if (auto st = s.step(&row); !st) return st;
        if (!row) break;
        roots->push_back({std::string(s.column_bytes(0)), s.column_int64(1)});
    }
    return {};
}

// The top-level root a directory prefix lies in (the longest root prefix of it).
const Root* root_of(const std::vector<Root>& roots, std::string_view prefix) {
    const Root* best = nullptr;
    for (const Root& r : roots) {
        if (prefix.substr(0, r.prefix.size()) == r.prefix &&
            (best == nullptr || r.prefix.size() > best->prefix.size())) {
            best = &r;
        }
    }
    return best;
}

core::Status copy_entries(PgConnection& conn, storage::Database& db, Publish& p,
                          PublishResult* result) {
    storage::Statement s;
    if (auto st = db.prepare(
            // The files view's columns, in the order of the host's own find: directory by
            // directory in id order, names in key order (the name index loads them so).
            "SELECT d.prefix || e.name, e.name, e.type, e.size, e.blocks, e.mtime_ns,"
            " coalesce(e.ctime_ns, e.mtime_ns), e.mode, e.uid, e.gid, e.dev, e.ino, e.nlink,"
            " e.error FROM dirs AS d JOIN entries AS e ON e.dir = d.id",
            &s);
        !st) {
        return st;
    }
    if (auto st =
            p.copy_begin("entries",
                         "host, seq, path, name, type, size, blocks, mtime_ns, ctime_ns, mode,"
                         " uid, gid, dev, ino, nlink, errno");
        !st) {
        return st;
    }
    std::string buffer;
    buffer.reserve(kCopyChunk + 4096);
    CopyRow row(&buffer);
    for (bool more = true;;) {
        if (auto st = s.step(&more); !st) return st;
        if (!more) break;
        row.text(p.host())
            .integer(static_cast<std::int64_t>(result->entries))
            .bytes(s.column_bytes(0))
            .bytes(s.column_bytes(1));
        if (s.column_is_null(2)) {
            row.null();
        } else {
            row.text(s.column_bytes(2));
        }
        for (int c = 3; c <= 13; ++c) {
            if (s.column_is_null(c)) {
                row.null();
            } else {
                row.integer(s.column_int64(c));
            }
        }
        row.end();
        ++result->entries;
        if (auto st = flush(conn, &buffer, false); !st) return st;
    }
    if (auto st = flush(conn, &buffer, true); !st) return st;
    return conn.copy_end();
}

core::Status copy_dirs(PgConnection& conn, storage::Database& db, Publish& p,
                       const std::vector<Root>& roots, PublishResult* result) {
    storage::Statement s;
    if (auto st = db.prepare(
            "SELECT prefix, size, blocks, files, dirs, depth FROM dirs WHERE id != 0", &s);
        !st) {
        return st;
    }
    if (auto st = p.copy_begin("dirs",
                               "host, prefix, root, rel_depth, size, blocks, files, dirs,"
                               " depth");
        !st) {
        return st;
    }
    std::string buffer;
    CopyRow row(&buffer);
    for (bool more = true;;) {
        if (auto st = s.step(&more); !st) return st;
        if (!more) break;
        const std::string_view prefix = s.column_bytes(0);
        const Root* root = root_of(roots, prefix);
        if (root == nullptr) continue;  // not below any root: nothing du would show
        const std::int64_t depth = s.column_int64(5);
        row.text(p.host()).bytes(prefix).bytes(root->prefix).integer(depth - root->depth);
        for (int c = 1; c <= 5; ++c) row.integer(s.column_int64(c));
        row.end();
        ++result->dirs;
        if (prefix == root->prefix) result->bytes += s.column_int64(1);
        if (auto st = flush(conn, &buffer, false); !st) return st;
    }
    if (auto st = flush(conn, &buffer, true); !st) return st;
    return conn.copy_end();
}

// Takes the per-host advisory lock of the transaction: publishes and releases of one host
// name run one at a time.
core::Status lock_host(PgConnection& conn, const std::string& host) {
    return conn.exec("SELECT pg_advisory_xact_lock(hashtext('wsindex host ' || " +
                     conn.literal(host) + "))");
}

// Fails when another instance claimed `host` (hosts.instance), before anything is written.
core::Status check_claim(PgConnection& conn, const std::string& host, const std::string& instance) {
    PgResult r{nullptr, &PQclear};
    if (auto st = conn.query("SELECT coalesce(instance, '') FROM hosts WHERE host = $1",
                             {host.c_str()}, &r);
        !st) {
        return st;
    }
    const std::string claimed = first_value(r);
    if (claimed.empty() || claimed == instance) return {};
    return core::Status(std::make_error_code(std::errc::address_in_use),
                        "the host name '" + host + "' is published by another wsindexd (" +
                            claimed + "; this one is " + instance +
                            "): give each daemon its own 'host' in [fleet], or, if that daemon "
                            "no longer publishes it, release the name with `wsctl fleet release " +
                            host + "`");
}

core::Status publish_in_transaction(PgConnection& conn, storage::Database& db,
                                    const std::string& host, const std::string& instance,
                                    PublishResult* result) {
    Publish p(conn, host);
    std::vector<Root> roots;
    if (auto st = read_roots(db, &roots); !st) return st;
    if (auto st = lock_host(conn, host); !st) return st;
    if (auto st = check_claim(conn, host, instance); !st) return st;
    // The index builds of a big host dominate a publish; GIN builds in memory when it fits.
    if (auto st = conn.exec("SET LOCAL maintenance_work_mem = '256MB'"); !st) return st;
    if (auto st = p.stage("entries"); !st) return st;
    if (auto st = copy_entries(conn, db, p, result); !st) return st;
    if (auto st = p.stage("dirs"); !st) return st;
    if (auto st = copy_dirs(conn, db, p, roots, result); !st) return st;
    if (auto st = p.swap("entries", "USING gin (encode(name, 'escape') gin_trgm_ops);(host, path)");
        !st) {
        return st;
    }
    if (auto st = p.swap("dirs", "(host, root, prefix)"); !st) return st;
    std::string root_list = "ARRAY[";
    for (std::size_t i = 0; i < roots.size(); ++i) {
        std::string path = roots[i].prefix;
        if (path.size() > 1) path.pop_back();
        std::string hex;
        CopyRow(&hex).bytes(path);  // "\\x..": COPY's doubled backslash
        root_list += (i ? ",'" : "'") + hex.substr(1) + "'::bytea";
    }
    root_list += "]::bytea[]";
    const std::string lit = conn.literal(host);
    return conn.exec(
        "INSERT INTO hosts(host, generation, published_at, entries, bytes, roots, instance) "
        "VALUES (" +
        lit + ", " + std::to_string(result->generation) + ", now(), " +
        std::to_string(result->entries) + ", " + std::to_string(result->bytes) + ", " + root_list +
        ", " + conn.literal(instance) +
        ") ON CONFLICT (host) DO UPDATE SET generation = excluded.generation,"
        " published_at = excluded.published_at, entries = excluded.entries,"
        " bytes = excluded.bytes, roots = excluded.roots, instance = excluded.instance");
}

}  // namespace

core::Status publish_full(PgConnection& conn, const std::string& index_path,
                          const std::string& host, const std::string& instance,
                          PublishResult* result) {
    *result = PublishResult{};
    storage::Database db;
    if (auto st = storage::Database::open(index_path, storage::OpenMode::read_only, &db); !st) {
        return st;
    }
    // One read transaction: the generation and every row come from one state of the index.
    if (auto st = db.exec("BEGIN"); !st) return st;
    if (auto st =
            db.query_int64("SELECT value FROM meta WHERE key = 'generation'", &result->generation);
        !st) {
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
