// wsindex.Status: the per-worker and per-root parts and the reply.
#include "ipc/bytes_codec.hpp"
#include "ipc/methods_codec.hpp"

namespace wsindex::ipc {

namespace {

// A ScanInfo field that may be null or absent (StatusReply's running and last_failed).
std::optional<ScanInfo> read_optional_scan(FieldReader& r, std::string_view name) {
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

}  // namespace

void read(FieldReader& r, PoolWorkerStatus& out) {
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
    out.live = r.text("live", "");
    out.live_watches = r.uint64("live_watches", 0);
    out.live_changes = r.uint64("live_changes", 0);
    out.live_overflows = r.uint64("live_overflows", 0);
    out.live_changes_per_second = r.number("live_changes_per_second", 0.0);
}

void read(FieldReader& r, LiveInfo& out) {
    out.batches = r.uint64("batches", 0);
    out.dirs = r.uint64("dirs", 0);
    out.rows_changed = r.uint64("rows_changed", 0);
    out.failures = r.uint64("failures", 0);
    out.last_applied_ns = r.int64("last_applied_ns", 0);
    out.lag_ms = r.uint64("lag_ms", 0);
    out.pending_dirs = r.uint64("pending_dirs", 0);
    out.busy_ms = r.uint64("busy_ms", 0);
}

void read(FieldReader& r, SearchWorkerInfo& out) {
    out.chunks = r.uint64("chunks", 0);
    out.items = r.uint64("items", 0);
    out.steals = r.uint64("steals", 0);
    out.items_stolen = r.uint64("items_stolen", 0);
    out.busy_us = r.uint64("busy_us", 0);
    out.idle_us = r.uint64("idle_us", 0);
}

void read(FieldReader& r, NameIndexInfo& out) {
    out.loaded = r.boolean("loaded", false);
    out.file_backed = r.boolean("file_backed", false);
    out.generation = r.int64("generation", -1);
    out.index_generation = r.int64("index_generation", -1);
    out.names = r.uint64("names", 0);
    out.layer_names = r.uint64("layer_names", 0);
    out.layer_dirs = r.uint64("layer_dirs", 0);
    out.base_bytes = r.uint64("base_bytes", 0);
    out.memory_bytes = r.uint64("memory_bytes", 0);
    out.base_builds = r.uint64("base_builds", 0);
    out.layer_updates = r.uint64("layer_updates", 0);
    out.trigrams = r.boolean("trigrams", false);
    out.trigram_bytes = r.uint64("trigram_bytes", 0);
    out.trigram_builds = r.uint64("trigram_builds", 0);
    out.search_workers = r.uint64("search_workers", 0);
    out.last_search = read_objects<SearchWorkerInfo>(r, "last_search");
}

json to_json(const SearchWorkerInfo& v) {
    return json{{"chunks", v.chunks},   {"items", v.items},
                {"steals", v.steals},   {"items_stolen", v.items_stolen},
                {"busy_us", v.busy_us}, {"idle_us", v.idle_us}};
}

json to_json(const NameIndexInfo& v) {
    return json{{"loaded", v.loaded},
                {"file_backed", v.file_backed},
                {"generation", v.generation},
                {"index_generation", v.index_generation},
                {"names", v.names},
                {"layer_names", v.layer_names},
                {"layer_dirs", v.layer_dirs},
                {"base_bytes", v.base_bytes},
                {"memory_bytes", v.memory_bytes},
                {"base_builds", v.base_builds},
                {"layer_updates", v.layer_updates},
                {"trigrams", v.trigrams},
                {"trigram_bytes", v.trigram_bytes},
                {"trigram_builds", v.trigram_builds},
                {"search_workers", v.search_workers},
                {"last_search", list_to_json(v.last_search)}};
}

json to_json(const PoolWorkerStatus& v) {
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
    if (!v.live.empty()) {
        out["live"] = v.live;
        out["live_watches"] = v.live_watches;
        out["live_changes"] = v.live_changes;
        out["live_overflows"] = v.live_overflows;
        out["live_changes_per_second"] = v.live_changes_per_second;
    }
    return out;
}

json to_json(const LiveInfo& v) {
    return json{{"batches", v.batches},
                {"dirs", v.dirs},
                {"rows_changed", v.rows_changed},
                {"failures", v.failures},
                {"last_applied_ns", v.last_applied_ns},
                {"lag_ms", v.lag_ms},
                {"pending_dirs", v.pending_dirs},
                {"busy_ms", v.busy_ms}};
}

json to_json(const IndexRebuildInfo& v) {
    json out{{"at_ns", v.at_ns}, {"detail", display_bytes(v.detail)}, {"pending", v.pending}};
    if (!v.set_aside_as.empty()) out["set_aside_as"] = encode_bytes(v.set_aside_as);
    return out;
}

json to_json(const StatusReply& v) {
    json out{{"server_version", v.server_version},
             {"pid", v.pid},
             {"uptime_ms", v.uptime_ms},
             {"running", v.running ? to_json(*v.running) : json(nullptr)},
             {"queued", list_to_json(v.queued)},
             {"queue_depth", v.queue_depth},
             {"workers", list_to_json(v.workers)},
             {"roots", list_to_json(v.roots)},
             {"last_failed", v.last_failed ? to_json(*v.last_failed) : json(nullptr)},
             {"index_rebuild", v.index_rebuild ? to_json(*v.index_rebuild) : json(nullptr)},
             {"live", v.live ? to_json(*v.live) : json(nullptr)}};
    if (!v.dupes.empty()) out["dupes"] = list_to_json(v.dupes);
    if (v.names) out["names"] = to_json(*v.names);
    if (v.fleet) {
        out["fleet"] = json{{"host", v.fleet->host},
                            {"local_generation", v.fleet->local_generation},
                            {"published_generation", v.fleet->published_generation},
                            {"published_at_ns", v.fleet->published_at_ns},
                            {"lag", v.fleet->lag},
                            {"last_error", v.fleet->last_error}};
    }
    return out;
}

template <>
Result<PoolWorkerStatus> from_json<PoolWorkerStatus>(const json& j) {
    return decode_top<PoolWorkerStatus>(
        j, [](FieldReader& r, PoolWorkerStatus& out) { read(r, out); });
}

template <>
Result<RootInfo> from_json<RootInfo>(const json& j) {
    return decode_top<RootInfo>(j, [](FieldReader& r, RootInfo& out) { read(r, out); });
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
        out.workers = read_objects<PoolWorkerStatus>(r, "workers");
        out.roots = read_objects<RootInfo>(r, "roots");
        out.dupes = read_objects<DupesProgressInfo>(r, "dupes");
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
        if (const json* raw = r.raw("names"); raw != nullptr && !raw->is_null()) {
            if (!raw->is_object()) {
                r.fail_field("names", "must be an object or null");
                return;
            }
            FieldReader sub(*raw, "names.");
            NameIndexInfo info;
            read(sub, info);
            if (auto error = sub.take_error()) {
                r.fail(std::move(*error));
                return;
            }
            out.names = std::move(info);
        }
        if (const json* raw = r.raw("live"); raw != nullptr) {
            if (!raw->is_object()) {
                r.fail_field("live", "must be an object or null");
                return;
            }
            FieldReader sub(*raw, "live.");
            LiveInfo info;
            read(sub, info);
            if (auto error = sub.take_error()) {
                r.fail(std::move(*error));
                return;
            }
            out.live = info;
        }
        if (const json* raw = r.raw("fleet"); raw != nullptr && raw->is_object()) {
            FieldReader sub(*raw, "fleet.");
            FleetInfo info;
            info.host = sub.text("host", "");
            info.local_generation = sub.int64("local_generation", 0);
            info.published_generation = sub.int64("published_generation", -1);
            info.published_at_ns = sub.int64("published_at_ns", 0);
            info.lag = sub.uint64("lag", 0);
            info.last_error = sub.text("last_error", "");
            if (auto error = sub.take_error()) {
                r.fail(std::move(*error));
                return;
            }
            out.fleet = std::move(info);
        }
    });
}

}  // namespace wsindex::ipc
