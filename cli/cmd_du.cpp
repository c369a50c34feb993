// wsctl du [PATH]: sizes from the index (apparent and on disk), per directory, or the largest.
#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/format.hpp"
#include "ipc/methods.hpp"
#include "ipc/path_text.hpp"

namespace wsindex::cli {

int run_du(const Context& ctx, const DuOptions& options) {
    ipc::DuParams params;
    params.depth = options.depth;
    params.top = options.top;
    if (!options.path.empty()) {
        std::string error;
        const std::string cwd = current_directory(error);
        if (cwd.empty()) return usage_error(ctx, error);
        params.path = ipc::lexically_normal(options.path, cwd);
    }
    auto client = connect(ctx);
    if (!client) return report(ctx, client.error());
    auto reply = client->call(ipc::method::kDu, ipc::to_json(params));
    if (!reply) return report(ctx, reply.error());
    auto du = ipc::from_json<ipc::DuReply>(reply.value());
    if (!du) return bad_reply(ctx, du.error());
    if (ctx.json) {
        print_json(ctx, reply.value());
        return finish(ctx, 0);
    }
    if (du->entries.empty()) {
        write_out(ctx, "nothing indexed yet (wsctl scan PATH)\n");
        return finish(ctx, 0);
    }
    const auto size = [&](std::uint64_t bytes) {
        return options.bytes ? std::to_string(bytes) : format_bytes(bytes);
    };
    Table table({{"SIZE", Table::Align::Right},
                 {"DISK", Table::Align::Right},
                 {"FILES", Table::Align::Right},
                 {"DIRS", Table::Align::Right},
                 {"PATH", Table::Align::Left}});
    for (const auto& entry : du->entries) {
        table.add_row({size(entry.size), size(entry.disk), format_count(entry.files),
                       format_count(entry.dirs), entry.path});
    }
    write_out(ctx, table.render());
    for (const auto& entry : du->entries) {
        if (entry.partial) {
            note(ctx,
                 "some directories below are not readable by you: totals count only what "
                 "you may see");
            break;
        }
    }
    return finish(ctx, 0);
}

}  // namespace wsindex::cli
