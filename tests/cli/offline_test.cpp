// wsctl without a daemon: --help everywhere, exit code 3 with a clear message when nothing
// listens, exit code 2 for usage errors, the socket taken from the environment.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/cli/support/process.hpp"
#include "tests/cli/support/scratch.hpp"

namespace wsindex::cli::test {
namespace {

const std::vector<std::vector<std::string>> kEveryCommand = {
    {"scan", "/tmp"}, {"status"}, {"cancel"}, {"find", "x"},
    {"du"},           {"errors"}, {"scans"},  {"version"},
};

class WsctlOffline : public ::testing::Test {
  protected:
    Exit wsctl(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
        args.insert(args.begin(), WSINDEX_WSCTL);
        return run(args, scratch_.path(), std::chrono::seconds(60), env);
    }
    std::string missing_socket() const { return scratch_ / "no-such-dir/wsindexd.sock"; }

    ScratchDir scratch_{"offline"};
};

TEST_F(WsctlOffline, HelpOnEveryCommand) {
    const auto top = wsctl({"--help"});
    EXPECT_EQ(top.code, 0);
    for (const char* name :
         {"scan", "status", "cancel", "find", "du", "errors", "scans", "version"}) {
        EXPECT_NE(top.out.find(name), std::string::npos) << name;
        const auto sub = wsctl({name, "--help"});
        EXPECT_EQ(sub.code, 0) << name << ": " << sub.err;
        EXPECT_NE(sub.out.find("Usage: wsctl " + std::string(name)), std::string::npos) << sub.out;
        EXPECT_NE(sub.out.find("--json"), std::string::npos) << name;
        EXPECT_NE(sub.out.find("Exit codes"), std::string::npos) << name;
    }
}

TEST_F(WsctlOffline, DaemonNotRunningIsExitThreeWithAClearMessage) {
    for (auto args : kEveryCommand) {
        args.push_back("--socket");
        args.push_back(missing_socket());
        const auto r = wsctl(args);
        EXPECT_EQ(r.code, 3) << args[0] << ": " << r.err;
        EXPECT_NE(r.err.find("wsindexd is not running"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(missing_socket()), std::string::npos) << r.err;
    }
}

TEST_F(WsctlOffline, JsonErrorDocumentOnStdout) {
    const auto r = wsctl({"status", "--json", "--socket", missing_socket()});
    EXPECT_EQ(r.code, 3);
    const auto doc = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(doc.is_object()) << r.out;
    EXPECT_EQ(doc.value("exit_code", 0), 3);
    EXPECT_EQ(doc.value("error", ""), "local.NotRunning");
}

TEST_F(WsctlOffline, SocketFromTheEnvironmentThenTheFlag) {
    const auto env = wsctl({"status"}, {"WSINDEX_SOCKET=" + missing_socket()});
    EXPECT_EQ(env.code, 3);
    EXPECT_NE(env.err.find(missing_socket()), std::string::npos) << env.err;
    const std::string flag = scratch_ / "flag.sock";
    const auto both = wsctl({"status", "--socket", flag}, {"WSINDEX_SOCKET=" + missing_socket()});
    EXPECT_NE(both.err.find(flag), std::string::npos) << both.err;
}

TEST_F(WsctlOffline, SocketNobodyListensOn) {
    // A socket file left behind by a dead daemon: bound, never listened on.
    const std::string path = scratch_ / "stale.sock";
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);
    const auto r = wsctl({"version", "--socket", path});
    EXPECT_EQ(r.code, 3);
    EXPECT_NE(r.err.find("nothing listens"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("wsctl "), std::string::npos);  // the client's own version still shows
}

TEST_F(WsctlOffline, UsageErrorsAreExitTwo) {
    const std::string sock = missing_socket();
    const std::vector<std::vector<std::string>> bad = {
        {},
        {"frobnicate"},
        {"scan"},
        {"find", "--size", "12x"},
        {"find", "--size", "+1M", "--size", "-1k"},
        {"find", "--newer", "yesterday"},
        {"find", "--type", "q"},
        {"find", "--glob", "--regex", "x"},
        {"find", "-0", "--json"},
        {"find", "-0", "-l"},
        {"find", "--limit", "-3"},
        {"du", "--depth", "x"},
        {"errors", "--scan", "abc"},
        {"status", "--bogus"},
    };
    for (auto args : bad) {
        args.push_back("--socket");
        args.push_back(sock);
        const auto r = wsctl(args);
        std::string joined;
        for (const auto& a : args) joined += a + " ";
        EXPECT_EQ(r.code, 2) << joined << "\n" << r.err;
        EXPECT_FALSE(r.err.empty()) << joined;
    }
}

TEST_F(WsctlOffline, NegativeSizeIsAValueNotAnOption) {
    // "--size -10M" must parse (then fail to connect: exit 3, not a usage error).
    const auto r = wsctl({"find", "--size", "-10M", "x", "--socket", missing_socket()});
    EXPECT_EQ(r.code, 3) << r.err;
}

// wsctl fleet runs wsctl-fleet (cli/fleet/exec_fleet.cpp) from beside wsctl, with the same
// arguments; without it, a clear error.
TEST_F(WsctlOffline, FleetRunsItsHelperBesideWsctlWithTheSameArguments) {
    // The real helper: its own checks answer (no URL is a usage error).
    const auto real = wsctl({"fleet", "hosts", "--json"}, {"WSINDEX_FLEET_URL="});
    EXPECT_EQ(real.code, 2) << real.err;
    EXPECT_NE(real.err.find("give --url or set WSINDEX_FLEET_URL"), std::string::npos) << real.err;
    EXPECT_NE(real.out.find("\"exit_code\":2"), std::string::npos) << real.out;

    // A copy of wsctl beside a stand-in helper that prints what it was given.
    const std::string dir = scratch_ / "copy";
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    std::filesystem::copy_file(WSINDEX_WSCTL, dir + "/wsctl");
    {
        std::ofstream helper(dir + "/wsctl-fleet");
        helper << "#!/bin/sh\nprintf '%s|' \"$0\" \"$@\"\nexit 7\n";
    }
    ASSERT_EQ(::chmod((dir + "/wsctl-fleet").c_str(), 0755), 0);
    const auto copied = run({dir + "/wsctl", "--json", "fleet", "find", "a b", "-0"},
                            scratch_.path(), std::chrono::seconds(60));
    EXPECT_EQ(copied.code, 7) << copied.err;
    EXPECT_EQ(copied.out, dir + "/wsctl-fleet|--json|fleet|find|a b|-0|");

    // No helper beside it, nor in ../libexec/wsindexd/: exit 1, and where it looked.
    ASSERT_EQ(::unlink((dir + "/wsctl-fleet").c_str()), 0);
    const auto missing =
        run({dir + "/wsctl", "fleet", "hosts"}, scratch_.path(), std::chrono::seconds(60));
    EXPECT_EQ(missing.code, 1) << missing.err;
    EXPECT_NE(missing.err.find("cannot run wsctl-fleet: " + dir + "/wsctl-fleet (No such file"),
              std::string::npos)
        << missing.err;
    EXPECT_NE(missing.err.find(dir + "/../libexec/wsindexd/wsctl-fleet (No such file"),
              std::string::npos)
        << missing.err;
}

TEST_F(WsctlOffline, VersionFlag) {
    const auto r = wsctl({"--version"});
    EXPECT_EQ(r.code, 0);
    EXPECT_FALSE(r.out.empty());
}

}  // namespace
}  // namespace wsindex::cli::test
