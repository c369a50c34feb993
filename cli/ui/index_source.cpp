// The browser's calls to the daemon (index_source.hpp).
#include "cli/ui/index_source.hpp"

#include <utility>

namespace wsindex::cli::ui {

ipc::Result<nlohmann::json> IndexSource::call(std::string_view method,
                                              const nlohmann::json& params) {
    // One reconnect: the daemon may have restarted while the browser stayed open.
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (!client_ || !client_->connected()) {
            auto client = connect(ctx_);
            if (!client) return ipc::Result<nlohmann::json>(client.error());
            client_.emplace(std::move(client.value()));
        }
        auto reply = client_->call(method, params);
        if (reply || client_->connected() || attempt == 1) return reply;
    }
    return ipc::Result<nlohmann::json>(ipc::make_error(ipc::ErrorKind::Disconnected, "lost"));
}

std::optional<ipc::Error> IndexSource::call_more(std::string_view method,
                                                 const nlohmann::json& params,
                                                 const ipc::Client::ReplyCallback& on_reply) {
    if (!client_ || !client_->connected()) {
        auto client = connect(ctx_);
        if (!client) return client.error();
        client_.emplace(std::move(client.value()));
    }
    return client_->call_more(method, params, on_reply);
}

namespace {

template <class T>
ipc::Result<T> decode(ipc::Result<nlohmann::json> reply) {
    if (!reply) return ipc::Result<T>(reply.error());
    return ipc::from_json<T>(reply.value());
}

}  // namespace

ipc::Result<ipc::DuReply> IndexSource::list(const std::string& path) {
    ipc::DuParams params;
    params.path = path;
    params.depth = 1;
    params.children = true;
    // Streamed ("more"): a directory of many thousands of entries exceeds one message.
    ipc::DuReply all;
    std::optional<ipc::Error> decode_error;
    auto error = call_more(ipc::method::kDu, ipc::to_json(params),
                           [&](const nlohmann::json& parameters, bool) {
                               auto part = ipc::from_json<ipc::DuReply>(parameters);
                               if (!part) {
                                   decode_error = part.error();
                                   return false;
                               }
                               for (auto& e : part->entries) all.entries.push_back(std::move(e));
                               return true;
                           });
    if (error) return *error;
    if (decode_error) return *decode_error;
    return all;
}

ipc::Result<ipc::DuReply> IndexSource::roots() {
    return decode<ipc::DuReply>(call(ipc::method::kDu, ipc::to_json(ipc::DuParams{})));
}

ipc::Result<ipc::FindReply> IndexSource::find(const std::string& pattern, const std::string& under,
                                              std::uint64_t limit) {
    ipc::FindParams params;
    params.pattern = pattern;
    params.under = under;
    params.limit = limit;
    ipc::FindReply all;
    std::optional<ipc::Error> decode_error;
    auto error = call_more(ipc::method::kFind, ipc::to_json(params),
                           [&](const nlohmann::json& parameters, bool continues) {
                               auto part = ipc::from_json<ipc::FindReply>(parameters);
                               if (!part) {
                                   decode_error = part.error();
                                   return false;
                               }
                               for (auto& e : part->entries) all.entries.push_back(std::move(e));
                               if (!continues) all.truncated = part->truncated;
                               return true;
                           });
    if (error) return ipc::Result<ipc::FindReply>(*error);
    if (decode_error) return ipc::Result<ipc::FindReply>(*decode_error);
    return all;
}

ipc::Result<IndexState> IndexSource::state() {
    auto status = decode<ipc::StatusReply>(call(ipc::method::kStatus, nlohmann::json::object()));
    if (!status) return ipc::Result<IndexState>(status.error());
    IndexState out;
    std::string& token = out.change_token;
    for (const ipc::RootInfo& root : status->roots) {
        token += root.root + '\0' + std::to_string(root.last_scan_id) + ',' +
                 std::to_string(root.last_finished_ns) + ',' + std::to_string(root.entries) + ',' +
                 std::to_string(root.bytes) + ';';
    }
    if (status->live) token += "live:" + std::to_string(status->live->last_applied_ns);
    if (status->running) token += "run:" + std::to_string(status->running->scan_id);
    out.running = status->running;
    out.queued = status->queued.size();
    return out;
}

std::optional<ipc::Error> IndexSource::rescan(const std::string& path) {
    ipc::ScanParams params;
    params.paths.push_back(path);
    auto reply = call(ipc::method::kScan, ipc::to_json(params));
    if (!reply) return reply.error();
    return std::nullopt;
}

ipc::Result<std::vector<ipc::ErrorEntry>> IndexSource::errors_below(const std::string& path,
                                                                    std::size_t limit) {
    auto reply =
        decode<ipc::ErrorsReply>(call(ipc::method::kErrors, ipc::to_json(ipc::ErrorsParams{})));
    if (!reply) return ipc::Result<std::vector<ipc::ErrorEntry>>(reply.error());
    std::vector<ipc::ErrorEntry> out;
    const std::string prefix = path == "/" ? path : path + "/";
    for (auto& e : reply->errors) {
        if (out.size() >= limit) break;
        if (e.path == path || e.path.compare(0, prefix.size(), prefix) == 0) {
            out.push_back(std::move(e));
        }
    }
    return out;
}

}  // namespace wsindex::cli::ui
