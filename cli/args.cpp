// Option value parsers for wsctl: byte counts, size bounds, times, type letters, absolute paths.
#include "cli/args.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>

namespace wsindex::cli {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Leading decimal digits of `text` as an integer; advances `pos`. False on overflow or no digit.
bool take_uint(std::string_view text, std::size_t& pos, std::uint64_t& out) {
    const std::size_t start = pos;
    std::uint64_t value = 0;
    while (pos < text.size() && is_digit(text[pos])) {
        const auto digit = static_cast<std::uint64_t>(text[pos] - '0');
        if (__builtin_mul_overflow(value, std::uint64_t{10}, &value) ||
            __builtin_add_overflow(value, digit, &value)) {
            return false;
        }
        ++pos;
    }
    out = value;
    return pos > start;
}

// Exactly `count` digits at `pos` as an int.
bool take_fixed(std::string_view text, std::size_t& pos, std::size_t count, int& out) {
    if (pos + count > text.size()) return false;
    int value = 0;
    for (std::size_t i = 0; i < count; ++i) {
        if (!is_digit(text[pos + i])) return false;
        value = value * 10 + (text[pos + i] - '0');
    }
    pos += count;
    out = value;
    return true;
}

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

constexpr std::int64_t kNsPerSecond = 1'000'000'000;

std::optional<std::int64_t> parse_relative(std::string_view text, std::int64_t now_ns) {
    std::size_t pos = 0;
    std::uint64_t whole = 0;
    if (!take_uint(text, pos, whole)) return std::nullopt;
    long double value = static_cast<long double>(whole);
    if (pos < text.size() && text[pos] == '.') {
        ++pos;
        long double scale = 0.1L;
        const std::size_t start = pos;
        while (pos < text.size() && is_digit(text[pos])) {
            value += scale * (text[pos] - '0');
            scale /= 10;
            ++pos;
        }
        if (pos == start) return std::nullopt;
    }
    const std::string_view unit = text.substr(pos);
    long double seconds_per_unit = 0;
    if (unit == "s" || unit == "sec")
        seconds_per_unit = 1;
    else if (unit == "m" || unit == "min")
        seconds_per_unit = 60;
    else if (unit == "h")
        seconds_per_unit = 3600;
    else if (unit == "d")
        seconds_per_unit = 86400;
    else if (unit == "w")
        seconds_per_unit = 7 * 86400;
    else
        return std::nullopt;
    const long double ago_ns = value * seconds_per_unit * kNsPerSecond;
    if (ago_ns > static_cast<long double>(now_ns) + 1e18L) return std::nullopt;  // absurd
    return now_ns - static_cast<std::int64_t>(std::llround(ago_ns));
}

// "YYYY-MM-DD[(T| )HH:MM[:SS]][Z|(+|-)HH[:]MM]".
std::optional<std::int64_t> parse_iso(std::string_view text) {
    std::size_t pos = 0;
    std::tm tm{};
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (!take_fixed(text, pos, 4, year) || pos >= text.size() || text[pos++] != '-' ||
        !take_fixed(text, pos, 2, month) || pos >= text.size() || text[pos++] != '-' ||
        !take_fixed(text, pos, 2, day)) {
        return std::nullopt;
    }
    if (pos < text.size() && (text[pos] == 'T' || text[pos] == ' ')) {
        ++pos;
        if (!take_fixed(text, pos, 2, hour) || pos >= text.size() || text[pos++] != ':' ||
            !take_fixed(text, pos, 2, minute)) {
            return std::nullopt;
        }
        if (pos < text.size() && text[pos] == ':') {
            ++pos;
            if (!take_fixed(text, pos, 2, second)) return std::nullopt;
        }
    }
    bool utc = false;
    long offset_seconds = 0;
    if (pos < text.size()) {
        if (text[pos] == 'Z' && pos + 1 == text.size()) {
            utc = true;
            ++pos;
        } else if (text[pos] == '+' || text[pos] == '-') {
            const int sign = text[pos] == '-' ? -1 : 1;
            ++pos;
            int oh = 0, om = 0;
            if (!take_fixed(text, pos, 2, oh)) return std::nullopt;
            if (pos < text.size() && text[pos] == ':') ++pos;
            if (!take_fixed(text, pos, 2, om) || oh > 23 || om > 59) return std::nullopt;
            utc = true;
            offset_seconds = sign * (oh * 3600L + om * 60L);
        }
    }
    if (pos != text.size()) return std::nullopt;
    static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month < 1 || month > 12 || day < 1 || day > kDays[month - 1] || hour > 23 || minute > 59 ||
        second > 60) {
        return std::nullopt;
    }
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    tm.tm_isdst = -1;
    const std::time_t seconds = utc ? ::timegm(&tm) - offset_seconds : std::mktime(&tm);
    if (tm.tm_mday != day) return std::nullopt;  // 2023-02-29 normalised to March: reject
    return static_cast<std::int64_t>(seconds) * kNsPerSecond;
}

}  // namespace

std::optional<std::uint64_t> parse_byte_count(std::string_view text, std::string& error) {
    std::size_t pos = 0;
    std::uint64_t whole = 0;
    if (!take_uint(text, pos, whole)) {
        error = "invalid size " + quoted(text) + " (expected a number like 512, 4k, 1.5M, 2G)";
        return std::nullopt;
    }
    std::uint64_t frac_num = 0;
    std::uint64_t frac_den = 1;
    if (pos < text.size() && text[pos] == '.') {
        ++pos;
        const std::size_t start = pos;
        while (pos < text.size() && is_digit(text[pos])) {
            if (frac_den < 1'000'000'000) {  // nine digits are finer than a byte of a TiB
                frac_num = frac_num * 10 + static_cast<std::uint64_t>(text[pos] - '0');
                frac_den *= 10;
            }
            ++pos;
        }
        if (pos == start) {
            error = "invalid size " + quoted(text);
            return std::nullopt;
        }
    }
    std::string_view suffix = text.substr(pos);
    std::uint64_t multiplier = 1;
    if (!suffix.empty()) {
        switch (suffix[0]) {
            case 'k':
            case 'K':
                multiplier = std::uint64_t{1} << 10;
                break;
            case 'm':
            case 'M':
                multiplier = std::uint64_t{1} << 20;
                break;
            case 'g':
            case 'G':
                multiplier = std::uint64_t{1} << 30;
                break;
            case 't':
            case 'T':
                multiplier = std::uint64_t{1} << 40;
                break;
            case 'b':
            case 'B':
            case 'c':
                multiplier = 1;
                break;
            default:
                error = "invalid size suffix in " + quoted(text) + " (use k, M, G or T)";
                return std::nullopt;
        }
        std::string_view rest = suffix.substr(1);
        const bool bytes_letter = suffix[0] == 'b' || suffix[0] == 'B' || suffix[0] == 'c';
        if (!(rest.empty() || (!bytes_letter && (rest == "B" || rest == "iB" || rest == "b")))) {
            error = "invalid size suffix in " + quoted(text) + " (use k, M, G or T)";
            return std::nullopt;
        }
    }
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(whole, multiplier, &bytes)) {
        error = "size " + quoted(text) + " is too large";
        return std::nullopt;
    }
    if (frac_num != 0) {
        const long double part =
            static_cast<long double>(frac_num) * multiplier / static_cast<long double>(frac_den);
        if (multiplier == 1) {
            error = "size " + quoted(text) + " is not a whole number of bytes";
            return std::nullopt;
        }
        if (__builtin_add_overflow(bytes, static_cast<std::uint64_t>(std::llround(part)), &bytes)) {
            error = "size " + quoted(text) + " is too large";
            return std::nullopt;
        }
    }
    return bytes;
}

bool add_size_bound(std::string_view text, SizeRange& range, std::string& error) {
    char sign = 0;
    if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
        sign = text[0];
        text.remove_prefix(1);
    }
    const auto bytes = parse_byte_count(text, error);
    if (!bytes) return false;
    const auto raise_min = [&](std::uint64_t v) {
        range.min = range.min ? std::max(*range.min, v) : v;
    };
    const auto lower_max = [&](std::uint64_t v) {
        range.max = range.max ? std::min(*range.max, v) : v;
    };
    if (sign == '+') {
        if (*bytes == UINT64_MAX) {
            error = "no size is larger than " + std::to_string(*bytes);
            return false;
        }
        raise_min(*bytes + 1);
    } else if (sign == '-') {
        if (*bytes == 0) {
            error = "no size is smaller than 0 (--size -0)";
            return false;
        }
        lower_max(*bytes - 1);
    } else {
        raise_min(*bytes);
        lower_max(*bytes);
    }
    if (range.min && range.max && *range.min > *range.max) {
        error = "the --size bounds exclude every size (at least " + std::to_string(*range.min) +
                " and at most " + std::to_string(*range.max) + " bytes)";
        return false;
    }
    return true;
}

std::optional<std::int64_t> parse_time(std::string_view text, std::int64_t now_ns,
                                       std::string& error) {
    std::optional<std::int64_t> out;
    if (!text.empty() && text[0] == '@') {
        std::string_view digits = text.substr(1);
        const bool negative = !digits.empty() && digits[0] == '-';
        if (negative) digits.remove_prefix(1);
        std::size_t pos = 0;
        std::uint64_t seconds = 0;
        if (take_uint(digits, pos, seconds) && pos == digits.size() &&
            seconds < static_cast<std::uint64_t>(INT64_MAX / kNsPerSecond)) {
            const auto ns = static_cast<std::int64_t>(seconds) * kNsPerSecond;
            out = negative ? -ns : ns;
        }
    } else if (text.size() >= 10 && text[4] == '-') {
        out = parse_iso(text);
    } else {
        out = parse_relative(text, now_ns);
    }
    if (!out) {
        error = "invalid time " + quoted(text) +
                " (expected 2024-05-01, 2024-05-01T12:30[:45][Z|+02:00], @EPOCH or an age like "
                "90s, 30m, 12h, 2d, 1w)";
    }
    return out;
}

std::optional<std::string> parse_types(std::string_view text, std::string& error) {
    static constexpr std::string_view kLetters = "fdlpscb";
    std::string out;
    for (const char c : text) {
        if (c == ',') continue;
        if (kLetters.find(c) == std::string_view::npos) {
            error = "invalid type '" + std::string(1, c) +
                    "' in --type (use f file, d directory, l symlink, p fifo, s socket, "
                    "c char device, b block device)";
            return std::nullopt;
        }
        if (out.find(c) == std::string::npos) out.push_back(c);
    }
    if (out.empty()) {
        error = "--type needs at least one of f d l p s c b";
        return std::nullopt;
    }
    return out;
}

std::string current_directory(std::string& error) {
    std::vector<char> buf(4096);
    for (;;) {
        if (::getcwd(buf.data(), buf.size()) != nullptr) return std::string(buf.data());
        if (errno != ERANGE || buf.size() > (1u << 20)) {
            error = std::string("cannot read the current directory: ") + std::strerror(errno);
            return {};
        }
        buf.resize(buf.size() * 2);
    }
}

std::vector<std::string> join_option_values(const std::vector<std::string>& args,
                                            const std::vector<std::string_view>& options) {
    std::vector<std::string> out;
    out.reserve(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--") {  // everything after is positional
            out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
            break;
        }
        bool joined = false;
        if (i > 0 && i + 1 < args.size()) {
            for (const auto name : options) {
                if (args[i] == name) {
                    out.push_back(args[i] + "=" + args[i + 1]);
                    ++i;
                    joined = true;
                    break;
                }
            }
        }
        if (!joined) out.push_back(args[i]);
    }
    return out;
}

}  // namespace wsindex::cli
