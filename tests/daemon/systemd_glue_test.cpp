// systemd glue: notifications reach a notify socket the test owns; LISTEN_FDS is adopted, both
// with a hand-made environment in a child and for real through systemd-socket-activate.
#include "daemon/systemd_glue.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/prerequisite.hpp"

namespace wsindex::daemon {
namespace {

namespace fs = std::filesystem;

// Restores (or unsets) an environment variable when the test ends.
class EnvGuard {
  public:
    explicit EnvGuard(const char* name) : name_(name) {
        if (const char* v = ::getenv(name)) old_ = v;
    }
    ~EnvGuard() {
        if (old_)
            ::setenv(name_, old_->c_str(), 1);
        else
            ::unsetenv(name_);
    }
    EnvGuard(const EnvGuard&) = delete;
    EnvGuard& operator=(const EnvGuard&) = delete;

  private:
    const char* name_;
    std::optional<std::string> old_;
};

fs::path make_temp_dir() {
    std::string pattern = (fs::temp_directory_path() / "wsglue-XXXXXX").string();
    char* made = ::mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    return pattern;
}

sockaddr_un address_of(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), std::min(path.size(), sizeof addr.sun_path - 1));
    return addr;
}

// The manager's side of the notify protocol: a datagram socket with a receive timeout, so a
// missing message fails the test after 5 s instead of hanging it.
class NotifyReceiver {
  public:
    // `abstract`: bind in the abstract namespace and export it as "@name".
    explicit NotifyReceiver(const fs::path& dir, bool abstract = false) {
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        EXPECT_GE(fd_, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        socklen_t len = 0;
        if (abstract) {
            const std::string name = "wsindex-notify-test-" + std::to_string(::getpid());
            std::memcpy(addr.sun_path + 1, name.data(), name.size());
            len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
            env_value_ = "@" + name;
        } else {
            env_value_ = (dir / "notify").string();
            addr = address_of(env_value_);
            len = sizeof addr;
        }
        EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len), 0) << std::strerror(errno);
        timeval tv{5, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    ~NotifyReceiver() { ::close(fd_); }
    NotifyReceiver(const NotifyReceiver&) = delete;
    NotifyReceiver& operator=(const NotifyReceiver&) = delete;

    [[nodiscard]] const std::string& env_value() const { return env_value_; }

    // The next datagram, or "<timeout>".
    std::string next() {
        char buf[4096];
        const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
        if (n < 0) return "<timeout>";
        return std::string(buf, static_cast<std::size_t>(n));
    }
    // A datagram already received, or "" (no wait).
    std::string pending() {
        char buf[4096];
        const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
        return n < 0 ? std::string() : std::string(buf, static_cast<std::size_t>(n));
    }

  private:
    int fd_ = -1;
    std::string env_value_;
};

TEST(SystemdGlue, EverythingIsANoOpWithoutAManager) {
    EnvGuard notify("NOTIFY_SOCKET"), fds("LISTEN_FDS"), pid("LISTEN_PID"), wd("WATCHDOG_USEC");
    ::unsetenv("NOTIFY_SOCKET");
    ::unsetenv("LISTEN_FDS");
    ::unsetenv("LISTEN_PID");
    ::unsetenv("WATCHDOG_USEC");
    EXPECT_FALSE(notify_enabled());
    EXPECT_FALSE(notify_ready());
    EXPECT_FALSE(notify_status("idle"));
    EXPECT_FALSE(notify_stopping());
    EXPECT_FALSE(notify_watchdog());
    EXPECT_FALSE(notify_reloading());
    EXPECT_FALSE(watchdog_timeout().has_value());
    EXPECT_FALSE(watchdog_ping_interval().has_value());
    AdoptedSocket adopted;
    ASSERT_TRUE(adopt_listen_socket(&adopted));
    EXPECT_FALSE(adopted.fd.has_value());
    EXPECT_TRUE(adopted.note.empty());
}

TEST(SystemdGlue, NotifySocketReceivesReadyStatusWatchdogStopping) {
    const fs::path dir = make_temp_dir();
    {
        NotifyReceiver manager(dir);
        EnvGuard notify("NOTIFY_SOCKET");
        ::setenv("NOTIFY_SOCKET", manager.env_value().c_str(), 1);
        EXPECT_TRUE(notify_enabled());

        EXPECT_TRUE(notify_ready());
        EXPECT_EQ(manager.next(), "READY=1");
        EXPECT_TRUE(notify_status("scanning /home\n12 entries"));
        EXPECT_EQ(manager.next(), "STATUS=scanning /home 12 entries");  // one line
        EXPECT_TRUE(notify_watchdog());
        EXPECT_EQ(manager.next(), "WATCHDOG=1");
        EXPECT_TRUE(notify_reloading());
        EXPECT_EQ(manager.next().rfind("RELOADING=1\nMONOTONIC_USEC=", 0), 0U);
        EXPECT_TRUE(notify_stopping());
        EXPECT_EQ(manager.next(), "STOPPING=1");
        // The environment stays: the daemon notifies many times over its life.
        EXPECT_TRUE(notify_enabled());
        EXPECT_FALSE(notify_raw(""));
    }
    fs::remove_all(dir);
}

TEST(SystemdGlue, AbstractNotifySocket) {
    const fs::path dir = make_temp_dir();
    {
        NotifyReceiver manager(dir, /*abstract=*/true);
        EnvGuard notify("NOTIFY_SOCKET");
        ::setenv("NOTIFY_SOCKET", manager.env_value().c_str(), 1);
        EXPECT_TRUE(notify_ready());
        EXPECT_EQ(manager.next(), "READY=1");
    }
    fs::remove_all(dir);
}

TEST(SystemdGlue, NotifyToAVanishedManagerFailsQuietly) {
    EnvGuard notify("NOTIFY_SOCKET");
    ::setenv("NOTIFY_SOCKET", "/nonexistent/wsindexd-notify", 1);
    EXPECT_FALSE(notify_ready());
}

TEST(SystemdGlue, WatchdogIntervalIsHalfTheTimeoutAndOnlyForUs) {
    EnvGuard usec("WATCHDOG_USEC"), pid("WATCHDOG_PID");
    ::setenv("WATCHDOG_USEC", "3000000", 1);
    ::setenv("WATCHDOG_PID", std::to_string(::getpid()).c_str(), 1);
    ASSERT_TRUE(watchdog_timeout().has_value());
    EXPECT_EQ(*watchdog_timeout(), std::chrono::seconds(3));
    EXPECT_EQ(*watchdog_ping_interval(), std::chrono::milliseconds(1500));
    // Meant for another process (a parent that exec'd us without clearing it): not ours.
    ::setenv("WATCHDOG_PID", "1", 1);
    EXPECT_FALSE(watchdog_timeout().has_value());
    ::unsetenv("WATCHDOG_PID");
    ::setenv("WATCHDOG_USEC", "0", 1);
    EXPECT_FALSE(watchdog_timeout().has_value());
}

TEST(SystemdGlue, WatchdogPingerPingsFromTheEventLoop) {
    const fs::path dir = make_temp_dir();
    {
        NotifyReceiver manager(dir);
        EnvGuard notify("NOTIFY_SOCKET"), usec("WATCHDOG_USEC"), pid("WATCHDOG_PID");
        ::setenv("NOTIFY_SOCKET", manager.env_value().c_str(), 1);
        ::unsetenv("WATCHDOG_USEC");
        boost::asio::io_context io;
        {
            WatchdogPinger none(io);
            EXPECT_FALSE(none.start());  // no WatchdogSec=: nothing scheduled
        }
        ::setenv("WATCHDOG_USEC", "200000", 1);  // 200 ms: pings every 100 ms
        ::setenv("WATCHDOG_PID", std::to_string(::getpid()).c_str(), 1);
        WatchdogPinger pinger(io);
        ASSERT_TRUE(pinger.start());
        EXPECT_EQ(manager.next(), "WATCHDOG=1");  // the immediate one
        // Each turn of the loop runs the timer's handler once (its only work): one ping each,
        // however late a loaded machine runs it. The bound only stops a hang.
        for (int i = 0; i < 2; ++i) {
            ASSERT_EQ(io.run_one_for(std::chrono::seconds(30)), 1u) << "the timer never fired";
            EXPECT_EQ(manager.next(), "WATCHDOG=1");
        }
        pinger.stop();
        pinger.stop();  // idempotent
        io.restart();
        io.poll();  // runs the cancelled wait, which must not arm another
        EXPECT_TRUE(io.stopped()) << "work left after stop()";
        EXPECT_EQ(manager.pending(), "") << "a ping after stop()";
    }
    fs::remove_all(dir);
}

// Runs `body` in a forked child (fd 3 and the environment are process-wide, so the test
// process itself is left alone) and returns its exit status: 0 = all checks passed, else the
// number of the failed check.
template <class Body>
int in_child(Body body) {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(body());
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

int listening_socket(const std::string& path) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr = address_of(path);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return -1;
    if (::listen(fd, 8) != 0) return -1;
    return fd;
}

TEST(SystemdGlue, AdoptsAPassedListeningSocket) {
    const fs::path dir = make_temp_dir();
    const std::string path = (dir / "sock").string();
    const int rc = in_child([&] {
        const int fd = listening_socket(path);
        if (fd < 0 || ::dup2(fd, 3) < 0) return 1;
        if (fd != 3) ::close(fd);  // the socket may have been given fd 3 already
        ::setenv("LISTEN_FDS", "1", 1);
        ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
        ::setenv("LISTEN_FDNAMES", "wsindexd.socket", 1);
        std::vector<ListenFd> fds;
        if (!take_listen_fds(&fds)) return 2;
        if (fds.size() != 1 || fds[0].fd != 3 || fds[0].name != "wsindexd.socket") return 3;
        if ((::fcntl(3, F_GETFD) & FD_CLOEXEC) == 0) return 4;  // not leaked to children
        if (::getenv("LISTEN_FDS") != nullptr) return 5;        // consumed
        return 0;
    });
    EXPECT_EQ(rc, 0);
    fs::remove_all(dir);
}

TEST(SystemdGlue, AdoptListenSocketPicksTheListenerAndRejectsOthers) {
    const fs::path dir = make_temp_dir();
    const std::string path = (dir / "sock").string();
    // A datagram socket and a listener: the listener is adopted, the other closed and noted.
    int rc = in_child([&] {
        const int dgram = ::socket(AF_UNIX, SOCK_DGRAM, 0);
        const int listener = listening_socket(path);
        if (dgram < 0 || listener < 0) return 1;
        if (::dup2(dgram, 3) < 0 || ::dup2(listener, 4) < 0) return 1;
        ::setenv("LISTEN_FDS", "2", 1);
        ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
        AdoptedSocket adopted;
        if (!adopt_listen_socket(&adopted)) return 2;
        if (!adopted.fd || *adopted.fd != 4) return 3;
        if (adopted.note.find("fd 3") == std::string::npos) return 4;
        if (::fcntl(3, F_GETFD) != -1) return 5;  // closed
        return 0;
    });
    EXPECT_EQ(rc, 0);
    // Only a non-listening socket: an error, so the daemon refuses to start.
    rc = in_child([&] {
        const int dgram = ::socket(AF_UNIX, SOCK_DGRAM, 0);
        if (dgram < 0 || ::dup2(dgram, 3) < 0) return 1;
        ::setenv("LISTEN_FDS", "1", 1);
        ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
        AdoptedSocket adopted;
        if (adopt_listen_socket(&adopted)) return 2;
        return adopted.fd ? 3 : 0;
    });
    EXPECT_EQ(rc, 0);
    // LISTEN_PID of another process (inherited by mistake): not ours, nothing adopted.
    rc = in_child([&] {
        ::setenv("LISTEN_FDS", "1", 1);
        ::setenv("LISTEN_PID", "1", 1);
        AdoptedSocket adopted;
        if (!adopt_listen_socket(&adopted)) return 2;
        return adopted.fd ? 3 : 0;
    });
    EXPECT_EQ(rc, 0);
    fs::remove_all(dir);
}

// ---- for real: systemd-socket-activate execs this test binary as the helper below ----------

constexpr const char* kHelperEnv = "WSINDEX_ACTIVATION_HELPER";

// Runs only as the activated child: adopts the socket, reports readiness, answers one client.
TEST(SystemdGlueHelper, ServeOneActivatedConnection) {
    if (::getenv(kHelperEnv) == nullptr) GTEST_SKIP() << "helper for SocketActivation test";
    AdoptedSocket adopted;
    ASSERT_TRUE(adopt_listen_socket(&adopted));
    ASSERT_TRUE(adopted.fd.has_value()) << adopted.note;
    ASSERT_TRUE(notify_ready());
    const int client = ::accept4(*adopted.fd, nullptr, nullptr, SOCK_CLOEXEC);
    ASSERT_GE(client, 0);
    const std::string reply = "adopted fd " + std::to_string(*adopted.fd) + "\n";
    ASSERT_EQ(::write(client, reply.data(), reply.size()), static_cast<ssize_t>(reply.size()));
    ::close(client);
}

std::optional<std::string> find_program(const char* name) {
    for (const char* dir : {"/usr/bin", "/bin", "/usr/local/bin"}) {
        const std::string path = std::string(dir) + "/" + name;
        if (::access(path.c_str(), X_OK) == 0) return path;
    }
    return std::nullopt;
}

TEST(SystemdGlue, SocketActivationThroughSystemdSocketActivate) {
    const auto activate = find_program("systemd-socket-activate");
    // CI installs systemd (scripts/install-deps): there a missing tool fails the test.
    if (!activate) WSINDEX_SKIP_OR_FAIL_IN_CI() << "systemd-socket-activate not installed";
    const fs::path dir = make_temp_dir();
    const std::string sock = (dir / "wsindexd.sock").string();
    const std::string self = fs::read_symlink("/proc/self/exe").string();
    NotifyReceiver manager(dir);

    // systemd-socket-activate passes only LISTEN_* and what -E names to the program.
    const std::vector<std::string> args = {
        *activate,
        "-l",
        sock,
        "--fdname=wsindexd.socket",
        std::string("-E") + kHelperEnv + "=1",
        "-ENOTIFY_SOCKET=" + manager.env_value(),
        self,
        "--gtest_filter=SystemdGlueHelper.ServeOneActivatedConnection"};
    const std::string log = (dir / "helper.log").string();
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ::dup2(out, 1);
        ::dup2(out, 2);
        std::vector<char*> argv;
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ASSERT_GT(pid, 0);

    // Wait (at most 10 s) for the activator to listen, then connect: that triggers the exec.
    int fd = -1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
        fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr = address_of(sock);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) break;
        ::close(fd);
        fd = -1;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_GE(fd, 0) << "systemd-socket-activate never listened on " << sock;
    timeval tv{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);

    EXPECT_EQ(manager.next(), "READY=1");
    char buf[128] = {};
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    EXPECT_EQ(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0), "adopted fd 3\n");

    // Bounded wait for the helper; kill it if it hangs.
    int status = 0;
    bool exited = false;
    for (int i = 0; i < 500 && !exited; ++i) {
        exited = ::waitpid(pid, &status, WNOHANG) == pid;
        if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!exited) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
    }
    EXPECT_TRUE(exited && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "helper output in " << log;
    if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace wsindex::daemon
