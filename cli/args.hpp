// Parsing of wsctl's option values: sizes (+N/-N with k/M/G/T), times (ISO or relative), type
// letters, and paths made absolute without resolving symlinks. Pure functions, unit-tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wsindex::cli {

// A byte count with an optional binary suffix: "512", "4k", "1.5M", "2G", "1T" (k and K are
// both KiB; M/m MiB; G/g GiB; T/t TiB; an optional trailing "B" or "iB" is accepted). nullopt
// and `error` set on anything else or on overflow.
std::optional<std::uint64_t> parse_byte_count(std::string_view text, std::string& error);

// Inclusive byte bounds for find --size, accumulated over several --size options.
struct SizeRange {
    std::optional<std::uint64_t> min;
    std::optional<std::uint64_t> max;
};

// Adds one --size value to `range`: "+N" means larger than N, "-N" smaller than N, "N" exactly
// N bytes (after the suffix). Unlike find(1) nothing is rounded up to whole units. False and
// `error` set on a bad value or when the bounds exclude every size.
bool add_size_bound(std::string_view text, SizeRange& range, std::string& error);

// A point in time for find --newer, in nanoseconds since the Unix epoch:
//   relative  "90s", "30m", "12h", "2d", "1w" (before now; decimals allowed: "1.5h")
//   ISO 8601  "2024-05-01", "2024-05-01T12:30", "2024-05-01 12:30:45" in local time, or with a
//             trailing "Z" or "+02:00"/"-0500" offset
//   epoch     "@1714563045" (seconds)
std::optional<std::int64_t> parse_time(std::string_view text, std::int64_t now_ns,
                                       std::string& error);

// find --type: find's %y letters "fdlpscb", given as "f", "fd" or "f,d"; duplicates dropped.
std::optional<std::string> parse_types(std::string_view text, std::string& error);

// The process's working directory; empty with `error` set if it cannot be read.
std::string current_directory(std::string& error);

// Rewrites "--size -10M" as "--size=-10M" for each option named in `options`, so that values
// starting with '-' are not taken for options by the parser. argv[0] is kept.
std::vector<std::string> join_option_values(const std::vector<std::string>& args,
                                            const std::vector<std::string_view>& options);

}  // namespace wsindex::cli
