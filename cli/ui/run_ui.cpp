// wsctl ui [PATH]: the entry point main.cpp calls (commands.hpp).
#include "cli/commands.hpp"
#include "cli/ui/browser.hpp"

namespace wsindex::cli {

int run_ui(const Context& ctx, const UiOptions& options) { return ui::run_browser(ctx, options); }

}  // namespace wsindex::cli
