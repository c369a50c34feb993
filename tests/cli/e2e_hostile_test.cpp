// Hostile clients against the real daemon, where tests/ipc (a test server) does not reach:
// the daemon's own connection caps. Garbage, oversize and mid-stream hang-ups are covered by
// Queries.GarbageOnTheSocketLeavesTheDaemonServing; bench/hostile_clients.py runs all of it at
// scale and measures latency.
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "tests/cli/support/fixture.hpp"

namespace wsindex::cli::test {
namespace {

constexpr uid_t kNobody = 65534;
constexpr int kIdle = 300;  // more than the per-uid cap (64) and the total cap (256)

struct IdleCount {
    int connected = 0;
    int refused_busy = 0;  // answered wsindex.Busy and closed
    int held = 0;          // open and silent: the daemon keeps them until its idle timeout
};

// Child process (async-signal-safe calls only: the test runner has threads): drop to `uid`
// (and the same gid), open kIdle connections that never send, report what became of them on
// `report`, hold them until `release` is closed.
[[noreturn]] void hold_idle_connections(const char* socket_path, uid_t uid, int report,
                                        int release) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(uid) != 0 || ::setuid(uid) != 0) ::_exit(3);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket_path, sizeof addr.sun_path - 1);
    static int fds[kIdle];
    IdleCount count;
    for (int& fd : fds) {
        fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0)
            ++count.connected;
    }
    // A refused connection gets its Busy frame at once; give the daemon 2 s to send them all.
    static char buf[4096];
    static pollfd pfds[kIdle];
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (int i = 0; i < kIdle; ++i) pfds[i] = pollfd{fds[i], POLLIN, 0};
    while (std::chrono::steady_clock::now() < until) ::poll(pfds, kIdle, 100);
    for (int i = 0; i < kIdle; ++i) {
        if (fds[i] < 0) continue;
        pollfd one{fds[i], POLLIN, 0};
        if (::poll(&one, 1, 0) == 1) {
            const ssize_t n = ::recv(fds[i], buf, sizeof buf - 1, MSG_DONTWAIT);
            buf[n > 0 ? n : 0] = '\0';
            if (n > 0 && std::strstr(buf, "wsindex.Busy") != nullptr) ++count.refused_busy;
        } else {
            ++count.held;
        }
    }
    if (::write(report, &count, sizeof count) != static_cast<ssize_t>(sizeof count)) ::_exit(4);
    char byte;
    while (::read(release, &byte, 1) > 0) {
    }
    ::_exit(0);
}

// Hundreds of connections from one local user that connect and never send: that user gets at
// most its per-uid share, the rest are told Busy at once, and everyone else is still served
// without waiting for the idle timeout (5 minutes).
TEST_F(EndToEnd, HundredsOfIdleConnectionsDoNotStopStatus) {
    // nobody must reach the socket: the scratch directory is 0755; the socket is root's 0660.
    ASSERT_EQ(::chmod(daemon_->socket().c_str(), 0666), 0);
    int report[2];
    int release[2];
    ASSERT_EQ(::pipe2(report, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(release, O_CLOEXEC), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::close(report[0]);
        ::close(release[1]);
        hold_idle_connections(daemon_->socket().c_str(), kNobody, report[1], release[0]);
    }
    ::close(report[1]);
    ::close(release[0]);
    IdleCount count;
    const ssize_t got = ::read(report[0], &count, sizeof count);
    ::close(report[0]);

    // While they are held: status and version answer, without waiting for the idle timeout
    // (5 minutes) to free a slot. The bound is far from both sides: an answer takes
    // milliseconds, one that waited for the timeout would take 300 s.
    const auto before = std::chrono::steady_clock::now();
    const auto status = ctl({"status"}, std::chrono::minutes(2));
    const auto took = std::chrono::steady_clock::now() - before;
    const auto version = ctl({"version"}, std::chrono::minutes(2));

    ::close(release[1]);
    int wstatus = 0;
    ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
    ASSERT_EQ(got, static_cast<ssize_t>(sizeof count)) << "the child exited " << wstatus;

    EXPECT_EQ(status.code, 0) << status.out << status.err << log();
    EXPECT_LT(took, std::chrono::minutes(2));
    EXPECT_EQ(version.code, 0) << version.err;
    EXPECT_EQ(count.connected, kIdle);
    EXPECT_EQ(count.refused_busy + count.held, kIdle);
    EXPECT_GT(count.held, 0);
    EXPECT_LE(count.held, 64);  // ServerOptions::max_connections_per_uid
    // After they are gone the daemon is still serving.
    EXPECT_EQ(ctl({"status"}).code, 0) << log();
    EXPECT_TRUE(daemon_->running()) << log();
}

// Five uids each holding their per-uid share of idle connections fill every slot a caller who
// is not privileged may use. Root still gets in (the reserved slots), and so does a sixth uid
// (an idle connection of the biggest holder is closed for it), both at once rather than after
// the idle timeout (docs/daemon.md, "Connection limits").
TEST_F(EndToEnd, IdleConnectionsOfFiveUidsStarveNobody) {
    ASSERT_EQ(::chmod(daemon_->socket().c_str(), 0666), 0);
    constexpr uid_t kFirst = 62001;  // no accounts needed: uids are numbers to the kernel
    constexpr int kUids = 5;
    int release[2];
    ASSERT_EQ(::pipe2(release, O_CLOEXEC), 0);
    std::vector<pid_t> children;
    std::vector<int> reports;
    for (int i = 0; i < kUids; ++i) {
        int report[2];
        ASSERT_EQ(::pipe2(report, O_CLOEXEC), 0);
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            ::close(report[0]);
            ::close(release[1]);
            hold_idle_connections(daemon_->socket().c_str(), kFirst + static_cast<uid_t>(i),
                                  report[1], release[0]);
        }
        ::close(report[1]);
        children.push_back(child);
        reports.push_back(report[0]);
    }
    ::close(release[0]);
    int held = 0;
    for (const int fd : reports) {
        IdleCount count;
        EXPECT_EQ(::read(fd, &count, sizeof count), static_cast<ssize_t>(sizeof count));
        ::close(fd);
        EXPECT_LE(count.held, 64);  // max_connections_per_uid
        held += count.held;
    }

    // Every slot for ordinary callers is taken (256 minus the 8 reserved).
    const auto root_status = ctl({"status"}, std::chrono::seconds(30));
    const auto other = run({"/usr/bin/setpriv", "--reuid=62006", "--regid=62006", "--clear-groups",
                            "--", WSINDEX_WSCTL, "version", "--socket", daemon_->socket()},
                           scratch_.path(), std::chrono::seconds(30));

    ::close(release[1]);
    for (const pid_t child : children) {
        int wstatus = 0;
        EXPECT_EQ(::waitpid(child, &wstatus, 0), child);
    }
    EXPECT_GE(held, 248 - 10) << "the uids did not fill the shared slots";
    EXPECT_EQ(root_status.code, 0) << root_status.out << root_status.err << log();
    EXPECT_EQ(other.code, 0) << other.out << other.err << log();
}

}  // namespace
}  // namespace wsindex::cli::test
