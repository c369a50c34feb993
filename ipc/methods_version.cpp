// wsindex.Version: the reply's encoder and decoder.
#include "ipc/methods_codec.hpp"

namespace wsindex::ipc {

json to_json(const VersionReply& v) {
    return json{{"server_version", v.server_version},
                {"protocol_version", v.protocol_version},
                {"interfaces", v.interfaces},
                {"max_message_bytes", v.max_message_bytes},
                {"pid", v.pid}};
}

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

}  // namespace wsindex::ipc
