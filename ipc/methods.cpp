// to_json / from_json for every method's parameters and replies (the contract of protocol.md).
#include "ipc/methods.hpp"

#include <algorithm>
#include <array>

#include "ipc/bytes_codec.hpp"
#include "ipc/field_reader.hpp"

namespace wsindex::ipc {

using nlohmann::json;

namespace {

// ---- helpers -------------------------------------------------------------------------------

constexpr std::string_view kTypeLetters = "fdlpscb";
// Deeper than any real tree needs, small enough that depth * children stays answerable.
constexpr std::uint64_t kMaxDuDepth = 4096;

template <class T>
json list_to_json(const std::vector<T>& items) {
    json out = json::array();
    for (const auto& item : items) out.push_back(to_json(item));
    return out;
}

void require_absolute(FieldReader& r, std::string_view name,
                      const std::optional<std::string>& path) {
    if (!path) return;
    if (path->empty() || path->front() != '/') {
        r.fail_field(name, "must be an absolute path (start with '/')");
    } else if (path->find('\0') != std::string::npos) {
        r.fail_field(name, "must not contain a NUL byte");
    }
}

// Reads `name` as an array of objects, each decoded by read(FieldReader&, T&) with error
// names like "scans[2].root".
template <class T>
std::vector<T> read_objects(FieldReader& r, std::string_view name);

void read(FieldReader& r, ScanInfo& out);
void read(FieldReader& r, WorkerStats& out);
void read(FieldReader& r, RootInfo& out);
void read(FieldReader& r, FindEntry& out);
void read(FieldReader& r, DuEntry& out);
void read(FieldReader& r, ErrorEntry& out);

template <class T>
std::vector<T> read_objects(FieldReader& r, std::string_view name) {
    std::vector<T> out;
    const json* v = r.raw(name);
    if (!v) return out;
    if (!v->is_array()) {
        r.fail_field(name, "must be an array, got " + std::string(json_type_name(*v)));
        return out;
    }
    out.reserve(v->size());
    for (std::size_t i = 0; i < v->size(); ++i) {
        const std::string element = r.field_name(name) + "[" + std::to_string(i) + "]";
        if (!(*v)[i].is_object()) {
            r.fail(invalid_parameter(element, "must be an object"));
            return {};
        }
        FieldReader sub((*v)[i], element + ".");
        T item;
        read(sub, item);
        if (auto error = sub.take_error()) {
            r.fail(std::move(*error));
            return {};
        }
        out.push_back(std::move(item));
    }
    return out;
}

template <class T, class ReadFn>
Result<T> decode_top(const json& j, ReadFn read_fn) {
    if (!j.is_object()) {
        return make_error(ErrorKind::InvalidParameter,
                          "parameters must be an object, got " + std::string(json_type_name(j)));
    }
    FieldReader r(j);
    T out;
    read_fn(r, out);
    if (auto error = r.take_error()) return std::move(*error);
    return out;
}

// ---- per-type readers ------------------------------------------------------------------------

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

void read(FieldReader& r, WorkerStats& out) {
    out.tasks = r.uint64("tasks", 0);
    out.steal_attempts = r.uint64("steal_attempts", 0);
    out.steals = r.uint64("steals", 0);
    out.items_stolen = r.uint64("items_stolen", 0);
    out.parked_ms = r.uint64("parked_ms", 0);
}

void read(FieldReader& r, RootInfo& out) {
    out.root = r.bytes_or("root", {});
    out.last_scan_id = r.uint64("last_scan_id", 0);
    out.last_finished_ns = r.int64("last_finished_ns", 0);
    out.entries = r.uint64("entries", 0);
    out.bytes = r.uint64("bytes", 0);
    out.counts_hidden = r.boolean("counts_hidden", false);
}

char read_type_letter(FieldReader& r, std::string_view name) {
    const std::string letter = r.text(name, "?");
    if (letter.size() != 1 ||
        (letter != "?" && kTypeLetters.find(letter[0]) == std::string_view::npos)) {
        if (r.ok()) r.fail_field(name, "must be one of f d l p s c b ?");
        return '?';
    }
    return letter[0];
}

void read(FieldReader& r, FindEntry& out) {
    out.path = r.bytes_or("path", {});
    out.type = read_type_letter(r, "type");
    out.has_metadata = r.has("size") || r.has("mtime_ns");
    out.size = r.uint64("size", 0);
    out.mtime_ns = r.int64("mtime_ns", 0);
}

void read(FieldReader& r, DuEntry& out) {
    out.path = r.bytes_or("path", {});
    out.depth = static_cast<std::uint32_t>(r.uint64("depth", 0, UINT32_MAX));
    out.size = r.uint64("size", 0);
    out.disk = r.uint64("disk", 0);
    out.files = r.uint64("files", 0);
    out.dirs = r.uint64("dirs", 0);
    out.partial = r.boolean("partial", false);
}

void read(FieldReader& r, ErrorEntry& out) {
    out.path = r.bytes_or("path", {});
    out.error = static_cast<int>(r.uint64("errno", 0, INT32_MAX));
    out.error_name = r.text("errno_name");
    out.message = r.text("message");
}

}  // namespace

// ---- enums ---------------------------------------------------------------------------------

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

std::string_view match_mode_name(MatchMode mode) {
    switch (mode) {
        case MatchMode::Substring:
            return "substring";
        case MatchMode::Glob:
            return "glob";
        case MatchMode::Regex:
            return "regex";
    }
    return "substring";
}

// ---- encoders --------------------------------------------------------------------------------

json to_json(const VersionReply& v) {
    return json{{"server_version", v.server_version},
                {"protocol_version", v.protocol_version},
                {"interfaces", v.interfaces},
                {"max_message_bytes", v.max_message_bytes},
                {"pid", v.pid}};
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

json to_json(const WorkerStats& v) {
    return json{{"tasks", v.tasks},
                {"steal_attempts", v.steal_attempts},
                {"steals", v.steals},
                {"items_stolen", v.items_stolen},
                {"parked_ms", v.parked_ms}};
}

json to_json(const RootInfo& v) {
    json out{{"root", encode_bytes(v.root)},
             {"last_scan_id", v.last_scan_id},
             {"last_finished_ns", v.last_finished_ns},
             {"entries", v.entries},
             {"bytes", v.bytes}};
    if (v.counts_hidden) out["counts_hidden"] = true;
    return out;
}

json to_json(const IndexRebuildInfo& v) {
    json out{{"at_ns", v.at_ns}, {"detail", display_bytes(v.detail)}, {"pending", v.pending}};
    if (!v.set_aside_as.empty()) out["set_aside_as"] = encode_bytes(v.set_aside_as);
    return out;
}

json to_json(const StatusReply& v) {
    return json{{"server_version", v.server_version},
                {"pid", v.pid},
                {"uptime_ms", v.uptime_ms},
                {"running", v.running ? to_json(*v.running) : json(nullptr)},
                {"queued", list_to_json(v.queued)},
                {"queue_depth", v.queue_depth},
                {"workers", list_to_json(v.workers)},
                {"roots", list_to_json(v.roots)},
                {"last_failed", v.last_failed ? to_json(*v.last_failed) : json(nullptr)},
                {"index_rebuild", v.index_rebuild ? to_json(*v.index_rebuild) : json(nullptr)}};
}

json to_json(const CancelParams& v) {
    json out = json::object();
    if (v.scan_id) out["scan_id"] = *v.scan_id;
    return out;
}

json to_json(const CancelReply& v) {
    return json{{"cancelled", v.cancelled}, {"unnumbered", v.unnumbered}};
}

json to_json(const FindParams& v) {
    json out{{"match", match_mode_name(v.match)},
             {"case_insensitive", v.case_insensitive},
             {"limit", v.limit}};
    if (v.pattern) out["pattern"] = encode_bytes(*v.pattern);
    if (!v.types.empty()) out["types"] = v.types;
    if (v.min_size) out["min_size"] = *v.min_size;
    if (v.max_size) out["max_size"] = *v.max_size;
    if (v.newer_ns) out["newer_ns"] = *v.newer_ns;
    if (v.under) out["under"] = encode_bytes(*v.under);
    if (!v.metadata) out["metadata"] = false;  // the default is left out
    return out;
}

json to_json(const FindEntry& v) {
    if (!v.has_metadata)
        return json{{"path", encode_bytes(v.path)}, {"type", std::string(1, v.type)}};
    return json{{"path", encode_bytes(v.path)},
                {"type", std::string(1, v.type)},
                {"size", v.size},
                {"mtime_ns", v.mtime_ns}};
}

json to_json(const FindReply& v) {
    json out{{"entries", list_to_json(v.entries)}};
    if (v.truncated) out["truncated"] = true;
    return out;
}

json to_json(const DuParams& v) {
    json out{{"depth", v.depth}, {"top", v.top}};
    if (v.path) out["path"] = encode_bytes(*v.path);
    return out;
}

json to_json(const DuEntry& v) {
    return json{{"path", encode_bytes(v.path)},
                {"depth", v.depth},
                {"size", v.size},
                {"disk", v.disk},
                {"files", v.files},
                {"dirs", v.dirs},
                {"partial", v.partial}};
}

json to_json(const DuReply& v) { return json{{"entries", list_to_json(v.entries)}}; }

json to_json(const ErrorsParams& v) {
    json out{{"limit", v.limit}};
    if (v.scan_id) out["scan_id"] = *v.scan_id;
    return out;
}

json to_json(const ErrorEntry& v) {
    return json{{"path", encode_bytes(v.path)},
                {"errno", v.error},
                {"errno_name", display_bytes(v.error_name)},
                {"message", display_bytes(v.message)}};
}

json to_json(const ErrorsReply& v) {
    return json{{"scan_id", v.scan_id}, {"errors", list_to_json(v.errors)}};
}

json to_json(const ScansParams& v) { return json{{"limit", v.limit}}; }

json to_json(const ScansReply& v) { return json{{"scans", list_to_json(v.scans)}}; }

// ---- decoders --------------------------------------------------------------------------------

template <>
Result<VersionReply> from_json<VersionReply>(const json& j) {
    return decode_top<VersionReply>(j, [](FieldReader& r, VersionReply& out) {
        out.server_version = r.text("server_version");
        out.protocol_version = static_cast<int>(r.uint64("protocol_version", 0, INT32_MAX));
        out.max_message_bytes = r.uint64("max_message_bytes", 0);
        out.pid = r.int64("pid", 0);
        if (const json* list = r.raw("interfaces")) {
            if (!list->is_array()) {
                r.fail_field("interfaces", "must be an array of strings");
                return;
            }
            for (const auto& item : *list) {
                if (!item.is_string()) {
                    r.fail_field("interfaces", "must be an array of strings");
                    return;
                }
                out.interfaces.push_back(item.get<std::string>());
            }
        }
    });
}

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

template <>
Result<WorkerStats> from_json<WorkerStats>(const json& j) {
    return decode_top<WorkerStats>(j, [](FieldReader& r, WorkerStats& out) { read(r, out); });
}

template <>
Result<RootInfo> from_json<RootInfo>(const json& j) {
    return decode_top<RootInfo>(j, [](FieldReader& r, RootInfo& out) { read(r, out); });
}

// A ScanInfo field that may be null or absent (StatusReply's running and last_failed).
static std::optional<ScanInfo> read_optional_scan(FieldReader& r, std::string_view name) {
    const json* raw = r.raw(name);
    if (raw == nullptr) return std::nullopt;
    if (!raw->is_object()) {
        r.fail_field(name, "must be an object or null");
        return std::nullopt;
    }
    FieldReader sub(*raw, std::string(name) + ".");
    ScanInfo info;
    read(sub, info);
    if (auto error = sub.take_error()) {
        r.fail(std::move(*error));
        return std::nullopt;
    }
    return info;
}

template <>
Result<StatusReply> from_json<StatusReply>(const json& j) {
    return decode_top<StatusReply>(j, [](FieldReader& r, StatusReply& out) {
        out.server_version = r.text("server_version");
        out.pid = r.int64("pid", 0);
        out.uptime_ms = r.uint64("uptime_ms", 0);
        out.running = read_optional_scan(r, "running");
        out.last_failed = read_optional_scan(r, "last_failed");
        out.queued = read_objects<ScanInfo>(r, "queued");
        out.queue_depth = r.uint64("queue_depth", 0);
        out.workers = read_objects<WorkerStats>(r, "workers");
        out.roots = read_objects<RootInfo>(r, "roots");
        if (const json* raw = r.raw("index_rebuild"); raw != nullptr) {
            if (!raw->is_object()) {
                r.fail_field("index_rebuild", "must be an object or null");
                return;
            }
            FieldReader sub(*raw, "index_rebuild.");
            IndexRebuildInfo info;
            info.at_ns = sub.int64("at_ns", 0);
            info.detail = sub.text("detail");
            info.set_aside_as = sub.bytes_or("set_aside_as", {});
            info.pending = sub.uint64("pending", 0);
            if (auto error = sub.take_error()) {
                r.fail(std::move(*error));
                return;
            }
            out.index_rebuild = std::move(info);
        }
    });
}

template <>
Result<CancelParams> from_json<CancelParams>(const json& j) {
    return decode_top<CancelParams>(
        j, [](FieldReader& r, CancelParams& out) { out.scan_id = r.optional_uint64("scan_id"); });
}

template <>
Result<CancelReply> from_json<CancelReply>(const json& j) {
    return decode_top<CancelReply>(j, [](FieldReader& r, CancelReply& out) {
        out.cancelled = r.uint64_list("cancelled");
        out.unnumbered = r.uint64("unnumbered", 0);  // absent from daemons before it
    });
}

template <>
Result<FindParams> from_json<FindParams>(const json& j) {
    return decode_top<FindParams>(j, [](FieldReader& r, FindParams& out) {
        out.pattern = r.bytes("pattern");
        const std::string match = r.text("match", "substring");
        if (match == "substring")
            out.match = MatchMode::Substring;
        else if (match == "glob")
            out.match = MatchMode::Glob;
        else if (match == "regex")
            out.match = MatchMode::Regex;
        else if (r.ok())
            r.fail_field("match", "must be one of substring, glob, regex; got '" + match + "'");
        out.case_insensitive = r.boolean("case_insensitive", false);
        out.types = r.text("types");
        for (const char c : out.types) {
            if (kTypeLetters.find(c) == std::string_view::npos && r.ok()) {
                r.fail_field("types", "must only hold the letters f d l p s c b");
            }
        }
        out.min_size = r.optional_uint64("min_size");
        out.max_size = r.optional_uint64("max_size");
        out.newer_ns = r.optional_int64("newer_ns");
        out.under = r.bytes("under");
        out.limit = r.uint64("limit", 0);
        out.metadata = r.boolean("metadata", true);
        if (!r.ok()) return;
        require_absolute(r, "under", out.under);
        if (out.min_size && out.max_size && *out.min_size > *out.max_size) {
            r.fail_field("min_size", "must not exceed max_size");
        }
        if (out.match != MatchMode::Substring && !out.pattern) {
            r.fail_field("pattern", "is required when match is glob or regex");
        }
    });
}

template <>
Result<FindEntry> from_json<FindEntry>(const json& j) {
    return decode_top<FindEntry>(j, [](FieldReader& r, FindEntry& out) { read(r, out); });
}

template <>
Result<FindReply> from_json<FindReply>(const json& j) {
    return decode_top<FindReply>(j, [](FieldReader& r, FindReply& out) {
        out.entries = read_objects<FindEntry>(r, "entries");
        out.truncated = r.boolean("truncated", false);
    });
}

template <>
Result<DuParams> from_json<DuParams>(const json& j) {
    return decode_top<DuParams>(j, [](FieldReader& r, DuParams& out) {
        out.path = r.bytes("path");
        out.depth = static_cast<std::uint32_t>(r.uint64("depth", 0, kMaxDuDepth));
        out.top = r.uint64("top", 0);
        if (r.ok()) require_absolute(r, "path", out.path);
    });
}

template <>
Result<DuEntry> from_json<DuEntry>(const json& j) {
    return decode_top<DuEntry>(j, [](FieldReader& r, DuEntry& out) { read(r, out); });
}

template <>
Result<DuReply> from_json<DuReply>(const json& j) {
    return decode_top<DuReply>(
        j, [](FieldReader& r, DuReply& out) { out.entries = read_objects<DuEntry>(r, "entries"); });
}

template <>
Result<ErrorsParams> from_json<ErrorsParams>(const json& j) {
    return decode_top<ErrorsParams>(j, [](FieldReader& r, ErrorsParams& out) {
        out.scan_id = r.optional_uint64("scan_id");
        out.limit = r.uint64("limit", 0);
    });
}

template <>
Result<ErrorEntry> from_json<ErrorEntry>(const json& j) {
    return decode_top<ErrorEntry>(j, [](FieldReader& r, ErrorEntry& out) { read(r, out); });
}

template <>
Result<ErrorsReply> from_json<ErrorsReply>(const json& j) {
    return decode_top<ErrorsReply>(j, [](FieldReader& r, ErrorsReply& out) {
        out.scan_id = r.uint64("scan_id", 0);
        out.errors = read_objects<ErrorEntry>(r, "errors");
    });
}

template <>
Result<ScansParams> from_json<ScansParams>(const json& j) {
    return decode_top<ScansParams>(
        j, [](FieldReader& r, ScansParams& out) { out.limit = r.uint64("limit", 0); });
}

template <>
Result<ScansReply> from_json<ScansReply>(const json& j) {
    return decode_top<ScansReply>(
        j, [](FieldReader& r, ScansReply& out) { out.scans = read_objects<ScanInfo>(r, "scans"); });
}

}  // namespace wsindex::ipc
