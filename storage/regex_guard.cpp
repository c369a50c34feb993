// regex_refusal: a single pass over the ERE that sums the size of what regcomp will expand.
//
// The estimate follows the grammar only as far as sizes need: an atom (a character, an escape,
// a bracket expression) counts 1; a group counts the sum of its contents; a bound {m,n} (or
// {m,} or +) turns the preceding atom or group of size s into s * max(m, n) (+1 for an open
// bound). Alternation adds both sides. Anything this pass does not understand counts as a
// literal character, which can only make the estimate larger than the real expansion never
// smaller: regcomp itself rejects what is malformed.
#include "storage/regex_guard.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace wsindex::storage {
namespace {

constexpr std::uint64_t kCap = kMaxRegexExpansion + 1;  // sizes saturate here: no overflow

std::uint64_t add(std::uint64_t a, std::uint64_t b) { return std::min(a + b, kCap); }
std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
    if (a == 0 || b == 0) return 0;
    return a > kCap / b ? kCap : std::min(a * b, kCap);
}

bool digit(char c) { return c >= '0' && c <= '9'; }

// Parses "{m}", "{m,}", "{m,n}" at p[i] (p[i] == '{'). Returns the copies it makes of the
// preceding atom (an open bound counts one more than m) and sets `end` past the '}'; nullopt
// when it is not a bound (then '{' is taken literally, as glibc does in an ERE).
std::optional<std::uint64_t> bound_at(std::string_view p, std::size_t i, std::size_t& end) {
    std::size_t j = i + 1;
    const auto number = [&](std::uint64_t& out) {
        const std::size_t start = j;
        out = 0;
        while (j < p.size() && digit(p[j])) {
            out = std::min<std::uint64_t>(out * 10 + static_cast<std::uint64_t>(p[j] - '0'), kCap);
            ++j;
        }
        return j > start;
    };
    std::uint64_t m = 0;
    std::uint64_t n = 0;
    if (!number(m)) return std::nullopt;
    std::uint64_t copies = m;
    if (j < p.size() && p[j] == ',') {
        ++j;
        copies = number(n) ? std::max(m, n) : add(m, 1);
    }
    if (j >= p.size() || p[j] != '}') return std::nullopt;
    end = j + 1;
    return std::max<std::uint64_t>(copies, 1);
}

// The index just past the bracket expression that starts at p[i] (p[i] == '['), or p.size()
// when it is not closed.
std::size_t bracket_end(std::string_view p, std::size_t i) {
    std::size_t j = i + 1;
    if (j < p.size() && p[j] == '^') ++j;
    if (j < p.size() && p[j] == ']') ++j;  // a leading ']' is a member
    while (j < p.size() && p[j] != ']') {
        // [:alpha:], [.x.], [=e=]: skip to their own closing pair.
        if (p[j] == '[' && j + 1 < p.size() &&
            (p[j + 1] == ':' || p[j + 1] == '.' || p[j + 1] == '=')) {
            const char kind = p[j + 1];
            std::size_t k = j + 2;
            while (k + 1 < p.size() && !(p[k] == kind && p[k + 1] == ']')) ++k;
            j = k + 2;
            continue;
        }
        ++j;
    }
    return std::min(j + 1, p.size());
}

struct Group {
    std::uint64_t size = 0;  // expanded atoms so far in this group
    std::uint64_t last = 0;  // size of the last atom or group, what a bound repeats
};

}  // namespace

std::optional<std::string> regex_refusal(std::string_view p) {
    if (p.size() > kMaxRegexBytes) {
        return "is longer than " + std::to_string(kMaxRegexBytes) + " bytes";
    }
    std::vector<Group> open;  // enclosing groups
    Group cur;
    const auto atom = [&](std::uint64_t size) {
        cur.size = add(cur.size, size);
        cur.last = size;
    };
    std::size_t i = 0;
    while (i < p.size()) {
        const char c = p[i];
        if (c == '\\') {
            if (i + 1 < p.size() && p[i + 1] >= '1' && p[i + 1] <= '9') {
                return std::string("has a back-reference (\\") + p[i + 1] +
                       "), which is not supported: it makes matching backtrack";
            }
            atom(1);
            i += 2;
        } else if (c == '[') {
            atom(1);
            i = bracket_end(p, i);
        } else if (c == '(') {
            open.push_back(cur);
            cur = Group{};
            ++i;
        } else if (c == ')' && !open.empty()) {
            const std::uint64_t inner = cur.size;
            cur = open.back();
            open.pop_back();
            atom(inner);
            ++i;
        } else if (c == '{') {
            std::size_t end = 0;
            if (const auto copies = bound_at(p, i, end)) {
                // s copies of the last atom instead of one; the result is what a further bound
                // repeats ("(a{10}){10}" is 100, and so is "a{10}{10}").
                const std::uint64_t repeated = mul(cur.last, *copies);
                cur.size = add(cur.size - std::min(cur.size, cur.last), repeated);
                cur.last = repeated;
                i = end;
            } else {
                atom(1);
                ++i;
            }
        } else if (c == '+') {
            // glibc expands x+ into xx*.
            cur.size = add(cur.size, cur.last);
            ++i;
        } else if (c == '*' || c == '?' || c == '^' || c == '$') {
            ++i;
        } else if (c == '|') {
            cur.last = 0;
            ++i;
        } else {
            atom(1);
            ++i;
        }
        if (cur.size >= kCap) break;
    }
    std::uint64_t total = cur.size;
    for (const Group& g : open) total = add(total, g.size);
    if (total > kMaxRegexExpansion) {
        return "expands its repetitions to more than " + std::to_string(kMaxRegexExpansion) +
               " atoms; use fewer or smaller {m,n} counts";
    }
    return std::nullopt;
}

}  // namespace wsindex::storage
