// wsindex.Scans: the parameters and the reply (a list of ScanInfo).
#include "ipc/bytes_codec.hpp"
#include "ipc/methods_codec.hpp"

namespace wsindex::ipc {

json to_json(const ScansParams& v) { return json{{"limit", v.limit}}; }

json to_json(const ScansReply& v) { return json{{"scans", list_to_json(v.scans)}}; }

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
