// wsindex.Du: the parameters, the entries and the reply.
#include "ipc/bytes_codec.hpp"
#include "ipc/methods_codec.hpp"

namespace wsindex::ipc {

namespace {

// Deeper than any real tree needs, small enough that depth * children stays answerable.
constexpr std::uint64_t kMaxDuDepth = 4096;

}  // namespace

void read(FieldReader& r, DuEntry& out) {
    out.path = r.bytes_or("path", {});
    out.depth = static_cast<std::uint32_t>(r.uint64("depth", 0, UINT32_MAX));
    out.size = r.uint64("size", 0);
    out.disk = r.uint64("disk", 0);
    out.files = r.uint64("files", 0);
    out.dirs = r.uint64("dirs", 0);
    out.partial = r.boolean("partial", false);
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

}  // namespace wsindex::ipc
