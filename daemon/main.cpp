// wsindexd: the file-system indexing daemon — parses flags and configuration, runs the Daemon.
//
// The daemon's files (daemon/):
//   main.cpp            this file: flags, configuration, logging, the exception edge
//   command_line.*      the flags and how they override the configuration file
//   config.*            the configuration file: Config, parse_config(text), defaults
//   logging.*           spdlog to stderr, one line per event
//   daemon.*            assembly: scan service, query pool, IPC server, signals (SIGHUP, SIGTERM)
//   handlers.*          method registration and shared helpers
//   scan_handlers.cpp   wsindex.Version, Scan, Cancel, Status
//   query_handlers.cpp  wsindex.Find, Du, Errors, Scans
//   scan_service.*      the scan queue and thread, periodic rescans, walker -> writer
//   scan_job.*          one scan's state and live counters
//   scan_waiter.*       progress replies for Scan with wait
//   scan_root.*         request path -> canonical root, or NoSuchPath/NotADirectory
//   query_pool.*        query threads with their read connections and the name index
//   index_queries.*     SQL over scans, errors and roots (until storage offers them)
//   thread_priority.*   nice and idle I/O class for scan threads
//   seams.hpp           hooks for the visibility filter and the systemd glue
//   systemd_*, visibility.*  written separately; plugged in here through seams.hpp
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <system_error>

#include "daemon/command_line.hpp"
#include "daemon/config.hpp"
#include "daemon/daemon.hpp"
#include "daemon/logging.hpp"
#include "daemon/systemd_glue.hpp"
#include "daemon/visibility.hpp"
#include "ipc/bytes_codec.hpp"

namespace {

// The real visibility filter, scan control policy and systemd glue, through the seams.
wsindex::daemon::Seams make_seams(const wsindex::daemon::Config& config, int listen_fd) {
    using namespace wsindex::daemon;
    Seams seams;
    // Each caller sees what they could list themselves, judged on the live file system. A
    // per-user daemon (no way past permission bits) indexed only what its user may read: that
    // user sees everything, without the per-call listability checks (their counts too, also
    // during a root's first scan).
    seams.visibility = make_visibility_policy();
    if (!process_may_bypass_permissions()) {
        seams.visibility = trusting_own_user(std::move(seams.visibility), ::geteuid());
    }
    // Control: root, the daemon's own user (a per-user instance belongs to its user), or the
    // control group: the socket's group if configured, else "wsindex" if that group exists.
    const std::optional<gid_t> group =
        lookup_group(config.socket_group.empty() ? std::string("wsindex") : config.socket_group);
    ControlPolicy group_policy = make_control_policy(group);
    const uid_t self = ::geteuid();
    seams.may_control = [group_policy, self](const wsindex::ipc::PeerCredentials& peer) {
        if (peer.valid && (peer.uid == 0 || peer.uid == self)) return true;  // no /proc read
        return group_policy(peer);
    };
    ServiceManagerHooks& sm = seams.service_manager;
    sm.notify_ready = [] { notify_ready(); };
    sm.notify_reloading = [] { notify_reloading(); };
    sm.notify_stopping = [] { notify_stopping(); };
    sm.notify_status = [](std::string_view text) { notify_status(text); };
    sm.listen_fd = [listen_fd] { return listen_fd; };
    return seams;
}

// The index and the socket's temporary name are private by default (the database is never
// world-readable); the socket gets its configured mode explicitly.
constexpr mode_t kUmask = 0077;

int run(int argc, char** argv) {
    using namespace wsindex::daemon;
    auto parsed = parse_command_line(argc, argv);
    if (const int* code = std::get_if<int>(&parsed)) return *code;
    const CommandLine& line = std::get<CommandLine>(parsed);

    ConfigResult config = resolve_config(line);
    if (const auto* error = std::get_if<ConfigError>(&config)) {
        std::fprintf(stderr, "wsindexd: %s\n", wsindex::ipc::log_bytes(error->message).c_str());
        return 2;
    }
    ::umask(kUmask);
    DaemonOptions options;
    options.config = std::get<Config>(std::move(config));
    options.command_line = line;
    setup_logging(options.config.log_level);

    // Socket activation: take the passed socket before any thread exists (it edits environ).
    AdoptedSocket adopted;
    if (auto st = adopt_listen_socket(&adopted); !st) {
        spdlog::critical("cannot start: socket activation: {}", st.to_string());
        return 1;
    }
    if (!adopted.note.empty()) spdlog::warn("socket activation: {}", adopted.note);
    options.seams = make_seams(options.config, adopted.fd.value_or(-1));
    options.watchdog = true;

    // A per-user default lives in ~/.local/state/wsindexd, which may not exist yet.
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(options.config.db_path).parent_path(),
                                        ec);
    // So does the default socket's directory ($XDG_RUNTIME_DIR/wsindexd): made private (the
    // umask above), and only that one level, so a missing runtime directory is still an error.
    if (!adopted.fd && options.config.socket_path == default_socket_path() && ::geteuid() != 0) {
        ::mkdir(std::filesystem::path(options.config.socket_path).parent_path().c_str(), 0700);
    }

    Daemon daemon(std::move(options));
    if (auto st = daemon.start(); !st) {
        spdlog::critical("cannot start: {}", st.to_string());
        return 1;
    }
    daemon.run();
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "wsindexd: fatal: %s\n", wsindex::ipc::log_bytes(e.what()).c_str());
    } catch (...) {
        std::fprintf(stderr, "wsindexd: fatal: unknown exception\n");
    }
    return 1;
}
