// The delta publish (fleet/publish_delta.hpp): a merge of the local and the central `dirs`
// in prefix order, then deletes and COPYs of the directories that differ.
#include "fleet/publish_delta.hpp"

#include <algorithm>
#include <optional>
#include <string_view>

#include "fleet/copy_text.hpp"
#include "fleet/schema.hpp"
#include "storage/statement.hpp"

namespace wsindex::fleet {

namespace {

// A delta that writes and deletes at most this many rows is always used (small hosts, tests);
// above it, only while it touches at most a quarter of the host's rows: a COPY into an
// indexed table (or a DELETE from one) costs several times a COPY into a fresh one whose
// indexes are built after.
constexpr std::uint64_t kAlwaysDeltaRows = 10000;
// Changed directories held in memory before the plan gives up for a full publish.
constexpr std::size_t kMaxPlannedDirs = 100000;

// A central `dirs` row as the publish wrote it.
struct CentralDir {
    std::string_view prefix;
    std::optional<std::int64_t> dir_id;
    std::optional<std::int64_t> digest;
    std::int64_t size = 0, blocks = 0, files = 0, dirs = 0, depth = 0, rel_depth = 0;
    std::string_view root;
};

constexpr const char* kCentralDirs =
    "SELECT prefix, dir_id, digest, size, blocks, files, dirs, depth, rel_depth, root FROM dirs"
    " WHERE host = $1 ORDER BY prefix";

CentralDir read_central(const PGresult* r) {
    const auto column = [r](int c) {
        return std::string_view(PQgetvalue(r, 0, c),
                                static_cast<std::size_t>(PQgetlength(r, 0, c)));
    };
    const auto optional = [&](int c) -> std::optional<std::int64_t> {
        if (PQgetisnull(r, 0, c)) return std::nullopt;
        return binary_integer(column(c));
    };
    CentralDir d;
    d.prefix = column(0);
    d.dir_id = optional(1);
    d.digest = optional(2);
    d.size = binary_integer(column(3));
    d.blocks = binary_integer(column(4));
    d.files = binary_integer(column(5));
    d.dirs = binary_integer(column(6));
    d.depth = binary_integer(column(7));
    d.rel_depth = binary_integer(column(8));
    d.root = column(9);
    return d;
}

// The merge of both sides, one central row at a time (PostgreSQL streams them in prefix
// order; the local statement is stepped alongside).
class Merge {
  public:
    Merge(storage::Database& db, const std::vector<Root>& roots, DeltaPlan* plan)
        : db_(db), roots_(roots), plan_(plan) {}

    core::Status start() {
        if (auto st = db_.prepare(std::string(kDirSelect) + " ORDER BY prefix", &local_); !st) {
            return st;
        }
        (void)advance();
        return status_;
    }

    void central(const CentralDir& c) {
        if (!status_ || !plan_->usable) return;
        while (has_local_ && std::string_view(local_dir_.prefix) < c.prefix) {
            local_only();
            if (!advance()) return;
        }
        if (has_local_ && std::string_view(local_dir_.prefix) == c.prefix) {
            both(c);
            (void)advance();
        } else {
            central_only(c);
        }
    }

    core::Status finish() {
        while (status_ && plan_->usable && has_local_) {
            local_only();
            (void)advance();
        }
        return status_;
    }

  private:
    bool advance() {
        bool row = false;
        if (status_) status_ = local_.step(&row);
        has_local_ = status_ && row;
        if (has_local_) {
            local_dir_ = read_dir(local_);
            ++plan_->local_dirs;
        }
        return status_.is_ok();
    }

    // The root of the current local directory (its index), or give up: a directory outside
    // every root has no place in the central `dirs`.
    std::optional<std::size_t> local_root() {
        const Root* root = root_of(roots_, local_dir_.prefix);
        if (root == nullptr) {
            give_up("a directory lies outside every root");
            return std::nullopt;
        }
        if (local_dir_.prefix == root->prefix) plan_->bytes += local_dir_.size;
        return static_cast<std::size_t>(root - roots_.data());
    }

    void local_only() {
        const auto root = local_root();
        if (!root) return;
        rewrite(local_dir_.id);
        plan_->write_dirs.push_back({local_dir_, *root});
    }

    void central_only(const CentralDir& c) {
        if (!c.dir_id) return give_up("the fleet copy has no directory ids (schema version 2)");
        plan_->delete_dir_ids.push_back(*c.dir_id);
        plan_->delete_prefixes.emplace_back(c.prefix);
    }

    void both(const CentralDir& c) {
        const auto root = local_root();
        if (!root) return;
        if (!c.dir_id) return give_up("the fleet copy has no directory ids (schema version 2)");
        const LocalDir& l = local_dir_;
        const Root& r = roots_[*root];
        // A NULL digest on either side cannot vouch for the rows: rewrite them.
        const bool rows_differ =
            *c.dir_id != l.id || !l.digest || !c.digest || *l.digest != *c.digest;
        const bool row_differs = rows_differ || c.size != l.size || c.blocks != l.blocks ||
                                 c.files != l.files || c.dirs != l.dirs || c.depth != l.depth ||
                                 c.root != r.prefix || c.rel_depth != l.depth - r.depth;
        if (rows_differ) {
            plan_->delete_dir_ids.push_back(*c.dir_id);
            rewrite(l.id);
        }
        if (row_differs) {
            plan_->delete_prefixes.emplace_back(c.prefix);
            plan_->write_dirs.push_back({l, *root});
        }
    }

    void rewrite(std::int64_t id) {
        plan_->rewrite_dirs.push_back(id);
        if (plan_->rewrite_dirs.size() > kMaxPlannedDirs) {
            give_up("more than " + std::to_string(kMaxPlannedDirs) + " directories changed");
        }
    }

    void give_up(std::string why) {
        plan_->usable = false;
        plan_->why_full = std::move(why);
    }

    storage::Database& db_;
    const std::vector<Root>& roots_;
    DeltaPlan* plan_;
    storage::Statement local_;
    LocalDir local_dir_;
    bool has_local_ = false;
    core::Status status_;
};

// Rows the plan would copy: the rewritten directories' local entries.
core::Status count_rows(storage::Database& db, DeltaPlan* plan) {
    storage::Statement count;
    if (auto st = db.prepare("SELECT count(*) FROM entries WHERE dir = ?", &count); !st) return st;
    for (const std::int64_t id : plan->rewrite_dirs) {
        count.bind_int64(1, id);
        bool row = false;
        if (auto st = count.step(&row); !st) return st;
        plan->rows_to_write += static_cast<std::uint64_t>(count.column_int64(0));
        count.reset();
    }
    return {};
}

// A PostgreSQL array literal of bigints: {1,2,3}.
std::string int_array(const std::vector<std::int64_t>& values) {
    std::string out = "{";
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i) out.push_back(',');
        out += std::to_string(values[i]);
    }
    return out + "}";
}

// A PostgreSQL array literal of bytea: {"\\x2f61",...} (hex input, its backslash escaped for
// the array parser).
std::string bytea_array(const std::vector<std::string>& values) {
    std::string out = "{";
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i) out.push_back(',');
        out.push_back('"');
        CopyRow(&out).bytes(values[i]);  // "\\x..": the doubled backslash the array wants
        out.push_back('"');
    }
    return out + "}";
}

core::Status delete_rows(PgConnection& conn, const std::string& sql, const std::string& host,
                         const std::string& array, std::uint64_t* deleted) {
    PgResult r{nullptr, &PQclear};
    if (auto st = conn.query(sql, {host.c_str(), array.c_str()}, &r); !st) return st;
    *deleted = std::strtoull(PQcmdTuples(r.get()), nullptr, 10);
    return {};
}

}  // namespace

core::Status plan_delta(PgConnection& conn, storage::Database& db, const std::string& host,
                        const std::vector<Root>& roots, DeltaPlan* plan) {
    *plan = DeltaPlan{};
    PgResult r{nullptr, &PQclear};
    const std::string entries_part = partition_name("entries", host);
    const std::string dirs_part = partition_name("dirs", host);
    if (auto st =
            conn.query("SELECT entries FROM hosts WHERE host = $1 AND to_regclass($2) IS NOT NULL"
                       " AND to_regclass($3) IS NOT NULL",
                       {host.c_str(), entries_part.c_str(), dirs_part.c_str()}, &r);
        !st) {
        return st;
    }
    if (PQntuples(r.get()) == 0) {
        plan->why_full = "the fleet database holds no copy of this host yet";
        return {};
    }
    plan->central_entries = std::stoll(first_value(r));
    plan->usable = true;

    Merge merge(db, roots, plan);
    if (auto st = merge.start(); !st) return st;
    if (auto st = conn.query_rows(kCentralDirs, {host}, {false},
                                  [&](const PGresult* row) { merge.central(read_central(row)); });
        !st) {
        return st;
    }
    if (auto st = merge.finish(); !st) return st;
    if (!plan->usable) return {};

    // The roots' own entries (directory 0: a root's entry is named by its whole path) are
    // few: always rewritten.
    plan->delete_dir_ids.push_back(0);
    plan->rewrite_dirs.push_back(0);
    std::sort(plan->rewrite_dirs.begin(), plan->rewrite_dirs.end());
    if (auto st = count_rows(db, plan); !st) return st;
    // The rows it would delete: a count over the partition's (dir_id, name) index.
    if (auto st = conn.query(
            "SELECT count(*) FROM entries WHERE host = $1 AND dir_id = ANY($2::bigint[])",
            {host.c_str(), int_array(plan->delete_dir_ids).c_str()}, &r);
        !st) {
        return st;
    }
    plan->rows_to_delete = std::stoull(first_value(r));
    const std::uint64_t most = std::max<std::uint64_t>(
        kAlwaysDeltaRows,
        static_cast<std::uint64_t>(std::max<std::int64_t>(plan->central_entries / 4, 0)));
    if (plan->rows_to_write + plan->rows_to_delete > most) {
        plan->usable = false;
        plan->why_full = std::to_string(plan->rows_to_write) + " rows to write and " +
                         std::to_string(plan->rows_to_delete) + " to delete of " +
                         std::to_string(plan->central_entries);
    }
    return {};
}

core::Status apply_delta(PgConnection& conn, storage::Database& db, const std::string& host,
                         const std::vector<Root>& roots, const DeltaPlan& plan,
                         DeltaResult* result) {
    *result = DeltaResult{};
    // Deletes through the parent with the host: pruned to the host's partitions, whose
    // (dir_id, name) and (host, prefix) indexes find the rows.
    if (auto st =
            delete_rows(conn, "DELETE FROM entries WHERE host = $1 AND dir_id = ANY($2::bigint[])",
                        host, int_array(plan.delete_dir_ids), &result->rows_deleted);
        !st) {
        return st;
    }
    CopyStream copy(conn);
    if (auto st = copy.begin("COPY " + conn.identifier(partition_name("entries", host)) + " (" +
                             kEntryColumns + ") FROM STDIN");
        !st) {
        return st;
    }
    storage::Statement rows;
    if (auto st = db.prepare(std::string(kEntrySelect) + " WHERE e.dir = ? ORDER BY e.name", &rows);
        !st) {
        return st;
    }
    for (const std::int64_t id : plan.rewrite_dirs) {
        rows.bind_int64(1, id);
        for (;;) {
            bool more = false;
            if (auto st = rows.step(&more); !st) return st;
            if (!more) break;
            entry_row(copy.buffer(), host, rows);
            ++result->rows_written;
            if (auto st = copy.row_done(); !st) return st;
        }
        rows.reset();
    }
    if (auto st = copy.end(); !st) return st;

    std::uint64_t dirs_deleted = 0;
    if (auto st =
            delete_rows(conn, "DELETE FROM dirs WHERE host = $1 AND prefix = ANY($2::bytea[])",
                        host, bytea_array(plan.delete_prefixes), &dirs_deleted);
        !st) {
        return st;
    }
    if (auto st = copy.begin("COPY " + conn.identifier(partition_name("dirs", host)) + " (" +
                             kDirColumns + ") FROM STDIN");
        !st) {
        return st;
    }
    for (const DeltaPlan::DirRow& d : plan.write_dirs) {
        dir_row(copy.buffer(), host, d.dir, roots[d.root]);
        ++result->dirs_written;
        if (auto st = copy.row_done(); !st) return st;
    }
    if (auto st = copy.end(); !st) return st;
    result->entries = plan.central_entries - static_cast<std::int64_t>(result->rows_deleted) +
                      static_cast<std::int64_t>(result->rows_written);
    return {};
}

}  // namespace wsindex::fleet
