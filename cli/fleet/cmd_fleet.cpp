// wsctl fleet init|hosts|find|du: the fleet index on PostgreSQL (docs/fleet.md), queried
// directly with libpq under the caller's own database role; no daemon involved.
#include <regex.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/format.hpp"
#include "cli/json_stream.hpp"
#include "core/clock.hpp"
#include "fleet/pg_connection.hpp"
#include "fleet/publisher.hpp"
#include "fleet/queries.hpp"
#include "fleet/schema.hpp"
#include "ipc/bytes_codec.hpp"
#include "ipc/path_text.hpp"

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

// The query from the command line, parsed as `wsctl find` parses it; nullopt after reporting
// a usage error in `code`.
std::optional<fleet::FleetFindQuery> find_query(const Context& ctx, const FleetOptions& options,
                                                int& code) {
    fleet::FleetFindQuery query;
    query.pattern = options.pattern;
    query.match = options.regex  ? fleet::FleetMatch::regex
                  : options.glob ? fleet::FleetMatch::glob
                                 : fleet::FleetMatch::substring;
    query.ignore_case = options.ignore_case;
    query.host = host_filter(options);
    query.limit = options.limit;
    std::string error;
    if (options.regex) {
        // What the daemon refuses (regcomp in the C locale), refused here too.
        regex_t re;
        const int rc = ::regcomp(&re, options.pattern.c_str(),
                                 REG_EXTENDED | REG_NOSUB | (options.ignore_case ? REG_ICASE : 0));
        if (rc != 0) {
            char message[256];
            ::regerror(rc, &re, message, sizeof message);
            return code = usage_error(ctx, std::string("not a valid extended regex: ") + message),
                   std::nullopt;
        }
        ::regfree(&re);
    }
    if (!options.types.empty()) {
        auto types = parse_types(options.types, error);
        if (!types) return code = usage_error(ctx, error), std::nullopt;
        query.types = *types;
    }
    SizeRange range;
    for (const auto& size : options.sizes) {
        if (!add_size_bound(size, range, error))
            return code = usage_error(ctx, error), std::nullopt;
    }
    const auto clamp = [](std::uint64_t v) {
        return static_cast<std::int64_t>(
            std::min<std::uint64_t>(v, std::numeric_limits<std::int64_t>::max()));
    };
    if (range.min) query.min_size = clamp(*range.min);
    if (range.max) query.max_size = clamp(*range.max);
    if (!options.newer.empty()) {
        auto when = parse_time(options.newer, core::wall_clock_ns(), error);
        if (!when) return code = usage_error(ctx, error), std::nullopt;
        // Strictly newer; nothing is newer than the end of time.
        query.min_mtime_ns = *when == std::numeric_limits<std::int64_t>::max() ? *when : *when + 1;
    }
    if (!options.under.empty()) {
        const std::string cwd = current_directory(error);
        if (cwd.empty()) return code = usage_error(ctx, error), std::nullopt;
        query.under = ipc::lexically_normal(options.under, cwd);
        if (query.under.size() > 1 && query.under.back() == '/') query.under.pop_back();
    }
    return query;
}

int fleet_find_command(const Context& ctx, const FleetOptions& options, fleet::PgConnection& conn) {
    if (options.null_separated && ctx.json)
        return usage_error(ctx, "-0 and --json exclude each other");
    if (options.null_separated && options.long_format)
        return usage_error(ctx, "-0 and -l exclude each other");
    int code = 0;
    const auto query = find_query(ctx, options, code);
    if (!query) return code;
    const bool prefix = !query->host;  // without --host each record says its host: "host:"
    const bool escape = ctx.stdout_tty;
    // --json streams: one element per row as it arrives, so that wsctl stays in bounded
    // memory whatever the size of the answer (as `wsctl find --json` does).
    JsonArrayStream json(ctx, "entries");
    auto st = fleet::fleet_find(conn, *query, [&](const fleet::FleetFindRow& row) {
        if (ctx.json) {
            // The members of `wsctl find --json`'s entries, and the host.
            const nlohmann::json entry{{"host", std::string(row.host)},
                                       {"path", ipc::encode_bytes(row.path)},
                                       {"type", std::string(1, row.type)},
                                       {"size", row.size},
                                       {"mtime_ns", row.mtime_ns}};
            json.element(entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
            return;
        }
        if (options.null_separated) {
            if (prefix) write_out(ctx, std::string(row.host) + ":");
            write_out(ctx, row.path);
            write_out(ctx, std::string_view("\0", 1));
            return;
        }
        if (options.long_format) {
            // As `wsctl find -l`: type, size, modification time, then the (host:)path.
            char head[64];
            std::snprintf(head, sizeof head, "%c  %10s  %s  ", row.type,
                          format_bytes(static_cast<std::uint64_t>(row.size)).c_str(),
                          format_time_ns(row.mtime_ns).c_str());
            write_out(ctx, head);
        }
        if (prefix) write_out(ctx, std::string(row.host) + ":");
        write_out(ctx, escape ? printable(row.path) : std::string(row.path));
        write_out(ctx, "\n");
    });
    if (!st && json.count() > 0) {
        // Rows went out already: the error's fields end the open document (stdout stays one
        // JSON document) and the exit code tells the failure.
        note(ctx, "fleet: " + st.message());
        const std::string fields =
            nlohmann::json{{"error", "Failed"}, {"exit_code", 1}, {"message", st.message()}}.dump(
                -1, ' ', false, nlohmann::json::error_handler_t::replace);
        json.close(std::string_view(fields).substr(1, fields.size() - 2));
        return finish(ctx, kExitFailure);
    }
    if (!st) {
        if (st.code() == std::errc::invalid_argument) return usage_error(ctx, st.message());
        return fleet_failure(ctx, st);
    }
    if (ctx.json) json.close({});
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

int fleet_release_command(const Context& ctx, const FleetOptions& options,
                          fleet::PgConnection& conn) {
    bool found = false;
    if (auto st = fleet::release_host(conn, options.host, &found); !st) {
        return fleet_failure(ctx, st);
    }
    if (ctx.json) {
        print_json(ctx, nlohmann::json{{"host", options.host}, {"released", found}});
    } else if (found) {
        write_out(ctx,
                  "released " + printable(options.host) +
                      ": its copy is removed; the next daemon to publish the name claims it\n");
    } else {
        write_out(ctx, "no host " + printable(options.host) + " in the fleet database\n");
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
    // Each command is a short query or two on a fresh connection: compiling them with LLVM,
    // which PostgreSQL does for plans above jit_above_cost (a search over many hosts'
    // partitions), costs more than it saves (a search over 10 hosts' partitions: 56 ms of JIT
    // in 76 ms, measured). A statement, not the `options` startup parameter, which pgbouncer
    // refuses ("unsupported startup parameter: options") unless configured to ignore it.
    if (auto st = conn.exec("SET jit = off"); !st) return fleet_failure(ctx, st);
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
    if (options.action == "release") return fleet_release_command(ctx, options, conn);
    if (options.action == "find") return fleet_find_command(ctx, options, conn);
    return fleet_du_command(ctx, options, conn);
}

}  // namespace wsindex::cli
