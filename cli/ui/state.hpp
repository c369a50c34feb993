// Everything the browser shows: the listing, the display options, the screen on top, the
// search results and the status line. Changed by browser.cpp, drawn by view.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cli/ui/input.hpp"
#include "cli/ui/model.hpp"
#include "ipc/methods.hpp"

namespace wsindex::cli::ui {

// `g` cycles through these, as ncdu does.
enum class GraphMode { Both, Graph, Percent, None };

struct SearchResults {
    std::string pattern;
    std::string under;
    std::vector<ipc::FindEntry> entries;
    bool truncated = false;
    std::size_t cursor = 0;
    std::size_t top = 0;
};

struct Details {
    Entry entry;
    std::vector<ipc::ErrorEntry> errors;  // at the entry or below it
    std::string errors_problem;           // why the errors could not be read; else empty
};

struct BrowserState {
    Listing listing;
    SortOrder order;
    GraphMode graph = GraphMode::Both;
    bool show_mtime = false;
    bool exact_bytes = false;  // -b: sizes in bytes instead of KiB/MiB
    bool utf8 = true;          // the terminal's character set is UTF-8
    Screen screen = Screen::List;
    SearchResults results;
    Details details;
    // A running scan, for the status line; else empty. Raw bytes (a root's name), escaped
    // when drawn, like `message`.
    std::string progress;
    std::string message;  // the last problem or note, until the next key
};

// Rows of the list area on a screen of `lines` lines (a header line and a status line).
inline std::size_t list_rows(int lines) {
    return lines > 3 ? static_cast<std::size_t>(lines - 2) : 1;
}

}  // namespace wsindex::cli::ui
