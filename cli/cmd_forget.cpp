// wsctl forget ROOT: take an indexed root (one that is gone, say) out of the index.
#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/format.hpp"
#include "ipc/methods.hpp"
#include "ipc/path_text.hpp"

namespace wsindex::cli {

int run_forget(const Context& ctx, const ForgetOptions& options) {
    std::string error;
    const std::string cwd = current_directory(error);
    if (cwd.empty()) return usage_error(ctx, error);
    ipc::ForgetParams params;
    // Lexically, never resolved: the root is usually gone.
    params.root = ipc::lexically_normal(options.root, cwd);

    auto client = connect(ctx);
    if (!client) return report(ctx, client.error());
    auto reply = client->call(ipc::method::kForget, ipc::to_json(params));
    if (!reply) return report(ctx, reply.error());
    auto forgotten = ipc::from_json<ipc::ForgetReply>(reply.value());
    if (!forgotten) return bad_reply(ctx, forgotten.error());
    if (ctx.json) {
        print_json(ctx, reply.value());
    } else {
        std::string line = "forgot " + printable(forgotten->root) + ": " +
                           format_count(forgotten->entries) + " entries, " +
                           format_bytes(forgotten->bytes);
        if (forgotten->cancelled != 0) {
            line += "; cancelled " + std::to_string(forgotten->cancelled) +
                    (forgotten->cancelled == 1 ? " scan" : " scans") + " of it";
        }
        write_out(ctx, line + "\n");
    }
    return finish(ctx, 0);
}

}  // namespace wsindex::cli
