// Fleet queries: SQL over entries/dirs/hosts, binary results (paths are raw bytes).
#include "fleet/queries.hpp"

#include <cstdio>
#include <cstring>

#include "fleet/find_patterns.hpp"

namespace wsindex::fleet {

namespace {

std::string_view value(const PgResult& r, int row, int column) {
    return {PQgetvalue(r.get(), row, column),
            static_cast<std::size_t>(PQgetlength(r.get(), row, column))};
}

std::int64_t int_value(std::string_view v) { return binary_integer(v); }

std::int64_t int_value(const PgResult& r, int row, int column) {
    return int_value(value(r, row, column));
}

}  // namespace

std::string escape_encoded_like(std::string_view bytes) {
    std::string out;
    for (const unsigned char c : bytes) {
        std::string encoded;
        if (c == 0 || c >= 0x80) {
            char octal[5];
            std::snprintf(octal, sizeof octal, "\\%03o", c);
            encoded = octal;
        } else if (c == '\\') {
            encoded = "\\\\";
        } else {
            encoded.assign(1, static_cast<char>(c));
        }
        for (const char e : encoded) {
            if (e == '\\' || e == '%' || e == '_') out.push_back('\\');
            out.push_back(e);
        }
    }
    return out;
}

namespace {

// Builds the WHERE clause of fleet_find: each value a parameter, bytes bound as bytea.
class FindFilter {
  public:
    std::string sql = " WHERE true";
    std::vector<std::string> params;
    std::vector<bool> binary;

    // The next placeholder for `value` ("$3"), with its cast.
    std::string bind(std::string value, bool bytes, std::string_view cast = "") {
        params.push_back(std::move(value));
        binary.push_back(bytes);
        return "$" + std::to_string(params.size()) + std::string(cast);
    }
};

// The bytes of a bytea as Latin-1 text (one character per byte), collated "C" so that
// case-insensitive comparisons fold ASCII letters only, as the daemon does.
std::string latin1(std::string_view bytea) {
    return "(convert_from(" + std::string(bytea) + ", 'LATIN1') COLLATE \"C\")";
}

// A substring of three bytes or more: the trigram index finds the candidate rows, a few per
// name on each host.
bool narrowed_by_trigrams(const FleetFindQuery& q) {
    return q.match == FleetMatch::substring && q.pattern.size() >= 3;
}

core::Status add_pattern(const FleetFindQuery& q, FindFilter* f) {
    if (q.pattern.empty()) return {};
    switch (q.match) {
        case FleetMatch::substring: {
            // The LIKE for the trigram index, then the bytes themselves (the escape text can
            // match across byte boundaries: "\\123" holds "\123").
            const std::string like = f->bind("%" + escape_encoded_like(q.pattern) + "%", false);
            const std::string needle = f->bind(q.pattern, true, "::bytea");
            if (q.ignore_case) {
                f->sql += " AND encode(name, 'escape') ILIKE " + like + " AND position(lower(" +
                          latin1(needle) + ") IN lower(" + latin1("name") + ")) > 0";
            } else {
                f->sql += " AND encode(name, 'escape') LIKE " + like + " AND position(" + needle +
                          " IN name) > 0";
            }
            return {};
        }
        case FleetMatch::glob: {
            std::string re;
            std::string error;
            if (!glob_to_pg_regex(q.pattern, &re, &error)) {
                return core::Status(std::make_error_code(std::errc::invalid_argument),
                                    "--glob: " + error);
            }
            const bool over_path = q.pattern.find('/') != std::string::npos;
            f->sql += " AND " + latin1(over_path ? "path" : "name") +
                      (q.ignore_case ? " ~* " : " ~ ") + f->bind(re, false);
            return {};
        }
        case FleetMatch::regex:
            f->sql += " AND " + latin1("path") + (q.ignore_case ? " ~* " : " ~ ") +
                      f->bind(posix_regex_to_pg(q.pattern), false);
            return {};
    }
    return {};
}

void add_metadata(const FleetFindQuery& q, FindFilter* f) {
    if (!q.types.empty()) {
        // NULL delimiter: one element per character (the letters are single bytes).
        f->sql += " AND type = ANY(string_to_array(" + f->bind(q.types, false) + ", NULL))";
    }
    if (q.min_size)
        f->sql += " AND size >= " + f->bind(std::to_string(*q.min_size), false, "::bigint");
    if (q.max_size)
        f->sql += " AND size <= " + f->bind(std::to_string(*q.max_size), false, "::bigint");
    if (q.min_mtime_ns) {
        f->sql += " AND mtime_ns >= " + f->bind(std::to_string(*q.min_mtime_ns), false, "::bigint");
    }
    if (!q.under.empty()) {
        // Strictly below: the paths that start with "UNDER/" (bytea compares as memcmp).
        std::string lo = q.under;
        if (lo.back() != '/') lo.push_back('/');
        if (narrowed_by_trigrams(q)) {
            // The trigram index narrows the rows: the prefix is then a filter on them, in a
            // form the (path) index cannot serve. Otherwise the planner ANDs that index's
            // bitmap in, reading every index entry below UNDER on every host, and a new
            // connection (each `wsctl fleet` command) pays for each index page it first
            // touches, which the cost model does not know: "arse1" under a directory of 27k
            // entries per host took 269 ms against 155 ms (10 hosts x 1M; docs/fleet.md).
            f->sql += " AND length(path) > " + std::to_string(lo.size()) + " AND substr(path, 1, " +
                      std::to_string(lo.size()) + ") = " + f->bind(lo, true, "::bytea");
        } else {
            std::string hi = lo;
            hi.back() = static_cast<char>('/' + 1);
            f->sql += " AND path > " + f->bind(lo, true, "::bytea") + " AND path < " +
                      f->bind(hi, true, "::bytea");
        }
    }
    if (q.host) f->sql += " AND host = " + f->bind(*q.host, false);
}

}  // namespace

core::Status fleet_find(PgConnection& conn, const FleetFindQuery& query,
                        const std::function<void(const FleetFindRow&)>& row) {
    FindFilter f;
    if (auto st = add_pattern(query, &f); !st) return st;
    add_metadata(query, &f);
    std::string sql = "SELECT host, path, type, size, mtime_ns FROM entries" + f.sql +
                      " ORDER BY host, dir_id, name";
    if (query.limit > 0) sql += " LIMIT " + f.bind(std::to_string(query.limit), false, "::bigint");
    if (narrowed_by_trigrams(query)) {
        // A few rows per host: parallel workers, each a new process that touches its pages
        // afresh, cost more than they save (a plan the planner made parallel took 344 ms of
        // execution against 76-81 ms without; docs/fleet.md). Scans without the index (globs,
        // regular expressions, short fragments) keep them: they read every row.
        if (auto st = conn.exec("SET max_parallel_workers_per_gather = 0"); !st) return st;
    }
    return conn.query_rows(sql, f.params, f.binary, [&](const PGresult* r) {
        const auto column = [r](int c) {
            return std::string_view(PQgetvalue(r, 0, c),
                                    static_cast<std::size_t>(PQgetlength(r, 0, c)));
        };
        FleetFindRow out;
        out.host = column(0);
        out.path = column(1);
        if (!column(2).empty()) out.type = column(2).front();
        out.size = int_value(column(3));
        out.mtime_ns = int_value(column(4));
        row(out);
    });
}

core::Status fleet_du(PgConnection& conn, const std::optional<std::string>& host,
                      std::uint32_t depth, const std::function<void(const FleetDuRow&)>& row) {
    std::vector<std::string> params{std::to_string(depth)};
    std::vector<bool> binary{false};
    std::string sql =
        "SELECT host, prefix, size, blocks, files, dirs FROM dirs WHERE rel_depth <= $1::int";
    if (host) {
        params.push_back(*host);
        binary.push_back(false);
        sql += " AND host = $2";
    }
    sql += " ORDER BY host, root, prefix";
    PgResult r{nullptr, &PQclear};
    if (auto st = conn.query_bytes(sql, params, binary, &r); !st) return st;
    const int rows = PQntuples(r.get());
    for (int i = 0; i < rows; ++i) {
        FleetDuRow d;
        d.host.assign(value(r, i, 0));
        d.path.assign(value(r, i, 1));
        if (d.path.size() > 1 && d.path.back() == '/') d.path.pop_back();
        d.size = int_value(r, i, 2);
        d.blocks = int_value(r, i, 3);
        d.files = int_value(r, i, 4);
        d.dirs = int_value(r, i, 5);
        row(d);
    }
    return {};
}

core::Status fleet_hosts(PgConnection& conn, const std::function<void(const FleetHostRow&)>& row) {
    PgResult r{nullptr, &PQclear};
    // Text results; the roots one per row of unnest, hex-encoded to stay byte-exact.
    if (auto st = conn.query(
            "SELECT host, generation, to_char(published_at AT TIME ZONE 'UTC',"
            " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), entries, bytes,"
            " coalesce((SELECT string_agg(encode(x, 'hex'), ',') FROM unnest(roots) AS x), '')"
            " FROM hosts ORDER BY host",
            {}, &r);
        !st) {
        return st;
    }
    const int rows = PQntuples(r.get());
    for (int i = 0; i < rows; ++i) {
        FleetHostRow h;
        h.host.assign(value(r, i, 0));
        h.generation = std::stoll(std::string(value(r, i, 1)));
        h.published_at.assign(value(r, i, 2));
        h.entries = std::stoll(std::string(value(r, i, 3)));
        h.bytes = std::stoll(std::string(value(r, i, 4)));
        std::string_view hex = value(r, i, 5);
        while (!hex.empty()) {
            const std::size_t end = std::min(hex.find(','), hex.size());
            std::string root;
            for (std::size_t k = 0; k + 1 < end; k += 2) {
                root.push_back(
                    static_cast<char>(std::stoi(std::string(hex.substr(k, 2)), nullptr, 16)));
            }
            h.roots.push_back(std::move(root));
            hex.remove_prefix(std::min(end + 1, hex.size()));
        }
        row(h);
    }
    return {};
}

}  // namespace wsindex::fleet
