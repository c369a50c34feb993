// libFuzzer target: wsindexd's configuration file and command line.
//
// Input starting with "--": the command line, one argument per line (argv[0] is added), given
// to parse_command_line and layered over a default Config with apply_overrides. Anything else:
// the text of a configuration file, given to parse_config (and, on its own, parse_duration).
// Oracles, beyond the sanitizers: parse_config never throws and names its origin in every
// error; an accepted Config holds only what check() promises (absolute, distinct roots without
// a trailing slash, a known log level, socket mode within 0777, durations within a century).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/command_line.hpp"
#include "daemon/config.hpp"

namespace {

using namespace wsindex::daemon;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "config_fuzz: oracle failed: %s\n", what);
    std::abort();
}

void check(bool ok, const char* what) {
    if (!ok) fail(what);
}

constexpr std::chrono::seconds kCentury{100LL * 365 * 86400};

void check_config(const Config& c) {
    for (std::size_t i = 0; i < c.roots.size(); ++i) {
        const std::string& p = c.roots[i].path;
        check(!p.empty() && p.front() == '/', "roots are absolute");
        check(p.size() == 1 || p.back() != '/', "roots have no trailing slash");
        for (std::size_t j = i + 1; j < c.roots.size(); ++j)
            check(p != c.roots[j].path, "roots are distinct");
        const auto interval = effective_interval(c, c.roots[i]);
        check(interval.count() >= 0 && interval <= kCentury, "intervals within a century");
    }
    check(c.socket_mode <= 0777, "socket_mode within 0777");
    check(c.socket_path.empty() || c.socket_path.front() == '/', "socket is absolute");
    check(c.db_path.empty() || c.db_path.front() == '/', "db is absolute");
    check(c.workers <= 1024 && c.query_threads >= 1 && c.query_threads <= 64,
          "thread counts in range");
    // max_find_results may be 0 (no cap: finds are streamed); the queues need room for one.
    check(c.max_queued_scans >= 1 && c.max_pending_queries >= 1 && c.max_connections >= 1 &&
              c.max_connections_per_uid >= 1,
          "queue and connection bounds are at least one");
    check(c.progress_interval.count() >= 10, "progress interval at least 10 ms");
    for (const std::string& p : c.prune.paths)
        check(!p.empty() && p.front() == '/', "prune paths absolute");
}

void command_line(std::string_view text) {
    std::vector<std::string> args{"wsindexd"};
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t nl = text.find('\n', at);
        const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
        args.emplace_back(text.substr(at, end - at));
        at = end + 1;
    }
    std::vector<const char*> argv;
    for (const std::string& a : args)
        argv.push_back(a.c_str());  // a NUL inside cuts the arg, as exec would
    argv.push_back(nullptr);
    auto parsed = parse_command_line(static_cast<int>(args.size()), argv.data());
    if (const int* code = std::get_if<int>(&parsed)) {
        check(*code == 0 || *code == 2, "exit codes are 0 or 2");
        return;
    }
    const CommandLine& line = std::get<CommandLine>(parsed);
    Config config;
    apply_overrides(config, line);
    if (line.workers) check(config.workers <= 1024, "--workers within range");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // CLI11 prints help and usage errors through iostreams and --version through printf: keep
    // the fuzzer's output readable. A stream without a buffer discards what it is given;
    // sanitizer reports and libFuzzer's own lines go to fd 2 directly and stay visible.
    std::cout.rdbuf(nullptr);
    std::cerr.rdbuf(nullptr);
    if (std::freopen("/dev/null", "w", stdout) == nullptr) return 1;
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (text.substr(0, 2) == "--") {
        command_line(text);
        return 0;
    }
    ConfigResult result = parse_config(text, "fuzz.conf");
    if (const auto* error = std::get_if<ConfigError>(&result)) {
        check(error->message.rfind("fuzz.conf: ", 0) == 0, "errors name their origin");
    } else {
        check_config(std::get<Config>(result));
    }
    if (auto d = parse_duration(text))
        check(d->count() >= 0 && *d <= kCentury, "durations within a century");
    return 0;
}
