// The browser's loop and what each action does (browser.hpp).
#include "cli/ui/browser.hpp"

#include <curses.h>

#include <chrono>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "cli/args.hpp"
#include "cli/exit_codes.hpp"
#include "cli/format.hpp"
#include "cli/ui/index_source.hpp"
#include "cli/ui/name_display.hpp"
#include "cli/ui/terminal.hpp"
#include "cli/ui/view.hpp"
#include "ipc/path_text.hpp"

namespace wsindex::cli::ui {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPollKeysMs = 200;
constexpr auto kPollIndex = std::chrono::seconds(1);
constexpr std::uint64_t kSearchLimit = 10000;
constexpr std::size_t kDetailErrors = 20;

// WSINDEX_UI_TIMING=FILE: one line per drawn screen, "<what> <milliseconds>", from the key (or
// the start) to the screen refreshed. For bench/ui_latency.sh.
class DrawTimer {
  public:
    DrawTimer() {
        if (const char* path = std::getenv("WSINDEX_UI_TIMING"); path != nullptr && *path) {
            file_.reset(std::fopen(path, "a"));
        }
    }
    void log(const char* what, Clock::time_point since) {
        if (!file_) return;
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - since).count();
        std::fprintf(file_.get(), "%s %.3f\n", what, ms);
        std::fflush(file_.get());
    }

  private:
    struct Closer {
        void operator()(std::FILE* f) const { std::fclose(f); }
    };
    std::unique_ptr<std::FILE, Closer> file_;
};

class Browser {
  public:
    Browser(const Context& ctx, const UiOptions& options) : source_(ctx) {
        state_.exact_bytes = options.bytes;
    }

    // Finds the directory to open (before curses starts, so that errors print plainly).
    std::optional<ipc::Error> open_first(const std::string& path);
    int loop(DrawTimer& timer, Clock::time_point started);

  private:
    bool open(const std::string& path, const std::string& select);
    void reload();
    void poll_index();
    void act(Action action);
    void enter();
    void parent();
    void search();
    void details();
    void rescan();
    std::optional<std::string> prompt(const std::string& label);
    void resort();

    IndexSource source_;
    BrowserState state_;
    std::string change_token_;
    Clock::time_point last_poll_{};
    // When the last prompt was answered (Enter): a search is timed from there, not from `/`.
    std::optional<Clock::time_point> answered_;
    bool quit_ = false;
};

void keep_visible(BrowserState& s) {
    const std::size_t rows = list_rows(LINES);
    s.listing.scroll_to_cursor(rows);
    SearchResults& r = s.results;
    if (r.cursor < r.top) r.top = r.cursor;
    if (r.cursor >= r.top + rows) r.top = r.cursor + 1 - rows;
}

std::string error_text(const ipc::Error& e) { return e.message; }

std::optional<ipc::Error> Browser::open_first(const std::string& path) {
    if (!path.empty()) {
        auto reply = source_.list(path);
        if (!reply) return reply.error();
        state_.listing = listing_from_du(path, *reply, state_.order);
        return std::nullopt;
    }
    std::string problem;
    const std::string cwd = current_directory(problem);
    if (!cwd.empty()) {
        if (auto reply = source_.list(cwd)) {
            state_.listing = listing_from_du(cwd, *reply, state_.order);
            return std::nullopt;
        } else if (reply.error().kind == ipc::ErrorKind::NotRunning ||
                   reply.error().kind == ipc::ErrorKind::PermissionDenied ||
                   reply.error().kind == ipc::ErrorKind::Timeout) {
            return reply.error();
        }
    }
    // Not indexed here: the largest root this user may see.
    auto roots = source_.roots();
    if (!roots) return roots.error();
    const ipc::DuEntry* best = nullptr;
    for (const ipc::DuEntry& e : roots->entries) {
        if (e.depth == 0 && (best == nullptr || e.size > best->size)) best = &e;
    }
    if (best == nullptr) {
        return ipc::make_error(ipc::ErrorKind::NotIndexed,
                               "nothing indexed that you may see (wsctl scan PATH)");
    }
    const std::string root = best->path;
    auto reply = source_.list(root);
    if (!reply) return reply.error();
    state_.listing = listing_from_du(root, *reply, state_.order);
    return std::nullopt;
}

bool Browser::open(const std::string& path, const std::string& select) {
    auto reply = source_.list(path);
    if (!reply) {
        state_.message = error_text(reply.error());
        return false;
    }
    state_.listing = listing_from_du(path, *reply, state_.order);
    if (!select.empty()) state_.listing.select(select);
    state_.listing.top = 0;
    keep_visible(state_);
    return true;
}

// The same directory read again, the cursor on the same name (or the same row when that
// entry went away); a directory that left the index gives way to its nearest indexed parent.
void Browser::reload() {
    const Entry* current = state_.listing.current();
    const std::string name = current ? current->name : std::string();
    const std::size_t row = state_.listing.cursor;
    const std::size_t top = state_.listing.top;
    std::string path = state_.listing.self.path;
    for (;;) {
        auto reply = source_.list(path);
        if (reply) {
            const bool same = path == state_.listing.self.path;
            state_.listing = listing_from_du(path, *reply, state_.order);
            if (same) {
                state_.listing.top = top;
                if (!state_.listing.select(name)) state_.listing.move_to(row);
            }
            keep_visible(state_);
            return;
        }
        if (reply.error().kind != ipc::ErrorKind::NotIndexed || path == "/") {
            state_.message = error_text(reply.error());
            return;
        }
        state_.message = "left the index: " + path;
        path = parent_path(path);
    }
}

void Browser::poll_index() {
    last_poll_ = Clock::now();
    auto st = source_.state();
    if (!st) {
        state_.progress = "daemon: " + error_text(st.error());
        return;
    }
    if (st->running) {
        const ipc::ScanInfo& s = *st->running;
        state_.progress = "scanning " + (s.root_hidden ? std::string("(hidden)") : s.root);
        if (!s.counts_hidden) {
            state_.progress += ": " + format_count(s.entries) + " entries";
        }
        if (st->queued > 0) state_.progress += ", " + std::to_string(st->queued) + " queued";
    } else {
        state_.progress.clear();
    }
    if (st->change_token != change_token_) {
        const bool first = change_token_.empty();
        change_token_ = st->change_token;
        if (!first) reload();
    }
}

void Browser::resort() {
    const Entry* current = state_.listing.current();
    const std::string name = current ? current->name : std::string();
    sort_entries(state_.listing.entries, state_.order);
    state_.listing.select(name);
    keep_visible(state_);
}

void Browser::enter() {
    if (state_.screen == Screen::Results) {
        const SearchResults& r = state_.results;
        if (r.cursor >= r.entries.size()) return;
        const std::string path = r.entries[r.cursor].path;
        if (open(parent_path(path), base_name(path))) state_.screen = Screen::List;
        return;
    }
    const Entry* e = state_.listing.current();
    if (e == nullptr || !e->is_dir()) return;
    open(e->path, {});
}

void Browser::parent() {
    const std::string here = state_.listing.self.path;
    if (here == "/") return;
    const std::string up = parent_path(here);
    auto reply = source_.list(up);
    if (!reply) {
        state_.message = "this is the top of what is indexed (" + error_text(reply.error()) + ")";
        return;
    }
    open(up, base_name(here));
}

std::optional<std::string> Browser::prompt(const std::string& label) {
    std::string text;
    curs_set(1);
    for (;;) {
        const std::size_t width = static_cast<std::size_t>(std::max(COLS, 2)) - 1;
        ShownText shown = shown_name(text, state_.utf8);
        std::string line =
            label + fit_columns(shown, width > label.size() ? width - label.size() : 0, false);
        attron(A_REVERSE);
        mvaddstr(LINES - 1, 0, std::string(width, ' ').c_str());
        mvaddstr(LINES - 1, 0, line.c_str());
        attroff(A_REVERSE);
        refresh();
        wint_t ch = 0;
        const int kind = get_wch(&ch);
        if (kind == ERR) continue;
        if (kind == KEY_CODE_YES) {
            if (ch == KEY_BACKSPACE) {
                while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80)
                    text.pop_back();
                if (!text.empty()) text.pop_back();
            } else if (ch == KEY_ENTER) {
                break;
            } else if (ch == KEY_RESIZE) {
                draw(state_);
            }
            continue;
        }
        if (ch == 27) {
            curs_set(0);
            return std::nullopt;
        }
        if (ch == '\n' || ch == '\r') break;
        if (ch == 127 || ch == '\b') {
            while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80)
                text.pop_back();
            if (!text.empty()) text.pop_back();
            continue;
        }
        if (ch < 0x20) continue;
        char buf[MB_LEN_MAX];
        std::mbstate_t mb{};
        const std::size_t n = std::wcrtomb(buf, static_cast<wchar_t>(ch), &mb);
        if (n != static_cast<std::size_t>(-1)) text.append(buf, n);
    }
    curs_set(0);
    answered_ = Clock::now();
    return text;
}

void Browser::search() {
    const auto pattern = prompt("search below here: ");
    if (!pattern || pattern->empty()) return;
    const std::string under =
        state_.screen == Screen::Results ? state_.results.under : state_.listing.self.path;
    auto reply = source_.find(*pattern, under, kSearchLimit);
    if (!reply) {
        state_.message = error_text(reply.error());
        return;
    }
    SearchResults& r = state_.results;
    r = SearchResults{};
    r.pattern = *pattern;
    r.under = under;
    r.entries = std::move(reply->entries);
    r.truncated = reply->truncated;
    state_.screen = Screen::Results;
}

void Browser::details() {
    const Entry* e = state_.listing.current();
    if (e == nullptr) return;
    state_.details = Details{};
    state_.details.entry = *e;
    auto errors = source_.errors_below(e->path, kDetailErrors);
    if (errors) {
        state_.details.errors = std::move(*errors);
    } else {
        state_.details.errors_problem = error_text(errors.error());
    }
    state_.screen = Screen::Details;
}

void Browser::rescan() {
    const std::string path = state_.listing.self.path;
    if (auto error = source_.rescan(path)) {
        state_.message = "rescan: " + error_text(*error);
        return;
    }
    state_.message = "rescan of " + path + " queued";
    poll_index();
}

void Browser::act(Action action) {
    Listing& l = state_.listing;
    SearchResults& r = state_.results;
    const bool in_results = state_.screen == Screen::Results;
    const auto page = static_cast<std::ptrdiff_t>(list_rows(LINES));
    const auto move = [&](std::ptrdiff_t delta) {
        if (in_results) {
            if (r.entries.empty()) return;
            const auto last = static_cast<std::ptrdiff_t>(r.entries.size()) - 1;
            r.cursor = static_cast<std::size_t>(
                std::clamp(static_cast<std::ptrdiff_t>(r.cursor) + delta, std::ptrdiff_t{0}, last));
        } else {
            l.move(delta);
        }
    };
    switch (action) {
        case Action::None:
            return;
        case Action::Up:
            move(-1);
            break;
        case Action::Down:
            move(1);
            break;
        case Action::PageUp:
            move(-page);
            break;
        case Action::PageDown:
            move(page);
            break;
        case Action::First:
            move(PTRDIFF_MIN / 2);
            break;
        case Action::Last:
            move(PTRDIFF_MAX / 2);
            break;
        case Action::Enter:
            enter();
            break;
        case Action::Parent:
            parent();
            break;
        case Action::SortSize:
            choose_sort_key(state_.order, SortKey::Size);
            resort();
            break;
        case Action::SortName:
            choose_sort_key(state_.order, SortKey::Name);
            resort();
            break;
        case Action::SortCount:
            choose_sort_key(state_.order, SortKey::Count);
            resort();
            break;
        case Action::SortMtime:
            choose_sort_key(state_.order, SortKey::Mtime);
            resort();
            break;
        case Action::ToggleDirsFirst:
            state_.order.dirs_first = !state_.order.dirs_first;
            resort();
            break;
        case Action::ToggleApparent:
            state_.order.apparent = !state_.order.apparent;
            resort();
            break;
        case Action::CycleGraph:
            state_.graph = static_cast<GraphMode>((static_cast<int>(state_.graph) + 1) % 4);
            break;
        case Action::ToggleMtime:
            state_.show_mtime = !state_.show_mtime;
            break;
        case Action::Details:
            details();
            break;
        case Action::Search:
            search();
            break;
        case Action::Rescan:
            rescan();
            break;
        case Action::Help:
            state_.screen = Screen::Help;
            break;
        case Action::Close:
            state_.screen = Screen::List;
            break;
        case Action::Quit:
            quit_ = true;
            break;
        case Action::Resize:
            break;
    }
    keep_visible(state_);
}

int Browser::loop(DrawTimer& timer, Clock::time_point started) {
    state_.utf8 = locale_is_utf8();
    poll_index();
    keep_visible(state_);
    draw(state_);
    timer.log("first_screen", started);
    while (!quit_) {
        const int key = getch();
        const Clock::time_point pressed = Clock::now();
        if (key == ERR) {
            if (pressed - last_poll_ >= kPollIndex) {
                const std::string before = state_.progress;
                const std::string token = change_token_;
                poll_index();
                if (before != state_.progress || token != change_token_) {
                    draw(state_);
                    timer.log("refresh", pressed);
                }
            }
            continue;
        }
        state_.message.clear();
        answered_.reset();
        act(action_for(key, state_.screen));
        if (quit_) break;
        draw(state_);
        if (answered_) {
            timer.log("search", *answered_);
        } else {
            char what[32];
            std::snprintf(what, sizeof what, "key:%s", keyname(key) ? keyname(key) : "?");
            timer.log(what, pressed);
        }
    }
    return kExitOk;
}

}  // namespace

int run_browser(const Context& ctx, const UiOptions& options) {
    const Clock::time_point started = Clock::now();
    DrawTimer timer;
    if (const std::string problem = terminal_problem(); !problem.empty()) {
        return usage_error(ctx, "ui needs a terminal: " + problem);
    }
    std::setlocale(LC_ALL, "");
    std::string path;
    if (!options.path.empty()) {
        std::string error;
        const std::string cwd = current_directory(error);
        if (cwd.empty()) return usage_error(ctx, error);
        path = ipc::lexically_normal(options.path, cwd);
    }
    Browser browser(ctx, options);
    if (auto error = browser.open_first(path)) return report(ctx, *error);
    Terminal terminal;
    if (const std::string problem = terminal.start(kPollKeysMs); !problem.empty()) {
        return usage_error(ctx, "ui needs a terminal: " + problem);
    }
    const int code = browser.loop(timer, started);
    terminal.stop();
    return code;
}

}  // namespace wsindex::cli::ui
