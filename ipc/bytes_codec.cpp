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

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_hex(std::string& out, unsigned char b) {
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
}

// The length of the well-formed UTF-8 sequence at the start of `rest` (2 to 4), or 0. The length
// of a sequence follows from its lead byte, so the shortest valid prefix is the sequence.
std::size_t sequence_length(std::string_view rest) {
    for (std::size_t k = 2; k <= 4 && k <= rest.size(); ++k) {
        if (is_valid_utf8(rest.substr(0, k))) return k;
    }
    return 0;
}

// Code points a terminal or a log viewer may act on although they are valid UTF-8: the C1
// controls (U+0080 to U+009F; U+009B is CSI, an escape sequence without ESC) and the line and
// paragraph separators U+2028 and U+2029, which some viewers break lines at.
bool acts_on_display(std::string_view seq) {
    const auto b0 = static_cast<unsigned char>(seq[0]);
    const auto b1 = static_cast<unsigned char>(seq[1]);
    if (seq.size() == 2) return b0 == 0xc2 && b1 < 0xa0;
    if (seq.size() == 3) {
        const auto b2 = static_cast<unsigned char>(seq[2]);
        return b0 == 0xe2 && b1 == 0x80 && (b2 == 0xa8 || b2 == 0xa9);
    }
    return false;
}

}  // namespace

std::string log_bytes(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    std::size_t i = 0;
    while (i < bytes.size()) {
        const auto b = static_cast<unsigned char>(bytes[i]);
        if (b >= 0x20 && b < 0x7f) {
            out += bytes[i++];
        } else if (b == '\n') {
            out += "\\n";
            ++i;
        } else if (b == '\t') {
            out += "\\t";
            ++i;
        } else if (b < 0x80) {
            append_hex(out, b);  // the other C0 controls (ESC among them) and DEL
            ++i;
        } else if (const std::size_t len = sequence_length(bytes.substr(i)); len == 0) {
            append_hex(out, b);  // not UTF-8: each byte of it as it is in the name
            ++i;
        } else {
            const std::string_view seq = bytes.substr(i, len);
            if (acts_on_display(seq)) {
                for (const char c : seq) append_hex(out, static_cast<unsigned char>(c));
            } else {
                out += seq;
            }
            i += len;
        }
    }
    return out;
}

}  // namespace wsindex::ipc
