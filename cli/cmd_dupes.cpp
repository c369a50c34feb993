// wsctl dupes [PATH...]: groups of files with identical content, largest wasted space first.
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string_view>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/format.hpp"
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
    ipc::DupesReply all;
    nlohmann::json all_groups = nlohmann::json::array();
    nlohmann::json last;
    std::optional<ipc::Error> decode_error;
    // -0: the output, built as the frames come, one piece per frame: the fast reader appends a
    // frame's names itself (no string per name kept); a frame decoded the DOM way appends them
    // in absorb. A frame's names take fewer bytes than the frame (no quotes, no escapes, base64
    // decoded), so each piece is allocated once and never moved (one growing string was copied
    // at every doubling, each time onto fresh pages).
    std::vector<std::string> null_separated;
    bool names_read = false;  // the frame being absorbed already appended its names
    // One decoded reply: progress shown, groups kept, the totals taken from the last one.
    const auto absorb = [&](ipc::DupesReply& reply, bool continues) {
        if (reply.progress) {
            if (show_progress) {
                std::fprintf(ctx.err, "\r\033[K%s", progress_text(*reply.progress).c_str());
                std::fflush(ctx.err);
                progress_shown = true;
            }
            return;
        }
        // -0 prints the names in the order the frames bring them (see null_separated below).
        if (options.null_separated) {
            if (null_separated.empty()) null_separated.emplace_back();
            if (!names_read) ipc::append_null_separated(reply.groups, &null_separated.back());
        } else {
            for (auto& g : reply.groups) all.groups.push_back(std::move(g));
        }
        if (!continues) {
            all.wasted = reply.wasted;
            all.candidates = reply.candidates;
            all.unreadable = reply.unreadable;
            all.cached = reply.cached;
            all.hashed = reply.hashed;
            all.files_read = reply.files_read;
            all.bytes_read = reply.bytes_read;
            all.changed = std::move(reply.changed);
            all.elapsed_ms = reply.elapsed_ms;
        }
    };
    // Replies of groups and totals are decoded without a DOM (the --json output passes the
    // daemon's own JSON through, so it keeps the DOM); anything else goes the DOM way below.
    ipc::DupesReplyReader reader;
    ipc::Client::FrameReader fast;
    if (!ctx.json) {
        fast = [&](std::string_view frame) -> std::optional<bool> {
            std::string* names = nullptr;
            if (options.null_separated) {
                names = &null_separated.emplace_back();
                names->reserve(frame.size());
            }
            if (!reader.read(frame, names)) {
                return std::nullopt;
            }
            names_read = options.null_separated;
            absorb(reader.reply(), reader.continues());
            names_read = false;
            return reader.continues();
        };
    }
    auto stream_error = client->call_more(
        ipc::method::kDupes, ipc::to_json(params),
        [&](const nlohmann::json& parameters, bool continues) {
            auto reply = ipc::from_json<ipc::DupesReply>(parameters);
            if (!reply) {
                decode_error = reply.error();
                return false;
            }
            if (ctx.json && !reply->progress && parameters.contains("groups")) {
                for (const auto& g : parameters["groups"]) all_groups.push_back(g);
            }
            if (ctx.json && !reply->progress && !continues) last = parameters;
            absorb(*reply, continues);
            return true;
        },
        fast);
    if (progress_shown) {
        std::fprintf(ctx.err, "\r\033[K");
        std::fflush(ctx.err);
    }
    if (stream_error) return report(ctx, *stream_error);
    if (decode_error) return bad_reply(ctx, *decode_error);

    if (ctx.json) {
        last["groups"] = std::move(all_groups);
        print_json(ctx, last);
        return finish(ctx, 0);
    }
    if (options.null_separated) {
        for (const std::string& piece : null_separated) write_out(ctx, piece);
        return finish(ctx, 0);
    }
    // Plain: raw paths one per line (like find; -0 for names with newlines), each group
    // headed by its size; the other names of a hard-linked file are indented under it.
    std::string out;
    for (const auto& g : all.groups) {
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
    out += format_count(all.groups.size()) + (all.groups.size() == 1 ? " group, " : " groups, ") +
           format_bytes(all.wasted) + " wasted\n";
    write_out(ctx, out);
    if (!all.changed.empty()) {
        note(ctx, format_count(all.changed.size()) +
                      " files changed since they were indexed and were left out (wsctl scan)");
    }
    if (all.unreadable != 0) {
        note(ctx, format_count(all.unreadable) + " files could not be read and were left out");
    }
    return finish(ctx, 0);
}

}  // namespace wsindex::cli
