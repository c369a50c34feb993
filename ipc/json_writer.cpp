// The escaping and number formatting of nlohmann's serializer, written straight into a string.
#include "ipc/json_writer.hpp"

#include <array>
#include <charconv>

#include "ipc/base64.hpp"
#include "ipc/utf8.hpp"

namespace wsindex::ipc {

namespace {

// What byte `c` becomes inside a JSON string: 0 means "copy it", 'u' means \u00XX, any other
// letter is the character after the backslash. Only ASCII needs escaping: bytes >= 0x80 are
// parts of (validated) UTF-8 sequences and are copied, as nlohmann does with ensure_ascii off.
constexpr std::array<char, 256> make_escapes() {
    std::array<char, 256> table{};
    for (std::size_t c = 0; c < 0x20; ++c) table[c] = 'u';
    table['\b'] = 'b';
    table['\t'] = 't';
    table['\n'] = 'n';
    table['\f'] = 'f';
    table['\r'] = 'r';
    table['"'] = '"';
    table['\\'] = '\\';
    return table;
}

constexpr auto kEscapes = make_escapes();

}  // namespace

void append_json_string(std::string& out, std::string_view utf8) {
    out.push_back('"');
    // Runs of bytes that need no escape are appended at once: names rarely hold any.
    std::size_t run = 0;
    for (std::size_t i = 0; i < utf8.size(); ++i) {
        const char escape = kEscapes[static_cast<unsigned char>(utf8[i])];
        if (escape == 0) continue;
        out.append(utf8.data() + run, i - run);
        run = i + 1;
        out.push_back('\\');
        if (escape != 'u') {
            out.push_back(escape);
            continue;
        }
        static constexpr char kHex[] = "0123456789abcdef";  // lowercase, as nlohmann writes
        const auto c = static_cast<unsigned char>(utf8[i]);
        out.append("u00");
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xF]);
    }
    out.append(utf8.data() + run, utf8.size() - run);
    out.push_back('"');
}

void append_json_bytes(std::string& out, std::string_view bytes) {
    if (is_valid_utf8(bytes)) {
        append_json_string(out, bytes);
        return;
    }
    out.append(R"({"b64":")");
    out.append(base64_encode(bytes));  // the alphabet needs no escaping
    out.append("\"}");
}

void append_json_uint(std::string& out, std::uint64_t value) {
    char buf[20];  // UINT64_MAX has 20 digits
    const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
    out.append(buf, end);
}

void append_json_int(std::string& out, std::int64_t value) {
    char buf[20];  // INT64_MIN is 19 digits and its sign
    const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
    out.append(buf, end);
}

}  // namespace wsindex::ipc
