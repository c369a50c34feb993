// Handlers: registration and the helpers shared by both handler files.
#include "daemon/handlers.hpp"

#include <spdlog/spdlog.h>

namespace wsindex::daemon {

void register_handlers(ipc::Server& server, HandlerContext& context) {
    register_scan_handlers(server, context);
    register_forget_handler(server, context);
    register_query_handlers(server, context);
    register_dupes_handler(server, context);
}

void submit_query(HandlerContext& context, const ipc::PeerCredentials& peer,
                  ipc::Responder responder, QueryPool::Job job) {
    // A caller without credentials (never expected on AF_UNIX) shares one lane with the others
    // like it, apart from every real uid.
    const uid_t uid = peer.valid ? peer.uid : static_cast<uid_t>(-1);
    if (!context.queries.submit(uid, std::move(job))) {
        responder.fail(
            ipc::make_error(ipc::ErrorKind::Busy, "too many queries waiting; retry later"));
    }
}

ipc::Error storage_failure(HandlerContext& context, std::string_view what,
                           const core::Status& status) {
    spdlog::error("{}: {}", what, status.to_string());
    context.scans.report_damage(status);  // a damaged file is set aside and rebuilt
    return ipc::make_error(ipc::ErrorKind::Internal, std::string(what) + ": " + status.to_string());
}

}  // namespace wsindex::daemon
