// Generated directory trees for the end-to-end tests, and the reference tools (find -print0,
// du -sb) their answers are compared with.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace wsindex::cli::test {

// A tree of awkward names and sizes below `root` (created): newlines, invalid UTF-8, 255-byte
// names, spaces, leading dashes, glob characters, a sparse file, hard links (counted once by
// du), symlinks (dangling too), a fifo, an empty directory, and a chain of directories whose
// path is longer than PATH_MAX (made fd-relative with mkdirat). Fails the test on any error.
void make_odd_tree(const std::string& root);

// A plain tree of about `entries` entries below `root` (created): 2-level directories of empty
// and small files. Fast enough for 200k entries on a shared machine.
void make_big_tree(const std::string& root, std::size_t entries);

// A tree below `root` (created) with `count` directories that an unprivileged walker cannot
// read (mode 000, each holding a file and a subdirectory), plus readable ones around them.
// Returns the absolute paths of the unreadable directories.
std::vector<std::string> make_locked_tree(const std::string& root, int count);

// NUL-separated records as a set (the trailing empty record dropped).
std::set<std::string> split_nul(const std::string& text);

// `find ROOT -print0` as a set of paths; without ROOT itself when !with_root (what
// `wsctl find --under ROOT` answers: entries strictly below it).
std::set<std::string> find_print0(const std::string& root, const std::string& scratch,
                                  bool with_root = true);

// The number `du -sb PATH` prints (apparent bytes, directories included, hard links once).
std::uint64_t du_sb(const std::string& path, const std::string& scratch);

}  // namespace wsindex::cli::test
