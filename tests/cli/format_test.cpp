// Unit tests of wsctl's pure helpers: units, counts, durations, tables, escaping, size/time/type
// parsing, absolute paths and the option-value joining.
#include "cli/format.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "cli/args.hpp"
#include "cli/exit_codes.hpp"
#include "cli/progress.hpp"
#include "cli/socket_path.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::cli {
namespace {

TEST(FormatBytes, UnitsAreBinaryWithOneDecimal) {
    EXPECT_EQ(format_bytes(0), "0 B");
    EXPECT_EQ(format_bytes(1023), "1023 B");
    EXPECT_EQ(format_bytes(1024), "1.0 KiB");
    EXPECT_EQ(format_bytes(1536), "1.5 KiB");
    EXPECT_EQ(format_bytes(1024 * 1024), "1.0 MiB");
    EXPECT_EQ(format_bytes(1024 * 1024 - 1), "1.0 MiB");  // never "1024.0 KiB"
    EXPECT_EQ(format_bytes(std::uint64_t{5} << 30), "5.0 GiB");
    EXPECT_EQ(format_bytes(std::uint64_t{3} << 40), "3.0 TiB");
    EXPECT_EQ(format_bytes(UINT64_MAX), "16.0 EiB");
}

TEST(FormatCount, ThousandsSeparators) {
    EXPECT_EQ(format_count(0), "0");
    EXPECT_EQ(format_count(999), "999");
    EXPECT_EQ(format_count(1000), "1,000");
    EXPECT_EQ(format_count(1234567), "1,234,567");
}

TEST(FormatDuration, PicksAReadableUnit) {
    EXPECT_EQ(format_duration_ms(0), "0.0 s");
    EXPECT_EQ(format_duration_ms(12345), "12.3 s");
    EXPECT_EQ(format_duration_ms(245000), "4m 05s");
    EXPECT_EQ(format_duration_ms(7380000), "2h 03m");
    EXPECT_EQ(format_duration_ms(3ULL * 86400000 + 4 * 3600000), "3d 04h");
}

TEST(FormatTime, ZeroIsADash) {
    EXPECT_EQ(format_time_ns(0), "-");
    EXPECT_EQ(format_time_ns(1'700'000'000'000'000'000).size(), 19u);
}

TEST(Printable, EscapesControlAndInvalidBytes) {
    EXPECT_EQ(printable("plain/name"), "plain/name");
    EXPECT_EQ(printable("a\nb\tc"), "a\\nb\\tc");
    EXPECT_EQ(printable("back\\slash"), "back\\\\slash");
    EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9");  // valid UTF-8 stays
    EXPECT_EQ(printable("bad\xff\xfe"), "bad\\xFF\\xFE");
    EXPECT_EQ(printable("trunc\xc3"), "trunc\\xC3");
    EXPECT_EQ(printable(std::string("nul\0x", 5)), "nul\\x00x");
}

// A queued scan has no id yet (0 on the wire): never "scan 0 queued".
TEST(AcceptedLine, QueuedScansHaveNoIdYet) {
    ipc::ScanInfo scan;
    scan.root = "/home";
    scan.state = ipc::ScanState::Queued;
    EXPECT_EQ(accepted_line(scan), "scan queued: /home");
    EXPECT_EQ(progress_line(scan), "scan queued: /home");
    scan.scan_id = 3;
    scan.state = ipc::ScanState::Running;
    EXPECT_EQ(accepted_line(scan), "scan 3 running: /home");
}

TEST(Table, AlignsColumnsAndLeavesTheLastUnpadded) {
    Table table({{"SIZE", Table::Align::Right}, {"PATH", Table::Align::Left}});
    table.add_row({"1.0 KiB", "/a"});
    table.add_row({"12 B", "/long/path"});
    EXPECT_EQ(table.render(), "   SIZE  PATH\n1.0 KiB  /a\n   12 B  /long/path\n");
    EXPECT_EQ(table.render(false), "1.0 KiB  /a\n   12 B  /long/path\n");
}

TEST(Table, WidthCountsCodePoints) {
    Table table({{"A", Table::Align::Left}, {"B", Table::Align::Left}});
    table.add_row({"\xc3\xa9\xc3\xa9", "x"});
    table.add_row({"abc", "y"});
    EXPECT_EQ(table.render(false), "\xc3\xa9\xc3\xa9   x\nabc  y\n");
}

// du, errors, scans and status print through Table: an odd name is escaped the same way in all
// of them, whether stdout is a terminal or a pipe, and cannot split a row.
TEST(Table, EscapesEveryCellOnce) {
    Table table({{"SIZE", Table::Align::Right}, {"PATH", Table::Align::Left}});
    table.add_row({"1 B", "r\xff\ndir"});
    table.add_row({"2 B", "back\\slash"});
    EXPECT_EQ(table.render(false), "1 B  r\\xFF\\ndir\n2 B  back\\\\slash\n");
}

TEST(ParseByteCount, SuffixesAreBinary) {
    std::string error;
    EXPECT_EQ(parse_byte_count("0", error), 0u);
    EXPECT_EQ(parse_byte_count("512", error), 512u);
    EXPECT_EQ(parse_byte_count("4k", error), 4096u);
    EXPECT_EQ(parse_byte_count("4K", error), 4096u);
    EXPECT_EQ(parse_byte_count("4KiB", error), 4096u);
    EXPECT_EQ(parse_byte_count("1.5M", error), 1572864u);
    EXPECT_EQ(parse_byte_count("2G", error), std::uint64_t{2} << 30);
    EXPECT_EQ(parse_byte_count("1T", error), std::uint64_t{1} << 40);
    EXPECT_EQ(parse_byte_count("100c", error), 100u);
    EXPECT_EQ(parse_byte_count("100B", error), 100u);
}

TEST(ParseByteCount, RejectsGarbageAndOverflow) {
    for (const char* bad :
         {"", "k", "-1", "1.5", "1.", "12x", "1KX", "1Bk", "99999999999999999999", "17000000T"}) {
        std::string error;
        EXPECT_FALSE(parse_byte_count(bad, error).has_value()) << bad;
        EXPECT_FALSE(error.empty()) << bad;
    }
}

TEST(AddSizeBound, PlusMinusExact) {
    std::string error;
    SizeRange r;
    ASSERT_TRUE(add_size_bound("+1k", r, error));
    EXPECT_EQ(r.min, 1025u);
    EXPECT_FALSE(r.max.has_value());
    ASSERT_TRUE(add_size_bound("-1M", r, error));
    EXPECT_EQ(r.max, 1048575u);
    SizeRange exact;
    ASSERT_TRUE(add_size_bound("100", exact, error));
    EXPECT_EQ(exact.min, 100u);
    EXPECT_EQ(exact.max, 100u);
    SizeRange empty;
    ASSERT_TRUE(add_size_bound("-1", empty, error));
    EXPECT_EQ(empty.max, 0u);
}

TEST(AddSizeBound, RejectsEmptyRanges) {
    std::string error;
    SizeRange r;
    EXPECT_FALSE(add_size_bound("-0", r, error));
    SizeRange r2;
    ASSERT_TRUE(add_size_bound("+1M", r2, error));
    EXPECT_FALSE(add_size_bound("-1k", r2, error));
    EXPECT_NE(error.find("exclude"), std::string::npos);
}

TEST(ParseTime, RelativeAges) {
    std::string error;
    const std::int64_t now = 1'700'000'000LL * 1'000'000'000;
    EXPECT_EQ(parse_time("90s", now, error), now - 90LL * 1'000'000'000);
    EXPECT_EQ(parse_time("30m", now, error), now - 1800LL * 1'000'000'000);
    EXPECT_EQ(parse_time("2h", now, error), now - 7200LL * 1'000'000'000);
    EXPECT_EQ(parse_time("2d", now, error), now - 172800LL * 1'000'000'000);
    EXPECT_EQ(parse_time("1w", now, error), now - 604800LL * 1'000'000'000);
    EXPECT_EQ(parse_time("1.5h", now, error), now - 5400LL * 1'000'000'000);
}

TEST(ParseTime, IsoDatesWithZonesAndEpoch) {
    std::string error;
    EXPECT_EQ(parse_time("2024-05-01T00:00:00Z", 0, error), 1714521600LL * 1'000'000'000);
    EXPECT_EQ(parse_time("2024-05-01T02:00+02:00", 0, error), 1714521600LL * 1'000'000'000);
    EXPECT_EQ(parse_time("2024-04-30 19:00:00-0500", 0, error), 1714521600LL * 1'000'000'000);
    EXPECT_EQ(parse_time("@1714521600", 0, error), 1714521600LL * 1'000'000'000);
    // Local time: agrees with mktime for the same fields.
    std::tm tm{};
    tm.tm_year = 124;
    tm.tm_mon = 4;
    tm.tm_mday = 1;
    tm.tm_isdst = -1;
    EXPECT_EQ(parse_time("2024-05-01", 0, error),
              static_cast<std::int64_t>(std::mktime(&tm)) * 1'000'000'000);
}

TEST(ParseTime, RejectsGarbage) {
    for (const char* bad : {"", "yesterday", "2d3h", "5", "2024-13-01", "2023-02-29",
                            "2024-05-01T25:00", "2024-05-01X", "@", "@x", "1.h"}) {
        std::string error;
        EXPECT_FALSE(parse_time(bad, 0, error).has_value()) << bad;
        EXPECT_FALSE(error.empty()) << bad;
    }
}

TEST(ParseTypes, LettersCommasAndDuplicates) {
    std::string error;
    EXPECT_EQ(parse_types("f", error), "f");
    EXPECT_EQ(parse_types("f,d", error), "fd");
    EXPECT_EQ(parse_types("fdlf", error), "fdl");
    EXPECT_FALSE(parse_types("x", error).has_value());
    EXPECT_FALSE(parse_types(",", error).has_value());
}

TEST(JoinOptionValues, GluesNegativeSizes) {
    const std::vector<std::string> in{"wsctl", "find", "--size", "-10M", "x", "--", "--size", "y"};
    const std::vector<std::string> expected{"wsctl",  "find", "--size=-10M", "x", "--",
                                            "--size", "y"};
    EXPECT_EQ(join_option_values(in, {"--size"}), expected);
    const std::vector<std::string> last{"wsctl", "find", "--size"};
    EXPECT_EQ(join_option_values(last, {"--size"}), last);
}

TEST(ExitCodes, DistinctPerClassOfError) {
    EXPECT_EQ(exit_code_for(ipc::make_error(ipc::ErrorKind::NotRunning, "")), kExitNotRunning);
    EXPECT_EQ(exit_code_for(ipc::make_error(ipc::ErrorKind::PermissionDenied, "")), kExitRefused);
    EXPECT_EQ(exit_code_for(ipc::make_error(ipc::ErrorKind::NoSuchPath, "")), kExitNotFound);
    EXPECT_EQ(exit_code_for(ipc::make_error(ipc::ErrorKind::InvalidParameter, "")), kExitUsage);
    EXPECT_EQ(exit_code_for(ipc::make_error(ipc::ErrorKind::Internal, "")), kExitFailure);
}

TEST(SocketPath, FlagThenEnvironmentThenDefault) {
    ::setenv("WSINDEX_SOCKET", "/env/sock", 1);
    EXPECT_EQ(resolve_socket_path("/flag/sock"), "/flag/sock");
    EXPECT_EQ(resolve_socket_path(""), "/env/sock");
    ::unsetenv("WSINDEX_SOCKET");
    EXPECT_EQ(resolve_socket_path(""), default_socket_path());
}

// The value of `key=` in a systemd unit file of the source tree.
std::string unit_value(const std::string& unit, const std::string& key) {
    std::ifstream in(std::string(WSINDEX_SOURCE_DIR) + "/" + unit);
    EXPECT_TRUE(in.good()) << unit;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
    }
    ADD_FAILURE() << unit << " has no " << key;
    return {};
}

// default_socket_path() as user `uid` with XDG_RUNTIME_DIR set to `runtime` (unset when null),
// computed in a child that really dropped to that uid (the tests run as root).
std::string default_socket_as(uid_t uid, const char* runtime) {
    int fds[2];
    if (::pipe(fds) != 0) return "pipe failed";
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        if (runtime != nullptr)
            ::setenv("XDG_RUNTIME_DIR", runtime, 1);
        else
            ::unsetenv("XDG_RUNTIME_DIR");
        if (::setgid(uid) != 0 || ::setuid(uid) != 0) ::_exit(2);
        const std::string path = default_socket_path();
        const ssize_t n = ::write(fds[1], path.data(), path.size());
        ::_exit(n == static_cast<ssize_t>(path.size()) ? 0 : 3);
    }
    ::close(fds[1]);
    std::string out;
    char buf[512];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
        out.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : "child failed";
}

// One rule for wsindexd, wsctl (both call ipc::default_socket_path) and the systemd units.
TEST(SocketPath, OneDefaultForDaemonClientAndUnits) {
    if (::geteuid() != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root to drop to another uid";
    EXPECT_EQ(default_socket_path(), kSystemSocket);
    EXPECT_EQ(unit_value("systemd/wsindexd.socket", "ListenStream"), kSystemSocket);
    EXPECT_NE(unit_value("systemd/wsindexd.service", "ExecStart")
                  .find(std::string("--socket ") + kSystemSocket),
              std::string::npos);
    // The user units put it at %t (= $XDG_RUNTIME_DIR)/wsindexd/wsindexd.sock.
    EXPECT_EQ(unit_value("systemd/user/wsindexd.socket", "ListenStream"),
              "%t/wsindexd/wsindexd.sock");
    EXPECT_NE(unit_value("systemd/user/wsindexd.service", "ExecStart")
                  .find("--socket %t/wsindexd/wsindexd.sock"),
              std::string::npos);
    EXPECT_EQ(default_socket_as(65534, "/run/user/4242"), "/run/user/4242/wsindexd/wsindexd.sock");
    EXPECT_EQ(default_socket_as(65534, nullptr), "/run/user/65534/wsindexd/wsindexd.sock");
    EXPECT_EQ(default_socket_as(65534, "relative"), "/run/user/65534/wsindexd/wsindexd.sock");
}

ipc::ScanInfo running_scan(std::uint64_t id, std::string root, std::uint64_t elapsed_ms) {
    ipc::ScanInfo scan;
    scan.scan_id = id;
    scan.root = std::move(root);
    scan.state = ipc::ScanState::Running;
    scan.elapsed_ms = elapsed_ms;
    return scan;
}

TEST(Progress, LinesAndSummaries) {
    ipc::ScanInfo scan = running_scan(7, "/data", 12345);
    scan.entries = 12345;
    scan.entries_per_second = 1000.4;
    EXPECT_EQ(progress_line(scan), "scanning /data: 12,345 entries, 1,000 entries/s, 12.3 s");
    scan.errors = 2;
    EXPECT_EQ(progress_line(scan),
              "scanning /data: 12,345 entries, 1,000 entries/s, 12.3 s, 2 errors");
    scan.state = ipc::ScanState::Failed;
    scan.error = "EIO";
    EXPECT_EQ(scan_summary(scan).rfind("scan 7 failed: /data: 12,345 entries", 0), 0u);
    EXPECT_NE(scan_summary(scan).find(": EIO"), std::string::npos);
}

// Counters the daemon withheld (zeroes on the wire) are not printed as zeroes.
TEST(Progress, WithheldCountsAreSaidToBeHidden) {
    ipc::ScanInfo scan = running_scan(8, "/shared", 1500);
    scan.counts_hidden = true;
    const std::string why =
        " (counts withheld: the index does not show that you may list everything below it)";
    EXPECT_EQ(progress_line(scan), "scanning /shared: 1.5 s" + why);
    scan.state = ipc::ScanState::Done;
    EXPECT_EQ(scan_summary(scan), "scan 8 done: /shared: in 1.5 s" + why);
}

// Everything written to `f` so far.
std::string contents(std::FILE* f) {
    std::fflush(f);
    std::rewind(f);
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
    return out;
}

ipc::ScanReply one_scan(ipc::ScanState state, std::uint64_t entries) {
    ipc::ScanInfo scan;
    scan.scan_id = 1;
    scan.root = "/r";
    scan.state = state;
    scan.entries = entries;
    scan.bytes = 0;  // a live scan always knows its bytes and dirs
    scan.dirs = 0;
    return ipc::ScanReply{{scan}};
}

TEST(ProgressPrinter, TerminalRewritesOneLineThenPrintsTheSummary) {
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    ProgressPrinter printer(f, /*terminal=*/true);
    printer.on_reply(one_scan(ipc::ScanState::Running, 10), false);
    printer.on_reply(one_scan(ipc::ScanState::Running, 20), false);
    printer.on_reply(one_scan(ipc::ScanState::Done, 30), true);
    const std::string out = contents(f);
    std::fclose(f);
    EXPECT_EQ(out.find('\n'), out.size() - 1) << out;  // one line only: the summary
    EXPECT_NE(out.find("\rscanning /r: 10 entries"), std::string::npos) << out;
    EXPECT_NE(out.find("\rscanning /r: 20 entries"), std::string::npos) << out;
    EXPECT_NE(out.find("\r\x1b[Kscan 1 done: /r: 30 entries"), std::string::npos) << out;
}

TEST(ProgressPrinter, PlainLinesAreThrottledAndSummarisedOnce) {
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    ProgressPrinter printer(f, /*terminal=*/false, std::chrono::hours(1));
    for (int i = 1; i <= 5; ++i) printer.on_reply(one_scan(ipc::ScanState::Running, i), false);
    printer.on_reply(one_scan(ipc::ScanState::Done, 9), false);
    printer.on_reply(one_scan(ipc::ScanState::Done, 9), true);
    const std::string out = contents(f);
    std::fclose(f);
    EXPECT_EQ(out.find('\r'), std::string::npos);
    EXPECT_EQ(
        out,
        "scanning /r: 1 entries, 0 entries/s, 0.0 s\n"
        "scan 1 done: /r: 9 entries, 0 dirs, 0 B as walked (hard links once per name), 0 errors "
        "in 0.0 s (0 entries/s)\n");
}

}  // namespace
}  // namespace wsindex::cli
