// The browser's model: one directory's entries as the index lists them, their order, and the
// cursor. No curses and no daemon here, so that sorting and cursor rules are unit-testable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ipc/methods.hpp"

namespace wsindex::cli::ui {

// One row: a directory with its recursive totals, or anything else with its own size.
struct Entry {
    std::string name;                      // bytes, the last component
    std::string path;                      // bytes, absolute
    char type = '?';                       // find's %y letter; 'd' for directories
    std::uint64_t size = 0;                // apparent, recursive for directories
    std::uint64_t disk = 0;                // allocated, recursive for directories
    std::uint64_t files = 0;               // directories: non-directories below
    std::uint64_t dirs = 0;                // directories: directories below
    bool partial = false;                  // some content below is hidden from this user
    std::optional<ipc::DuEntryStat> stat;  // the entry's own index columns, when sent

    [[nodiscard]] bool is_dir() const { return type == 'd'; }
    // ncdu's item count: everything below a directory; 0 for anything else.
    [[nodiscard]] std::uint64_t items() const { return is_dir() ? files + dirs : 0; }
    [[nodiscard]] std::uint64_t bytes(bool apparent) const { return apparent ? size : disk; }
    [[nodiscard]] std::int64_t mtime_ns() const { return stat ? stat->mtime_ns : 0; }
    [[nodiscard]] int error() const { return stat ? stat->error : 0; }
};

enum class SortKey { Size, Name, Count, Mtime };

struct SortOrder {
    SortKey key = SortKey::Size;
    bool descending = true;   // Size, Count, Mtime: largest/newest first; Name: Z..A
    bool dirs_first = false;  // false: directories and files mixed
    bool apparent = true;     // sizes: apparent (st_size) or on disk (st_blocks)
};

// ncdu's keys: the same key again reverses the order; another key starts with its natural
// direction (largest, most or newest first; names A..Z).
void choose_sort_key(SortOrder& order, SortKey key);

// Sorts by `order`; ties by name, so that the order is total and stable across refreshes.
void sort_entries(std::vector<Entry>& entries, const SortOrder& order);

// One directory as shown: its own totals, its entries in the current order, the cursor and the
// first row on screen.
struct Listing {
    Entry self;
    std::vector<Entry> entries;
    std::size_t cursor = 0;
    std::size_t top = 0;  // index of the first row shown

    [[nodiscard]] const Entry* current() const {
        return cursor < entries.size() ? &entries[cursor] : nullptr;
    }
    // Moves the cursor by `delta` rows, clamped to the list.
    void move(std::ptrdiff_t delta);
    void move_to(std::size_t index);
    // The cursor on the entry named `name`; false (cursor unchanged) when there is none.
    bool select(const std::string& name);
    // Keeps the cursor within rows [top, top + rows).
    void scroll_to_cursor(std::size_t rows);
};

// The Du reply (DuParams::children) of `path` as a listing, in `order`, cursor on row 0.
// Rows other than the path and its depth-1 entries are ignored.
Listing listing_from_du(const std::string& path, const ipc::DuReply& reply, const SortOrder& order);

// The last component of a path ("/" stays "/").
std::string base_name(const std::string& path);
// The parent of an absolute path ("/a" -> "/", "/" -> "/").
std::string parent_path(const std::string& path);

}  // namespace wsindex::cli::ui
