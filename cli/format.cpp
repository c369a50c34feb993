// Units, counts, durations, times, terminal-safe paths and aligned tables for wsctl's human output.
#include "cli/format.hpp"

#include <cassert>
#include <cstdio>
#include <ctime>

#include "ipc/utf8.hpp"

namespace wsindex::cli {

std::string format_bytes(std::uint64_t bytes) {
    static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) return std::to_string(bytes) + " B";
    long double value = static_cast<long double>(bytes) / 1024;
    std::size_t unit = 0;
    // Switch units at 1023.95 so that rounding never prints "1024.0 KiB".
    while (value >= 1023.95L && unit + 1 < std::size(kUnits)) {
        value /= 1024;
        ++unit;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1Lf %s", value, kUnits[unit]);
    return buf;
}

std::string format_count(std::uint64_t count) {
    std::string digits = std::to_string(count);
    std::string out;
    out.reserve(digits.size() + digits.size() / 3);
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
        out.push_back(digits[i]);
    }
    return out;
}

std::string format_duration_ms(std::uint64_t ms) {
    char buf[48];
    const std::uint64_t s = ms / 1000;
    if (s < 60) {
        std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000.0);
    } else if (s < 3600) {
        std::snprintf(buf, sizeof buf, "%llum %02llus", static_cast<unsigned long long>(s / 60),
                      static_cast<unsigned long long>(s % 60));
    } else if (s < 86400) {
        std::snprintf(buf, sizeof buf, "%lluh %02llum", static_cast<unsigned long long>(s / 3600),
                      static_cast<unsigned long long>(s % 3600 / 60));
    } else {
        std::snprintf(buf, sizeof buf, "%llud %02lluh", static_cast<unsigned long long>(s / 86400),
                      static_cast<unsigned long long>(s % 86400 / 3600));
    }
    return buf;
}

std::string format_time_ns(std::int64_t ns) {
    if (ns == 0) return "-";
    const std::time_t seconds = static_cast<std::time_t>(ns / 1'000'000'000);
    std::tm tm{};
    if (::localtime_r(&seconds, &tm) == nullptr) return std::to_string(seconds);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

namespace {

// Length of the well-formed UTF-8 sequence at the start of `s`, 0 if it is not one.
std::size_t utf8_sequence_length(std::string_view s) {
    const auto lead = static_cast<unsigned char>(s[0]);
    std::size_t len = 0;
    if (lead >= 0xC2 && lead <= 0xDF)
        len = 2;
    else if (lead >= 0xE0 && lead <= 0xEF)
        len = 3;
    else if (lead >= 0xF0 && lead <= 0xF4)
        len = 4;
    else
        return 0;
    if (s.size() < len) return 0;
    return ipc::is_valid_utf8(s.substr(0, len)) ? len : 0;
}

}  // namespace

std::string printable(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    std::size_t i = 0;
    while (i < bytes.size()) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        if (c >= 0x20 && c < 0x7F) {
            if (c == '\\')
                out += "\\\\";
            else
                out.push_back(static_cast<char>(c));
            ++i;
            continue;
        }
        if (c >= 0x80) {
            const std::size_t len = utf8_sequence_length(bytes.substr(i));
            if (len > 0) {
                out.append(bytes.substr(i, len));
                i += len;
                continue;
            }
        }
        switch (c) {
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\r':
                out += "\\r";
                break;
            default: {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\x%02X", c);
                out += buf;
            }
        }
        ++i;
    }
    return out;
}

std::size_t display_width(std::string_view text) {
    std::size_t width = 0;
    for (const char c : text) {
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++width;
    }
    return width;
}

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::add_row(std::vector<std::string> cells) {
    assert(cells.size() == columns_.size());
    cells.resize(columns_.size());
    // Escaped here, once, for every table: a newline in a name cannot break a row, to a
    // terminal or to a pipe.
    for (std::string& cell : cells) cell = printable(cell);
    rows_.push_back(std::move(cells));
}

std::string Table::render(bool with_header) const {
    std::vector<std::size_t> widths(columns_.size(), 0);
    for (std::size_t c = 0; c < columns_.size(); ++c) {
        if (with_header) widths[c] = display_width(columns_[c].header);
        for (const auto& row : rows_) widths[c] = std::max(widths[c], display_width(row[c]));
    }
    std::string out;
    const auto emit = [&](const std::vector<std::string>& cells) {
        std::string line;
        for (std::size_t c = 0; c < cells.size(); ++c) {
            const bool last = c + 1 == cells.size();
            const std::size_t pad = widths[c] - display_width(cells[c]);
            if (c > 0) line += "  ";
            if (columns_[c].align == Align::Right) line.append(pad, ' ');
            line += cells[c];
            if (columns_[c].align == Align::Left && !last) line.append(pad, ' ');
        }
        out += line;
        out.push_back('\n');
    };
    if (with_header) {
        std::vector<std::string> header;
        header.reserve(columns_.size());
        for (const auto& column : columns_) header.push_back(column.header);
        emit(header);
    }
    for (const auto& row : rows_) emit(row);
    return out;
}

}  // namespace wsindex::cli
