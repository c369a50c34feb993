// Strict UTF-8 decoding, one code point at a time (Unicode Table 3-7, well-formed sequences).
#include "ipc/utf8.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace wsindex::ipc {

namespace {

// What a lead byte promises: the sequence length and the range of the second byte (the later
// bytes are always 80..BF). len == 0: the byte cannot start a sequence (80..C1, F5..FF).
struct Lead {
    std::size_t len = 0;
    std::uint8_t lo = 0x80;
    std::uint8_t hi = 0xBF;
};

Lead lead_of(std::uint8_t b0) {
    if (b0 < 0x80) return {1, 0x80, 0xBF};
    if (b0 >= 0xC2 && b0 <= 0xDF) return {2, 0x80, 0xBF};
    if (b0 == 0xE0) return {3, 0xA0, 0xBF};  // no overlong 3-byte forms
    if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) return {3, 0x80, 0xBF};
    if (b0 == 0xED) return {3, 0x80, 0x9F};  // no UTF-16 surrogates D800..DFFF
    if (b0 == 0xF0) return {4, 0x90, 0xBF};  // no overlong 4-byte forms
    if (b0 >= 0xF1 && b0 <= 0xF3) return {4, 0x80, 0xBF};
    if (b0 == 0xF4) return {4, 0x80, 0x8F};  // nothing above U+10FFFF
    return {};
}

// How many bytes from bytes[i] on form a valid sequence or a valid-so-far prefix of one.
// Returns {matched, complete}; matched is at least 1 when the lead byte is usable.
struct Match {
    std::size_t matched = 0;
    bool complete = false;
};

Match match_at(std::string_view bytes, std::size_t i) {
    const Lead lead = lead_of(static_cast<std::uint8_t>(bytes[i]));
    if (lead.len == 0) return {};
    std::size_t k = 1;
    while (k < lead.len && i + k < bytes.size()) {
        const auto b = static_cast<std::uint8_t>(bytes[i + k]);
        const bool in_range = (k == 1) ? (b >= lead.lo && b <= lead.hi) : (b >= 0x80 && b <= 0xBF);
        if (!in_range) break;
        ++k;
    }
    return {k, k == lead.len};
}

}  // namespace

bool is_valid_utf8(std::string_view bytes) {
    std::size_t i = 0;
    while (i < bytes.size()) {
        // ASCII fast path, eight bytes at a time: most names are plain ASCII, and whole reply
        // texts (find batches of ~70 KiB) are checked here before they are sent.
        while (i + 8 <= bytes.size()) {
            std::uint64_t word;
            std::memcpy(&word, bytes.data() + i, sizeof word);
            if ((word & 0x8080808080808080ULL) != 0) break;
            i += 8;
        }
        if (i == bytes.size()) break;
        if (static_cast<std::uint8_t>(bytes[i]) < 0x80) {
            ++i;
            continue;
        }
        const Match m = match_at(bytes, i);
        if (!m.complete) return false;
        i += m.matched;
    }
    return true;
}

std::string sanitize_utf8(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    std::size_t i = 0;
    while (i < bytes.size()) {
        const Match m = match_at(bytes, i);
        if (m.complete) {
            out.append(bytes.substr(i, m.matched));
            i += m.matched;
        } else {
            // One U+FFFD per maximal invalid subsequence (Unicode's recommended practice).
            out += "\xEF\xBF\xBD";
            i += m.matched == 0 ? 1 : m.matched;
        }
    }
    return out;
}

}  // namespace wsindex::ipc
