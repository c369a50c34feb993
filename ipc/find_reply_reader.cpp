// FindReplyReader: a recursive-descent reader of the one message shape it accepts.
#include "ipc/find_reply_reader.hpp"

#include <cstdint>
#include <limits>

#include "ipc/base64.hpp"
#include "ipc/utf8.hpp"

namespace wsindex::ipc {

namespace {
constexpr std::string_view kTypeLetters = "fdlpscb?";  // what from_json<FindEntry> accepts
}  // namespace

// The text being read. Every method returns false to decline; the position is then meaningless.
class FindReplyReader::Cursor {
  public:
    explicit Cursor(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

    void skip_space() {
        while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    }
    // The next non-space character is `c`; consumes it.
    bool expect(char c) {
        skip_space();
        if (p_ == end_ || *p_ != c) return false;
        ++p_;
        return true;
    }
    // Consumes `c` when it is next (after spaces).
    bool accept(char c) {
        skip_space();
        if (p_ != end_ && *p_ == c) {
            ++p_;
            return true;
        }
        return false;
    }
    [[nodiscard]] bool at_end() {
        skip_space();
        return p_ == end_;
    }
    [[nodiscard]] char peek() {
        skip_space();
        return p_ == end_ ? '\0' : *p_;
    }

    // A JSON string into *out (decoded, checked to be valid UTF-8, as nlohmann's lexer does).
    bool string(std::string* out) {
        if (!expect('"')) return false;
        out->clear();
        for (;;) {
            const char* run = p_;
            while (p_ != end_ && *p_ != '"' && *p_ != '\\' &&
                   static_cast<unsigned char>(*p_) >= 0x20) {
                ++p_;
            }
            out->append(run, p_);
            if (p_ == end_ || static_cast<unsigned char>(*p_) < 0x20) return false;  // raw control
            if (*p_++ == '"') break;
            if (!escape(out)) return false;
        }
        return is_valid_utf8(*out);
    }

    bool boolean(bool* out) {
        skip_space();
        if (literal("true")) {
            *out = true;
            return true;
        }
        if (literal("false")) {
            *out = false;
            return true;
        }
        return false;
    }

    // A JSON integer as nlohmann reads one: -?(0|[1-9][0-9]*), no fraction or exponent (those
    // are floats, which the DOM path converts: declined here), within 64 bits.
    bool integer(bool* negative, std::uint64_t* magnitude) {
        skip_space();
        *negative = p_ != end_ && *p_ == '-';
        if (*negative) ++p_;
        if (p_ == end_ || *p_ < '0' || *p_ > '9') return false;
        if (*p_ == '0' && p_ + 1 != end_ && p_[1] >= '0' && p_[1] <= '9') return false;
        std::uint64_t v = 0;
        for (; p_ != end_ && *p_ >= '0' && *p_ <= '9'; ++p_) {
            const auto digit = static_cast<std::uint64_t>(*p_ - '0');
            if (v > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return false;
            v = v * 10 + digit;
        }
        if (p_ != end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
        *magnitude = v;
        return true;
    }

  private:
    bool literal(std::string_view word) {
        if (static_cast<std::size_t>(end_ - p_) < word.size() ||
            std::string_view(p_, word.size()) != word) {
            return false;
        }
        p_ += word.size();
        return true;
    }

    // After a backslash. \uXXXX outside the BMP's non-surrogates is declined (the daemon
    // writes \u only for control characters).
    bool escape(std::string* out) {
        if (p_ == end_) return false;
        switch (*p_++) {
            case '"':
                out->push_back('"');
                return true;
            case '\\':
                out->push_back('\\');
                return true;
            case '/':
                out->push_back('/');
                return true;
            case 'b':
                out->push_back('\b');
                return true;
            case 'f':
                out->push_back('\f');
                return true;
            case 'n':
                out->push_back('\n');
                return true;
            case 'r':
                out->push_back('\r');
                return true;
            case 't':
                out->push_back('\t');
                return true;
            case 'u':
                break;
            default:
                return false;
        }
        if (end_ - p_ < 4) return false;
        std::uint32_t cp = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = *p_++;
            cp <<= 4;
            if (c >= '0' && c <= '9')
                cp |= static_cast<std::uint32_t>(c - '0');
            else if (c >= 'a' && c <= 'f')
                cp |= static_cast<std::uint32_t>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                cp |= static_cast<std::uint32_t>(c - 'A' + 10);
            else
                return false;
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) return false;  // surrogates: left to nlohmann
        if (cp < 0x80) {
            out->push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
            out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
            out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
            out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
            out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
        return true;
    }

    const char* p_;
    const char* end_;
};

bool FindReplyReader::read(std::string_view frame) {
    count_ = 0;
    continues_ = false;
    truncated_ = false;
    if (frame.size() > limits_.max_message_bytes) return false;
    Cursor in(frame);
    std::string key;

    // {"path": ..., "type": ..., "size": ..., "mtime_ns": ...} into the next entry.
    auto read_entry = [&]() -> bool {
        if (count_ == entries_.size()) entries_.emplace_back();
        FindEntry& e = entries_[count_];
        e.path.clear();
        e.type = '?';
        e.size = 0;
        e.mtime_ns = 0;
        unsigned seen = 0;  // a bit per key: a duplicate is declined
        if (!in.expect('{')) return false;
        if (!in.accept('}')) {
            do {
                if (!in.string(&key) || !in.expect(':')) return false;
                bool negative = false;
                std::uint64_t magnitude = 0;
                unsigned bit = 0;
                if (key == "path") {
                    bit = 1;
                    if (in.peek() == '{') {
                        // {"b64": "..."}: decode_bytes' other form, and nothing else in it.
                        if (!in.expect('{') || !in.string(&key) || key != "b64" ||
                            !in.expect(':') || !in.string(&scratch_) || !in.expect('}')) {
                            return false;
                        }
                        auto bytes = base64_decode(scratch_);
                        if (!bytes) return false;
                        e.path = std::move(*bytes);
                    } else if (!in.string(&e.path)) {
                        return false;
                    }
                } else if (key == "type") {
                    bit = 2;
                    if (!in.string(&scratch_) || scratch_.size() != 1 ||
                        kTypeLetters.find(scratch_[0]) == std::string_view::npos) {
                        return false;
                    }
                    e.type = scratch_[0];
                } else if (key == "size") {
                    bit = 4;
                    if (!in.integer(&negative, &magnitude) || negative) return false;
                    e.size = magnitude;
                } else if (key == "mtime_ns") {
                    bit = 8;
                    if (!in.integer(&negative, &magnitude)) return false;
                    constexpr auto kMax =
                        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
                    if (magnitude > kMax + (negative ? 1 : 0)) return false;
                    e.mtime_ns = negative ? static_cast<std::int64_t>(0 - magnitude)
                                          : static_cast<std::int64_t>(magnitude);
                } else {
                    return false;  // unknown field: the DOM path skips it
                }
                if ((seen & bit) != 0) return false;
                seen |= bit;
            } while (in.accept(','));
            if (!in.expect('}')) return false;
        }
        e.has_metadata = (seen & (4 | 8)) != 0;  // as the DOM path decides
        ++count_;
        return true;
    };

    // {"entries": [...], "truncated": bool}
    auto read_parameters = [&]() -> bool {
        unsigned seen = 0;
        if (!in.expect('{')) return false;
        if (in.accept('}')) return true;
        do {
            if (!in.string(&key) || !in.expect(':')) return false;
            unsigned bit = 0;
            if (key == "entries") {
                bit = 1;
                if (!in.expect('[')) return false;
                if (!in.accept(']')) {
                    do {
                        if (!read_entry()) return false;
                    } while (in.accept(','));
                    if (!in.expect(']')) return false;
                }
            } else if (key == "truncated") {
                bit = 2;
                if (!in.boolean(&truncated_)) return false;
            } else {
                return false;
            }
            if ((seen & bit) != 0) return false;
            seen |= bit;
        } while (in.accept(','));
        return in.expect('}');
    };

    unsigned seen = 0;
    if (!in.expect('{')) return false;
    if (!in.accept('}')) {
        do {
            if (!in.string(&key) || !in.expect(':')) return false;
            unsigned bit = 0;
            if (key == "parameters") {
                bit = 1;
                if (!read_parameters()) return false;
            } else if (key == "continues") {
                bit = 2;
                if (!in.boolean(&continues_)) return false;
            } else {
                return false;  // "error" (parse_reply's job) or an unknown field
            }
            if ((seen & bit) != 0) return false;
            seen |= bit;
        } while (in.accept(','));
        if (!in.expect('}')) return false;
    }
    return in.at_end();
}

}  // namespace wsindex::ipc
