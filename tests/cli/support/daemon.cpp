// Starting, probing and stopping a real wsindexd; running the real wsctl against it.
#include "tests/cli/support/daemon.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "ipc/client.hpp"
#include "ipc/methods.hpp"

namespace wsindex::cli::test {

Daemon::Daemon(DaemonOptions options)
    : options_(std::move(options)),
      socket_(options_.dir + "/s"),
      db_(options_.db.empty() ? options_.dir + "/db" : options_.db),
      log_path_(options_.dir + "/wsindexd.log") {
    if (options_.uid) {
        if (::chown(options_.dir.c_str(), *options_.uid, options_.gid.value_or(*options_.uid)) !=
            0) {
            ADD_FAILURE() << "chown " << options_.dir << ": " << std::strerror(errno);
        }
        ::chmod(options_.dir.c_str(), 0755);
    }
}

Daemon::~Daemon() {
    if (process_.running()) process_.kill(SIGKILL);
}

std::string Daemon::log() const { return read_file(log_path_); }

bool Daemon::start(std::string& error) {
    std::vector<std::string> argv{WSINDEX_WSINDEXD, "--socket", socket_, "--db", db_};
    argv.insert(argv.end(), options_.extra_args.begin(), options_.extra_args.end());
    SpawnOptions spawn;
    spawn.uid = options_.uid;
    spawn.gid = options_.gid;
    spawn.die_with_parent = true;
    spawn.out_path = log_path_ + ".out" + std::to_string(starts_);
    // Appending would be nicer across restarts; one log per start keeps it simple.
    spawn.err_path = log_path_ + (starts_ == 0 ? "" : "." + std::to_string(starts_));
    log_path_ = spawn.err_path;
    ++starts_;
    process_ = Process::spawn(argv, spawn);
    if (!process_.running()) {
        error = "could not spawn " + argv[0];
        return false;
    }

    // Ready = answers wsindex.Version. Between attempts we wait on the child's pidfd, so an
    // early exit is noticed at once; the 20 ms is the retry period of a liveness poll, not a
    // guess at how long anything takes.
    const auto deadline = std::chrono::steady_clock::now() + kStartDeadline;
    ipc::ClientOptions options;
    options.connect_timeout = std::chrono::seconds(2);
    options.reply_timeout = std::chrono::seconds(10);
    std::string last_error;
    while (std::chrono::steady_clock::now() < deadline) {
        auto client = ipc::Client::connect(socket_, options);
        if (client) {
            auto reply = client->call(ipc::method::kVersion, nlohmann::json::object());
            if (reply) return true;
            last_error = reply.error().to_string();
        } else {
            last_error = client.error().to_string();
        }
        if (process_.wait_readable(std::chrono::milliseconds(20))) {
            auto exit = process_.wait(std::chrono::seconds(1));
            error = "wsindexd exited during start-up (code " +
                    std::to_string(exit ? exit->code : -1) + ", signal " +
                    std::to_string(exit ? exit->signal : 0) + "); log:\n" + log();
            return false;
        }
    }
    error = "wsindexd did not answer within " + std::to_string(kStartDeadline.count()) + " s (" +
            last_error + "); log:\n" + log();
    return false;
}

std::optional<Exit> Daemon::stop(int sig) {
    process_.kill(sig);
    auto exit = process_.wait(kStopDeadline);
    if (!exit) {
        process_.kill(SIGKILL);
        process_.wait(std::chrono::seconds(30));
    }
    return exit;
}

Exit wsctl(const std::string& socket, std::vector<std::string> args, const std::string& scratch,
           std::chrono::milliseconds timeout) {
    args.insert(args.begin(), WSINDEX_WSCTL);
    args.push_back("--socket");
    args.push_back(socket);
    return run(args, scratch, timeout);
}

Process spawn_wsctl(const std::string& socket, std::vector<std::string> args,
                    const std::string& scratch, const std::string& tag) {
    args.insert(args.begin(), WSINDEX_WSCTL);
    args.push_back("--socket");
    args.push_back(socket);
    SpawnOptions options;
    options.out_path = scratch + "/" + tag + ".out";
    options.err_path = scratch + "/" + tag + ".err";
    return Process::spawn(args, options);
}

}  // namespace wsindex::cli::test
