// Glob and POSIX regex patterns of `wsctl find` translated to PostgreSQL regular expressions.
#include "fleet/find_patterns.hpp"

#include <cstdio>
#include <vector>

namespace wsindex::fleet {

namespace {

bool is_alnum(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// One byte as itself in an ARE: letters and digits plain, anything else as \u00XX (a
// backslash before a letter would make an escape; punctuation would be an operator).
void append_literal(unsigned char c, std::string* out) {
    if (is_alnum(c)) {
        out->push_back(static_cast<char>(c));
        return;
    }
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
    out->append(escaped);
}

// One character as SQLite's sqlite3Utf8Read reads it: a lead byte (>= 0xc0) with all the
// continuation bytes after it, or any other single byte. The lookahead keeps the regex from
// stopping inside a run of continuation bytes, which SQLite always reads whole.
constexpr std::string_view kOneChar =
    "(?:[\\u00c0-\\u00ff][\\u0080-\\u00bf]*(?![\\u0080-\\u00bf])|[^\\u00c0-\\u00ff])";

// An expression that matches nothing: `^` is always an anchor in an ARE.
constexpr std::string_view kNothing = "a^";

}  // namespace

bool glob_to_pg_regex(std::string_view glob, std::string* out, std::string* error) {
    std::string re = "^";
    std::size_t i = 0;
    while (i < glob.size()) {
        const auto c = static_cast<unsigned char>(glob[i]);
        if (c == '*') {
            re += ".*";
            ++i;
            continue;
        }
        if (c == '?') {
            re += kOneChar;
            ++i;
            continue;
        }
        if (c != '[') {
            append_literal(c, &re);
            ++i;
            continue;
        }
        // A set, read as SQLite's patternCompare reads it.
        std::size_t j = i + 1;
        bool invert = false;
        if (j < glob.size() && glob[j] == '^') {
            invert = true;
            ++j;
        }
        std::string members;
        const auto member = [&](unsigned char m) -> bool {
            if (m >= 0x80) {
                *error = "a non-ASCII character inside [...] is not supported by fleet find";
                return false;
            }
            append_literal(m, &members);
            return true;
        };
        if (j < glob.size() && glob[j] == ']') {
            if (!member(']')) return false;
            ++j;
        }
        unsigned char prior = 0;
        while (j < glob.size() && glob[j] != ']') {
            const auto m = static_cast<unsigned char>(glob[j]);
            if (m == '-' && j + 1 < glob.size() && glob[j + 1] != ']' && prior > 0) {
                const auto hi = static_cast<unsigned char>(glob[j + 1]);
                if (hi >= 0x80) return member(hi);
                // prior is already a member; a reversed range adds nothing (SQLite's test
                // c >= prior && c <= hi never holds), an ARE would refuse it.
                if (hi > prior) {
                    members += '-';
                    append_literal(hi, &members);
                }
                prior = 0;
                j += 2;
                continue;
            }
            if (!member(m)) return false;
            prior = m;
            ++j;
        }
        if (j >= glob.size()) {  // unterminated: SQLite's GLOB then matches nothing
            *out = kNothing;
            return true;
        }
        if (members.empty()) {
            if (!invert) {
                *out = kNothing;
                return true;
            }
            re += kOneChar;
        } else if (invert) {
            re += "(?:(?![" + members + "])" + std::string(kOneChar) + ")";
        } else {
            re += "[" + members + "]";
        }
        i = j + 1;
    }
    re += "$";
    *out = std::move(re);
    return true;
}

std::string posix_regex_to_pg(std::string_view regex) {
    std::string re;
    std::size_t i = 0;
    while (i < regex.size()) {
        const auto c = static_cast<unsigned char>(regex[i]);
        if (c >= 0x80) {
            append_literal(c, &re);
            ++i;
            continue;
        }
        if (c == '\\' && i + 1 < regex.size()) {
            const auto n = static_cast<unsigned char>(regex[i + 1]);
            i += 2;
            switch (n) {
                case '<':
                    re += "\\m";
                    break;
                case '>':
                    re += "\\M";
                    break;
                case 'b':
                    re += "\\y";
                    break;
                case 'B':
                    re += "\\Y";
                    break;
                case '`':
                    re += "\\A";
                    break;
                case '\'':
                    re += "\\Z";
                    break;
                case 'w':
                case 'W':
                case 's':
                case 'S':
                case '1':
                case '2':
                case '3':
                case '4':
                case '5':
                case '6':
                case '7':
                case '8':
                case '9':
                    re += '\\';
                    re += static_cast<char>(n);
                    break;
                default:
                    append_literal(n, &re);  // glibc: an escaped ordinary character is itself
            }
            continue;
        }
        if (c != '[') {
            re += static_cast<char>(c);
            ++i;
            continue;
        }
        // A bracket expression: copied, with its backslashes and high bytes made literal.
        re += '[';
        std::size_t j = i + 1;
        if (j < regex.size() && regex[j] == '^') re += regex[j++];
        if (j < regex.size() && regex[j] == ']') re += regex[j++];
        while (j < regex.size() && regex[j] != ']') {
            const auto m = static_cast<unsigned char>(regex[j]);
            if (m == '[' && j + 1 < regex.size() &&
                (regex[j + 1] == ':' || regex[j + 1] == '=' || regex[j + 1] == '.')) {
                // [:class:], [=x=], [.x.]: through to their own closing "x]".
                const char kind = regex[j + 1];
                const std::size_t end = regex.find(std::string{kind, ']'}, j + 2);
                const std::size_t stop = end == std::string_view::npos ? regex.size() : end + 2;
                re.append(regex.substr(j, stop - j));
                j = stop;
                continue;
            }
            if (m == '\\' || m >= 0x80) {
                append_literal(m, &re);
            } else {
                re += static_cast<char>(m);
            }
            ++j;
        }
        if (j < regex.size()) re += regex[j++];
        i = j;
    }
    return re;
}

}  // namespace wsindex::fleet
