// Starting and ending curses for the browser (terminal.hpp).
#include "cli/ui/terminal.hpp"

#include <curses.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace wsindex::cli::ui {

std::string terminal_problem() {
    if (::isatty(STDOUT_FILENO) != 1) return "stdout is not a terminal";
    if (::isatty(STDIN_FILENO) != 1) return "stdin is not a terminal";
    const char* term = std::getenv("TERM");
    if (term == nullptr || *term == '\0') return "TERM is not set";
    if (std::strcmp(term, "dumb") == 0) {
        return "TERM is dumb: this terminal cannot show a full-screen interface";
    }
    return {};
}

Terminal::~Terminal() { stop(); }

std::string Terminal::start(int poll_ms) {
    SCREEN* screen = ::newterm(nullptr, stdout, stdin);
    if (screen == nullptr) {
        const char* term = std::getenv("TERM");
        return std::string("cannot use the terminal type '") + (term ? term : "") + "'";
    }
    screen_ = screen;
    ::cbreak();
    ::noecho();
    ::nonl();
    ::keypad(stdscr, TRUE);
    ::curs_set(0);
    ::set_escdelay(25);
    ::timeout(poll_ms);
    return {};
}

void Terminal::stop() {
    if (screen_ == nullptr) return;
    ::endwin();
    ::delscreen(static_cast<SCREEN*>(screen_));
    screen_ = nullptr;
}

}  // namespace wsindex::cli::ui
