// Crash survival: SIGKILL the real wsindexd at random moments of a rescan, many times. After each
// kill the database file is intact and shows exactly the previous complete index (read straight
// from the file, before and after the restart), the restarted daemon answers the same, records
// the killed scan as interrupted, and the next scan succeeds.
//
// CI: 4 kills on a 10k-entry tree. Long runs: WSINDEX_REL_KILLS=N, WSINDEX_REL_TREE=DIR (an
// existing tree, e.g. one made by ../shared/bench/mktree.py), WSINDEX_REL_SEED=S to replay.
#include <signal.h>

#include <cstdio>
#include <memory>
#include <random>
#include <thread>

#include "tests/reliability/support/fixture.hpp"
#include "tests/reliability/support/index_dump.hpp"

namespace wsindex::reliability::test {
namespace {

#ifdef WSINDEX_SANITIZED
constexpr std::size_t kTreeEntries = 5'000;
#else
constexpr std::size_t kTreeEntries = 10'000;
#endif

using cli::test::ScratchDir;

class CrashSurvival : public DaemonFixture {
  protected:
    // The smallest directory one level below `root` (by entries), from du: a cheap full find.
    std::string small_child(const nlohmann::json& du) {
        std::string best;
        std::uint64_t best_files = UINT64_MAX;
        for (const auto& e : du["entries"]) {
            if (e.value("depth", 0) != 1 || e.value("dirs", 0) + e.value("files", 0) == 0) continue;
            const std::uint64_t n = e.value("files", std::uint64_t{0});
            if (n < best_files) {
                best_files = n;
                best = cli::test::path_of(e["path"]);
            }
        }
        return best;
    }
};

TEST_F(CrashSurvival, SigkillAtRandomMomentsOfAScanLosesNothing) {
    const auto kills = env_number("WSINDEX_REL_KILLS", 4);
    std::string root = env_text("WSINDEX_REL_TREE");
    std::unique_ptr<ScratchDir> tree_dir;
    if (root.empty()) {
        tree_dir = std::make_unique<ScratchDir>("crash", cli::test::memory_backed_base());
        root = tree_dir->path() + "/tree";
        cli::test::make_big_tree(root, kTreeEntries);
    }
    const std::uint64_t seed = env_number("WSINDEX_REL_SEED", std::random_device{}());
    std::printf("crash survival: seed %llu (replay with WSINDEX_REL_SEED), %llu kills, tree %s\n",
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(kills),
                root.c_str());
    RecordProperty("seed", std::to_string(seed));
    std::mt19937_64 rng(seed);

    // The delay range is a rescan's duration, not the first scan's: a rescan of an unchanged
    // tree keeps its directories and is much shorter.
    scan(root);
    scan(root);
    const auto first = scans();
    ASSERT_FALSE(first.empty());
    auto full_ms = std::max<std::uint64_t>(1, first[0].value("elapsed_ms", std::uint64_t{1}));
    const IndexDump before = dump_index(daemon_->db());
    ASSERT_EQ(before.integrity, "ok") << describe(before);
    ASSERT_GT(before.files, 0u) << describe(before);
    const auto du_before = json_of({"du", root, "--depth", "1"});
    const std::string child = small_child(du_before);
    ASSERT_FALSE(child.empty()) << du_before.dump();
    const auto find_before = find0_under(child);
    ASSERT_FALSE(find_before.empty());

    int interrupted = 0;
    int completed_first = 0;
    double restart_ms_total = 0;
    for (std::uint64_t k = 0; k < kills && !HasFailure(); ++k) {
        SCOPED_TRACE("kill " + std::to_string(k + 1) + " of " + std::to_string(kills) + ", seed " +
                     std::to_string(seed));
        start_scan(root);
        if (HasFailure()) break;
        // A random moment of the scan: from its start (its row exists) to 90% of a rescan's
        // duration, drawn from the seeded generator.
        const auto running = wait_running(std::chrono::minutes(2));
        const std::int64_t scan_id = running ? running->value("scan_id", std::int64_t{0}) : 0;
        const auto delay = std::chrono::microseconds(rng() % (full_ms * 900));
        std::this_thread::sleep_for(delay);
        const auto killed = daemon_->stop(SIGKILL);
        ASSERT_TRUE(killed.has_value());
        ASSERT_EQ(killed->signal, SIGKILL) << "the daemon was not killed by the signal";

        // The crash state itself, read from the file before anything recovers it.
        const IndexDump crashed = dump_index(daemon_->db());
        EXPECT_EQ(crashed.integrity, "ok") << describe(crashed);
        EXPECT_TRUE(crashed == before)
            << "right after SIGKILL: " << describe(crashed) << "\nbefore: " << describe(before);

        const auto t0 = std::chrono::steady_clock::now();
        start_daemon();
        if (HasFailure()) break;
        restart_ms_total +=
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        const IndexDump recovered = dump_index(daemon_->db());
        EXPECT_EQ(recovered.integrity, "ok") << describe(recovered);
        EXPECT_TRUE(recovered == before) << "after restart: " << describe(recovered);
        EXPECT_EQ(json_of({"du", root, "--depth", "1"}), du_before);
        EXPECT_TRUE(find0_under(child) == find_before) << "find under " << child << " changed";

        // The killed scan: interrupted, or done if it finished before the signal landed.
        const auto history = scans();
        bool seen = false;
        for (const auto& s : history) {
            if (scan_id == 0 || s.value("scan_id", std::int64_t{0}) != scan_id) continue;
            seen = true;
            const std::string state = s.value("state", "");
            const std::string error = s.value("error", "");
            if (state == "done") {
                ++completed_first;
            } else {
                // The protocol has no "interrupted" state: failed, with the reason.
                EXPECT_EQ(state, "failed") << s.dump();
                EXPECT_FALSE(error.empty()) << s.dump();
                EXPECT_EQ(scan_state(daemon_->db(), scan_id), "interrupted") << s.dump();
                ++interrupted;
            }
        }
        if (scan_id != 0) {
            EXPECT_TRUE(seen) << "scan " << scan_id << " missing: " << history.dump();
        }
        if (scan_id == 0) ++completed_first;  // ended before status could see it

        // And a new scan succeeds and shows the same (unchanged) tree.
        scan(root);
        // The next delay range follows the latest rescan (the machine's speed varies).
        full_ms = std::max<std::uint64_t>(1, scans()[0].value("elapsed_ms", full_ms));
        const IndexDump rescanned = dump_index(daemon_->db());
        EXPECT_EQ(rescanned.integrity, "ok") << describe(rescanned);
        EXPECT_TRUE(rescanned == before) << "after the rescan: " << describe(rescanned);
    }
    const double restart_ms =
        interrupted + completed_first > 0 ? restart_ms_total / (interrupted + completed_first) : 0;
    std::printf(
        "crash survival: {\"seed\":%llu,\"kills\":%llu,\"interrupted\":%d,"
        "\"completed_before_kill\":%d,\"entries\":%llu,\"rescan_ms\":%llu,"
        "\"mean_restart_ms\":%.0f}\n",
        static_cast<unsigned long long>(seed), static_cast<unsigned long long>(kills), interrupted,
        completed_first, static_cast<unsigned long long>(before.files),
        static_cast<unsigned long long>(full_ms), restart_ms);
    RecordProperty("interrupted", interrupted);
    // The delays span 90% of a rescan: kills must land inside one.
    EXPECT_GE(interrupted, 1) << "no kill landed during a scan (seed " << seed << ")";
}

}  // namespace
}  // namespace wsindex::reliability::test
