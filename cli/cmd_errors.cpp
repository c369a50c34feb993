// wsctl errors [--scan ID]: the entries a scan could not read (EACCES, ENOENT, ...).
#include "cli/commands.hpp"
#include "cli/format.hpp"
#include "cli/json_stream.hpp"
#include "ipc/methods.hpp"

namespace wsindex::cli {

int run_errors(const Context& ctx, const ErrorsOptions& options) {
    auto client = connect(ctx);
    if (!client) return report(ctx, client.error());
    ipc::ErrorsParams params;
    params.scan_id = options.scan_id;
    params.limit = options.limit;
    // Streamed like find (a scan of a hostile tree can have many errors). --json writes each
    // batch as it comes; the table gathers them (its columns are aligned over all rows).
    ipc::ErrorsReply errors;
    JsonArrayStream json(ctx, "errors");
    std::optional<ipc::Error> decode_error;
    auto stream_error = client->call_more(
        ipc::method::kErrors, ipc::to_json(params),
        [&](const nlohmann::json& parameters, bool /*continues*/) {
            auto batch = ipc::from_json<ipc::ErrorsReply>(parameters);
            if (!batch) {
                decode_error = batch.error();
                return false;
            }
            if (batch->scan_id != 0) errors.scan_id = batch->scan_id;
            if (!ctx.json) {
                for (auto& e : batch->errors) errors.errors.push_back(std::move(e));
                return true;
            }
            // Passed through as the daemon encoded them (lossless).
            if (const auto it = parameters.find("errors");
                it != parameters.end() && it->is_array()) {
                for (const auto& e : *it) {
                    const auto text = ipc::dump_json(e);
                    if (!text) {
                        decode_error = ipc::make_error(ipc::ErrorKind::Protocol,
                                                       "an error entry that is not valid UTF-8");
                        return false;
                    }
                    json.element(*text);
                }
            }
            return true;
        });
    if (ctx.json) {
        if (stream_error) return json.fail(*stream_error);
        if (decode_error) return json.fail(unexpected_reply(*decode_error));
        json.close(R"("scan_id":)" + std::to_string(errors.scan_id));
        return finish(ctx, 0);
    }
    if (stream_error) return report(ctx, *stream_error);
    if (decode_error) return bad_reply(ctx, *decode_error);
    if (errors.scan_id == 0) {
        write_out(ctx, "no scans yet (wsctl scan PATH)\n");
        return finish(ctx, 0);
    }
    const std::string head = "scan " + std::to_string(errors.scan_id) + ": ";
    if (errors.errors.empty()) {
        write_out(ctx, head + "no errors\n");
        return finish(ctx, 0);
    }
    write_out(ctx, head + format_count(errors.errors.size()) + " errors\n");
    Table table({{"ERROR", Table::Align::Left},
                 {"MESSAGE", Table::Align::Left},
                 {"PATH", Table::Align::Left}});
    for (const auto& e : errors.errors) {
        table.add_row(
            {e.error_name.empty() ? std::to_string(e.error) : e.error_name, e.message, e.path});
    }
    write_out(ctx, table.render());
    return finish(ctx, 0);
}

}  // namespace wsindex::cli
