// The end-to-end fixture: a scratch directory, a wsindexd on a socket and database inside it,
// and helpers that run wsctl against it and decode its JSON.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/format.hpp"
#include "ipc/bytes_codec.hpp"
#include "tests/cli/support/daemon.hpp"
#include "tests/cli/support/scratch.hpp"
#include "tests/cli/support/tree.hpp"

namespace wsindex::cli::test {

// "+ /only/in/a" / "- /only/in/b" lines (escaped), at most 20 of each, for failure messages.
inline std::string describe_diff(const std::set<std::string>& a, const std::set<std::string>& b) {
    std::string out;
    int shown = 0;
    for (const auto& x : a) {
        if (!b.count(x) && shown++ < 20) out += "  only in wsctl: " + printable(x) + "\n";
    }
    shown = 0;
    for (const auto& x : b) {
        if (!a.count(x) && shown++ < 20) out += "  only in reference: " + printable(x) + "\n";
    }
    return out;
}

// The decoded bytes of a path field ({"b64"} or string); fails the test on a bad value.
inline std::string path_of(const nlohmann::json& value) {
    auto bytes = ipc::decode_bytes(value, "path");
    EXPECT_TRUE(bytes.ok()) << value.dump();
    return bytes.ok() ? bytes.value() : std::string();
}

inline nlohmann::json parse_json(const std::string& text) {
    auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(doc.is_discarded()) << "not one JSON document: " << text.substr(0, 500);
    return doc;
}

class EndToEnd : public ::testing::Test {
  protected:
    void SetUp() override { start_daemon(); }

    // Starts (or restarts) the daemon on the same socket and database.
    void start_daemon(std::optional<uid_t> uid = std::nullopt) {
        if (!daemon_) {
            const std::string dir = scratch_ / "daemon";
            ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
            DaemonOptions options;
            options.dir = dir;
            options.uid = uid;
            options.gid = uid;
            options.extra_args = extra_args_;
            options.db = db_path_;
            daemon_ = std::make_unique<Daemon>(options);
        }
        std::string error;
        ASSERT_TRUE(daemon_->start(error)) << error;
    }

    Exit ctl(std::vector<std::string> args,
             std::chrono::milliseconds timeout = std::chrono::minutes(10)) {
        return wsctl(daemon_->socket(), std::move(args), scratch_.path(), timeout);
    }

    // scan PATH --wait, expected to succeed.
    void scan(const std::string& path) {
        const auto r = ctl({"scan", path, "--wait"});
        ASSERT_EQ(r.code, 0) << r.out << r.err << "\ndaemon log:\n" << daemon_->log();
    }

    std::set<std::string> find0_under(const std::string& path) {
        const auto r = ctl({"find", "--under", path, "-0"});
        EXPECT_EQ(r.code, 0) << r.err;
        EXPECT_TRUE(r.out.empty() || r.out.back() == '\0');
        return split_nul(r.out);
    }

    nlohmann::json json_of(std::vector<std::string> args) {
        args.push_back("--json");
        const auto r = ctl(args);
        EXPECT_EQ(r.code, 0) << r.err;
        return parse_json(r.out);
    }

    std::string log() const { return daemon_ ? daemon_->log() : std::string(); }

    ScratchDir scratch_{"e2e"};
    std::vector<std::string> extra_args_;  // more wsindexd flags, set before start_daemon
    std::string db_path_;                  // the database path if not in the daemon's dir
    std::unique_ptr<Daemon> daemon_;
};

// Sizes for the big-tree tests: large enough that a scan is still running when wsctl asks
// (status, cancel, SIGTERM); smaller under sanitizers, which slow the daemon down anyway.
#ifdef WSINDEX_SANITIZED
inline constexpr std::size_t kBigTreeEntries = 60'000;
#else
inline constexpr std::size_t kBigTreeEntries = 200'000;
#endif

}  // namespace wsindex::cli::test
