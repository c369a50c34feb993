// wsctl scans: the scan history, newest first.
#include "cli/commands.hpp"
#include "cli/format.hpp"
#include "ipc/methods.hpp"

namespace wsindex::cli {

int run_scans(const Context& ctx, const ScansOptions& options) {
    auto client = connect(ctx);
    if (!client) return report(ctx, client.error());
    ipc::ScansParams params;
    params.limit = options.limit;
    auto reply = client->call(ipc::method::kScans, ipc::to_json(params));
    if (!reply) return report(ctx, reply.error());
    auto scans = ipc::from_json<ipc::ScansReply>(reply.value());
    if (!scans) return bad_reply(ctx, scans.error());
    if (ctx.json) {
        print_json(ctx, reply.value());
        return finish(ctx, 0);
    }
    if (scans->scans.empty()) {
        write_out(ctx, "no scans yet (wsctl scan PATH)\n");
        return finish(ctx, 0);
    }
    Table table({{"ID", Table::Align::Right},
                 {"STATE", Table::Align::Left},
                 {"STARTED", Table::Align::Left},
                 {"ELAPSED", Table::Align::Right},
                 {"ENTRIES", Table::Align::Right},
                 {"DIRS", Table::Align::Right},
                 {"ERRORS", Table::Align::Right},
                 {"SIZE", Table::Align::Right},
                 {"ROOT", Table::Align::Left}});
    bool any_hidden = false;
    for (const auto& s : scans->scans) {
        any_hidden = any_hidden || s.counts_hidden;
        // Withheld by the daemon: the caller may not list everything below the root, or may
        // not see the root at all (docs/security.md).
        const auto count = [&](std::uint64_t n) { return s.counts_hidden ? "-" : format_count(n); };
        table.add_row({std::to_string(s.scan_id), std::string(ipc::scan_state_name(s.state)),
                       format_time_ns(s.started_ns), format_duration_ms(s.elapsed_ms),
                       count(s.entries),
                       // Like SIZE: known for running scans and the newest completed scan of
                       // each root (a replaced scan's directories are not in the index).
                       s.dirs && !s.counts_hidden ? format_count(*s.dirs) : std::string("-"),
                       count(s.errors), s.bytes ? format_bytes(*s.bytes) : std::string("-"),
                       s.root_hidden ? std::string("(hidden)") : s.root});
    }
    write_out(ctx, table.render());
    if (any_hidden) {
        write_out(ctx, "-: hidden, you may not list everything below that root\n");
    }
    for (const auto& s : scans->scans) {
        if (s.state == ipc::ScanState::Failed && !s.error.empty()) {
            write_out(
                ctx, "scan " + std::to_string(s.scan_id) + " failed: " + printable(s.error) + "\n");
        }
    }
    return finish(ctx, 0);
}

}  // namespace wsindex::cli
