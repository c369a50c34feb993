// Row-for-row comparison of two index databases below one root (the `files` and `dir_totals`
// views, every column, read through read-only SQLite connections), and of two `find -0`
// answers, with a readable account of the differences for failure messages.
#pragma once

#include <cstddef>
#include <string>

namespace wsindex::cli::test {

struct IndexComparison {
    bool equal = false;
    std::size_t files_a = 0;  // rows of `files` at or below the root in each database
    std::size_t files_b = 0;
    std::size_t dirs_a = 0;  // rows of `dir_totals` at or below the root
    std::size_t dirs_b = 0;
    // Empty when equal; otherwise, per view, the first differing rows: "only in A", "only in B"
    // and "differs" (both rows, the differing columns named). Also any error reading either.
    std::string report;
};

// Compares `db_a` and `db_b` (paths of index databases, possibly in use by a running daemon)
// at and below `root` (absolute, no trailing slash), each database in one read transaction.
// `totals_root`, when given, widens the comparison of `dir_totals` to that directory (an
// ancestor of `root`). At most `max_shown` rows of each kind of difference are described per
// view.
IndexComparison compare_indexes(const std::string& db_a, const std::string& db_b,
                                const std::string& root, const std::string& totals_root = {},
                                std::size_t max_shown = 15);

// Compares two `wsctl find -0` outputs as lists of NUL-terminated paths in any order (find
// answers in index order, which is directory-id order: an incrementally updated index and a
// fresh one order the same paths differently); a path listed twice counts twice. "" when
// equal, else the paths only in one of them (at most `max_shown` each) and framing errors.
std::string compare_find_outputs(const std::string& a, const std::string& b,
                                 std::size_t max_shown = 15);

}  // namespace wsindex::cli::test
