// End to end, one daemon per test: scan --wait of odd names, find -0 against find -print0, du
// against du -sb, clear errors for bad paths, garbage on the socket, unreadable directories
// reported by a daemon running as nobody.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "tests/cli/support/fixture.hpp"

namespace wsindex::cli::test {
namespace {

using Queries = EndToEnd;

TEST_F(Queries, FindNulMatchesFindPrint0ByteForByte) {
    const std::string tree = scratch_ / "odd";
    make_odd_tree(tree);
    const auto r = ctl({"scan", tree, "--wait"});
    ASSERT_EQ(r.code, 0) << r.out << r.err << log();
    EXPECT_NE(r.out.find(" done: "), std::string::npos) << r.out;

    // This daemon indexed only the tree: find without filters is the whole of it.
    const auto expected = find_print0(tree, scratch_.path());
    ASSERT_GT(expected.size(), 40u);
    const auto all = ctl({"find", "-0"});
    ASSERT_EQ(all.code, 0) << all.err;
    ASSERT_TRUE(!all.out.empty() && all.out.back() == '\0');
    const auto got = split_nul(all.out);
    EXPECT_EQ(got.size(),
              static_cast<std::size_t>(std::count(all.out.begin(), all.out.end(), '\0')))
        << "duplicates in find -0";
    EXPECT_TRUE(got == expected) << describe_diff(got, expected);

    // --under: strictly below the directory.
    const auto below = find0_under(tree);
    const auto expected_below = find_print0(tree, scratch_.path(), /*with_root=*/false);
    EXPECT_TRUE(below == expected_below) << describe_diff(below, expected_below);

    // The same set through --json (lossless {"b64"} for invalid UTF-8).
    const auto doc = json_of({"find"});
    std::set<std::string> from_json;
    for (const auto& entry : doc["entries"]) from_json.insert(path_of(entry["path"]));
    EXPECT_TRUE(from_json == expected) << describe_diff(from_json, expected);
    EXPECT_EQ(doc["truncated"], false);
}

TEST_F(Queries, PatternsWithNewlinesAndInvalidUtf8) {
    const std::string tree = scratch_ / "odd";
    make_odd_tree(tree);
    scan(tree);

    const auto newline = ctl({"find", "new\nline", "-0"});
    EXPECT_EQ(newline.code, 0) << newline.err;
    EXPECT_EQ(split_nul(newline.out), std::set<std::string>{tree + "/new\nline"});

    const auto bad = ctl({"find", "\xff\xfe", "-0", "--under", tree});
    EXPECT_EQ(bad.code, 0) << bad.err;
    EXPECT_EQ(split_nul(bad.out), std::set<std::string>{tree + "/bad\xff\xfe utf8"});

    // Human output to a pipe: raw bytes, one path per line.
    const auto human = ctl({"find", "bad\xff"});
    EXPECT_EQ(human.out, tree + "/bad\xff\xfe utf8\n");

    // --type, --size, --limit.
    const auto dirs = ctl({"find", "--under", tree, "--type", "d", "-0"});
    for (const auto& path : split_nul(dirs.out)) {
        struct stat st {};
        if (path.size() < 4000) {  // lstat cannot take the PATH_MAX-deep ones
            EXPECT_EQ(::lstat(path.c_str(), &st), 0) << printable(path);
            EXPECT_TRUE(S_ISDIR(st.st_mode)) << printable(path);
        }
    }
    EXPECT_EQ(
        split_nul(ctl({"find", "--under", tree, "--size", "+4k", "--size", "-5000", "-0"}).out),
        (std::set<std::string>{tree + "/deep/" + [] {
            std::string p;
            for (int level = 0; level < 20; ++level) {
                p += std::to_string(level) + "-" + std::string(240, 'p') + "/";
            }
            return p;
        }() + "bottom\nof the chain"}));
    const auto limited = json_of({"find", "--under", tree, "--limit", "3"});
    EXPECT_EQ(limited["entries"].size(), 3u);
    EXPECT_EQ(limited["truncated"], true);
}

TEST_F(Queries, DuAgreesWithGnuDuSb) {
    const std::string tree = scratch_ / "odd";
    make_odd_tree(tree);
    scan(tree);

    const auto doc = json_of({"du", tree});
    ASSERT_EQ(doc["entries"].size(), 1u) << doc.dump();
    EXPECT_EQ(path_of(doc["entries"][0]["path"]), tree);
    EXPECT_EQ(doc["entries"][0]["size"].get<std::uint64_t>(), du_sb(tree, scratch_.path()));

    // Children one level down (the hard-linked "links" aside: du -sb of it alone counts the
    // link that the whole-tree total attributes elsewhere).
    const auto depth1 = json_of({"du", tree, "--depth", "1"});
    std::size_t compared = 0;
    for (const auto& entry : depth1["entries"]) {
        const std::string path = path_of(entry["path"]);
        if (entry["depth"] != 1 || path == tree + "/links") continue;
        EXPECT_EQ(entry["size"].get<std::uint64_t>(), du_sb(path, scratch_.path()))
            << printable(path);
        ++compared;
    }
    EXPECT_GE(compared, 3u) << depth1.dump();

    // Human output: units and a header, or exact bytes with -b.
    const auto human = ctl({"du", tree});
    EXPECT_NE(human.out.find("MiB"), std::string::npos) << human.out;
    EXPECT_NE(human.out.find("PATH"), std::string::npos) << human.out;
    const auto bytes = ctl({"du", tree, "-b"});
    EXPECT_NE(bytes.out.find(std::to_string(du_sb(tree, scratch_.path()))), std::string::npos)
        << bytes.out;
}

TEST_F(Queries, StatusScansAndVersion) {
    const std::string tree = scratch_ / "odd";
    make_odd_tree(tree);
    scan(tree);
    const auto status = ctl({"status"});
    EXPECT_EQ(status.code, 0) << status.err;
    EXPECT_NE(status.out.find(tree), std::string::npos) << status.out;
    const auto scans = json_of({"scans"});
    ASSERT_GE(scans["scans"].size(), 1u);
    EXPECT_EQ(scans["scans"][0]["state"], "done");
    EXPECT_EQ(path_of(scans["scans"][0]["root"]), tree);
    const auto version = ctl({"version"});
    EXPECT_EQ(version.code, 0);
    EXPECT_NE(version.out.find("wsindexd "), std::string::npos) << version.out;
    // scan --wait --json: exactly one document, the final state.
    const auto waited = ctl({"scan", tree, "--wait", "--json"});
    EXPECT_EQ(waited.code, 0) << waited.err;
    const auto doc = parse_json(waited.out);
    EXPECT_EQ(doc["scans"][0]["state"], "done") << waited.out;
    const auto errors = ctl({"errors"});
    EXPECT_EQ(errors.code, 0);
    EXPECT_NE(errors.out.find("no errors"), std::string::npos) << errors.out;
}

TEST_F(Queries, BadInputGetsAClearErrorAndExitCode) {
    const std::string tree = scratch_ / "odd";
    make_odd_tree(tree);
    scan(tree);

    const auto missing = ctl({"scan", tree + "/does-not-exist", "--wait"});
    EXPECT_EQ(missing.code, 5) << missing.err;
    EXPECT_NE(missing.err.find("does-not-exist"), std::string::npos) << missing.err;

    const auto file = ctl({"scan", tree + "/plain.txt"});
    EXPECT_EQ(file.code, 5) << file.err;

    const auto not_indexed = ctl({"du", "/nonexistent-wsctl-test-root"});
    EXPECT_EQ(not_indexed.code, 5) << not_indexed.err;
    EXPECT_FALSE(not_indexed.err.empty());

    const auto under = ctl({"find", "x", "--under", "/nonexistent-wsctl-test-root"});
    EXPECT_EQ(under.code, 5) << under.err;

    const auto no_scan = ctl({"errors", "--scan", "987654"});
    EXPECT_EQ(no_scan.code, 5) << no_scan.err;

    const auto regex = ctl({"find", "--regex", "(unclosed"});
    EXPECT_EQ(regex.code, 2) << regex.err;

    const auto json = ctl({"scan", tree + "/does-not-exist", "--json"});
    EXPECT_EQ(json.code, 5);
    EXPECT_EQ(parse_json(json.out)["error"], "wsindex.NoSuchPath") << json.out;
}

// Connects, writes `bytes`, then reads until the daemon closes or `linger` passes.
std::string poke(const std::string& socket, const std::string& bytes,
                 std::chrono::milliseconds linger = std::chrono::seconds(5)) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket.c_str(), sizeof addr.sun_path - 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        ADD_FAILURE() << "connect: " << std::strerror(errno);
        return {};
    }
    std::size_t sent = 0;
    while (sent < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;  // the daemon may close on us mid-way: that is allowed
        sent += static_cast<std::size_t>(n);
    }
    std::string reply;
    char buf[4096];
    pollfd pfd{fd, POLLIN, 0};
    while (::poll(&pfd, 1, static_cast<int>(linger.count())) > 0) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        reply.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return reply;
}

TEST_F(Queries, GarbageOnTheSocketLeavesTheDaemonServing) {
    const std::string tree = scratch_ / "odd";
    make_odd_tree(tree);
    scan(tree);
    const auto expected = find_print0(tree, scratch_.path(), /*with_root=*/false);

    using namespace std::string_literals;
    const std::string answer = poke(daemon_->socket(), "hello, this is not JSON\0"s);
    EXPECT_NE(answer.find("wsindex.InvalidRequest"), std::string::npos) << answer;
    poke(daemon_->socket(), "\xff\xfe\x00\x01{{{{\0"s);
    poke(daemon_->socket(), std::string(100000, '[') + '\0');
    poke(daemon_->socket(), std::string(2 << 20, 'x'));  // over the size cap, no NUL
    poke(daemon_->socket(), "{\"method\": \"wsindex.Find\", \"param",
         std::chrono::milliseconds(10));
    poke(
        daemon_->socket(),
        "{\"method\":\"wsindex.Nope\"}\0{\"method\":\"wsindex.Du\",\"parameters\":{\"depth\":\"x\"}}\0"s);
    // A client that asks for a stream and hangs up after the first bytes.
    poke(daemon_->socket(), "{\"method\":\"wsindex.Find\",\"parameters\":{},\"more\":true}\0"s,
         std::chrono::milliseconds(1));

    ASSERT_TRUE(daemon_->running()) << log();
    EXPECT_EQ(ctl({"version"}).code, 0);
    const auto got = find0_under(tree);
    EXPECT_TRUE(got == expected) << describe_diff(got, expected);
}

// A daemon whose find cap (max_find_results) is 5: wsctl must say that the answer was cut, on
// stderr, also when stdout is not a terminal.
class Capped : public EndToEnd {
  protected:
    void SetUp() override {
        const std::string config = scratch_ / "wsindexd.conf";
        FILE* f = std::fopen(config.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fputs("max_find_results = 5\n", f);
        std::fclose(f);
        extra_args_ = {"--config", config};
        start_daemon();
    }
};

TEST_F(Capped, FindWarnsWhenTheDaemonCutsTheAnswer) {
    const std::string tree = scratch_ / "odd";
    make_odd_tree(tree);
    scan(tree);
    const auto r = ctl({"find", "-0"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(split_nul(r.out).size(), 5u);
    EXPECT_NE(r.err.find("cut the answer at 5 entries"), std::string::npos) << r.err;
    const auto limited = ctl({"find", "-0", "--limit", "3"});
    EXPECT_EQ(split_nul(limited.out).size(), 3u);
    EXPECT_EQ(limited.err, "");  // the caller's own limit is no surprise
}

// The daemon runs as nobody (root would read mode-000 directories): every unreadable
// directory must show up in wsctl errors with EACCES, and nothing below it in find.
class Unprivileged : public EndToEnd {
  protected:
    void SetUp() override { start_daemon(65534); }
};

TEST_F(Unprivileged, ErrorsListTheUnreadableDirectories) {
    const std::string tree = scratch_ / "locked";
    const auto locked = make_locked_tree(tree, 3);
    const auto r = ctl({"scan", tree, "--wait"});
    ASSERT_EQ(r.code, 0) << r.out << r.err << log();
    EXPECT_NE(r.out.find("3 errors"), std::string::npos) << r.out;

    const auto doc = json_of({"errors"});
    std::set<std::string> paths;
    for (const auto& e : doc["errors"]) {
        paths.insert(path_of(e["path"]));
        EXPECT_EQ(e["errno_name"], "EACCES") << e.dump();
    }
    const std::set<std::string> expected(locked.begin(), locked.end());
    EXPECT_TRUE(paths == expected) << describe_diff(paths, expected);

    const auto human = ctl({"errors"});
    EXPECT_EQ(human.code, 0);
    EXPECT_NE(human.out.find("3 errors"), std::string::npos) << human.out;
    EXPECT_NE(human.out.find("EACCES"), std::string::npos) << human.out;
    for (const auto& path : locked) EXPECT_NE(human.out.find(path), std::string::npos) << path;

    // The locked directories themselves are indexed; nothing below them is.
    const auto found = find0_under(tree);
    for (const auto& path : locked) {
        EXPECT_EQ(found.count(path), 1u) << path;
        EXPECT_EQ(found.count(path + "/secret.txt"), 0u) << path;
    }
    EXPECT_EQ(found.count(tree + "/open0/visible.txt"), 1u);
}

}  // namespace
}  // namespace wsindex::cli::test
