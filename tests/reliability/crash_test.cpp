// Crash survival: SIGKILL the real wsindexd inside rescans, many times. Before each rescan the
// tree changes (seeded), so the index before the scan (old) and after it (new) differ in rows of
// many directories. The kill comes once status shows the scan running with at least a drawn
// number of entries counted; the scan's row in the file then tells on which side of the swap's
// commit it landed (still `running`: inside the scan; `complete`: just after). Either way the
// file is intact and holds exactly one complete index, row for row: the old one after a kill
// inside the scan, the new one after a later kill. The restarted daemon answers the same,
// records a killed scan as interrupted, and the next scan succeeds.
//
// Only kills inside a scan count, and the test makes exactly `kills` of them: a kill that came
// too late (or a scan that ended first) is checked all the same, and the next kill is drawn
// earlier in the scan. So no timing can make it pass without killing scans, and it fails only
// if the scan outran the kill many times in a row.
//
// CI: 4 kills on a 10k-entry tree. Long runs: WSINDEX_REL_KILLS=N, WSINDEX_REL_TREE=DIR (an
// existing tree, e.g. one made by ../shared/bench/mktree.py; the test then changes only a
// directory of its own inside it, removed at the end), WSINDEX_REL_SEED=S to replay.
#include <signal.h>

#include <cstdio>
#include <memory>
#include <random>
#include <set>

#include "tests/reliability/support/fixture.hpp"
#include "tests/reliability/support/index_dump.hpp"
#include "tests/reliability/support/tree_mutator.hpp"

namespace wsindex::reliability::test {
namespace {

#ifdef WSINDEX_SANITIZED
constexpr std::size_t kTreeEntries = 5'000;
#else
constexpr std::size_t kTreeEntries = 10'000;
#endif
// Kills allowed to land after a scan's commit (or scans that ended before their kill) beyond
// the ones inside scans. Each halves the range the next kill's moment is drawn from.
constexpr std::uint64_t kMaxLateKills = 8;

using cli::test::ScratchDir;

// What one complete index answers: the file's rows, and du and find through the daemon.
struct Answers {
    IndexDump index;
    nlohmann::json du;
    std::set<std::string> find;
};

class CrashSurvival : public DaemonFixture {
  protected:
    // The tree is changed between scans, and each scan must be all or nothing: the live index
    // (tested in tests/cli/e2e_live_test.cpp) would apply those changes without a scan.
    void SetUp() override {
        extra_args_.push_back("--no-watch");
        DaemonFixture::SetUp();
    }

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

    Answers answers(const std::string& root, const std::string& child) {
        return {dump_index(daemon_->db()), json_of({"du", root, "--depth", "1"}),
                find0_under(child)};
    }

    // The killed (or ended) scan as `wsctl scans` and the scans table record it.
    void expect_recorded(std::int64_t scan_id, bool killed_inside) {
        const auto history = scans();
        bool seen = false;
        for (const auto& s : history) {
            if (s.value("scan_id", std::int64_t{0}) != scan_id) continue;
            seen = true;
            if (killed_inside) {
                // The protocol has no "interrupted" state: failed, with the reason.
                EXPECT_EQ(s.value("state", ""), "failed") << s.dump();
                EXPECT_FALSE(s.value("error", "").empty()) << s.dump();
                EXPECT_EQ(scan_state(daemon_->db(), scan_id), "interrupted") << s.dump();
            } else {
                EXPECT_EQ(s.value("state", ""), "done") << s.dump();
            }
        }
        EXPECT_TRUE(seen) << "scan " << scan_id << " missing: " << history.dump();
    }
};

TEST_F(CrashSurvival, SigkillAtRandomMomentsOfAScanLosesNothing) {
    const auto kills = env_number("WSINDEX_REL_KILLS", 4);
    std::string root = env_text("WSINDEX_REL_TREE");
    std::unique_ptr<ScratchDir> tree_dir;
    std::string area;  // what the test changes between scans
    if (root.empty()) {
        tree_dir = std::make_unique<ScratchDir>("crash", cli::test::memory_backed_base());
        root = tree_dir->path() + "/tree";
        cli::test::make_big_tree(root, kTreeEntries);
        area = root;
    } else {
        tree_dir = std::make_unique<ScratchDir>("crash", root);
        area = tree_dir->path();
        cli::test::make_big_tree(area + "/changing", kTreeEntries / 5);
    }
    ASSERT_FALSE(HasFailure());
    const std::uint64_t seed = env_number("WSINDEX_REL_SEED", std::random_device{}());
    std::printf("crash survival: seed %llu (replay with WSINDEX_REL_SEED), %llu kills, tree %s\n",
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(kills),
                root.c_str());
    RecordProperty("seed", std::to_string(seed));
    std::mt19937_64 rng(seed);
    TreeMutator mutator(area);
    ASSERT_GT(mutator.directories(), 1u);

    scan(root);
    const auto du_first = json_of({"du", root, "--depth", "1"});
    const std::string child = small_child(du_first);
    ASSERT_FALSE(child.empty()) << du_first.dump();
    Answers old = answers(root, child);
    ASSERT_EQ(old.index.integrity, "ok") << describe(old.index);
    ASSERT_GT(old.index.files, 0u) << describe(old.index);
    ASSERT_FALSE(old.find.empty());

    std::uint64_t inside = 0;
    std::uint64_t late = 0;
    std::uint64_t attempts = 0;
    std::uint64_t restarts = 0;
    double restart_ms_total = 0;
    // The kill comes once the scan counted `1 + rng() % draw_below` entries.
    std::uint64_t draw_below = old.index.files;
    while (inside < kills && attempts < kills + kMaxLateKills && !HasFailure()) {
        ++attempts;
        SCOPED_TRACE("attempt " + std::to_string(attempts) + ", " + std::to_string(inside) +
                     " kills inside scans so far, seed " + std::to_string(seed));
        mutator.mutate(rng);
        start_scan(root);
        if (HasFailure()) break;
        const std::uint64_t kill_at = 1 + rng() % draw_below;
        const auto running = wait_progress(kill_at, std::chrono::minutes(2));
        if (HasFailure()) break;
        std::int64_t scan_id = 0;
        if (running) {
            scan_id = running->value("scan_id", std::int64_t{0});
            const auto killed = daemon_->stop(SIGKILL);
            ASSERT_TRUE(killed.has_value());
            ASSERT_EQ(killed->signal, SIGKILL) << "the daemon was not killed by the signal";
        }

        // The crash state, read from the file before anything recovers it. The scan's row is
        // committed `running` before the walk and `complete` in the swap's transaction.
        const IndexDump crashed = dump_index(daemon_->db());
        EXPECT_EQ(crashed.integrity, "ok") << describe(crashed);
        const std::string row_state = running ? scan_state(daemon_->db(), scan_id) : "complete";
        EXPECT_TRUE(row_state == "running" || row_state == "complete") << row_state;
        const bool killed_inside = row_state == "running";

        if (running) {
            const auto t0 = std::chrono::steady_clock::now();
            start_daemon();
            if (HasFailure()) break;
            restart_ms_total +=
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
            ++restarts;
            expect_recorded(scan_id, killed_inside);
        }
        const Answers recovered = answers(root, child);
        EXPECT_EQ(recovered.index.integrity, "ok") << describe(recovered.index);
        EXPECT_TRUE(recovered.index == crashed) << "the restart changed the index:\n"
                                                << describe_difference(recovered.index, crashed);

        // The new complete index: a scan of the tree as the killed scan saw it.
        scan(root);
        Answers fresh = answers(root, child);
        EXPECT_EQ(fresh.index.integrity, "ok") << describe(fresh.index);
        ASSERT_FALSE(fresh.index == old.index) << "the tree changed but its index did not";
        const Answers& expected = killed_inside ? old : fresh;
        EXPECT_TRUE(crashed == expected.index)
            << (killed_inside ? "killed inside the scan, the file is not the old index:\n"
                              : "killed after the swap, the file is not the new index:\n")
            << describe_difference(crashed, expected.index);
        EXPECT_EQ(recovered.du, expected.du);
        EXPECT_TRUE(recovered.find == expected.find) << "find under " << child << " differs";

        if (killed_inside) {
            ++inside;
        } else {
            ++late;
            draw_below = std::max<std::uint64_t>(1, draw_below / 2);
        }
        old = std::move(fresh);
    }
    const auto rescan_ms = scans()[0].value("elapsed_ms", std::uint64_t{0});
    std::printf(
        "crash survival: {\"seed\":%llu,\"kills_inside\":%llu,\"late\":%llu,\"entries\":%llu,"
        "\"rescan_ms\":%llu,\"mean_restart_ms\":%.0f}\n",
        static_cast<unsigned long long>(seed), static_cast<unsigned long long>(inside),
        static_cast<unsigned long long>(late), static_cast<unsigned long long>(old.index.files),
        static_cast<unsigned long long>(rescan_ms),
        restarts > 0 ? restart_ms_total / static_cast<double>(restarts) : 0.0);
    RecordProperty("kills_inside", static_cast<int>(inside));
    RecordProperty("late_kills", static_cast<int>(late));
    EXPECT_EQ(inside, kills) << "only " << inside << " of " << kills
                             << " kills landed inside a scan in " << attempts << " attempts (seed "
                             << seed << ")";
}

}  // namespace
}  // namespace wsindex::reliability::test
