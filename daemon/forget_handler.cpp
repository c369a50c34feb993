// wsindex.Forget (take an indexed root out of the index), and the hint a scan of a vanished
// root gets: both about roots that are gone.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/forget_root.hpp"
#include "daemon/handlers.hpp"
#include "daemon/index_queries.hpp"
#include "ipc/bytes_codec.hpp"
#include "ipc/path_text.hpp"

namespace wsindex::daemon {
namespace {

nlohmann::json path_details(std::string_view path) {
    return nlohmann::json{{"path", ipc::encode_bytes(path)}};
}

// Query thread: refuses at once what is not an indexed top-level root, before the service
// cancels any scan for it; the scan thread checks again under its write transaction.
void forget(HandlerContext& ctx, QueryContext& q, const ipc::PeerCredentials& peer,
            const ipc::ForgetParams& p, ipc::Responder r) {
    const std::string root = ipc::lexically_normal(p.root);
    const std::string shown = ipc::display_bytes(root);
    // Like Scan: a path the caller cannot see is refused whether it is indexed or not.
    if (!make_caller_view(ctx.seams, peer).can_see(root)) {
        r.fail(ipc::make_error(ipc::ErrorKind::PermissionDenied, "you cannot see " + shown,
                               path_details(root)));
        return;
    }
    std::vector<ipc::RootInfo> roots;
    if (auto st = list_roots(q.db, &roots); !st) {
        r.fail(storage_failure(ctx, "forget: reading the roots", st));
        return;
    }
    const bool indexed = std::any_of(roots.begin(), roots.end(),
                                     [&](const ipc::RootInfo& info) { return info.root == root; });
    if (!indexed) {
        for (const ipc::RootInfo& info : roots) {
            if (!path_at_or_below(root, info.root)) continue;
            const std::string holder = ipc::display_bytes(info.root);
            r.fail(ipc::make_error(ipc::ErrorKind::NotIndexed,
                                   shown + " is inside indexed root " + holder + "; rescan " +
                                       holder + ", or forget " + holder,
                                   path_details(root)));
            return;
        }
        r.fail(ipc::make_error(ipc::ErrorKind::NotIndexed,
                               shown + " is not an indexed root (wsctl status lists them)",
                               path_details(root)));
        return;
    }
    ctx.scans.forget(
        root, ForgetOrigin::Client, [r, &ctx](ipc::Result<ForgetOutcome> outcome) mutable {
            if (!outcome) {
                r.fail(outcome.error());
                return;
            }
            if (ctx.live_unwatch) ctx.live_unwatch(outcome->root);
            ipc::ForgetReply reply;
            reply.root = outcome->root;
            reply.entries = outcome->report.entries;
            reply.dirs = outcome->report.dirs;
            reply.bytes =
                static_cast<std::uint64_t>(std::max<std::int64_t>(0, outcome->report.size));
            reply.scans = outcome->report.scans;
            reply.cancelled = outcome->cancelled;
            r.reply(ipc::to_json(reply));
        });
}

}  // namespace

ipc::Error explain_vanished_root(HandlerContext& ctx, QueryContext& q, std::string_view path,
                                 ipc::Error error) {
    if (error.kind != ipc::ErrorKind::NoSuchPath) return error;
    const std::string root = ipc::lexically_normal(path);
    // An unmounted (or deleted) configured root stays: its scans come back with the mount.
    if (ctx.scans.is_configured_root(root)) return error;
    std::vector<ipc::RootInfo> roots;
    if (auto st = list_roots(q.db, &roots); !st) return error;
    const bool indexed = std::any_of(roots.begin(), roots.end(),
                                     [&](const ipc::RootInfo& info) { return info.root == root; });
    if (!indexed) return error;
    const std::string shown = ipc::display_bytes(root);
    return ipc::make_error(ipc::ErrorKind::NoSuchPath,
                           shown + ": no such directory; it is still in the index: `wsctl forget " +
                               shown + "` removes it",
                           path_details(root));
}

void register_forget_handler(ipc::Server& server, HandlerContext& ctx) {
    server.add_typed_method<ipc::ForgetParams>(
        std::string(ipc::method::kForget),
        [&ctx](const ipc::Call& call, ipc::ForgetParams p, ipc::Responder r) {
            if (!may_control(ctx.seams, call.peer)) {
                r.fail(ipc::make_error(ipc::ErrorKind::PermissionDenied,
                                       "forgetting a root needs root or the wsindexd group"));
                return;
            }
            const ipc::PeerCredentials peer = call.peer;
            submit_query(ctx, peer, r, [&ctx, peer, p = std::move(p), r](QueryContext& q) mutable {
                forget(ctx, q, peer, p, std::move(r));
            });
        });
}

}  // namespace wsindex::daemon
