// wsctl version: this client's version and the daemon's (version, protocol, pid).
#include "cli/commands.hpp"
#include "ipc/methods.hpp"

namespace wsindex::cli {

const char* client_version() { return WSINDEX_VERSION; }

int run_version(const Context& ctx) {
    if (!ctx.json) write_out(ctx, std::string("wsctl ") + client_version() + "\n");
    auto client = connect(ctx);
    if (!client) return report(ctx, client.error());
    auto reply = client->call(ipc::method::kVersion, nlohmann::json::object());
    if (!reply) return report(ctx, reply.error());
    auto version = ipc::from_json<ipc::VersionReply>(reply.value());
    if (!version) return bad_reply(ctx, version.error());
    if (ctx.json) {
        print_json(ctx, nlohmann::json{{"client_version", client_version()},
                                       {"protocol_version", ipc::kProtocolVersion},
                                       {"server", reply.value()}});
    } else {
        write_out(ctx, "wsindexd " + version->server_version + " (protocol " +
                           std::to_string(version->protocol_version) + ", pid " +
                           std::to_string(version->pid) + ", socket " + ctx.socket + ")\n");
    }
    return finish(ctx, 0);
}

}  // namespace wsindex::cli
