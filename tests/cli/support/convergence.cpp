// The convergence check under a mutation storm (design note in convergence.hpp).
#include "tests/cli/support/convergence.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/cli/support/fixture.hpp"
#include "tests/cli/support/index_compare.hpp"
#include "tests/cli/support/mutation_storm.hpp"
#include "tests/cli/support/tree.hpp"

namespace wsindex::cli::test {
namespace {

constexpr std::size_t kTreeEntries = 3000;
constexpr int kStormProcesses = 4;
constexpr int kOpsPerProcess = 400;
// A fixed seed keeps the calls of a run the same (only their interleaving varies); set
// WSINDEX_STORM_SEED to try others. Every failure message names the seed it ran with.
constexpr std::uint64_t kDefaultSeed = 18;
// How long a live daemon may take to catch up after the storm: generous for sanitizer builds on
// a shared machine; the test polls and passes as soon as the indexes agree.
constexpr std::chrono::seconds kLiveDeadline{30};

std::uint64_t storm_seed() {
    const char* text = std::getenv("WSINDEX_STORM_SEED");
    return text != nullptr && *text != '\0' ? std::strtoull(text, nullptr, 10) : kDefaultSeed;
}

}  // namespace

std::size_t Convergence::count_scans(Daemon& daemon) {
    const auto scans = wsctl(daemon.socket(), {"scans", "--json"}, scratch_.path());
    EXPECT_EQ(scans.code, 0) << scans.err;
    const auto doc = parse_json(scans.out);
    return doc.contains("scans") && doc["scans"].is_array() ? doc["scans"].size() : 0;
}

// A live index that converged because a batch failed and the root was rescanned has not shown
// that it follows changes: no batch failed (live.failures 0), and no scan ran since the storm
// began (`scans_before`: the scans then) — except one per lost-changes event the daemon counted
// for the root (live_overflows): a fanotify mark on the scratch directory's file system also
// receives every other test's events, and a queue overflowed by them is recovered by a rescan,
// as documented. The file-system tests (their own loop images) see no such events.
void Convergence::expect_no_fallback_rescans(Daemon& daemon, std::size_t scans_before) {
    const auto status = wsctl(daemon.socket(), {"status", "--json"}, scratch_.path());
    ASSERT_EQ(status.code, 0) << status.err;
    const auto doc = parse_json(status.out);
    ASSERT_TRUE(doc.contains("live") && doc["live"].is_object()) << status.out;
    EXPECT_EQ(doc["live"].value("failures", std::uint64_t{1}), 0u) << status.out;
    std::uint64_t overflows = 0;
    for (const auto& r : doc.value("roots", nlohmann::json::array())) {
        overflows += r.value("live_overflows", std::uint64_t{0});
    }
    const std::size_t scans = count_scans(daemon);
    if (overflows == 0) {
        EXPECT_GT(doc["live"].value("batches", std::uint64_t{0}), 0u) << status.out;
    }
    EXPECT_LE(scans, scans_before + overflows)
        << "a batch fell back to a rescan (" << overflows
        << " overflows): " << wsctl(daemon.socket(), {"scans"}, scratch_.path()).out
        << "\ndaemon log:\n"
        << daemon.log();
}

void Convergence::make_trees(const std::string& base) {
    root_ = base + "/tree";
    outside_ = base + "/outside";
    make_big_tree(root_, kTreeEntries);
    make_odd_tree(root_ + "/odd");
    ASSERT_EQ(::mkdir(outside_.c_str(), 0755), 0) << std::strerror(errno);
    ASSERT_FALSE(HasFailure());
}

std::unique_ptr<Daemon> Convergence::start_daemon(const std::string& name,
                                                  const std::string& config) {
    const std::string dir = scratch_ / name;
    const std::string conf = scratch_ / (name + ".conf");
    EXPECT_EQ(::mkdir(dir.c_str(), 0755), 0) << dir;
    std::ofstream(conf) << config;
    DaemonOptions options;
    options.dir = dir;
    options.extra_args = {"--config", conf};
    auto daemon = std::make_unique<Daemon>(options);
    std::string error;
    EXPECT_TRUE(daemon->start(error)) << error;
    return daemon;
}

void Convergence::scan(Daemon& daemon, const std::string& path) {
    const auto r = wsctl(daemon.socket(), {"scan", path, "--wait"}, scratch_.path());
    ASSERT_EQ(r.code, 0) << r.out << r.err << "\ndaemon log:\n" << daemon.log();
}

std::string Convergence::find0(Daemon& daemon) {
    const auto r = wsctl(daemon.socket(), {"find", "--under", root_, "-0"}, scratch_.path());
    EXPECT_EQ(r.code, 0) << r.err;
    return r.out;
}

std::string Convergence::difference(Daemon& a, Daemon& b, const std::string& files_root) {
    const auto index =
        compare_indexes(a.db(), b.db(), files_root.empty() ? root_ : files_root, root_);
    std::string out = index.report;
    if (index.files_a == 0 || index.files_b == 0) out += "an index holds no rows of the root\n";
    out += compare_find_outputs(find0(a), find0(b));
    return out;
}

std::vector<std::string> Convergence::storm_dirs(bool with_root) {
    std::vector<std::string> dirs = {"top0",      "top0/sub0", "top0/sub1", "top0/sub2", "top1",
                                     "top1/sub0", "odd",       "odd/links", "odd/empty"};
    if (with_root) dirs.push_back("");
    return dirs;
}

void Convergence::converge(Mode mode, const std::string& watch_config) {
    const std::uint64_t seed = storm_seed();
    SCOPED_TRACE("storm seed " + std::to_string(seed) +
                 " (rerun with WSINDEX_STORM_SEED=" + std::to_string(seed) + ")");

    // WSINDEX_CONVERGENCE_DEBUG=1 runs daemon A at log level trace (every event and every
    // batch logged; its log is printed when the live comparison fails): for finding why a
    // run diverged. Set to an absolute directory instead, the storm logs each operation
    // there (storm.log.N) and a failed live run leaves daemon A's log and the difference
    // there too (daemon-a.log, diff.txt), for lining the operations up with the events.
    const char* debug = std::getenv("WSINDEX_CONVERGENCE_DEBUG");
    const std::string debug_dir = debug != nullptr && debug[0] == '/' ? debug : "";
    const std::string log_level = debug != nullptr ? "log_level = \"trace\"\n" : "";
    auto a = start_daemon("a", "rescan_interval = \"off\"\n" + log_level + watch_config +
                                   "[[root]]\npath = \"" + root_ + "\"\ninterval = \"off\"\n");
    ASSERT_FALSE(HasFailure());
    ASSERT_NO_FATAL_FAILURE(scan(*a, root_));

    const std::size_t scans_before = count_scans(*a);
    StormOptions storm;
    storm.root = root_;
    storm.outside = outside_;
    storm.dirs = storm_dirs(mode == Mode::kRescan || mode == Mode::kLive);
    if (mode == Mode::kOneSubtreeRescan) {
        storm.dirs = {"top1", "top1/sub0", "top1/sub1"};
        storm.link_sources = {"top0/sub0", "top0/sub1"};
        storm.names_only = true;
    }
    if (!debug_dir.empty()) storm.log_path = debug_dir + "/storm.log";
    storm.seed = seed;
    storm.processes = kStormProcesses;
    storm.ops_per_process = kOpsPerProcess;
    const StormResult result = run_mutation_storm(storm);
    const std::string summary = result.summary(seed);
    SCOPED_TRACE(summary);
    RecordProperty("storm", summary);
    std::cout << summary << "\n";
    ASSERT_TRUE(result.error.empty()) << summary;
    ASSERT_EQ(result.ops, std::uint64_t{kStormProcesses} * kOpsPerProcess);
    // Many operations must take effect, or the storm tests little. Most fail by design (a
    // path drawn from the pool that another process just removed or moved away); fewer
    // succeed while a whole given directory is moved out of the root.
    ASSERT_GT(result.ops - result.failed, result.ops / 8) << summary;

    // The reference: a fresh daemon, a fresh database, one full scan of the tree as it is now.
    auto b = start_daemon("b", std::string("rescan_interval = \"off\"\n") + kNoWatch);
    ASSERT_FALSE(HasFailure());
    ASSERT_NO_FATAL_FAILURE(scan(*b, root_));

    if (mode != Mode::kLive) {
        // The comparison sees the storm: before the rescan, A is stale in both views.
        const std::string stale = difference(*a, *b);
        EXPECT_NE(stale.find("files: "), std::string::npos) << stale;
        EXPECT_NE(stale.find("dir_totals: "), std::string::npos) << stale;
        if (std::getenv("WSINDEX_SHOW_STALE") != nullptr) std::cout << stale;
        std::string files_root;
        if (mode == Mode::kRescan) {
            ASSERT_NO_FATAL_FAILURE(scan(*a, root_));
        } else if (mode == Mode::kSubtreeRescans) {
            for (const auto& sub : storm_subtrees()) {
                ASSERT_NO_FATAL_FAILURE(scan(*a, root_ + "/" + sub));
            }
        } else {
            files_root = root_ + "/top1";
            ASSERT_NO_FATAL_FAILURE(scan(*a, files_root));
        }
        const std::string diff = difference(*a, *b, files_root);
        EXPECT_EQ(diff, "") << "after an incremental rescan, A (" << a->db()
                            << ") differs from a fresh scan B (" << b->db() << ")\n"
                            << diff;
    } else {
        // Poll until A agrees with B or the deadline passes; every poll is a full
        // comparison, so the first agreement is the answer.
        const auto deadline = std::chrono::steady_clock::now() + kLiveDeadline;
        std::string diff = difference(*a, *b);
        while (!diff.empty() && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));  // poll period
            diff = difference(*a, *b);
        }
        if (!diff.empty() && !debug_dir.empty()) {
            std::ofstream(debug_dir + "/daemon-a.log") << a->log();
            std::ofstream(debug_dir + "/diff.txt") << diff;
        }
        if (!rescans_allowed_) expect_no_fallback_rescans(*a, scans_before);
        EXPECT_EQ(diff, "") << "the live index A did not converge within " << kLiveDeadline.count()
                            << " s\n"
                            << diff << "\ndaemon A log:\n"
                            << (debug_dir.empty() ? a->log() : "in " + debug_dir);
    }
    EXPECT_TRUE(a->running()) << a->log();
}

}  // namespace wsindex::cli::test
