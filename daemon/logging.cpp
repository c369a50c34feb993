// Logging: the stderr sink and its format.
#include "daemon/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string>

namespace wsindex::daemon {

void setup_logging(std::string_view level) {
    auto logger = spdlog::stderr_color_mt("wsindexd");
    const bool journal = std::getenv("JOURNAL_STREAM") != nullptr;
    logger->set_pattern(journal ? "%l: %v" : "%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
    spdlog::set_default_logger(std::move(logger));
    set_log_level(level);
}

void set_log_level(std::string_view level) {
    const std::string name = level == "warning" ? std::string("warn") : std::string(level);
    const spdlog::level::level_enum parsed = spdlog::level::from_str(name);
    // from_str answers "off" for names it does not know: accept "off" only when asked for.
    if (parsed == spdlog::level::off && name != "off") return;
    spdlog::set_level(parsed);
}

}  // namespace wsindex::daemon
