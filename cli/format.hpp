// Human output: sizes in binary units, counts with separators, durations, local times, paths
// made safe for a terminal, and tables with aligned columns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wsindex::cli {

// "0 B", "999 B", "1.0 KiB", "15.3 MiB", "2.0 GiB" (binary units, one decimal above bytes).
std::string format_bytes(std::uint64_t bytes);

// "1,234,567".
std::string format_count(std::uint64_t count);

// "0.4 s", "12.3 s", "4m 05s", "2h 03m", "3d 04h".
std::string format_duration_ms(std::uint64_t ms);

// Local time "2024-05-01 12:34:56"; "-" for 0 (never happened).
std::string format_time_ns(std::int64_t ns);

// A path (any bytes) shown on a terminal: valid UTF-8 stays, control characters become \n, \t,
// \\ or \xHH, and each byte of an invalid UTF-8 sequence becomes \xHH. Lossy for machines: use
// find -0 or --json there.
std::string printable(std::string_view bytes);

// Columns separated by two spaces; numbers right-aligned, text left-aligned; the last column
// is never padded (it is usually a path). Widths count UTF-8 code points. Every cell is shown
// through printable(): callers pass raw text (names as the index holds them), never escaped.
class Table {
  public:
    enum class Align { Left, Right };
    struct Column {
        std::string header;
        Align align = Align::Left;
    };

    explicit Table(std::vector<Column> columns);
    // Precondition: cells.size() == number of columns.
    void add_row(std::vector<std::string> cells);
    [[nodiscard]] bool empty() const { return rows_.empty(); }
    // The header line, then one line per row, each ending in '\n'.
    [[nodiscard]] std::string render(bool with_header = true) const;

  private:
    std::vector<Column> columns_;
    std::vector<std::vector<std::string>> rows_;
};

// Number of UTF-8 code points (what a terminal shows for the text we print).
std::size_t display_width(std::string_view text);

}  // namespace wsindex::cli
