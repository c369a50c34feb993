// wsindex.Errors: the parameters, the entries and the reply.
#include "ipc/bytes_codec.hpp"
#include "ipc/methods_codec.hpp"

namespace wsindex::ipc {

void read(FieldReader& r, ErrorEntry& out) {
    out.path = r.bytes_or("path", {});
    out.error = static_cast<int>(r.uint64("errno", 0, INT32_MAX));
    out.error_name = r.text("errno_name");
    out.message = r.text("message");
}

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

}  // namespace wsindex::ipc
