// A real wsindexd for end-to-end tests: started on a temporary socket and database, ready when
// it answers wsindex.Version (polled with a deadline), stopped with SIGTERM; and a runner for the
// real wsctl pointed at it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "tests/cli/support/process.hpp"

namespace wsindex::cli::test {

// Generous: sanitizer builds start slowly and the machine is shared.
inline constexpr std::chrono::seconds kStartDeadline{120};
inline constexpr std::chrono::seconds kStopDeadline{120};

struct DaemonOptions {
    std::string dir;           // holds the socket, the database and the log
    std::string db;            // the database elsewhere (e.g. on a small tmpfs); "": dir/db
    std::optional<uid_t> uid;  // run as this user (the dir is chowned to it)
    std::optional<gid_t> gid;
    std::vector<std::string> extra_args;
};

class Daemon {
  public:
    explicit Daemon(DaemonOptions options);
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;
    ~Daemon();  // SIGKILL if still running

    // Starts wsindexd and waits until it answers; false (with the log in `error`) if it exits
    // or does not answer within kStartDeadline.
    bool start(std::string& error);
    // SIGTERM, then waits up to kStopDeadline; the exit, or nullopt on timeout (then killed).
    std::optional<Exit> stop(int sig = 15);

    [[nodiscard]] const std::string& socket() const { return socket_; }
    [[nodiscard]] const std::string& db() const { return db_; }
    [[nodiscard]] pid_t pid() const { return process_.pid(); }
    [[nodiscard]] bool running() { return process_.running() && !process_.poll_exited(); }
    // The daemon's stderr so far (its log).
    [[nodiscard]] std::string log() const;

  private:
    DaemonOptions options_;
    std::string socket_;
    std::string db_;
    std::string log_path_;
    int starts_ = 0;
    Process process_;
};

// Runs the real wsctl against `socket` (via --socket), output captured; times out after
// `timeout` (code -1 then).
Exit wsctl(const std::string& socket, std::vector<std::string> args, const std::string& scratch,
           std::chrono::milliseconds timeout = std::chrono::minutes(5));

// Starts wsctl without waiting (for a scan --wait in the background, or many clients at once).
Process spawn_wsctl(const std::string& socket, std::vector<std::string> args,
                    const std::string& scratch, const std::string& tag);

}  // namespace wsindex::cli::test
