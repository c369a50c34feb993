// Fleet queries: SQL over entries/dirs/hosts, binary results (paths are raw bytes).
#include "fleet/queries.hpp"

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>

namespace wsindex::fleet {

namespace {

std::string_view value(const PgResult& r, int row, int column) {
    return {PQgetvalue(r.get(), row, column),
            static_cast<std::size_t>(PQgetlength(r.get(), row, column))};
}

// A binary int8 / int4 column.
std::int64_t int_value(const PgResult& r, int row, int column) {
    const std::string_view v = value(r, row, column);
    if (v.size() == 8) {
        std::uint32_t hi = 0;
        std::uint32_t lo = 0;
        std::memcpy(&hi, v.data(), 4);
        std::memcpy(&lo, v.data() + 4, 4);
        return static_cast<std::int64_t>((std::uint64_t{ntohl(hi)} << 32) | ntohl(lo));
    }
    if (v.size() == 4) {
        std::uint32_t x = 0;
        std::memcpy(&x, v.data(), 4);
        return static_cast<std::int32_t>(ntohl(x));
    }
    return 0;
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

core::Status fleet_find(
    PgConnection& conn, const FleetFindQuery& query,
    const std::function<void(std::string_view host, std::string_view path)>& row) {
    std::vector<std::string> params;
    std::vector<bool> binary;
    std::string sql = "SELECT host, path FROM entries WHERE true";
    if (!query.pattern.empty()) {
        // The LIKE for the trigram index, then the bytes themselves (the escape text can
        // match across byte boundaries: "\\123" holds "\123").
        params.push_back("%" + escape_encoded_like(query.pattern) + "%");
        binary.push_back(false);
        sql += " AND encode(name, 'escape') LIKE $" + std::to_string(params.size());
        params.push_back(query.pattern);
        binary.push_back(true);
        sql += " AND position($" + std::to_string(params.size()) + "::bytea IN name) > 0";
    }
    if (query.host) {
        params.push_back(*query.host);
        binary.push_back(false);
        sql += " AND host = $" + std::to_string(params.size());
    }
    sql += " ORDER BY host, seq";
    if (query.limit > 0) sql += " LIMIT " + std::to_string(query.limit);
    return conn.query_rows(sql, params, binary, [&](const PGresult* r) {
        const auto column = [r](int c) {
            return std::string_view(PQgetvalue(r, 0, c),
                                    static_cast<std::size_t>(PQgetlength(r, 0, c)));
        };
        row(column(0), column(1));
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
