// wsctl fleet init|hosts|find|du: the fleet index on PostgreSQL (docs/fleet.md), queried
// directly with libpq under the caller's own database role; no daemon involved.
#include <cstdlib>
#include <optional>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/format.hpp"
#include "fleet/pg_connection.hpp"
#include "fleet/queries.hpp"
#include "fleet/schema.hpp"
#include "ipc/bytes_codec.hpp"

namespace wsindex::cli {

namespace {

int fleet_failure(const Context& ctx, const core::Status& st) {
    note(ctx, "fleet: " + st.message());
    if (ctx.json) {
        print_json(
            ctx, nlohmann::json{{"error", "Failed"}, {"message", st.message()}, {"exit_code", 1}});
    }
    return finish(ctx, kExitFailure);
}

std::optional<std::string> host_filter(const FleetOptions& options) {
    if (options.host.empty()) return std::nullopt;
    return options.host;
}

int fleet_find_command(const Context& ctx, const FleetOptions& options, fleet::PgConnection& conn) {
    if (options.null_separated && ctx.json)
        return usage_error(ctx, "-0 and --json exclude each other");
    fleet::FleetFindQuery query;
    query.pattern = options.pattern;
    query.host = host_filter(options);
    query.limit = options.limit;
    const bool prefix = !query.host;  // without --host each record says its host: "host:"
    const bool escape = ctx.stdout_tty;
    nlohmann::json entries = nlohmann::json::array();
    auto st = fleet::fleet_find(conn, query, [&](std::string_view host, std::string_view path) {
        if (ctx.json) {
            entries.push_back({{"host", std::string(host)}, {"path", ipc::encode_bytes(path)}});
            return;
        }
        if (prefix) {
            write_out(ctx, host);
            write_out(ctx, ":");
        }
        if (options.null_separated) {
            write_out(ctx, path);
            write_out(ctx, std::string_view("\0", 1));
            return;
        }
        write_out(ctx, escape ? printable(path) : std::string(path));
        write_out(ctx, "\n");
    });
    if (!st) return fleet_failure(ctx, st);
    if (ctx.json) print_json(ctx, nlohmann::json{{"entries", std::move(entries)}});
    return finish(ctx, kExitOk);
}

int fleet_du_command(const Context& ctx, const FleetOptions& options, fleet::PgConnection& conn) {
    const auto filter = host_filter(options);
    const auto size = [&](std::int64_t bytes) {
        const auto b = static_cast<std::uint64_t>(bytes);
        return options.bytes ? std::to_string(b) : format_bytes(b);
    };
    Table table({{"SIZE", Table::Align::Right},
                 {"DISK", Table::Align::Right},
                 {"FILES", Table::Align::Right},
                 {"DIRS", Table::Align::Right},
                 {"PATH", Table::Align::Left}});
    nlohmann::json entries = nlohmann::json::array();
    auto st = fleet::fleet_du(conn, filter, options.depth, [&](const fleet::FleetDuRow& row) {
        const auto disk = static_cast<std::uint64_t>(row.blocks) * 512;
        if (ctx.json) {
            entries.push_back({{"host", row.host},
                               {"path", ipc::encode_bytes(row.path)},
                               {"size", row.size},
                               {"disk", disk},
                               {"files", row.files},
                               {"dirs", row.dirs}});
            return;
        }
        table.add_row({size(row.size), size(static_cast<std::int64_t>(disk)),
                       format_count(static_cast<std::uint64_t>(row.files)),
                       format_count(static_cast<std::uint64_t>(row.dirs)),
                       filter ? row.path : row.host + ":" + row.path});
    });
    if (!st) return fleet_failure(ctx, st);
    if (ctx.json) {
        print_json(ctx, nlohmann::json{{"entries", std::move(entries)}});
    } else if (table.empty()) {
        write_out(ctx, "nothing published yet\n");
    } else {
        write_out(ctx, table.render());
    }
    return finish(ctx, kExitOk);
}

int fleet_hosts_command(const Context& ctx, fleet::PgConnection& conn) {
    Table table({{"HOST", Table::Align::Left},
                 {"GENERATION", Table::Align::Right},
                 {"PUBLISHED", Table::Align::Left},
                 {"ENTRIES", Table::Align::Right},
                 {"SIZE", Table::Align::Right},
                 {"ROOTS", Table::Align::Left}});
    nlohmann::json hosts = nlohmann::json::array();
    auto st = fleet::fleet_hosts(conn, [&](const fleet::FleetHostRow& h) {
        if (ctx.json) {
            nlohmann::json roots = nlohmann::json::array();
            for (const auto& r : h.roots) roots.push_back(ipc::encode_bytes(r));
            hosts.push_back({{"host", h.host},
                             {"generation", h.generation},
                             {"published_at", h.published_at},
                             {"entries", h.entries},
                             {"bytes", h.bytes},
                             {"roots", std::move(roots)}});
            return;
        }
        std::string roots;
        for (const auto& r : h.roots) roots += (roots.empty() ? "" : " ") + printable(r);
        table.add_row({h.host, std::to_string(h.generation), h.published_at,
                       format_count(static_cast<std::uint64_t>(h.entries)),
                       format_bytes(static_cast<std::uint64_t>(h.bytes)), roots});
    });
    if (!st) return fleet_failure(ctx, st);
    if (ctx.json) {
        print_json(ctx, nlohmann::json{{"hosts", std::move(hosts)}});
    } else {
        write_out(ctx, table.render());
    }
    return finish(ctx, kExitOk);
}

}  // namespace

int run_fleet(const Context& ctx, const FleetOptions& options) {
    std::string url = options.url;
    if (url.empty()) {
        const char* env = std::getenv("WSINDEX_FLEET_URL");
        if (env != nullptr) url = env;
    }
    if (url.empty()) return usage_error(ctx, "fleet: give --url or set WSINDEX_FLEET_URL");
    fleet::PgConnection conn;
    // The password, if any, from libpq's own sources (PGPASSWORD, ~/.pgpass, PGPASSFILE).
    if (auto st = fleet::PgConnection::connect(url, "", &conn); !st) return fleet_failure(ctx, st);
    if (options.action == "init") {
        if (auto st = fleet::ensure_schema(conn); !st) return fleet_failure(ctx, st);
        if (ctx.json) {
            print_json(ctx, nlohmann::json{{"schema_version", fleet::kFleetSchemaVersion}});
        } else {
            write_out(ctx, "fleet schema version " + std::to_string(fleet::kFleetSchemaVersion) +
                               " ready\n");
        }
        return finish(ctx, kExitOk);
    }
    int version = 0;
    if (auto st = fleet::schema_version(conn, &version); !st) return fleet_failure(ctx, st);
    if (version == 0) {
        return fleet_failure(ctx, core::Status(std::make_error_code(std::errc::invalid_argument),
                                               "no fleet schema in this database (wsctl fleet "
                                               "init --url URL)"));
    }
    if (version > fleet::kFleetSchemaVersion) {
        return fleet_failure(
            ctx, core::Status(std::make_error_code(std::errc::protocol_not_supported),
                              "the fleet database has schema version " + std::to_string(version) +
                                  ", newer than this wsctl knows: upgrade wsctl"));
    }
    if (options.action == "hosts") return fleet_hosts_command(ctx, conn);
    if (options.action == "find") return fleet_find_command(ctx, options, conn);
    return fleet_du_command(ctx, options, conn);
}

}  // namespace wsindex::cli
