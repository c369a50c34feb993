// The browser's loop: keys to actions on the state, the daemon asked through IndexSource, the
// screen redrawn, the index polled for changes while waiting for a key.
#pragma once

#include "cli/commands.hpp"

namespace wsindex::cli::ui {

// Runs the browser until `q`; the exit code (exit_codes.hpp).
int run_browser(const Context& ctx, const UiOptions& options);

}  // namespace wsindex::cli::ui
