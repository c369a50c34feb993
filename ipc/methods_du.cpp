// wsindex.Du: the parameters, the entries and the reply.
#include "ipc/bytes_codec.hpp"
#include "ipc/methods_codec.hpp"

namespace wsindex::ipc {

namespace {

// Deeper than any real tree needs, small enough that depth * children stays answerable.
constexpr std::uint64_t kMaxDuDepth = 4096;

}  // namespace

// The entry's own columns, when the reply carries them (DuParams::children).
void read_stat(FieldReader& r, DuEntry& out) {
    const nlohmann::json* type = r.raw("type");
    if (type == nullptr) return;
    DuEntryStat st;
    if (!type->is_string() || type->get_ref<const std::string&>().size() != 1) {
        r.fail_field("type", "must be one letter");
        return;
    }
    st.type = type->get_ref<const std::string&>()[0];
    st.has_stat = r.has("mtime_ns");
    st.size = r.uint64("entry_size", 0);
    st.blocks = r.uint64("entry_blocks", 0);
    st.mtime_ns = r.int64("mtime_ns", 0);
    st.ctime_ns = r.int64("ctime_ns", 0);
    st.mode = static_cast<std::uint32_t>(r.uint64("mode", 0, UINT32_MAX));
    st.uid = static_cast<std::uint32_t>(r.uint64("uid", 0, UINT32_MAX));
    st.gid = static_cast<std::uint32_t>(r.uint64("gid", 0, UINT32_MAX));
    st.dev = r.uint64("dev", 0);
    st.ino = r.uint64("ino", 0);
    st.nlink = r.uint64("nlink", 0);
    st.error = static_cast<int>(r.uint64("errno", 0, INT32_MAX));
    out.stat = st;
}

void read(FieldReader& r, DuEntry& out) {
    out.path = r.bytes_or("path", {});
    out.depth = static_cast<std::uint32_t>(r.uint64("depth", 0, UINT32_MAX));
    out.size = r.uint64("size", 0);
    out.disk = r.uint64("disk", 0);
    out.files = r.uint64("files", 0);
    out.dirs = r.uint64("dirs", 0);
    out.partial = r.boolean("partial", false);
    read_stat(r, out);
}

json to_json(const DuParams& v) {
    json out{{"depth", v.depth}, {"top", v.top}};
    if (v.path) out["path"] = encode_bytes(*v.path);
    if (v.children) out["children"] = true;
    return out;
}

json to_json(const DuEntry& v) {
    json out{{"path", encode_bytes(v.path)},
             {"depth", v.depth},
             {"size", v.size},
             {"disk", v.disk},
             {"files", v.files},
             {"dirs", v.dirs},
             {"partial", v.partial}};
    if (v.stat) {
        const DuEntryStat& st = *v.stat;
        out["type"] = std::string(1, st.type);
        if (st.has_stat) {
            out["entry_size"] = st.size;
            out["entry_blocks"] = st.blocks;
            out["mtime_ns"] = st.mtime_ns;
            out["ctime_ns"] = st.ctime_ns;
            out["mode"] = st.mode;
            out["uid"] = st.uid;
            out["gid"] = st.gid;
            out["dev"] = st.dev;
            out["ino"] = st.ino;
            out["nlink"] = st.nlink;
        }
        if (st.error != 0) out["errno"] = st.error;
    }
    return out;
}

json to_json(const DuReply& v) { return json{{"entries", list_to_json(v.entries)}}; }

template <>
Result<DuParams> from_json<DuParams>(const json& j) {
    return decode_top<DuParams>(j, [](FieldReader& r, DuParams& out) {
        out.path = r.bytes("path");
        out.depth = static_cast<std::uint32_t>(r.uint64("depth", 0, kMaxDuDepth));
        out.top = r.uint64("top", 0);
        out.children = r.boolean("children", false);
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
