// systemd glue: socket activation (LISTEN_FDS), sd_notify readiness/status/watchdog, via
// libsystemd.
//
// Every function is a harmless no-op when the process was not started by systemd (no
// NOTIFY_SOCKET, no LISTEN_FDS, no WATCHDOG_USEC), so the daemon calls them unconditionally.
// None of them throws. The environment variables are left in place (sd_notify's
// unset_environment = 0) because the daemon notifies many times (STATUS=, WATCHDOG=1) over its
// life; only LISTEN_* is consumed, so that a child process we might ever spawn does not believe
// it owns our sockets.
//
// Thread-safety: notify_* may be called from any thread (each call is one sendmsg on a fresh
// socket inside libsystemd). take_listen_fds() reads and clears the environment: call it once,
// from main, before any other thread starts.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace wsindex::daemon {

// One socket handed over by systemd (or systemd-socket-activate).
struct ListenFd {
    int fd = -1;       // owned by the caller from now on; close-on-exec is set
    std::string name;  // FileDescriptorName= of the .socket unit ("wsindexd.socket" by default)
};

// The sockets passed by socket activation: empty when not activated. An error means LISTEN_FDS
// was set for us but unusable (malformed); the daemon should then refuse to start rather than
// silently binding its own socket beside the one systemd owns.
core::Status take_listen_fds(std::vector<ListenFd>* out);

// The first passed socket that is a listening AF_UNIX stream socket, or nullopt. Extra fds are
// closed (the unit declares exactly one; anything else is a configuration mistake, logged by
// the caller through the returned message). Same once-from-main rule as take_listen_fds().
struct AdoptedSocket {
    std::optional<int> fd;  // nullopt: not socket-activated, bind the configured path
    std::string note;       // non-empty: something odd was ignored (for a warning log line)
};
core::Status adopt_listen_socket(AdoptedSocket* out);

// True if NOTIFY_SOCKET is set, i.e. a service manager waits for our notifications.
[[nodiscard]] bool notify_enabled();

// READY=1 — call once the database is open and the socket listens (Type=notify). Also after a
// reload has finished (see notify_reloading). Returns false if not under systemd or the
// message could not be sent (never fatal: the daemon works without a manager).
bool notify_ready();
// RELOADING=1 with MONOTONIC_USEC, at the start of handling SIGHUP; follow with notify_ready().
bool notify_reloading();
// STOPPING=1 — at the start of a graceful shutdown (SIGTERM), before cancelling the scan.
bool notify_stopping();
// STATUS=<text> — one line shown by `systemctl status` (scan progress). Newlines are replaced
// by spaces because the notify protocol is newline-separated key=value pairs.
bool notify_status(std::string_view text);
// WATCHDOG=1 — keep-alive; send every watchdog_ping_interval() from the main loop, so a hung
// io_context (not a busy scan thread) is what the watchdog catches.
bool notify_watchdog();
// MAINPID=... and other raw assignments, for tests and future use. `state` must not be empty.
bool notify_raw(std::string_view state);

// WatchdogSec= of the unit, when the watchdog is enabled for this process; nullopt otherwise.
[[nodiscard]] std::optional<std::chrono::microseconds> watchdog_timeout();
// How often to ping: half the timeout (sd_watchdog_enabled(3) recommends that), or nullopt.
[[nodiscard]] std::optional<std::chrono::microseconds> watchdog_ping_interval();

// Sends WATCHDOG=1 every watchdog_ping_interval() from the thread that runs `io` (the daemon's
// main loop): a hung event loop stops the pings and systemd restarts the service, while a long
// scan on its own threads does not. Construct, start() and stop() on that thread (or before it
// runs); stop() is idempotent and the destructor stops.
class WatchdogPinger {
  public:
    explicit WatchdogPinger(boost::asio::io_context& io);
    ~WatchdogPinger();
    WatchdogPinger(const WatchdogPinger&) = delete;
    WatchdogPinger& operator=(const WatchdogPinger&) = delete;

    // Pings once now and schedules the rest; false (nothing scheduled) without a watchdog.
    bool start();
    void stop();

  private:
    struct State;
    static void schedule(const std::shared_ptr<State>& state);
    std::shared_ptr<State> state_;  // shared with the pending timer handler
};

}  // namespace wsindex::daemon
