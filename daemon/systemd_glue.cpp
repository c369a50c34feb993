// systemd glue: thin wrappers over sd_listen_fds_with_names, sd_notify and sd_watchdog_enabled.
#include "daemon/systemd_glue.hpp"

#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/clock.hpp"

namespace wsindex::daemon {

namespace {

// sd_notify returns >0 when sent, 0 when NOTIFY_SOCKET is unset, <0 (-errno) on failure.
bool send(const std::string& state) { return ::sd_notify(0, state.c_str()) > 0; }

}  // namespace

core::Status take_listen_fds(std::vector<ListenFd>* out) {
    out->clear();
    char** names = nullptr;
    // unset_environment = 1: the fds are ours now; a child must not think it owns them.
    const int n = ::sd_listen_fds_with_names(1, &names);
    if (n < 0) return core::Status::from_errno(-n, "LISTEN_FDS from the service manager");
    for (int i = 0; i < n; ++i) {
        ListenFd fd;
        fd.fd = SD_LISTEN_FDS_START + i;
        if (names != nullptr && names[i] != nullptr) fd.name = names[i];
        out->push_back(std::move(fd));
    }
    if (names != nullptr) {
        for (int i = 0; i < n; ++i) std::free(names[i]);
        std::free(static_cast<void*>(names));
    }
    return {};
}

core::Status adopt_listen_socket(AdoptedSocket* out) {
    out->fd.reset();
    out->note.clear();
    std::vector<ListenFd> fds;
    if (auto status = take_listen_fds(&fds); !status) return status;
    for (const ListenFd& candidate : fds) {
        // listening = 1: a connected socket (Accept=yes in the unit) would be a mistake we
        // refuse rather than serve one client and exit.
        const bool usable = ::sd_is_socket_unix(candidate.fd, SOCK_STREAM, 1, nullptr, 0) > 0;
        if (usable && !out->fd) {
            out->fd = candidate.fd;
            continue;
        }
        out->note +=
            (out->note.empty() ? "" : "; ") + std::string("ignored passed fd ") +
            std::to_string(candidate.fd) + " (" +
            (candidate.name.empty() ? "unnamed" : candidate.name) + "): " +
            (usable ? "more than one listening socket" : "not a listening AF_UNIX stream socket");
        ::close(candidate.fd);
    }
    if (!fds.empty() && !out->fd) {
        return core::Status(
            std::make_error_code(std::errc::invalid_argument),
            "socket activation passed no listening AF_UNIX stream socket: " + out->note);
    }
    return {};
}

bool notify_enabled() {
    const char* socket = std::getenv("NOTIFY_SOCKET");
    return socket != nullptr && socket[0] != '\0';
}

bool notify_ready() { return send("READY=1"); }

bool notify_reloading() {
    // systemd >= 253 (Type=notify-reload) needs MONOTONIC_USEC to match the reload to the
    // signal; older managers ignore the extra field.
    return send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(core::monotonic_ns() / 1000));
}

bool notify_stopping() { return send("STOPPING=1"); }

bool notify_status(std::string_view text) {
    std::string line = "STATUS=";
    line.reserve(line.size() + text.size());
    for (char c : text) line.push_back(c == '\n' || c == '\r' ? ' ' : c);
    return send(line);
}

bool notify_watchdog() { return send("WATCHDOG=1"); }

bool notify_raw(std::string_view state) {
    if (state.empty()) return false;
    return send(std::string(state));
}

std::optional<std::chrono::microseconds> watchdog_timeout() {
    std::uint64_t usec = 0;
    // unset_environment = 0: the value is read again if anyone asks, and WATCHDOG_PID keeps a
    // child from pinging on our behalf anyway.
    if (::sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::nullopt;
    return std::chrono::microseconds(static_cast<std::int64_t>(usec));
}

std::optional<std::chrono::microseconds> watchdog_ping_interval() {
    auto timeout = watchdog_timeout();
    if (!timeout) return std::nullopt;
    return *timeout / 2;
}

struct WatchdogPinger::State {
    explicit State(boost::asio::io_context& io) : timer(io) {}
    boost::asio::steady_timer timer;
    std::chrono::microseconds interval{0};
    bool stopped = false;  // io thread only
};

void WatchdogPinger::schedule(const std::shared_ptr<State>& state) {
    state->timer.expires_after(state->interval);
    state->timer.async_wait([state](const boost::system::error_code& ec) {
        if (ec || state->stopped) return;
        notify_watchdog();
        schedule(state);
    });
}

WatchdogPinger::WatchdogPinger(boost::asio::io_context& io) : state_(std::make_shared<State>(io)) {}

WatchdogPinger::~WatchdogPinger() { stop(); }

bool WatchdogPinger::start() {
    auto interval = watchdog_ping_interval();
    if (!interval || state_->stopped) return false;
    state_->interval = *interval;
    notify_watchdog();
    schedule(state_);
    return true;
}

void WatchdogPinger::stop() {
    if (state_->stopped) return;
    state_->stopped = true;
    state_->timer.cancel();
}

}  // namespace wsindex::daemon
