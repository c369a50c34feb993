// A throwaway PostgreSQL 15 server for the fleet tests: initdb in a temporary folder, listening
// on a Unix socket in that folder only (no TCP), run as the unprivileged `postgres` (or
// `nobody`) user since PostgreSQL refuses root; a database `wsfleet` created; stopped at the end.
#pragma once

#include <string>

#include "tests/cli/support/process.hpp"

namespace wsindex::fleet::test {

// Debian's PostgreSQL 15 server binaries.
inline constexpr const char* kPostgresBin = "/usr/lib/postgresql/15/bin";

class PostgresServer {
  public:
    PostgresServer() = default;
    PostgresServer(const PostgresServer&) = delete;
    PostgresServer& operator=(const PostgresServer&) = delete;
    ~PostgresServer();  // stop()

    // Whether the server binaries are installed (else the tests skip, or fail under CI).
    static bool available();

    // initdb, start, wait until it answers, CREATE DATABASE wsfleet. False with the reason.
    bool start(std::string& error);
    void stop();  // the server, and its folder removed

    // An outage: the server stops (fast shutdown) and starts again on the same data.
    void pause();
    bool resume(std::string& error);

    // Password authentication (SCRAM) for `role` on the socket, every other role still
    // trusted. Applied by a reload (SIGHUP), which takes effect shortly after this returns:
    // callers poll until a connection without a password is refused.
    bool require_password(const std::string& role, std::string& error);

    // libpq connection strings (key=value form) for the fleet database and for `postgres`.
    [[nodiscard]] std::string url() const;
    [[nodiscard]] std::string admin_url() const;
    // The folder of its Unix socket (libpq's and postgres_fdw's `host`).
    [[nodiscard]] const std::string& socket_dir() const { return dir_; }

  private:
    bool launch(std::string& error);  // postgres, until it answers

    std::string dir_;
    uid_t uid_ = 0;
    gid_t gid_ = 0;  // socket, data/ and the log
    cli::test::Process server_;
};

}  // namespace wsindex::fleet::test
