// The curses session of the browser: checks that there is a terminal able to show it, starts
// curses on it, and gives the terminal back (endwin) however the browser ends.
#pragma once

#include <string>

namespace wsindex::cli::ui {

// Why the browser cannot run on this process's terminal ("stdout is not a terminal", "TERM is
// dumb ..."); empty when it can.
std::string terminal_problem();

class Terminal {
  public:
    Terminal() = default;
    Terminal(const Terminal&) = delete;
    Terminal& operator=(const Terminal&) = delete;
    ~Terminal();

    // Starts curses on stdin/stdout: raw keys, no echo, hidden cursor, keys polled every
    // `poll_ms`. Returns a problem (empty on success).
    std::string start(int poll_ms);
    void stop();

  private:
    void* screen_ = nullptr;  // SCREEN*
};

}  // namespace wsindex::cli::ui
