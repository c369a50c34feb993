// wsctl find [PATTERN]: entries matching a name pattern and filters, streamed as they come.
#include <chrono>
#include <cstdio>
#include <span>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/format.hpp"
#include "cli/json_stream.hpp"
#include "core/clock.hpp"
#include "ipc/find_reply_reader.hpp"
#include "ipc/find_reply_writer.hpp"
#include "ipc/methods.hpp"
#include "ipc/path_text.hpp"

namespace wsindex::cli {

namespace {

// The find request from the command line; nullopt after reporting a usage error in `code`.
std::optional<ipc::FindParams> build_params(const Context& ctx, const FindOptions& options,
                                            int& code) {
    ipc::FindParams params;
    params.pattern = options.pattern;
    params.match = options.regex  ? ipc::MatchMode::Regex
                   : options.glob ? ipc::MatchMode::Glob
                                  : ipc::MatchMode::Substring;
    params.case_insensitive = options.ignore_case;
    params.limit = options.limit;
    // Plain and -0 output print paths only: the daemon then answers from memory.
    params.metadata = options.long_format || ctx.json;
    std::string error;
    if (!options.types.empty()) {
        auto types = parse_types(options.types, error);
        if (!types) return code = usage_error(ctx, error), std::nullopt;
        params.types = *types;
    }
    SizeRange range;
    for (const auto& size : options.sizes) {
        if (!add_size_bound(size, range, error))
            return code = usage_error(ctx, error), std::nullopt;
    }
    params.min_size = range.min;
    params.max_size = range.max;
    if (!options.newer.empty()) {
        auto when = parse_time(options.newer, core::wall_clock_ns(), error);
        if (!when) return code = usage_error(ctx, error), std::nullopt;
        params.newer_ns = *when;
    }
    if (!options.under.empty()) {
        const std::string cwd = current_directory(error);
        if (cwd.empty()) return code = usage_error(ctx, error), std::nullopt;
        params.under = ipc::lexically_normal(options.under, cwd);
    }
    return params;
}

// Writes a batch's entries as JSON elements. The daemon's own writer makes the text, so it is
// what the daemon sent for this shape of reply (which FindReplyReader alone accepts); its
// "{"entries":[" ... "]}" frame is cut off to leave the elements.
void write_json_entries(JsonArrayStream& json, ipc::FindReplyWriter& writer,
                        std::span<const ipc::FindEntry> entries) {
    if (entries.empty()) return;
    for (const ipc::FindEntry& entry : entries) {
        if (entry.has_metadata) {
            writer.add(entry.path, entry.type, entry.size, entry.mtime_ns);
        } else {
            writer.add_path(entry.path, entry.type);
        }
    }
    const std::string text = writer.take();
    constexpr std::string_view kOpen = R"({"entries":[)";
    constexpr std::string_view kClose = "]}";
    json.elements(
        std::string_view(text).substr(kOpen.size(), text.size() - kOpen.size() - kClose.size()),
        entries.size());
}

std::string long_line(const ipc::FindEntry& entry, const std::string& path) {
    char head[64];
    std::snprintf(head, sizeof head, "%c  %10s  %s  ", entry.type, format_bytes(entry.size).c_str(),
                  format_time_ns(entry.mtime_ns).c_str());
    return head + path;
}

}  // namespace

int run_find(const Context& ctx, const FindOptions& options) {
    if (options.null_separated && ctx.json)
        return usage_error(ctx, "-0 and --json exclude each other");
    if (options.null_separated && options.long_format)
        return usage_error(ctx, "-0 and -l exclude each other");
    int code = 0;
    const auto params = build_params(ctx, options, code);
    if (!params) return code;

    auto client = connect(ctx);
    if (!client) return report(ctx, client.error());

    // Paths to a terminal are escaped so that odd names cannot garble it; to a pipe or file they
    // are written as raw bytes, one per line, like find(1) (use -0 for names with newlines).
    const bool escape = ctx.stdout_tty;
    JsonArrayStream json(ctx, "entries");  // --json only
    ipc::FindReplyWriter json_batch;       // --json: a decoded batch back as the daemon's text
    bool truncated = false;
    std::uint64_t count = 0;
    std::optional<ipc::Error> decode_error;
    auto print = [&](const ipc::FindEntry& entry) {
        ++count;
        if (options.null_separated) {
            write_out(ctx, entry.path);
            write_out(ctx, std::string_view("\0", 1));
            return;
        }
        if (options.long_format) {
            write_out(ctx, long_line(entry, escape ? printable(entry.path) : entry.path));
        } else if (escape) {
            write_out(ctx, printable(entry.path));
        } else {
            write_out(ctx, entry.path);  // no copy: the hot loop of a big answer
        }
        write_out(ctx, "\n");
    };
    // Replies in the daemon's usual shape are decoded without a DOM; anything else, errors
    // included, goes the DOM way below. Every output is written batch by batch, so wsctl holds
    // one batch at a time, whatever the size of the answer.
    ipc::FindReplyReader reader;
    ipc::Client::FrameReader fast = [&](std::string_view frame) -> std::optional<bool> {
        if (!reader.read(frame)) return std::nullopt;
        if (ctx.json) {
            write_json_entries(json, json_batch, reader.entries());
        } else {
            for (const ipc::FindEntry& entry : reader.entries()) print(entry);
        }
        if (!reader.continues()) truncated = reader.truncated();
        return reader.continues();
    };
    auto stream_error = client->call_more(
        ipc::method::kFind, ipc::to_json(*params),
        [&](const nlohmann::json& parameters, bool continues) {
            if (ctx.json) {
                // Pass the entries through as the daemon encoded them (lossless).
                const auto it = parameters.find("entries");
                if (it != parameters.end() && it->is_array()) {
                    for (const auto& entry : *it) {
                        const auto text = ipc::dump_json(entry);
                        if (!text) {
                            decode_error = ipc::make_error(ipc::ErrorKind::Protocol,
                                                           "an entry that is not valid UTF-8");
                            return false;
                        }
                        json.element(*text);
                    }
                }
                const auto t = parameters.find("truncated");
                if (!continues && t != parameters.end() && t->is_boolean())
                    truncated = t->get<bool>();
                return true;
            }
            auto reply = ipc::from_json<ipc::FindReply>(parameters);
            if (!reply) {
                decode_error = reply.error();
                return false;
            }
            for (const auto& entry : reply->entries) print(entry);
            if (!continues) truncated = reply->truncated;
            return true;
        },
        fast);
    if (ctx.json) {
        if (stream_error) return json.fail(*stream_error);
        if (decode_error) return json.fail(unexpected_reply(*decode_error));
        count = json.count();
    }
    if (stream_error) return report(ctx, *stream_error);
    if (decode_error) return bad_reply(ctx, *decode_error);
    if (truncated && (options.limit == 0 || count < options.limit)) {
        // Not the caller's --limit: the daemon's own cap (max_find_results). Always say so, also
        // to scripts, since a silently partial answer is worse than a noisy one.
        note(ctx, "warning: wsindexd cut the answer at " + format_count(count) +
                      " entries (its max_find_results); narrow the query (--under, --type, a "
                      "pattern) or raise that setting");
    } else if (truncated && ctx.stderr_tty) {
        note(ctx, "stopped at --limit " + std::to_string(options.limit));
    }
    if (ctx.json) json.close(truncated ? R"("truncated":true)" : R"("truncated":false)");
    return finish(ctx, 0);
}

}  // namespace wsindex::cli
