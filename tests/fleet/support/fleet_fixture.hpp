// The fleet tests' fixture: a real PostgreSQL 15 started once per test process, daemons as
// hosts (each with its own tree and [fleet] configuration), and the comparisons of a host's
// own wsctl answers with `wsctl fleet`'s.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "fleet/pg_connection.hpp"
#include "fleet/schema.hpp"
#include "tests/cli/support/daemon.hpp"
#include "tests/cli/support/scratch.hpp"
#include "tests/fleet/support/postgres_server.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::fleet::test {

using cli::test::Daemon;
using cli::test::DaemonOptions;
using cli::test::Exit;
using cli::test::ScratchDir;

// A publish follows a scan asynchronously; sanitizer builds and a shared machine are slow.
constexpr std::chrono::seconds kConvergeDeadline{60};

inline void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
    ASSERT_TRUE(out.good()) << path;
}

inline void make_dir(const std::string& path) { ASSERT_EQ(::mkdir(path.c_str(), 0755), 0) << path; }

// `nul_records` (paths each followed by a NUL) with "host:" before each path.
inline std::string with_host(const std::string& host, const std::string& nul_records) {
    std::string out;
    for (std::size_t at = 0; at < nul_records.size();) {
        const std::size_t end = nul_records.find('\0', at);
        out += host + ":" + nul_records.substr(at, end + 1 - at);
        at = end + 1;
    }
    return out;
}

// Sets a file's modification time (seconds since the epoch), without following a symlink.
inline void set_mtime(const std::string& path, std::int64_t seconds) {
    const struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << path;
}

struct Host {
    std::string name;
    std::string tree;
    std::unique_ptr<Daemon> daemon;
};

class FleetTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        if (!PostgresServer::available()) return;
        server_ = new PostgresServer();
        std::string error;
        if (!server_->start(error)) start_error_ = new std::string(error);
    }
    static void TearDownTestSuite() {
        delete server_;
        server_ = nullptr;
        delete start_error_;
        start_error_ = nullptr;
    }

    // Without PostgreSQL each test skips (fails under CI); else it starts with the schema.
    void SetUp() override {
        if (!PostgresServer::available()) {
            WSINDEX_SKIP_OR_FAIL_IN_CI()
                << "PostgreSQL 15 is not installed (" << kPostgresBin << ")";
        }
        ASSERT_EQ(start_error_, nullptr) << *start_error_;
        const Exit init = fleet({"init"});
        ASSERT_EQ(init.code, 0) << init.err;
    }

    // `wsctl fleet ARGS` on the test's server, or on the one at `url`.
    Exit fleet(std::vector<std::string> args, const std::string& url = "") {
        args.insert(args.begin(), {WSINDEX_WSCTL, "fleet"});
        args.push_back("--url");
        args.push_back(url.empty() ? server_->url() : url);
        return cli::test::run(args, scratch_.path(), std::chrono::minutes(2));
    }

    // A daemon publishing as `name`, indexing a tree of its own.
    // `fleet_lines` replaces the [fleet] section's url line (other credentials, a password file).
    // `dir_name`: the name of its directory, when two daemons publish one name.
    Host& add_host(const std::string& name, const std::string& fleet_lines = "",
                   const std::string& dir_name = "") {
        Host h;
        h.name = name;
        const std::string dir = scratch_ / ("host-" + (dir_name.empty() ? name : dir_name));
        make_dir(dir);
        h.tree = dir + "/tree";
        make_dir(h.tree);
        const std::string config = dir + "/wsindexd.conf";
        const std::string url_line =
            fleet_lines.empty() ? "url = \"" + server_->url() + "\"\n" : fleet_lines;
        write_file(config, "[fleet]\n" + url_line + "host = \"" + name + "\"\n");
        DaemonOptions options;
        options.dir = dir;
        options.extra_args = {"--config", config};
        h.daemon = std::make_unique<Daemon>(options);
        hosts_.push_back(std::move(h));
        return hosts_.back();
    }

    // A host whose tree holds `files` small files named `prefix`N, scanned and published.
    // Callers check HasFatalFailure() after it.
    Host& published_host(const std::string& name, const std::string& prefix, int files) {
        Host& h = add_host(name);
        for (int i = 0; i < files; ++i) write_file(h.tree + "/" + prefix + std::to_string(i), "x");
        start_and_scan(h);
        expect_converges(h, {"find", "-0"}, {"find", "-0", "--host", name});
        return h;
    }

    // The host's `wsctl status --json` says the fleet has no error.
    void expect_no_fleet_error(Host& h) {
        const Exit st = local(h, {"status", "--json"});
        const auto doc = nlohmann::json::parse(st.out, nullptr, false);
        ASSERT_TRUE(doc.is_object() && doc.contains("fleet")) << st.out;
        EXPECT_EQ(doc["fleet"].value("last_error", "?"), "") << st.out;
    }

    void start_and_scan(Host& h) {
        std::string error;
        ASSERT_TRUE(h.daemon->start(error)) << error;
        const auto r =
            cli::test::wsctl(h.daemon->socket(), {"scan", h.tree, "--wait"}, scratch_.path());
        ASSERT_EQ(r.code, 0) << r.err << h.daemon->log();
    }

    Exit local(Host& h, std::vector<std::string> args) {
        return cli::test::wsctl(h.daemon->socket(), std::move(args), scratch_.path());
    }

    // Polls until `fleet_args` prints what `local_args` prints on `h` (publishing is
    // asynchronous); the last outputs on failure.
    // `url`: of another server than the test's.
    void expect_converges(Host& h, const std::vector<std::string>& local_args,
                          const std::vector<std::string>& fleet_args, const std::string& url = "") {
        const auto deadline = std::chrono::steady_clock::now() + kConvergeDeadline;
        Exit want;
        Exit got;
        for (;;) {
            want = local(h, local_args);
            ASSERT_EQ(want.code, 0) << want.err;
            got = fleet(fleet_args, url);
            if (got.code == 0 && got.out == want.out) return;
            if (std::chrono::steady_clock::now() > deadline) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));  // polling a condition
        }
        FAIL() << "fleet answer of " << h.name << " never equalled the local one\nlocal:\n"
               << want.out << "\nfleet (exit " << got.code << "):\n"
               << got.out << got.err << "\ndaemon log:\n"
               << h.daemon->log();
    }

    // `wsctl fleet <args>` (a find with -0, no --host) prints each host's own `wsctl <args>`,
    // each record prefixed with "host:", hosts in name order (hosts_ is in name order).
    // Returns what each host printed (to check that a comparison was not of nothing).
    std::string expect_fleet_equals_union(const std::vector<std::string>& args) {
        std::string want;
        for (Host& h : hosts_) {
            const Exit r = local(h, args);
            EXPECT_EQ(r.code, 0) << r.err;
            want += with_host(h.name, r.out);
        }
        const Exit all = fleet(args);
        EXPECT_EQ(all.code, 0) << all.err;
        EXPECT_EQ(all.out, want) << testing::PrintToString(args);
        return want;
    }

    // The host's fleet.last_error in `wsctl status --json`, polled until it is not empty.
    std::string await_fleet_error(Host& h) {
        const auto deadline = std::chrono::steady_clock::now() + kConvergeDeadline;
        for (;;) {
            const Exit st = local(h, {"status", "--json"});
            EXPECT_EQ(st.code, 0) << st.err;
            const auto doc = nlohmann::json::parse(st.out, nullptr, false);
            if (!doc.is_object() || !doc.contains("fleet")) return "(no fleet in status)";
            const std::string error = doc["fleet"].value("last_error", "");
            if (!error.empty() || std::chrono::steady_clock::now() > deadline) return error;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));  // polling a condition
        }
    }

    // Polls the host's daemon log until `text` occurs in it `times` times (the publisher logs
    // a publish after its commit, so the fleet can answer before the line is written); the
    // log, for the failure message, when it never does.
    ::testing::AssertionResult await_log(Host& h, const std::string& text, std::size_t times = 1) {
        const auto deadline = std::chrono::steady_clock::now() + kConvergeDeadline;
        for (;;) {
            const std::string log = h.daemon->log();
            if (occurrences(log, text) >= times) return ::testing::AssertionSuccess();
            if (std::chrono::steady_clock::now() > deadline) {
                return ::testing::AssertionFailure()
                       << "\"" << text << "\" not " << times << " times in the log:\n"
                       << log;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling a condition
        }
    }

    static std::size_t occurrences(const std::string& text, const std::string& what) {
        std::size_t n = 0;
        for (std::size_t at = text.find(what); at != std::string::npos;
             at = text.find(what, at + 1)) {
            ++n;
        }
        return n;
    }

    // The generation the fleet database holds for `host` ("" when it has no row).
    std::string published_generation(const std::string& host) {
        PgConnection conn;
        EXPECT_TRUE(PgConnection::connect(server_->url(), "", &conn));
        PgResult r{nullptr, &PQclear};
        EXPECT_TRUE(conn.query("SELECT generation FROM hosts WHERE host = $1", {host.c_str()}, &r));
        return first_value(r);
    }

    static inline PostgresServer* server_ = nullptr;
    static inline std::string* start_error_ = nullptr;
    ScratchDir scratch_{"fleet"};
    std::vector<Host> hosts_;
};

}  // namespace wsindex::fleet::test
