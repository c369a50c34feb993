// encode_bytes / decode_bytes: UTF-8 strings as they are, everything else as {"b64": ...}.
#include "ipc/bytes_codec.hpp"

#include "ipc/base64.hpp"
#include "ipc/utf8.hpp"

namespace wsindex::ipc {

nlohmann::json encode_bytes(std::string_view bytes) {
    if (is_valid_utf8(bytes)) return nlohmann::json(std::string(bytes));
    return nlohmann::json{{"b64", base64_encode(bytes)}};
}

Result<std::string> decode_bytes(const nlohmann::json& value, std::string_view field) {
    if (value.is_string()) return value.get_ref<const std::string&>();
    if (value.is_object()) {
        const auto it = value.find("b64");
        if (it == value.end() || !it->is_string()) {
            return invalid_parameter(field, "must be a string or an object {\"b64\": string}");
        }
        auto decoded = base64_decode(it->get_ref<const std::string&>());
        if (!decoded) return invalid_parameter(field, "has invalid base64 in \"b64\"");
        return std::move(*decoded);
    }
    return invalid_parameter(field, "must be a string or an object {\"b64\": string}");
}

std::string display_bytes(std::string_view bytes) { return sanitize_utf8(bytes); }

std::string log_bytes(std::string_view bytes) {
    const std::string text = sanitize_utf8(bytes);
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto b = static_cast<unsigned char>(c);
        if (b == '\n') {
            out += "\\n";
        } else if (b == '\t') {
            out += "\\t";
        } else if (b < 0x20 || b == 0x7f) {
            static constexpr char kHex[] = "0123456789abcdef";
            out += "\\x";
            out += kHex[b >> 4];
            out += kHex[b & 0xf];
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace wsindex::ipc
