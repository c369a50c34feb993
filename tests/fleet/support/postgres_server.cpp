// PostgresServer: initdb + postgres as an unprivileged child, Unix socket only.
#include "tests/fleet/support/postgres_server.hpp"

#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "fleet/pg_connection.hpp"
#include "tests/cli/support/scratch.hpp"

namespace wsindex::fleet::test {

namespace {

constexpr std::chrono::seconds kReadyDeadline{60};

}  // namespace

bool PostgresServer::available() {
    return ::access((std::string(kPostgresBin) + "/initdb").c_str(), X_OK) == 0 &&
           ::access((std::string(kPostgresBin) + "/postgres").c_str(), X_OK) == 0;
}

PostgresServer::~PostgresServer() { stop(); }

std::string PostgresServer::url() const { return "host=" + dir_ + " dbname=wsfleet user=wsfleet"; }

std::string PostgresServer::admin_url() const {
    return "host=" + dir_ + " dbname=postgres user=wsfleet";
}

bool PostgresServer::start(std::string& error) {
    const struct passwd* pw = ::getpwnam("postgres");
    if (pw == nullptr) pw = ::getpwnam("nobody");
    if (pw == nullptr) {
        error = "neither a postgres nor a nobody user to run PostgreSQL as";
        return false;
    }
    const uid_t uid = pw->pw_uid;
    const gid_t gid = pw->pw_gid;
    std::string tmpl = "/tmp/wsfleet-pg-XXXXXX";  // short: a socket path has ~100 bytes
    if (::mkdtemp(tmpl.data()) == nullptr) {
        error = "mkdtemp failed";
        return false;
    }
    dir_ = tmpl;
    if (::chmod(dir_.c_str(), 0755) != 0 || ::chown(dir_.c_str(), uid, gid) != 0) {
        error = "cannot hand " + dir_ + " to uid " + std::to_string(uid);
        return false;
    }
    cli::test::SpawnOptions options;
    options.uid = uid;
    options.gid = gid;
    options.env = {"LC_ALL=C", "HOME=" + dir_};
    options.out_path = dir_ + "/initdb.out";
    options.err_path = dir_ + "/initdb.err";
    auto initdb = cli::test::Process::spawn(
        {std::string(kPostgresBin) + "/initdb", "-D", dir_ + "/data", "-U", "wsfleet", "-A",
         "trust", "--no-sync", "--no-locale", "-E", "UTF8"},
        options);
    const auto done = initdb.wait(std::chrono::seconds(120));
    if (!done || done->code != 0) {
        error = "initdb failed: " + cli::test::read_file(dir_ + "/initdb.err");
        return false;
    }
    uid_ = uid;
    gid_ = gid;
    if (!launch(error)) return false;
    PgConnection admin;
    if (auto st = PgConnection::connect(admin_url(), "", &admin); !st) {
        error = st.message();
        return false;
    }
    if (auto st = admin.exec("CREATE DATABASE wsfleet"); !st) {
        error = st.message();
        return false;
    }
    return true;
}

bool PostgresServer::launch(std::string& error) {
    cli::test::SpawnOptions options;
    options.uid = uid_;
    options.gid = gid_;
    options.env = {"LC_ALL=C", "HOME=" + dir_};
    options.out_path = dir_ + "/postgres.out";
    options.err_path = dir_ + "/postgres.log";
    // No TCP at all; fsync off: the data is thrown away with the folder.
    server_ = cli::test::Process::spawn(
        {std::string(kPostgresBin) + "/postgres", "-D", dir_ + "/data", "-k", dir_, "-c",
         "listen_addresses=", "-c", "fsync=off", "-c", "full_page_writes=off"},
        options);
    const auto deadline = std::chrono::steady_clock::now() + kReadyDeadline;
    const std::string ping = admin_url();
    while (PQping(ping.c_str()) != PQPING_OK) {
        if (server_.poll_exited() || std::chrono::steady_clock::now() > deadline) {
            error = "postgres did not start: " + cli::test::read_file(dir_ + "/postgres.log");
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling for readiness
    }
    return true;
}

bool PostgresServer::require_password(const std::string& role, std::string& error) {
    const std::string hba = dir_ + "/data/pg_hba.conf";
    const std::string rules = cli::test::read_file(hba);
    // The first matching line wins: this one goes before the "trust" ones. Written in place,
    // so the file keeps its owner (the server's user).
    std::ofstream out(hba, std::ios::trunc);
    out << "local all " << role << " scram-sha-256\n" << rules;
    out.close();
    if (!out || rules.empty()) {
        error = "cannot rewrite " + hba;
        return false;
    }
    server_.kill(SIGHUP);
    return true;
}

void PostgresServer::pause() {
    if (!server_.running()) return;
    server_.kill(SIGINT);  // fast shutdown
    (void)server_.wait(std::chrono::seconds(60));
}

bool PostgresServer::resume(std::string& error) { return launch(error); }

void PostgresServer::stop() {
    if (server_.running()) {
        server_.kill(SIGINT);  // fast shutdown
        (void)server_.wait(std::chrono::seconds(60));
    }
    if (!dir_.empty()) cli::test::remove_tree(dir_);
    dir_.clear();
}

}  // namespace wsindex::fleet::test
