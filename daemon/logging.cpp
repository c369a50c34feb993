// Logging: the stderr sink and its format; every message escaped on its way out.
#include "daemon/logging.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string>

#include "ipc/bytes_codec.hpp"

namespace wsindex::daemon {
namespace {

// "%*": the message (what "%v" would print) passed through ipc::log_bytes. Here and not at
// each call site because a call site cannot know every text a Status, SQLite or the kernel
// puts into a message; the call sites still escape the paths they name (the same function), so
// the message reads the same before and after this formatter.
class EscapedMessage final : public spdlog::custom_flag_formatter {
  public:
    void format(const spdlog::details::log_msg& msg, const std::tm&,
                spdlog::memory_buf_t& dest) override {
        const std::string_view payload(msg.payload.data(), msg.payload.size());
        const std::string escaped = ipc::log_bytes(payload);
        dest.append(escaped.data(), escaped.data() + escaped.size());
    }
    [[nodiscard]] std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<EscapedMessage>();
    }
};

}  // namespace

std::unique_ptr<spdlog::formatter> make_log_formatter(bool journal) {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<EscapedMessage>('*');
    formatter->set_pattern(journal ? "%l: %*" : "%Y-%m-%d %H:%M:%S.%e %^%l%$ %*");
    return formatter;
}

void setup_logging(std::string_view level) {
    auto logger = spdlog::stderr_color_mt("wsindexd");
    const bool journal = std::getenv("JOURNAL_STREAM") != nullptr;
    logger->set_formatter(make_log_formatter(journal));
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
