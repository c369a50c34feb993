// wsindex.Forget: the parameters and the reply.
#include "ipc/bytes_codec.hpp"
#include "ipc/methods_codec.hpp"

namespace wsindex::ipc {

json to_json(const ForgetParams& v) { return json{{"root", encode_bytes(v.root)}}; }

json to_json(const ForgetReply& v) {
    return json{{"root", encode_bytes(v.root)},
                {"entries", v.entries},
                {"dirs", v.dirs},
                {"bytes", v.bytes},
                {"scans", v.scans},
                {"cancelled", v.cancelled}};
}

template <>
Result<ForgetParams> from_json<ForgetParams>(const json& j) {
    return decode_top<ForgetParams>(j, [](FieldReader& r, ForgetParams& out) {
        std::optional<std::string> root = r.bytes("root");
        if (r.ok() && !root) r.fail_field("root", "is required (an absolute path)");
        if (r.ok()) require_absolute(r, "root", root);
        if (root) out.root = std::move(*root);
    });
}

template <>
Result<ForgetReply> from_json<ForgetReply>(const json& j) {
    return decode_top<ForgetReply>(j, [](FieldReader& r, ForgetReply& out) {
        out.root = r.bytes_or("root", {});
        out.entries = r.uint64("entries", 0);
        out.dirs = r.uint64("dirs", 0);
        out.bytes = r.uint64("bytes", 0);
        out.scans = r.uint64("scans", 0);
        out.cancelled = r.uint64("cancelled", 0);
    });
}

}  // namespace wsindex::ipc
