// Connecting, printing and error reporting shared by every wsctl command.
#include "cli/context.hpp"

#include <cerrno>
#include <cstring>

#include "cli/exit_codes.hpp"
#include "ipc/protocol.hpp"
#include "ipc/utf8.hpp"

namespace wsindex::cli {

ipc::Result<ipc::Client> connect(const Context& ctx, bool wait_forever) {
    ipc::ClientOptions options;
    if (wait_forever) options.reply_timeout = std::chrono::milliseconds(0);
    return ipc::Client::connect(ctx.socket, options);
}

namespace {

nlohmann::json error_document(const ipc::Error& error, int code) {
    const std::string name =
        error.name.empty() ? std::string(ipc::error_name(error.kind)) : error.name;
    return nlohmann::json{
        {"error", name}, {"message", ipc::sanitize_utf8(error.message)}, {"exit_code", code}};
}

}  // namespace

std::string error_fields(const ipc::Error& error, int code) {
    // Always serialisable: the message is made valid UTF-8 and the name is ASCII.
    const auto text = ipc::dump_json(error_document(error, code)).value_or("{}");
    return text.substr(1, text.size() - 2);
}

int report(const Context& ctx, const ipc::Error& error) {
    const int code = exit_code_for(error);
    std::fprintf(ctx.err, "wsctl: %s\n", ipc::sanitize_utf8(error.message).c_str());
    if (error.kind == ipc::ErrorKind::NotRunning) {
        std::fprintf(ctx.err,
                     "wsctl: start it (systemctl start wsindexd, or systemctl --user start "
                     "wsindexd) or point wsctl at its socket with --socket or "
                     "WSINDEX_SOCKET\n");
    }
    if (ctx.json) print_json(ctx, error_document(error, code));
    return finish(ctx, code);
}

int usage_error(const Context& ctx, std::string_view message) {
    std::fprintf(ctx.err, "wsctl: %.*s\n", static_cast<int>(message.size()), message.data());
    if (ctx.json) {
        ipc::Error usage = ipc::make_error(ipc::ErrorKind::Protocol, std::string(message));
        usage.name = "local.Usage";
        print_json(ctx, error_document(usage, kExitUsage));
    }
    return finish(ctx, kExitUsage);
}

ipc::Error unexpected_reply(const ipc::Error& error) {
    return ipc::make_error(ipc::ErrorKind::Protocol,
                           "unexpected reply from wsindexd (another version?): " + error.message);
}

int bad_reply(const Context& ctx, const ipc::Error& error) {
    return report(ctx, unexpected_reply(error));
}

void note(const Context& ctx, std::string_view message) {
    std::fprintf(ctx.err, "wsctl: %.*s\n", static_cast<int>(message.size()), message.data());
}

bool print_json(const Context& ctx, const nlohmann::json& document) {
    const auto text = ipc::dump_json(document);
    if (!text) {
        std::fprintf(ctx.err, "wsctl: cannot serialise the reply as JSON\n");
        return false;
    }
    write_out(ctx, *text);
    write_out(ctx, "\n");
    return true;
}

void write_out(const Context& ctx, std::string_view bytes) {
    if (!bytes.empty()) std::fwrite(bytes.data(), 1, bytes.size(), ctx.out);
}

int finish(const Context& ctx, int code) {
    if (std::fflush(ctx.out) != 0 || std::ferror(ctx.out)) {
        std::fprintf(ctx.err, "wsctl: error writing the output: %s\n", std::strerror(errno));
        return code == kExitOk ? kExitFailure : code;
    }
    return code;
}

}  // namespace wsindex::cli
