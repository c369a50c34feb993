// wsctl errors [--scan ID]: the entries a scan could not read (EACCES, ENOENT, ...).
#include "cli/commands.hpp"
#include "cli/format.hpp"
#include "ipc/methods.hpp"

namespace wsindex::cli {

int run_errors(const Context& ctx, const ErrorsOptions& options) {
    auto client = connect(ctx);
    if (!client) return report(ctx, client.error());
    ipc::ErrorsParams params;
    params.scan_id = options.scan_id;
    params.limit = options.limit;
    auto reply = client->call(ipc::method::kErrors, ipc::to_json(params));
    if (!reply) return report(ctx, reply.error());
    auto errors = ipc::from_json<ipc::ErrorsReply>(reply.value());
    if (!errors) return bad_reply(ctx, errors.error());
    if (ctx.json) {
        print_json(ctx, reply.value());
        return finish(ctx, 0);
    }
    if (errors->scan_id == 0) {
        write_out(ctx, "no scans yet (wsctl scan PATH)\n");
        return finish(ctx, 0);
    }
    const std::string head = "scan " + std::to_string(errors->scan_id) + ": ";
    if (errors->errors.empty()) {
        write_out(ctx, head + "no errors\n");
        return finish(ctx, 0);
    }
    write_out(ctx, head + format_count(errors->errors.size()) + " errors\n");
    Table table({{"ERROR", Table::Align::Left},
                 {"MESSAGE", Table::Align::Left},
                 {"PATH", Table::Align::Left}});
    for (const auto& e : errors->errors) {
        table.add_row({e.error_name.empty() ? std::to_string(e.error) : e.error_name,
                       e.message, ctx.stdout_tty ? printable(e.path) : e.path});
    }
    write_out(ctx, table.render());
    return finish(ctx, 0);
}

}  // namespace wsindex::cli
