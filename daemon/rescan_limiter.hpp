// RescanLimiter: at most one rescan per root for changes the monitor could not resolve, every
// `every`; the ones in between are merged into one rescan of the directory that covers them all,
// passed on once the time is up. Each such rescan costs everyone I/O, and a user can cause the
// events at will. Other root events pass unchanged. Monitor thread only; time is given.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "monitor/change_sink.hpp"

namespace wsindex::daemon {

class RescanLimiter {
  public:
    using Clock = std::chrono::steady_clock;

    explicit RescanLimiter(std::chrono::seconds every) : every_(every) {}

    // The events to act on now, from `events` and from those held back until `now`.
    [[nodiscard]] std::vector<monitor::RootEvent> pass(std::vector<monitor::RootEvent> events,
                                                       Clock::time_point now);
    // When a held-back rescan is due (for a poll timeout); none when nothing is held.
    [[nodiscard]] std::optional<Clock::time_point> next_due() const;

  private:
    struct Root {
        Clock::time_point next_allowed{};
        std::optional<monitor::RootEvent> held;  // its subtree covers every one merged into it
    };
    std::chrono::seconds every_;
    std::map<std::string, Root> roots_;  // by RootEvent::root
};

// The deepest directory holding both absolute paths `a` and `b`.
[[nodiscard]] std::string common_directory(const std::string& a, const std::string& b);

}  // namespace wsindex::daemon
