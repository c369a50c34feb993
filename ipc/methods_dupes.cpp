// wsindex.Dupes: the parameters, the progress, the groups and the reply.
#include "ipc/bytes_codec.hpp"
#include "ipc/methods_codec.hpp"

namespace wsindex::ipc {

void read(FieldReader& r, DupesWorkerInfo& out) {
    out.files = r.uint64("files", 0);
    out.bytes = r.uint64("bytes", 0);
    out.chunks = r.uint64("chunks", 0);
    out.steals = r.uint64("steals", 0);
    out.items_stolen = r.uint64("items_stolen", 0);
    out.busy_ms = r.uint64("busy_ms", 0);
    out.idle_ms = r.uint64("idle_ms", 0);
}

void read(FieldReader& r, DupesProgressInfo& out) {
    out.run_id = r.uint64("run_id", 0);
    out.uid = r.uint64("uid", 0);
    out.phase = r.text("phase");
    out.files_done = r.uint64("files_done", 0);
    out.files_total = r.uint64("files_total", 0);
    out.bytes_done = r.uint64("bytes_done", 0);
    out.bytes_total = r.uint64("bytes_total", 0);
    out.bytes_read = r.uint64("bytes_read", 0);
    out.bytes_per_second = r.number("bytes_per_second", 0);
    out.elapsed_ms = r.uint64("elapsed_ms", 0);
    out.workers = read_objects<DupesWorkerInfo>(r, "workers");
}

void read(FieldReader& r, DupesFileInfo& out) { out.names = r.bytes_list("names"); }

void read(FieldReader& r, DupesGroupInfo& out) {
    out.size = r.uint64("size", 0);
    out.wasted = r.uint64("wasted", 0);
    out.files = read_objects<DupesFileInfo>(r, "files");
}

json to_json(const DupesParams& v) {
    json paths = json::array();
    for (const auto& p : v.paths) paths.push_back(encode_bytes(p));
    return json{{"paths", std::move(paths)}, {"min_size", v.min_size}, {"paranoid", v.paranoid}};
}

json to_json(const DupesWorkerInfo& v) {
    return json{{"files", v.files},
                {"bytes", v.bytes},
                {"chunks", v.chunks},
                {"steals", v.steals},
                {"items_stolen", v.items_stolen},
                {"busy_ms", v.busy_ms},
                {"idle_ms", v.idle_ms}};
}

json to_json(const DupesProgressInfo& v) {
    return json{{"run_id", v.run_id},
                {"uid", v.uid},
                {"phase", v.phase},
                {"files_done", v.files_done},
                {"files_total", v.files_total},
                {"bytes_done", v.bytes_done},
                {"bytes_total", v.bytes_total},
                {"bytes_read", v.bytes_read},
                {"bytes_per_second", v.bytes_per_second},
                {"elapsed_ms", v.elapsed_ms},
                {"workers", list_to_json(v.workers)}};
}

json to_json(const DupesFileInfo& v) {
    json names = json::array();
    for (const auto& n : v.names) names.push_back(encode_bytes(n));
    return json{{"names", std::move(names)}};
}

json to_json(const DupesGroupInfo& v) {
    return json{{"size", v.size}, {"wasted", v.wasted}, {"files", list_to_json(v.files)}};
}

json to_json(const DupesReply& v) {
    json changed = json::array();
    for (const auto& p : v.changed) changed.push_back(encode_bytes(p));
    json out{{"groups", list_to_json(v.groups)},
             {"wasted", v.wasted},
             {"candidates", v.candidates},
             {"unreadable", v.unreadable},
             {"cached", v.cached},
             {"hashed", v.hashed},
             {"files_read", v.files_read},
             {"bytes_read", v.bytes_read},
             {"changed", std::move(changed)},
             {"elapsed_ms", v.elapsed_ms}};
    if (v.progress) out["progress"] = to_json(*v.progress);
    return out;
}

template <>
Result<DupesParams> from_json<DupesParams>(const json& j) {
    return decode_top<DupesParams>(j, [](FieldReader& r, DupesParams& out) {
        out.paths = r.bytes_list("paths");
        out.min_size = r.uint64("min_size", 1);
        out.paranoid = r.boolean("paranoid", false);
        for (std::size_t i = 0; r.ok() && i < out.paths.size(); ++i) {
            std::optional<std::string> p = out.paths[i];
            require_absolute(r, "paths[" + std::to_string(i) + "]", p);
        }
    });
}

template <>
Result<DupesProgressInfo> from_json<DupesProgressInfo>(const json& j) {
    return decode_top<DupesProgressInfo>(
        j, [](FieldReader& r, DupesProgressInfo& out) { read(r, out); });
}

template <>
Result<DupesReply> from_json<DupesReply>(const json& j) {
    return decode_top<DupesReply>(j, [](FieldReader& r, DupesReply& out) {
        if (const json* raw = r.raw("progress"); raw != nullptr && raw->is_object()) {
            FieldReader sub(*raw, "progress.");
            DupesProgressInfo info;
            read(sub, info);
            if (auto error = sub.take_error()) {
                r.fail(std::move(*error));
                return;
            }
            out.progress = std::move(info);
        }
        out.groups = read_objects<DupesGroupInfo>(r, "groups");
        out.wasted = r.uint64("wasted", 0);
        out.candidates = r.uint64("candidates", 0);
        out.unreadable = r.uint64("unreadable", 0);
        out.cached = r.uint64("cached", 0);
        out.hashed = r.uint64("hashed", 0);
        out.files_read = r.uint64("files_read", 0);
        out.bytes_read = r.uint64("bytes_read", 0);
        out.changed = r.bytes_list("changed");
        out.elapsed_ms = r.uint64("elapsed_ms", 0);
    });
}

}  // namespace wsindex::ipc
