// Logging: spdlog to stderr, one line per event, with the level set from the configuration.
//
// One record is always one line, whatever its message holds: the formatter escapes the whole
// message with ipc::log_bytes (control bytes, invalid UTF-8, terminal escapes), so a Status text
// or an SQLite error that embeds a raw path cannot end the line early, forge the next one or
// reach the reader's terminal as an escape sequence. log_bytes is idempotent, so a path the
// call site already passed through log_bytes is not escaped again.
#pragma once

#include <spdlog/formatter.h>

#include <memory>
#include <string_view>

namespace wsindex::daemon {

// Installs the default logger: stderr, colour only on a terminal, no timestamps under systemd
// (the journal stamps lines itself; JOURNAL_STREAM tells us it is there). Main thread, once.
void setup_logging(std::string_view level);

// Changes the level (SIGHUP reload). Any thread. Unknown names leave it unchanged.
void set_log_level(std::string_view level);

// The formatter setup_logging installs: the prefix (time and level, or only the level for the
// journal) and the message escaped by ipc::log_bytes. Exposed for tests.
std::unique_ptr<spdlog::formatter> make_log_formatter(bool journal);

}  // namespace wsindex::daemon
