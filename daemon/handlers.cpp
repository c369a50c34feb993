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

void submit_query(HandlerContext& context, ipc::Responder responder, QueryPool::Job job) {
    if (!context.queries.submit(std::move(job))) {
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
