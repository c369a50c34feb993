// wsctl scan PATH... [--wait]: start (or queue) scans; with --wait follow them to the end.
#include <unistd.h>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/format.hpp"
#include "cli/progress.hpp"
#include "ipc/methods.hpp"
#include "ipc/path_text.hpp"

namespace wsindex::cli {

namespace {

// Exit code and stderr messages for the final state of the waited-for scans.
int final_verdict(const Context& ctx, const ipc::ScanReply& reply) {
    int code = kExitOk;
    for (const auto& scan : reply.scans) {
        if (scan.state == ipc::ScanState::Done) continue;
        code = kExitFailure;
        std::string message = "scan " + std::to_string(scan.scan_id) + " of " +
                              printable(scan.root) + " " +
                              std::string(ipc::scan_state_name(scan.state));
        if (!scan.error.empty()) message += ": " + printable(scan.error);
        note(ctx, message);
    }
    return code;
}

}  // namespace

int run_scan(const Context& ctx, const ScanOptions& options) {
    std::string error;
    const std::string cwd = current_directory(error);
    if (cwd.empty()) return usage_error(ctx, error);
    ipc::ScanParams params;
    for (const auto& path : options.paths) params.paths.push_back(ipc::lexically_normal(path, cwd));
    params.wait = options.wait;

    auto client = connect(ctx, /*wait_forever=*/options.wait);
    if (!client) return report(ctx, client.error());

    if (!options.wait) {
        auto reply = client->call(ipc::method::kScan, ipc::to_json(params));
        if (!reply) return report(ctx, reply.error());
        auto scans = ipc::from_json<ipc::ScanReply>(reply.value());
        if (!scans) return bad_reply(ctx, scans.error());
        if (ctx.json) {
            print_json(ctx, reply.value());
        } else {
            for (const auto& scan : scans->scans) write_out(ctx, accepted_line(scan) + "\n");
        }
        return finish(ctx, kExitOk);
    }

    // With --json progress goes to stderr (and only on a terminal): stdout holds one document.
    const bool show_progress = !ctx.json || ctx.stderr_tty;
    ProgressPrinter printer(ctx.json ? ctx.err : ctx.out,
                            ctx.json ? ctx.stderr_tty : ctx.stdout_tty);
    std::optional<ipc::ScanReply> last;
    nlohmann::json last_json;
    std::optional<ipc::Error> decode_error;
    auto stream_error = client->call_more(ipc::method::kScan, ipc::to_json(params),
                                          [&](const nlohmann::json& parameters, bool continues) {
                                              auto scans =
                                                  ipc::from_json<ipc::ScanReply>(parameters);
                                              if (!scans) {
                                                  decode_error = scans.error();
                                                  return false;
                                              }
                                              if (show_progress)
                                                  printer.on_reply(scans.value(), !continues);
                                              last = std::move(scans.value());
                                              last_json = parameters;
                                              return true;
                                          });
    printer.clear();
    if (stream_error) return report(ctx, *stream_error);
    if (decode_error) return bad_reply(ctx, *decode_error);
    if (!last) {
        return report(ctx, ipc::make_error(ipc::ErrorKind::Protocol, "wsindexd sent no reply"));
    }
    if (ctx.json) print_json(ctx, last_json);
    return finish(ctx, final_verdict(ctx, *last));
}

}  // namespace wsindex::cli
