// wsindex.Scan: ScanInfo (also carried by Status and Scans), the scan states, the parameters and
// the reply.
#include <algorithm>
#include <array>

#include "ipc/bytes_codec.hpp"
#include "ipc/methods_codec.hpp"

namespace wsindex::ipc {

void read(FieldReader& r, ScanInfo& out) {
    out.scan_id = r.uint64("scan_id", 0);
    out.root = r.bytes_or("root", {});
    const std::string state = r.text("state", "queued");
    if (auto parsed = scan_state_from_name(state)) {
        out.state = *parsed;
    } else if (r.ok()) {
        r.fail_field("state", "must be one of queued, running, done, failed, cancelled; got '" +
                                  state + "'");
    }
    out.started_ns = r.int64("started_ns", 0);
    out.finished_ns = r.int64("finished_ns", 0);
    out.elapsed_ms = r.uint64("elapsed_ms", 0);
    out.entries = r.uint64("entries", 0);
    out.dirs = r.optional_uint64("dirs");
    out.errors = r.uint64("errors", 0);
    out.bytes = r.optional_uint64("bytes");
    out.entries_per_second = r.number("entries_per_second", 0);
    out.error = r.text("error");
    out.root_hidden = r.boolean("root_hidden", false);
    out.counts_hidden = r.boolean("counts_hidden", false) || out.root_hidden;
}

std::string_view scan_state_name(ScanState state) {
    switch (state) {
        case ScanState::Queued:
            return "queued";
        case ScanState::Running:
            return "running";
        case ScanState::Done:
            return "done";
        case ScanState::Failed:
            return "failed";
        case ScanState::Cancelled:
            return "cancelled";
    }
    return "queued";
}

std::optional<ScanState> scan_state_from_name(std::string_view name) {
    for (const auto state : {ScanState::Queued, ScanState::Running, ScanState::Done,
                             ScanState::Failed, ScanState::Cancelled}) {
        if (scan_state_name(state) == name) return state;
    }
    return std::nullopt;
}

json to_json(const ScanInfo& v) {
    json out{{"scan_id", v.scan_id},
             {"root", encode_bytes(v.root)},
             {"state", scan_state_name(v.state)},
             {"started_ns", v.started_ns},
             {"finished_ns", v.finished_ns},
             {"elapsed_ms", v.elapsed_ms},
             {"entries", v.entries},
             {"errors", v.errors},
             {"entries_per_second", v.entries_per_second}};
    if (v.dirs) out["dirs"] = *v.dirs;     // absent: unknown (docs/protocol.md)
    if (v.bytes) out["bytes"] = *v.bytes;  // absent: unknown (docs/protocol.md)
    if (!v.error.empty()) out["error"] = display_bytes(v.error);
    if (v.root_hidden) out["root_hidden"] = true;
    if (v.counts_hidden) out["counts_hidden"] = true;
    return out;
}

json to_json(const ScanParams& v) {
    json paths = json::array();
    for (const auto& p : v.paths) paths.push_back(encode_bytes(p));
    return json{{"paths", std::move(paths)}, {"wait", v.wait}};
}

json to_json(const ScanReply& v) { return json{{"scans", list_to_json(v.scans)}}; }

template <>
Result<ScanInfo> from_json<ScanInfo>(const json& j) {
    return decode_top<ScanInfo>(j, [](FieldReader& r, ScanInfo& out) { read(r, out); });
}

template <>
Result<ScanParams> from_json<ScanParams>(const json& j) {
    return decode_top<ScanParams>(j, [](FieldReader& r, ScanParams& out) {
        if (!r.has("paths")) {
            r.fail_field("paths", "is required (an array of absolute paths)");
            return;
        }
        out.paths = r.bytes_list("paths");
        out.wait = r.boolean("wait", false);
        if (!r.ok()) return;
        if (out.paths.empty()) r.fail_field("paths", "must name at least one path");
        for (std::size_t i = 0; i < out.paths.size(); ++i) {
            require_absolute(r, "paths[" + std::to_string(i) + "]", out.paths[i]);
        }
    });
}

template <>
Result<ScanReply> from_json<ScanReply>(const json& j) {
    return decode_top<ScanReply>(
        j, [](FieldReader& r, ScanReply& out) { out.scans = read_objects<ScanInfo>(r, "scans"); });
}

}  // namespace wsindex::ipc
