// wsindex.Cancel: the parameters and the reply.
#include "ipc/bytes_codec.hpp"
#include "ipc/methods_codec.hpp"

namespace wsindex::ipc {

json to_json(const CancelParams& v) {
    json out = json::object();
    if (v.scan_id) out["scan_id"] = *v.scan_id;
    return out;
}

json to_json(const CancelReply& v) {
    json out{{"cancelled", v.cancelled}, {"unnumbered", v.unnumbered}};
    if (v.dupes != 0) out["dupes"] = v.dupes;
    return out;
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
        out.dupes = r.uint64("dupes", 0);
    });
}

}  // namespace wsindex::ipc
