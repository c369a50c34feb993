// Escaping and measuring names for the browser (name_display.hpp).
#include "cli/ui/name_display.hpp"

#include <langinfo.h>

#include <cstdio>
#include <cstring>
#include <cwchar>

namespace wsindex::cli::ui {

namespace {

// The code point of the well-formed UTF-8 sequence at the start of `s` and its length; length
// 0 when it is not one (overlong forms, surrogates and values past U+10FFFF are not).
std::size_t decode_utf8(std::string_view s, char32_t* cp) {
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char c = b(0);
    std::size_t len = 0;
    char32_t value = 0;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        value = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        value = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        value = c & 0x07;
    } else {
        return 0;
    }
    if (s.size() < len) return 0;
    for (std::size_t i = 1; i < len; ++i) {
        if ((b(i) & 0xC0) != 0x80) return 0;
        value = (value << 6) | (b(i) & 0x3F);
    }
    if ((len == 3 && value < 0x800) || (len == 4 && (value < 0x10000 || value > 0x10FFFF)) ||
        (value >= 0xD800 && value <= 0xDFFF)) {
        return 0;
    }
    *cp = value;
    return len;
}

// Code points a terminal would act on rather than show: C1 controls and the bidi controls
// that reorder the rest of the row.
bool is_format_control(char32_t cp) {
    return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F || cp == 0x061C;
}

void append_escape(ShownText& out, const char* format, unsigned value) {
    char buf[16];
    const int n = std::snprintf(buf, sizeof buf, format, value);
    out.text.append(buf, static_cast<std::size_t>(n));
    out.width += static_cast<std::size_t>(n);
}

}  // namespace

ShownText shown_name(std::string_view bytes, bool utf8_terminal) {
    ShownText out;
    out.text.reserve(bytes.size());
    std::size_t i = 0;
    while (i < bytes.size()) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        if (c >= 0x20 && c < 0x7F) {
            if (c == '\\') {
                out.text += "\\\\";
                out.width += 2;
            } else {
                out.text.push_back(static_cast<char>(c));
                out.width += 1;
            }
            ++i;
            continue;
        }
        if (c < 0x80 || !utf8_terminal) {
            switch (c) {
                case '\n':
                    append_escape(out, "\\n", 0);
                    break;
                case '\t':
                    append_escape(out, "\\t", 0);
                    break;
                case '\r':
                    append_escape(out, "\\r", 0);
                    break;
                default:
                    append_escape(out, "\\x%02X", c);
            }
            ++i;
            continue;
        }
        char32_t cp = 0;
        const std::size_t len = decode_utf8(bytes.substr(i), &cp);
        if (len == 0) {
            append_escape(out, "\\x%02X", c);
            ++i;
            continue;
        }
        const int width = is_format_control(cp) ? -1 : ::wcwidth(static_cast<wchar_t>(cp));
        if (width < 0) {
            append_escape(out, "\\u{%X}", static_cast<unsigned>(cp));
        } else {
            out.text.append(bytes.substr(i, len));
            out.width += static_cast<std::size_t>(width);
        }
        i += len;
    }
    return out;
}

std::string fit_columns(const ShownText& text, std::size_t columns, bool pad) {
    std::string out;
    std::size_t used = 0;
    if (text.width <= columns) {
        out = text.text;
        used = text.width;
    } else if (columns > 0) {
        // Whole characters up to columns - 1, then the "~" mark.
        const std::size_t room = columns - 1;
        std::size_t i = 0;
        while (i < text.text.size()) {
            const auto c = static_cast<unsigned char>(text.text[i]);
            std::size_t len = 1;
            std::size_t width = 1;
            if (c >= 0x80) {
                char32_t cp = 0;
                len = decode_utf8(std::string_view(text.text).substr(i), &cp);
                if (len == 0) len = 1;
                const int w = ::wcwidth(static_cast<wchar_t>(cp));
                width = w < 0 ? 1 : static_cast<std::size_t>(w);
            }
            if (used + width > room) break;
            out.append(text.text, i, len);
            used += width;
            i += len;
        }
        out.push_back('~');
        ++used;
    }
    if (pad && used < columns) out.append(columns - used, ' ');
    return out;
}

bool locale_is_utf8() {
    const char* codeset = ::nl_langinfo(CODESET);
    return codeset != nullptr &&
           (std::strcmp(codeset, "UTF-8") == 0 || std::strcmp(codeset, "utf8") == 0);
}

}  // namespace wsindex::cli::ui
