// The daemon's layout of a dupes reply frame, read directly (dupes_reply_layout.hpp).
#include "ipc/dupes_reply_layout.hpp"

#include <cstdint>
#include <cstring>
#include <limits>

namespace wsindex::ipc {
namespace {

// A cursor over the frame; every reader returns false (and the frame is declined) at the first
// byte that is not the layout's.
class Cursor {
  public:
    explicit Cursor(std::string_view text) : text_(text) {}

    [[nodiscard]] bool at_end() const { return at_ == text_.size(); }

    bool literal(std::string_view s) {
        if (text_.compare(at_, s.size(), s) != 0) return false;
        at_ += s.size();
        return true;
    }

    // An unsigned integer as JSON writes it (no sign, no leading zero, no fraction: a fraction
    // or exponent is left unread, and the literal expected after it then fails).
    bool number(std::uint64_t* out) {
        const std::size_t first = at_;
        std::uint64_t v = 0;
        constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
        while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') {
            const auto digit = static_cast<std::uint64_t>(text_[at_] - '0');
            if (v > (kMax - digit) / 10) return false;  // past 2^64 - 1: the lexer makes a float
            v = v * 10 + digit;
            ++at_;
        }
        if (at_ == first || (text_[first] == '0' && at_ - first > 1)) return false;
        *out = v;
        return true;
    }

    // A string of printable ASCII without escapes; *out views its bytes in the frame.
    bool plain_string(std::string_view* out) {
        if (!literal("\"")) return false;
        const void* quote = std::memchr(text_.data() + at_, '"', text_.size() - at_);
        if (quote == nullptr) return false;
        const auto end = static_cast<std::size_t>(static_cast<const char*>(quote) - text_.data());
        for (std::size_t i = at_; i < end; ++i) {
            const auto byte = static_cast<unsigned char>(text_[i]);
            if (byte < 0x20 || byte > 0x7e || byte == '\\') return false;
        }
        *out = text_.substr(at_, end - at_);
        at_ = end + 1;
        return true;
    }

    // ["...", ...]: each string to `take`.
    template <class Take>
    bool string_list(Take take) {
        if (!literal("[")) return false;
        if (literal("]")) return true;
        for (;;) {
            std::string_view s;
            if (!plain_string(&s)) return false;
            take(s);
            if (literal("]")) return true;
            if (!literal(",")) return false;
        }
    }

  private:
    std::string_view text_;
    std::size_t at_ = 0;
};

// {"files":[{"names":[...]},...],"size":N,"wasted":N}
bool read_group(Cursor& c, DupesGroupInfo* g, std::string* null_separated) {
    if (!c.literal(R"({"files":[)")) return false;
    if (!c.literal("]")) {
        for (;;) {
            if (!c.literal(R"({"names":)")) return false;
            bool ok = false;
            if (null_separated != nullptr) {
                ok = c.string_list([null_separated](std::string_view s) {
                    null_separated->append(s).push_back('\0');
                });
            } else {
                std::vector<std::string>& names = g->files.emplace_back().names;
                ok = c.string_list([&names](std::string_view s) { names.emplace_back(s); });
            }
            if (!ok || !c.literal("}")) return false;
            if (c.literal("]")) break;
            if (!c.literal(",")) return false;
        }
    }
    if (null_separated != nullptr) null_separated->push_back('\0');
    return c.literal(R"(,"size":)") && c.number(&g->size) && c.literal(R"(,"wasted":)") &&
           c.number(&g->wasted) && c.literal("}");
}

bool read_frame(Cursor& c, DupesReply* r, bool* continues, std::string* null_separated) {
    *continues = c.literal(R"({"continues":true,"parameters":)");
    if (!*continues && !c.literal(R"({"parameters":)")) return false;
    if (!c.literal(R"({"bytes_read":)") || !c.number(&r->bytes_read) ||
        !c.literal(R"(,"cached":)") || !c.number(&r->cached) || !c.literal(R"(,"candidates":)") ||
        !c.number(&r->candidates) || !c.literal(R"(,"changed":)") ||
        !c.string_list([r](std::string_view s) { r->changed.emplace_back(s); }) ||
        !c.literal(R"(,"elapsed_ms":)") || !c.number(&r->elapsed_ms) ||
        !c.literal(R"(,"files_read":)") || !c.number(&r->files_read) ||
        !c.literal(R"(,"groups":[)")) {
        return false;
    }
    if (!c.literal("]")) {
        for (;;) {
            if (!read_group(c, &r->groups.emplace_back(), null_separated)) return false;
            if (c.literal("]")) break;
            if (!c.literal(",")) return false;
        }
    }
    return c.literal(R"(,"hashed":)") && c.number(&r->hashed) && c.literal(R"(,"unreadable":)") &&
           c.number(&r->unreadable) && c.literal(R"(,"wasted":)") && c.number(&r->wasted) &&
           c.literal("}}") && c.at_end();
}

}  // namespace

bool read_dupes_reply_layout(std::string_view frame, DupesReply* reply, bool* continues,
                             std::string* null_separated) {
    *reply = DupesReply{};
    *continues = false;
    const std::size_t had = null_separated != nullptr ? null_separated->size() : 0;
    Cursor c(frame);
    if (read_frame(c, reply, continues, null_separated)) return true;
    if (null_separated != nullptr) null_separated->resize(had);
    return false;
}

}  // namespace wsindex::ipc
