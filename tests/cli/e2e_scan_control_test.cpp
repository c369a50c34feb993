// End to end on a big tree: cancel mid-scan keeps the previous index, SIGTERM mid-scan exits 0
// and the next start serves the previous index, dozens of clients query during a scan.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "ipc/client.hpp"
#include "ipc/methods.hpp"
#include "tests/cli/support/fixture.hpp"

namespace wsindex::cli::test {
namespace {

// One new file in every directory of make_big_tree's tree (top*/sub*) while it lives, removed
// again after: a rescan then has every directory's rows to write, and a scan that completed
// would show the files.
class FilesAdded {
  public:
    explicit FilesAdded(const std::string& root) {
        namespace fs = std::filesystem;
        for (const auto& top : fs::directory_iterator(root)) {
            for (const auto& sub : fs::directory_iterator(top.path())) {
                if (!sub.is_directory()) continue;
                paths_.push_back(sub.path() / "added-after-the-first-scan");
                std::ofstream(paths_.back()) << "new";
            }
        }
    }
    FilesAdded(const FilesAdded&) = delete;
    FilesAdded& operator=(const FilesAdded&) = delete;
    ~FilesAdded() {
        for (const auto& path : paths_) std::filesystem::remove(path);
    }
    [[nodiscard]] std::size_t count() const { return paths_.size(); }

  private:
    std::vector<std::filesystem::path> paths_;
};

class ScanControl : public EndToEnd {
  protected:
    // These tests change the tree and then check that only a completed scan shows it: with
    // the live index on, the change would show without one.
    void SetUp() override {
        extra_args_.push_back("--no-watch");
        EndToEnd::SetUp();
    }

    // The default configuration: these tests compare whole answers over the big tree (200k
    // entries in release builds), which no default cap may cut (max_find_results is 0: none).
    // One big tree for the suite: generating it is the slow part.
    static void SetUpTestSuite() {
        big_scratch_ = new ScratchDir("big", memory_backed_base());
        big_ = big_scratch_->path() + "/tree";
        make_big_tree(big_, kBigTreeEntries);
    }
    static void TearDownTestSuite() {
        delete big_scratch_;
        big_scratch_ = nullptr;
    }

    // What the index says about the big tree, to compare before and after.
    struct Answers {
        std::string find;  // sorted NUL-separated paths
        nlohmann::json du;
    };
    Answers answers() {
        Answers a;
        for (const auto& path : find0_under(big_)) {
            a.find += path;
            a.find.push_back('\0');
        }
        a.du = json_of({"du", big_, "--depth", "1"});
        return a;
    }

    // Polls status until a scan is running with some progress (a liveness poll with a deadline:
    // each round is one wsctl process). False if `scanner` ended first or the deadline passed.
    bool wait_for_progress(Process& scanner) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
        while (std::chrono::steady_clock::now() < deadline) {
            if (scanner.poll_exited()) return false;
            const auto r = ctl({"status", "--json"});
            if (r.code != 0) {
                ADD_FAILURE() << "status failed: " << r.err;
                return false;
            }
            const auto doc = parse_json(r.out);
            const auto it = doc.find("running");
            if (it != doc.end() && it->is_object() && it->value("entries", 0) > 0) {
                // Entries counted means the walk runs: the pool's per-worker statistics are
                // there, live (docs/wsctl.md, status).
                const auto& workers = doc["workers"];
                EXPECT_TRUE(workers.is_array() && !workers.empty()) << r.out;
                std::uint64_t tasks = 0;
                for (const auto& w : workers) tasks += w.value("tasks", std::uint64_t{0});
                EXPECT_GT(tasks, 0u) << r.out;
                EXPECT_TRUE(doc["queue_depth"].is_number_unsigned()) << r.out;
                return true;
            }
        }
        ADD_FAILURE() << "no scan progress within 3 minutes; log:\n" << log();
        return false;
    }

    static ScratchDir* big_scratch_;
    static std::string big_;
};

ScratchDir* ScanControl::big_scratch_ = nullptr;
std::string ScanControl::big_;

// A cancel or SIGTERM that reaches the daemon after the rescan ended stops nothing: such an
// attempt is not judged, and the test tries again with a new rescan (up to kAttempts), so it
// cannot pass without stopping a running scan, nor fail because one rescan was quick.
constexpr int kAttempts = 5;

TEST_F(ScanControl, CancelMidScanLeavesThePreviousIndex) {
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
        SCOPED_TRACE("attempt " + std::to_string(attempt));
        scan(big_);
        const Answers before = answers();
        ASSERT_GT(before.find.size(), 0u);
        // The rescan has every directory to rewrite (the rescan of an unchanged tree rewrites
        // nothing), and the cancelled scan's files must not show afterwards.
        const FilesAdded added(big_);
        ASSERT_GT(added.count(), 0u);

        Process scanner =
            spawn_wsctl(daemon_->socket(), {"scan", big_, "--wait"}, scratch_.path(), "scanner");
        // Status is polled from this process on one connection, and `wsctl cancel` runs the
        // moment the scan is running: with or without its id yet (Cancel counts one without an
        // id as "unnumbered").
        auto client = ipc::Client::connect(daemon_->socket());
        ASSERT_TRUE(client.ok()) << client.error().to_string();
        nlohmann::json cancel_reply;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
        while (cancel_reply.is_null() && !scanner.poll_exited()) {
            ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no scan; log:\n" << log();
            auto status = client->call(ipc::method::kStatus, nlohmann::json::object());
            ASSERT_TRUE(status.ok()) << status.error().to_string();
            const auto running = status.value().find("running");
            if (running == status.value().end() || !running->is_object()) continue;
            const auto cancel = ctl({"cancel", "--json"});
            ASSERT_EQ(cancel.code, 0) << cancel.err;
            cancel_reply = parse_json(cancel.out);
        }
        std::size_t stopped = 0;  // scans the cancel stopped (none if the scan ended first)
        if (cancel_reply.is_object()) {
            stopped = cancel_reply.value("cancelled", nlohmann::json::array()).size() +
                      cancel_reply.value("unnumbered", std::size_t{0});
        }
        auto exit = scanner.wait(std::chrono::minutes(5));
        ASSERT_TRUE(exit.has_value()) << "scan --wait did not return after cancel; log:\n" << log();
        if (stopped == 0 && exit->code == 0) {  // the rescan ended first: again
            std::printf("attempt %d: the rescan ended before the cancel reached it\n", attempt);
            continue;
        }
        EXPECT_EQ(stopped, 1u) << cancel_reply.dump();
        EXPECT_EQ(exit->code, 1) << exit->out << exit->err;
        EXPECT_NE((exit->out + exit->err).find("cancelled"), std::string::npos)
            << exit->out << exit->err;

        const Answers after = answers();
        EXPECT_TRUE(after.find == before.find) << "find answers changed after a cancelled scan";
        EXPECT_EQ(after.du, before.du);
        const auto scans = json_of({"scans"});
        ASSERT_GE(scans["scans"].size(), 2u);
        EXPECT_EQ(scans["scans"][0]["state"], "cancelled") << scans.dump();
        EXPECT_EQ(scans["scans"][1]["state"], "done") << scans.dump();
        return;
    }
    FAIL() << "every one of " << kAttempts << " rescans ended before the cancel reached it";
}

TEST_F(ScanControl, SigtermMidScanExitsCleanlyAndKeepsTheIndex) {
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
        SCOPED_TRACE("attempt " + std::to_string(attempt));
        scan(big_);
        const Answers before = answers();
        const FilesAdded added(big_);  // a rescan with every directory to write (see above)
        ASSERT_GT(added.count(), 0u);

        Process scanner =
            spawn_wsctl(daemon_->socket(), {"scan", big_, "--wait"}, scratch_.path(), "scanner");
        const bool running = wait_for_progress(scanner);
        if (HasFailure()) return;
        if (!running) {  // the rescan ended first: again
            std::printf("attempt %d: the rescan ended before SIGTERM could reach it\n", attempt);
            auto exit = scanner.wait(std::chrono::minutes(1));
            ASSERT_TRUE(exit.has_value());
            ASSERT_EQ(exit->code, 0) << exit->out << exit->err;
            continue;
        }
        const auto stopped = daemon_->stop(SIGTERM);
        ASSERT_TRUE(stopped.has_value()) << "wsindexd did not stop within the deadline";
        EXPECT_EQ(stopped->signal, 0) << stopped->err;
        EXPECT_EQ(stopped->code, 0) << "log:\n" << stopped->err;
        auto exit = scanner.wait(std::chrono::minutes(1));
        ASSERT_TRUE(exit.has_value());

        start_daemon();
        const auto scans = json_of({"scans"});
        ASSERT_GE(scans["scans"].size(), 2u);
        if (exit->code == 0 && scans["scans"][0]["state"] == "done") {  // ended first: again
            std::printf("attempt %d: the rescan ended before SIGTERM reached it\n", attempt);
            continue;
        }
        EXPECT_NE(exit->code, 0) << "scan --wait must not report success for an interrupted scan";
        const Answers after = answers();
        EXPECT_TRUE(after.find == before.find) << "find answers changed after SIGTERM mid-scan";
        EXPECT_EQ(after.du, before.du);
        EXPECT_EQ(scans["scans"][0]["state"], "cancelled") << scans.dump();
        return;
    }
    FAIL() << "every one of " << kAttempts << " rescans ended before SIGTERM reached it";
}

TEST_F(ScanControl, DozensOfClientsQueryDuringAScan) {
    const std::string odd = scratch_ / "odd";
    make_odd_tree(odd);
    scan(odd);
    const auto expected_find = find_print0(odd, scratch_.path(), /*with_root=*/false);
    const auto expected_du = json_of({"du", odd, "--depth", "1"});

    Process scanner =
        spawn_wsctl(daemon_->socket(), {"scan", big_, "--wait"}, scratch_.path(), "scanner");
    constexpr int kClients = 32;
    // Rounds of 32 clients while the scan runs. Under the sanitizers a round costs seconds of
    // CPU (every wsctl is an instrumented process) and the scan is slow enough for all of them:
    // three rounds run the same paths as eight.
#ifdef WSINDEX_SANITIZED
    constexpr int kRounds = 3;
#else
    constexpr int kRounds = 8;
#endif
    int rounds = 0;
    int rounds_during_scan = 0;
    do {
        const bool scanning = !scanner.poll_exited();
        std::vector<Process> clients;
        for (int i = 0; i < kClients; ++i) {
            const std::string tag = "client" + std::to_string(i);
            switch (i % 4) {
                case 0:
                case 1:
                    clients.push_back(spawn_wsctl(daemon_->socket(), {"find", "--under", odd, "-0"},
                                                  scratch_.path(), tag));
                    break;
                case 2:
                    clients.push_back(spawn_wsctl(daemon_->socket(),
                                                  {"du", odd, "--depth", "1", "--json"},
                                                  scratch_.path(), tag));
                    break;
                default:
                    clients.push_back(
                        spawn_wsctl(daemon_->socket(), {"status", "--json"}, scratch_.path(), tag));
            }
        }
        for (int i = 0; i < kClients; ++i) {
            auto exit = clients[static_cast<std::size_t>(i)].wait(std::chrono::minutes(5));
            ASSERT_TRUE(exit.has_value()) << "client " << i << " hung";
            ASSERT_EQ(exit->code, 0) << "client " << i << ": " << exit->err;
            if (i % 4 < 2) {
                const auto got = split_nul(exit->out);
                EXPECT_TRUE(got == expected_find) << "client " << i << "\n"
                                                  << describe_diff(got, expected_find);
            } else if (i % 4 == 2) {
                EXPECT_EQ(parse_json(exit->out), expected_du) << "client " << i;
            } else {
                EXPECT_TRUE(parse_json(exit->out).is_object());
            }
        }
        ++rounds;
        if (scanning) ++rounds_during_scan;
    } while (!scanner.poll_exited() && rounds < kRounds);

    auto exit = scanner.wait(std::chrono::minutes(10));
    ASSERT_TRUE(exit.has_value());
    EXPECT_EQ(exit->code, 0) << exit->err;
    RecordProperty("rounds_during_scan", rounds_during_scan);
    EXPECT_GE(rounds_during_scan, 1) << "the scan ended before any client ran (machine too fast?)";

    // And the big tree's answer is complete after the scan.
    const auto big = find0_under(big_);
    const auto reference = find_print0(big_, scratch_.path(), /*with_root=*/false);
    EXPECT_TRUE(big == reference) << describe_diff(big, reference);
}

}  // namespace
}  // namespace wsindex::cli::test
