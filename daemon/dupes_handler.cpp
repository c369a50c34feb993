// wsindex.Dupes: checks the parameters on the io thread and hands the call to the DupesService.
#include <string>

#include "daemon/handlers.hpp"
#include "ipc/bytes_codec.hpp"
#include "ipc/error.hpp"
#include "storage/path_range.hpp"

namespace wsindex::daemon {

void register_dupes_handler(ipc::Server& server, HandlerContext& ctx) {
    server.add_typed_method<ipc::DupesParams>(
        std::string(ipc::method::kDupes),
        [&ctx](const ipc::Call& call, ipc::DupesParams p, ipc::Responder r) {
            if (ctx.dupes == nullptr) {
                r.fail(ipc::make_error(ipc::ErrorKind::Internal, "dupes is not available"));
                return;
            }
            DupesRequest request;
            for (std::string path : p.paths) {
                while (path.size() > 1 && path.back() == '/') path.pop_back();
                if (!storage::is_normalized_root(path)) {
                    r.fail(ipc::invalid_parameter(
                        "paths", "not a normalized absolute path: " + ipc::display_bytes(path)));
                    return;
                }
                request.roots.push_back(std::move(path));
            }
            constexpr auto kMax = static_cast<std::uint64_t>(INT64_MAX);
            request.min_size = static_cast<std::int64_t>(std::min(p.min_size, kMax));
            request.paranoid = p.paranoid;
            if (!ctx.dupes->start(request, ctx.seams, call.peer, r)) {
                r.fail(ipc::make_error(ipc::ErrorKind::Busy,
                                       "too many dupes runs at once; retry later"));
            }
        });
}

}  // namespace wsindex::daemon
