// Tests of the daemon's log format: whatever a message holds (a Status text with a raw path, an
// SQLite error), one record is one line, with no control byte, no terminal escape and no invalid
// UTF-8 in it, and a path the call site already escaped reads the same.
#include "daemon/logging.hpp"

#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ipc/bytes_codec.hpp"
#include "ipc/utf8.hpp"

namespace wsindex::daemon {
namespace {

// A name as an attacker would make it: a newline and a forged record after it, ESC and CSI
// sequences (7-bit and the C1 form), a carriage return, and bytes that are not UTF-8.
const std::string kEvil =
    "/t/a\n2026-12-07 00:00:00.000 critical FAKE LOG LINE\x1b[31m\r\xc2\x9b"
    "2J\xff\xfe";

// What a logger built like the daemon's writes for `write(logger)`.
template <typename Write>
std::string formatted(bool journal, Write write) {
    std::ostringstream out;
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(out);
    spdlog::logger logger("test", sink);
    logger.set_formatter(make_log_formatter(journal));
    logger.set_level(spdlog::level::trace);
    write(logger);
    logger.flush();
    return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t nl = text.find('\n', start);
        if (nl == std::string::npos) {
            out.push_back(text.substr(start));
            break;
        }
        out.push_back(text.substr(start, nl - start));
        start = nl + 1;
    }
    return out;
}

bool has_control_byte(const std::string& line) {
    for (const char c : line) {
        const auto b = static_cast<unsigned char>(c);
        if (b < 0x20 || b == 0x7f) return true;
    }
    return false;
}

TEST(Logging, AStatusTextWithARawPathStaysOnOneLine) {
    for (const bool journal : {false, true}) {
        SCOPED_TRACE(journal ? "journal" : "terminal");
        const std::string text = formatted(journal, [](spdlog::logger& log) {
            // The way the daemon logs a Status: the path escaped, the Status text raw.
            log.warn("live index: cannot list {}: {}", ipc::log_bytes(kEvil),
                     "open " + kEvil + ": Permission denied");
            log.info("second");
        });
        const std::vector<std::string> lines = lines_of(text);
        ASSERT_EQ(lines.size(), 2U) << text;
        EXPECT_EQ(lines[1].substr(lines[1].size() - 6), "second") << lines[1];
        for (const std::string& line : lines) {
            EXPECT_FALSE(has_control_byte(line)) << line;
            EXPECT_TRUE(ipc::is_valid_utf8(line)) << line;
            EXPECT_EQ(line.find("\xc2\x9b"), std::string::npos) << line;
        }
        // What the reader sees: the path once escaped, the same in both places (the part the
        // call site escaped is not escaped again).
        const std::string shown = ipc::log_bytes(kEvil);
        const std::string expected =
            "live index: cannot list " + shown + ": open " + shown + ": Permission denied";
        EXPECT_EQ(lines[0].substr(lines[0].size() - expected.size()), expected) << lines[0];
        EXPECT_EQ(lines[0].rfind(journal ? "warning: " : "20", 0), 0U) << lines[0];
    }
}

TEST(Logging, AMessageWithoutControlBytesIsUnchanged) {
    const std::string text = formatted(true, [](spdlog::logger& log) {
        log.info("scan {} done: {}: caf\xc3\xa9 \\n", 7, "/srv/data");
    });
    EXPECT_EQ(text, "info: scan 7 done: /srv/data: caf\xc3\xa9 \\n\n");
}

}  // namespace
}  // namespace wsindex::daemon
