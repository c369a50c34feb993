// End to end: a file name built to forge log lines — a newline followed by a record of its own,
// ESC and CSI sequences, a carriage return and bytes that are not UTF-8 — reaches the real
// wsindexd's log inside texts the daemon did not build from escaped pieces: the monitor's Status
// when a root cannot be watched ("inotify_add_watch <path>: Permission denied": the daemon runs
// as nobody, and the root is mode 000), and the error text of a refused scan. Read back, the log
// holds exactly the records the daemon meant: each line starts with a real timestamp and level,
// no line starts with the forged one, and no line holds a control byte, a C1 control or invalid
// UTF-8. Before the log formatter escaped whole messages, the forged record was a line of its own.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ipc/bytes_codec.hpp"
#include "ipc/utf8.hpp"
#include "tests/cli/support/fixture.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::cli::test {
namespace {

// A line the daemon's formatter starts: "YYYY-MM-DD HH:MM:SS.mmm LEVEL " (or "LEVEL: " under
// the journal). By hand: std::regex trips GCC 12's -Wmaybe-uninitialized in the ASan build.
bool starts_a_record(std::string_view line) {
    const auto digits_at = [&](std::size_t at, std::size_t n) {
        if (line.size() < at + n) return false;
        for (std::size_t i = at; i < at + n; ++i) {
            if (line[i] < '0' || line[i] > '9') return false;
        }
        return true;
    };
    constexpr std::string_view kStampShape = "0000-00-00 00:00:00.000 ";
    bool stamped = line.size() >= kStampShape.size();
    for (std::size_t i = 0; stamped && i < kStampShape.size(); ++i) {
        stamped = kStampShape[i] == '0' ? digits_at(i, 1) : line[i] == kStampShape[i];
    }
    std::string_view rest = stamped ? line.substr(kStampShape.size()) : line;
    for (const std::string_view level :
         {"trace", "debug", "info", "warning", "error", "critical"}) {
        if (rest.substr(0, level.size()) != level) continue;
        std::string_view after = rest.substr(level.size());
        if (!after.empty() && after.front() == ':') after.remove_prefix(1);
        return !after.empty() && after.front() == ' ';
    }
    return false;
}

// The forged record carries a date the real daemon never writes.
constexpr const char* kForgedStamp = "1999-01-01 00:00:00.000 critical FAKE LOG LINE";
const std::string kEvilName = std::string("x\n") + kForgedStamp +
                              " \x1b[31mred\x1b[0m\r\xc2\x9b"
                              "2J\xff\xfe end";

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t nl = text.find('\n', start);
        if (nl == std::string::npos) nl = text.size();
        out.push_back(text.substr(start, nl - start));
        start = nl + 1;
    }
    return out;
}

class LogForgery : public EndToEnd {
  protected:
    void SetUp() override {
        if (::geteuid() != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root (a daemon as nobody)";
        extra_args_ = {"--log-level", "debug"};
        start_daemon(65534);  // nobody: a mode-000 directory stays closed to it
    }
};

TEST_F(LogForgery, ANameInAStatusTextCannotForgeALogLine) {
    const std::string tree = scratch_ / "tree";
    ASSERT_EQ(::mkdir(tree.c_str(), 0755), 0);
    ASSERT_EQ(::chmod(tree.c_str(), 0755), 0);  // no umask
    const std::string evil = tree + "/" + kEvilName;
    ASSERT_EQ(::mkdir(evil.c_str(), 0), 0);
    ASSERT_EQ(::chmod(evil.c_str(), 0), 0);
    const std::string shown = ipc::log_bytes(evil);

    // A refused scan: the daemon cannot search the root, and its error text names the path as
    // it was asked.
    const Exit refused = ctl({"scan", evil + "/missing"});
    EXPECT_NE(refused.code, 0) << refused.out << refused.err;
    // The root itself: scanned (the daemon records that it cannot open it), then watched,
    // which fails, and the monitor's Status names the root.
    const Exit scanned = ctl({"scan", evil, "--wait"});
    ASSERT_EQ(scanned.code, 0) << scanned.out << scanned.err << log();
    // Polled: the monitor thread adds the watch after the scan's reply. Waited for by the part
    // every version of the daemon writes the same, so that the checks below run on any.
    const std::string wanted =
        "live index: cannot watch " + shown + " (inotify_add_watch " + shown + ": ";
    bool logged = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!(logged = log().find("live index: cannot watch ") != std::string::npos) &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const std::string text = log();
    ASSERT_TRUE(logged) << "the failed watch was never logged:\n" << ipc::log_bytes(text);
    // What the reader sees: the name escaped the same way in the call site's part and in the
    // monitor's Status text.
    EXPECT_NE(text.find(wanted), std::string::npos) << ipc::log_bytes(text);
    // The error text was made for the client with display_bytes (invalid UTF-8 as U+FFFD),
    // then escaped by the log formatter.
    const std::string refused_text = "scan refused for uid 0: the daemon cannot reach " +
                                     ipc::log_bytes(ipc::display_bytes(evil + "/missing")) +
                                     ": Permission denied";
    EXPECT_NE(text.find(refused_text), std::string::npos) << ipc::log_bytes(text);

    // Every line a record of the daemon's own: a timestamp and a level first (or only the
    // level, under the journal), and the forged record only inside one, after an escaped \n.

    const std::vector<std::string> lines = lines_of(text);
    ASSERT_GT(lines.size(), 3U);
    std::size_t forged_inside = 0;
    for (const std::string& line : lines) {
        EXPECT_TRUE(starts_a_record(line)) << "not a record: " << ipc::log_bytes(line);
        EXPECT_NE(line.rfind("1999-", 0), 0U) << "forged record: " << ipc::log_bytes(line);
        for (std::size_t at = line.find(kForgedStamp); at != std::string::npos;
             at = line.find(kForgedStamp, at + 1)) {
            EXPECT_TRUE(at >= 2 && line.compare(at - 2, 2, "\\n") == 0) << ipc::log_bytes(line);
            ++forged_inside;
        }
        for (const char c : line) {
            const auto b = static_cast<unsigned char>(c);
            EXPECT_FALSE(b < 0x20 || b == 0x7f) << "control byte in: " << ipc::log_bytes(line);
        }
        EXPECT_TRUE(ipc::is_valid_utf8(line)) << ipc::log_bytes(line);
        EXPECT_EQ(line.find("\xc2\x9b"), std::string::npos) << ipc::log_bytes(line);
    }
    EXPECT_GE(forged_inside, 3U);  // the name was logged: twice in the watch record, once refused
}

}  // namespace
}  // namespace wsindex::cli::test
