// wsctl dupes [PATH...]: groups of files with identical content, largest wasted space first.
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string_view>
#include <vector>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/format.hpp"
#include "cli/json_stream.hpp"
#include "ipc/dupes_reply_reader.hpp"
#include "ipc/methods.hpp"
#include "ipc/path_text.hpp"

namespace wsindex::cli {
namespace {

std::string progress_text(const ipc::DupesProgressInfo& p) {
    std::string line = "dupes: " + p.phase + " " + format_count(p.files_done) + "/" +
                       format_count(p.files_total) + " files, " + format_bytes(p.bytes_done) + "/" +
                       format_bytes(p.bytes_total) + ", read " + format_bytes(p.bytes_read) + " (" +
                       format_bytes(static_cast<std::uint64_t>(p.bytes_per_second)) + "/s)";
    return line;
}

// Plain output of some groups: each headed by its size, raw paths one per line (like find;
// -0 for names with newlines); the other names of a hard-linked file indented under it.
std::string plain_groups(const std::vector<ipc::DupesGroupInfo>& groups) {
    std::string out;
    for (const auto& g : groups) {
        out += format_count(g.files.size()) + " files of " + format_bytes(g.size) + ", " +
               format_bytes(g.wasted) + " wasted\n";
        for (const auto& f : g.files) {
            for (std::size_t i = 0; i < f.names.size(); ++i) {
                out += i == 0 ? "  " : "    = ";
                out += f.names[i];
                out.push_back('\n');
            }
        }
        out.push_back('\n');
    }
    return out;
}

}  // namespace

int run_dupes(const Context& ctx, const DupesOptions& options) {
    if (options.null_separated && ctx.json) {
        return usage_error(ctx, "-0 and --json exclude each other");
    }
    ipc::DupesParams params;
    params.paranoid = options.paranoid;
    std::string error;
    const std::optional<std::uint64_t> min_size = parse_byte_count(options.min_size, error);
    if (!min_size) return usage_error(ctx, error);
    params.min_size = *min_size;
    if (!options.paths.empty()) {
        const std::string cwd = current_directory(error);
        if (cwd.empty()) return usage_error(ctx, error);
        for (const std::string& path : options.paths) {
            params.paths.push_back(ipc::lexically_normal(path, cwd));
        }
    }
    auto client = connect(ctx);
    if (!client) return report(ctx, client.error());

    // Progress on stderr, only on a terminal, on one line redrawn in place.
    const bool show_progress = ctx.stderr_tty;
    bool progress_shown = false;
    const auto clear_progress = [&] {
        if (!progress_shown) return;
        std::fprintf(ctx.err, "\r\033[K");
        std::fflush(ctx.err);
        progress_shown = false;
    };
    // Every output is written as the frames come (groups arrive in batches, the totals in the
    // last frame), so wsctl holds one frame at a time however many groups there are:
    //   plain: each group as it comes, the count and the wasted bytes at the end;
    //   -0:    each frame's names (the fast reader writes them into one piece per frame);
    //   --json: {"groups":[...], then the last frame's other members} (JsonArrayStream).
    JsonArrayStream json(ctx, "groups");  // --json only
    ipc::DupesReply totals;               // the last frame's (its groups already written)
    std::uint64_t groups = 0;
    std::optional<ipc::Error> decode_error;
    std::string piece;        // -0: the names of the frame being absorbed
    bool names_read = false;  // the fast reader already put this frame's names into `piece`
    // One decoded reply: progress shown, groups written, the totals taken from the last one.
    const auto absorb = [&](ipc::DupesReply& reply, bool continues) {
        if (reply.progress) {
            if (show_progress) {
                std::fprintf(ctx.err, "\r\033[K%s", progress_text(*reply.progress).c_str());
                std::fflush(ctx.err);
                progress_shown = true;
            }
            return;
        }
        clear_progress();
        groups += reply.groups.size();
        if (options.null_separated) {
            if (!names_read) ipc::append_null_separated(reply.groups, &piece);
            write_out(ctx, piece);
            piece.clear();
        } else if (!ctx.json) {
            write_out(ctx, plain_groups(reply.groups));
        }
        if (!continues) {
            reply.groups.clear();
            totals = std::move(reply);
        }
    };
    // Replies of groups and totals are decoded without a DOM; --json keeps the DOM (it passes
    // the daemon's own JSON through), and anything else goes the DOM way below.
    ipc::DupesReplyReader reader;
    ipc::Client::FrameReader fast;
    if (!ctx.json) {
        fast = [&](std::string_view frame) -> std::optional<bool> {
            std::string* names = nullptr;
            if (options.null_separated) {
                piece.clear();
                piece.reserve(frame.size());  // a frame's names take fewer bytes than it
                names = &piece;
            }
            if (!reader.read(frame, names)) {
                piece.clear();
                return std::nullopt;
            }
            names_read = options.null_separated;
            absorb(reader.reply(), reader.continues());
            names_read = false;
            return reader.continues();
        };
    }
    std::string last_fields;  // --json: the last frame's members but its groups, as JSON text
    auto stream_error = client->call_more(
        ipc::method::kDupes, ipc::to_json(params),
        [&](const nlohmann::json& parameters, bool continues) {
            auto reply = ipc::from_json<ipc::DupesReply>(parameters);
            if (!reply) {
                decode_error = reply.error();
                return false;
            }
            if (ctx.json && !reply->progress && parameters.contains("groups")) {
                for (const auto& g : parameters["groups"]) {
                    if (const auto text = ipc::dump_json(g)) json.element(*text);
                }
            }
            if (ctx.json && !reply->progress && !continues) {
                nlohmann::json rest = parameters;
                rest.erase("groups");
                const std::string text = ipc::dump_json(rest).value_or("{}");
                last_fields = text.substr(1, text.size() - 2);
            }
            absorb(*reply, continues);
            return true;
        },
        fast);
    clear_progress();
    if (ctx.json) {
        if (stream_error) return json.fail(*stream_error);
        if (decode_error) return json.fail(unexpected_reply(*decode_error));
        json.close(last_fields);
        return finish(ctx, 0);
    }
    if (stream_error) return report(ctx, *stream_error);
    if (decode_error) return bad_reply(ctx, *decode_error);
    if (options.null_separated) return finish(ctx, 0);
    write_out(ctx, format_count(groups) + (groups == 1 ? " group, " : " groups, ") +
                       format_bytes(totals.wasted) + " wasted\n");
    if (!totals.changed.empty()) {
        note(ctx, format_count(totals.changed.size()) +
                      " files changed since they were indexed and were left out (wsctl scan)");
    }
    if (totals.unreadable != 0) {
        note(ctx, format_count(totals.unreadable) + " files could not be read and were left out");
    }
    return finish(ctx, 0);
}

}  // namespace wsindex::cli
