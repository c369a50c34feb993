// Logging: spdlog to stderr, one line per event, with the level set from the configuration.
#pragma once

#include <string_view>

namespace wsindex::daemon {

// Installs the default logger: stderr, colour only on a terminal, no timestamps under systemd
// (the journal stamps lines itself; JOURNAL_STREAM tells us it is there). Main thread, once.
void setup_logging(std::string_view level);

// Changes the level (SIGHUP reload). Any thread. Unknown names leave it unchanged.
void set_log_level(std::string_view level);

}  // namespace wsindex::daemon
