// The browser's drawing code (view.hpp). Every name goes through shown_name/fit_columns, so no
// byte of a file name reaches the terminal unescaped and every row is exactly as wide as the
// screen.
#include "cli/ui/view.hpp"

#include <curses.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/format.hpp"
#include "cli/ui/name_display.hpp"

namespace wsindex::cli::ui {

namespace {

std::size_t screen_width() { return static_cast<std::size_t>(std::max(COLS, 1)); }

// A line of `text` (already safe: escaped or our own ASCII) cut or padded to the screen width.
void put_line(int y, const ShownText& text, attr_t attributes = A_NORMAL) {
    if (attributes != A_NORMAL) attron(attributes);
    // The last column of the last line is left alone: writing it makes some terminals scroll.
    const std::size_t width = screen_width() - (y == LINES - 1 ? 1 : 0);
    mvaddstr(y, 0, fit_columns(text, width, true).c_str());
    if (attributes != A_NORMAL) attroff(attributes);
}

ShownText ascii(std::string text) {
    ShownText out;
    out.width = text.size();
    out.text = std::move(text);
    return out;
}

void append(ShownText& to, const ShownText& more) {
    to.text += more.text;
    to.width += more.width;
}

std::string pad_left(const std::string& text, std::size_t width) {
    return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

const char* sort_name(const SortOrder& order) {
    switch (order.key) {
        case SortKey::Size:
            return order.descending ? "size (largest first)" : "size (smallest first)";
        case SortKey::Name:
            return order.descending ? "name (Z-A)" : "name (A-Z)";
        case SortKey::Count:
            return order.descending ? "items (most first)" : "items (fewest first)";
        case SortKey::Mtime:
            return order.descending ? "mtime (newest first)" : "mtime (oldest first)";
    }
    return "";
}

// '!' the entry could not be read; '.' some content below is hidden from you; '@' neither a
// file nor a directory.
char flag_of(const Entry& e) {
    if (e.error() != 0) return '!';
    if (e.partial) return '.';
    if (!e.is_dir() && e.type != 'f') return '@';
    return ' ';
}

std::string size_column(const BrowserState& state, std::uint64_t bytes) {
    return pad_left(size_text(state, bytes), state.exact_bytes ? 14 : 10);
}

void draw_header(const BrowserState& state, const std::string& title_path) {
    ShownText line = ascii(" wsctl ui  ");
    append(line, shown_name(title_path, state.utf8));
    append(line,
           ascii(std::string("   ") + (state.order.apparent ? "apparent size" : "disk usage") +
                 ", by " + sort_name(state.order) + (state.order.dirs_first ? ", dirs first" : "") +
                 "   ? help"));
    put_line(0, line, A_REVERSE);
}

void draw_status(const BrowserState& state) {
    const Entry& self = state.listing.self;
    std::string text = " Total: " + size_text(state, self.bytes(state.order.apparent)) +
                       "  Items: " + format_count(self.files + self.dirs);
    if (self.partial) text += "  (partial: some content is hidden from you)";
    ShownText line = ascii(text);
    if (!state.progress.empty()) {
        append(line, ascii("  | "));
        append(line, shown_name(state.progress, state.utf8));
    }
    if (!state.message.empty()) {
        append(line, ascii("  | "));
        append(line, shown_name(state.message, state.utf8));
    }
    put_line(LINES - 1, line, A_REVERSE);
}

void draw_list(const BrowserState& state) {
    const Listing& listing = state.listing;
    const std::size_t rows = list_rows(LINES);
    const std::uint64_t total = listing.self.bytes(state.order.apparent);
    std::uint64_t largest = 0;
    for (const Entry& e : listing.entries)
        largest = std::max(largest, e.bytes(state.order.apparent));
    if (listing.entries.empty()) {
        put_line(
            1, ascii(listing.self.error() != 0 ? "  (could not be read)" : "  (empty directory)"));
        return;
    }
    for (std::size_t i = 0; i < rows && listing.top + i < listing.entries.size(); ++i) {
        const std::size_t index = listing.top + i;
        const Entry& e = listing.entries[index];
        const std::uint64_t bytes = e.bytes(state.order.apparent);
        std::string left(1, flag_of(e));
        left += size_column(state, bytes);
        if (state.graph == GraphMode::Both || state.graph == GraphMode::Graph) {
            const std::size_t filled =
                largest == 0 ? 0 : static_cast<std::size_t>((bytes * 10 + largest / 2) / largest);
            left += " [" + std::string(filled, '#') +
                    std::string(10 - std::min<std::size_t>(filled, 10), ' ') + "]";
        }
        if (state.graph == GraphMode::Both || state.graph == GraphMode::Percent) {
            char pct[16];
            const double share =
                total == 0 ? 0.0 : 100.0 * static_cast<double>(bytes) / static_cast<double>(total);
            std::snprintf(pct, sizeof pct, " %5.1f%%", share);
            left += pct;
        }
        left += " " + pad_left(e.is_dir() ? format_count(e.items()) : std::string(), 9);
        if (state.show_mtime) {
            left += "  " +
                    pad_left(e.stat && e.stat->has_stat ? format_time_ns(e.mtime_ns()) : "-", 19);
        }
        left += "  ";
        ShownText line = ascii(left);
        append(line, shown_name(e.name, state.utf8));
        if (e.is_dir()) append(line, ascii("/"));
        put_line(static_cast<int>(1 + i), line, index == listing.cursor ? A_REVERSE : A_NORMAL);
    }
}

void draw_results(const BrowserState& state) {
    const SearchResults& r = state.results;
    const std::size_t rows = list_rows(LINES);
    if (r.entries.empty()) {
        put_line(1, ascii("  no entry below here has a name holding that text"));
        return;
    }
    const std::string prefix = r.under == "/" ? r.under : r.under + "/";
    for (std::size_t i = 0; i < rows && r.top + i < r.entries.size(); ++i) {
        const std::size_t index = r.top + i;
        const ipc::FindEntry& e = r.entries[index];
        std::string left = " " + std::string(1, e.type) + " " + size_column(state, e.size) + "  ";
        ShownText line = ascii(left);
        const std::string shown =
            e.path.compare(0, prefix.size(), prefix) == 0 ? e.path.substr(prefix.size()) : e.path;
        append(line, shown_name(shown, state.utf8));
        put_line(static_cast<int>(1 + i), line, index == r.cursor ? A_REVERSE : A_NORMAL);
    }
}

const std::vector<std::string>& help_lines() {
    static const std::vector<std::string> lines = {
        "  Keys",
        "",
        "  up/k  down/j  PgUp/PgDn  Home/End   move",
        "  Enter/l/right                       open the directory",
        "  Backspace/h/left                    go up",
        "  s  n  C  M                          sort by size, name, items, mtime (again: reverse)",
        "  t                                   directories first / mixed",
        "  a                                   apparent size / disk usage",
        "  g                                   graph and percent, graph, percent, neither",
        "  m                                   show modification times",
        "  i                                   details of the entry (index columns, errors)",
        "  /                                   search names below this directory",
        "  r                                   rescan this directory",
        "  ?                                   this help",
        "  q                                   quit (in a search or details: back)",
        "",
        "  Flags:  !  could not be read   .  partial: some content is hidden from you",
        "          @  neither a file nor a directory",
        "",
        "  Sizes come from wsindexd's index and follow it live; press any key to go back.",
    };
    return lines;
}

void draw_help() {
    const auto& lines = help_lines();
    for (std::size_t i = 0; i < lines.size() && static_cast<int>(i) + 1 < LINES - 1; ++i) {
        put_line(static_cast<int>(i + 1), ascii(lines[i]));
    }
}

std::string mode_text(std::uint32_t mode) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
    return buf;
}

void draw_details(const BrowserState& state) {
    const Details& d = state.details;
    const Entry& e = d.entry;
    std::vector<ShownText> lines;
    const auto field = [&](const std::string& name, const std::string& value) {
        lines.push_back(ascii("  " + pad_left(name, 12) + "  " + value));
    };
    ShownText path = ascii("  " + pad_left("path", 12) + "  ");
    append(path, shown_name(e.path, state.utf8));
    lines.push_back(path);
    field("type", std::string(1, e.type));
    if (e.is_dir()) {
        field("total size", format_count(e.size) + " bytes (" + format_bytes(e.size) + ")");
        field("total disk", format_count(e.disk) + " bytes (" + format_bytes(e.disk) + ")");
        field("files below", format_count(e.files));
        field("dirs below", format_count(e.dirs));
        field("partial", e.partial ? "yes: some content is hidden from you" : "no");
    }
    if (e.stat && e.stat->has_stat) {
        const ipc::DuEntryStat& s = *e.stat;
        field("size", format_count(s.size) + " bytes");
        field("blocks", format_count(s.blocks) + " (" + format_bytes(s.blocks * 512) + ")");
        field("mtime", format_time_ns(s.mtime_ns));
        field("ctime", format_time_ns(s.ctime_ns));
        field("mode", mode_text(s.mode));
        field("uid", std::to_string(s.uid));
        field("gid", std::to_string(s.gid));
        field("dev", std::to_string(s.dev));
        field("ino", std::to_string(s.ino));
        field("nlink", std::to_string(s.nlink));
    } else if (e.stat) {
        field("metadata", "unknown (lstat failed)");
    } else {
        field("metadata", "not sent by this wsindexd (older version)");
    }
    if (e.error() != 0) field("errno", std::to_string(e.error()));
    lines.push_back(ascii(""));
    if (!d.errors_problem.empty()) {
        lines.push_back(ascii("  errors: " + d.errors_problem));
    } else if (d.errors.empty()) {
        lines.push_back(ascii("  no scan errors at or below it"));
    } else {
        lines.push_back(ascii("  scan errors at or below it:"));
        for (const ipc::ErrorEntry& err : d.errors) {
            ShownText line = ascii("    " + err.error_name + "  ");
            append(line, shown_name(err.path, state.utf8));
            lines.push_back(line);
        }
    }
    lines.push_back(ascii(""));
    lines.push_back(ascii("  press any key to go back"));
    for (std::size_t i = 0; i < lines.size() && static_cast<int>(i) + 1 < LINES - 1; ++i) {
        put_line(static_cast<int>(i + 1), lines[i]);
    }
}

}  // namespace

std::string size_text(const BrowserState& state, std::uint64_t bytes) {
    return state.exact_bytes ? std::to_string(bytes) : format_bytes(bytes);
}

void draw(const BrowserState& state) {
    erase();
    switch (state.screen) {
        case Screen::List:
            draw_header(state, state.listing.self.path);
            draw_list(state);
            break;
        case Screen::Results:
            draw_header(state, "search \"" + state.results.pattern + "\" below " +
                                   state.results.under + " (" +
                                   format_count(state.results.entries.size()) +
                                   (state.results.truncated ? ", cut" : "") + ")");
            draw_results(state);
            break;
        case Screen::Help:
            draw_header(state, state.listing.self.path);
            draw_help();
            break;
        case Screen::Details:
            draw_header(state, "details");
            draw_details(state);
            break;
    }
    draw_status(state);
    refresh();
}

}  // namespace wsindex::cli::ui
