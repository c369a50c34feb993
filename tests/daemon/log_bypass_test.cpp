// The daemon's log is safe to read because one formatter escapes every record's message
// (daemon/logging.cpp, tested in logging_test.cpp): no call site has to remember to escape a
// Status text, an SQLite error or a path, so there is no list of call sites to grep. What a grep
// must catch instead is a way around that formatter: text written to stderr by other means, or
// another logger or sink with its own pattern. This test reads the sources of everything linked
// into wsindexd and fails on any such way, except the ones listed here with their reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace wsindex::daemon {
namespace {

namespace fs = std::filesystem;

// Ways to write a log line around the formatter.
const std::vector<std::string> kBypasses = {
    "std::cerr",     "std::clog",         "fprintf(stderr", "fputs(",      "perror(",
    "STDERR_FILENO", "write(2,",          "spdlog::sinks",  "set_pattern", "set_formatter",
    "_color_mt",     "_logger_mt",        "spdlog::logger", "syslog(",     "sd_journal",
    "sqlite3_log",   "SQLITE_CONFIG_LOG",
};

// file (relative to the source root) -> the lines allowed to hold a bypass, each one checked to
// contain what makes it safe.
struct Exception {
    std::string line_holds;  // the bypass on this line must come with this text
    std::string why;
};
const std::multimap<std::string, Exception> kExceptions = {
    {"daemon/logging.cpp", {"", "the formatter itself: its sink and pattern"}},
    {"daemon/logging.hpp", {"", "declares the formatter"}},
    {"daemon/main.cpp",
     {"log_bytes(", "a configuration error and a fatal exception, before or after the logger"}},
    {"daemon/main.cpp", {"unknown exception\\n\"", "a constant text"}},
};

std::string read_all(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

TEST(LogBypass, NothingInTheDaemonWritesALogLineAroundTheEscapingFormatter) {
    const fs::path source_root = WSINDEX_SOURCE_DIR;
    std::size_t files = 0;
    std::vector<std::string> found;
    // The libraries wsindexd links (daemon/CMakeLists.txt) and its main.
    for (const char* dir : {"daemon", "core", "storage", "monitor", "ipc", "fleet"}) {
        ASSERT_TRUE(fs::is_directory(source_root / dir)) << source_root / dir;
        for (const auto& entry : fs::recursive_directory_iterator(source_root / dir)) {
            const std::string ext = entry.path().extension().string();
            if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h")) {
                continue;
            }
            ++files;
            const std::string relative = fs::relative(entry.path(), source_root).string();
            std::istringstream text(read_all(entry.path()));
            std::string line;
            for (int number = 1; std::getline(text, line); ++number) {
                for (const std::string& bypass : kBypasses) {
                    if (line.find(bypass) == std::string::npos) continue;
                    bool allowed = false;
                    const auto [first, last] = kExceptions.equal_range(relative);
                    for (auto it = first; it != last; ++it) {
                        allowed = allowed || line.find(it->second.line_holds) != std::string::npos;
                    }
                    if (!allowed) {
                        found.push_back(relative + ":" + std::to_string(number) + ": " + line);
                    }
                }
            }
        }
    }
    EXPECT_GT(files, 100U) << "read the sources under " << source_root;
    std::string report;
    for (const std::string& f : found) report += f + "\n";
    EXPECT_TRUE(found.empty()) << "log text written around daemon/logging.cpp's formatter (escape "
                                  "it there, or list it here with its reason):\n"
                               << report;
}

// The grep can fail: the pattern it looks for, in a line like the ones it must catch.
TEST(LogBypass, TheGrepSeesABypass) {
    const std::string line = "    std::fprintf(stderr, \"walk: %s\\n\", st.to_string().c_str());";
    bool seen = false;
    for (const std::string& bypass : kBypasses)
        seen = seen || line.find(bypass) != std::string::npos;
    EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace wsindex::daemon
