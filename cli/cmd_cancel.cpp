// wsctl cancel [ID]: cancel the running scan (or a queued one by id).
#include "cli/commands.hpp"
#include "ipc/methods.hpp"

namespace wsindex::cli {

int run_cancel(const Context& ctx, const CancelOptions& options) {
    auto client = connect(ctx);
    if (!client) return report(ctx, client.error());
    ipc::CancelParams params;
    params.scan_id = options.scan_id;
    auto reply = client->call(ipc::method::kCancel, ipc::to_json(params));
    if (!reply) return report(ctx, reply.error());
    auto cancelled = ipc::from_json<ipc::CancelReply>(reply.value());
    if (!cancelled) return bad_reply(ctx, cancelled.error());
    if (ctx.json) {
        print_json(ctx, reply.value());
    } else if (cancelled->cancelled.empty() && cancelled->unnumbered == 0 &&
               cancelled->dupes == 0) {
        write_out(ctx, "nothing to cancel: no scan is running\n");
    } else {
        for (const auto id : cancelled->cancelled) {
            write_out(ctx, "cancelled scan " + std::to_string(id) + "\n");
        }
        // A scan that was starting has no id yet (wsctl scans lists it once it has one).
        if (const auto n = cancelled->unnumbered; n != 0) {
            write_out(ctx, "cancelled " + std::to_string(n) + (n == 1 ? " scan" : " scans") +
                               " that had no id yet (starting or queued)\n");
        }
        if (const auto n = cancelled->dupes; n != 0) {
            write_out(ctx, "cancelled " + std::to_string(n) + " dupes" +
                               (n == 1 ? " run" : " runs") + "\n");
        }
    }
    return finish(ctx, 0);
}

}  // namespace wsindex::cli
