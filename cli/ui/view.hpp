// Drawing the browser on the curses screen: the header, the list (or the search results), the
// status line, and the help and details screens over them. Reads the state, changes nothing.
#pragma once

#include "cli/ui/state.hpp"

namespace wsindex::cli::ui {

// Draws the whole screen for `state` (erase, draw, refresh).
void draw(const BrowserState& state);

// The size column's text for `bytes` (exact or with units, as `state` says).
std::string size_text(const BrowserState& state, std::uint64_t bytes);

}  // namespace wsindex::cli::ui
