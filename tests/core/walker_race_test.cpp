// The walker against the attacker of issue #33: a root walker (Walker::run, Walker::run_many,
// stat_named) reads a chain of directories of an unprivileged user while she exchanges a
// symlink to "/" into that chain each time one of her directories is opened
// (tests/support/swap_attacker.cpp, run as a real uid). Her chain spells the path of a root-only
// 0700 directory; whatever the timing, no record may ever come from it: no secret name, no
// inode of it, no record owned by anyone but her. Positive controls: her own files are found,
// the attacker swapped while the walker had her directory open, and some walks met the swap
// (the walker refused a path that was a symlink, or that changed while it was opened).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "core/fs_ops.hpp"
#include "core/named_stat.hpp"
#include "core/walker.hpp"
#include "support/walk_support.hpp"
#include "tests/support/prerequisite.hpp"
#include "tests/support/swap_attacker_process.hpp"

namespace wsindex::core {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uid_t kAttacker = 65534;  // nobody
// Enough attempts to meet the swap many times; the deadline bounds a slow (sanitizer) build.
constexpr long kMinCalls = 10000;
constexpr long kMinInterfered = 20;
constexpr auto kDeadline = std::chrono::seconds(8);

struct Tally {
    long calls = 0;
    long own_seen = 0;    // calls whose records held her own file
    long interfered = 0;  // calls the swap met (refused root, or a leak)
    long leaks = 0;
    std::string first_leak;
};

class WalkerRace : public ::testing::Test {
  protected:
    void SetUp() override {
        if (::geteuid() != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root (a root walker, a uid)";
        // The target: root's, 0700, outside her reach, with names she must never learn.
        vault_ = t_ / "vault";
        test::make_dir(vault_, 0700);
        test::make_file(vault_ + "/secret-alpha", "the secret alpha");
        test::make_file(vault_ + "/secret-beta", "12345678");
        test::make_dir(vault_ + "/secret-dir", 0700);
        test::make_file(vault_ + "/secret-dir/secret-inner", "x");
        secrets_ = {"secret-alpha", "secret-beta", "secret-dir", "secret-inner"};
        for (const char* p :
             {"", "/secret-alpha", "/secret-beta", "/secret-dir", "/secret-dir/secret-inner"}) {
            struct stat st {};
            ASSERT_EQ(::lstat((vault_ + p).c_str(), &st), 0);
            secret_inodes_.emplace(st.st_dev, st.st_ino);
        }
        // Her directory.
        base_ = t_ / "E";
        test::make_dir(base_, 0755);
        ASSERT_EQ(::chown(base_.c_str(), kAttacker, kAttacker), 0);
    }

    void start_attacker() {
        test::SwapAttackerOptions o;
        o.program = WSINDEX_SWAP_ATTACKER;
        o.uid = kAttacker;
        o.gid = kAttacker;
        o.base = base_;
        o.target = vault_;
        o.attempts = 100000000;  // stopped by the test
        o.seconds = 120;
        std::string error;
        ASSERT_TRUE(attacker_.start(o, &error)) << error;
        leaf_ = attacker_.leaf();
        ASSERT_EQ(leaf_, base_ + "/m" + vault_);
    }

    // A record that came from anywhere but her own tree.
    bool leaked(const WalkResult& r, Tally& tally, const char* how) {
        std::string why;
        if (secrets_.count(std::string(r.name())) != 0) why = "a secret name";
        if (r.has_stat && secret_inodes_.count({r.dev, r.ino}) != 0) why = "a secret inode";
        if (r.has_stat && r.uid != kAttacker) why = "owned by uid " + std::to_string(r.uid);
        if (why.empty()) return false;
        if (tally.leaks++ == 0) tally.first_leak = std::string(how) + ": " + r.path + ": " + why;
        return true;
    }

    // Calls `attempt` (which returns whether the swap met it) until enough calls met the swap
    // or the deadline passes, then stops the attacker and checks the controls.
    void race(const std::function<bool(Tally&)>& attempt) {
        start_attacker();
        if (HasFatalFailure()) return;
        Tally tally;
        const auto until = Clock::now() + kDeadline;
        while ((tally.calls < kMinCalls || tally.interfered < kMinInterfered) &&
               Clock::now() < until) {
            ++tally.calls;
            if (attempt(tally)) ++tally.interfered;
        }
        const test::SwapReport report = attacker_.stop();
        RecordProperty("calls", std::to_string(tally.calls));
        RecordProperty("interfered", std::to_string(tally.interfered));
        RecordProperty("swaps", std::to_string(report.swaps));
        RecordProperty("during_open", std::to_string(report.during_open));
        const std::string summary = "calls " + std::to_string(tally.calls) + ", own files seen " +
                                    std::to_string(tally.own_seen) + ", met the swap " +
                                    std::to_string(tally.interfered) + ", leaked records " +
                                    std::to_string(tally.leaks) + "; " + report.describe();
        std::printf("%s\n", summary.c_str());
        EXPECT_EQ(tally.leaks, 0) << "first: " << tally.first_leak << "\n" << summary;
        EXPECT_GT(tally.own_seen, 0) << summary;
        EXPECT_GT(report.swaps, 0) << summary;
        EXPECT_GT(report.during_open, 0) << summary;
        EXPECT_GT(tally.interfered, 0) << summary;
    }

    // The errors a walk of her path may end with when the swap met it: a symlink on the way
    // (ELOOP), a directory exchanged while it was opened (ESTALE), a name not there (ENOENT).
    static bool refused(const Status& s) {
        return s.code() == std::errc::too_many_symbolic_link_levels ||
               s.code() == std::error_code(ESTALE, std::generic_category()) ||
               s.code() == std::errc::no_such_file_or_directory ||
               s.code() == std::errc::not_a_directory;
    }

    test::TempDir t_;
    std::string vault_, base_, leaf_;
    std::set<std::string> secrets_;
    std::set<std::pair<std::uint64_t, std::uint64_t>> secret_inodes_;
    test::SwapAttacker attacker_;
};

WalkOptions race_options(std::uint32_t max_depth) {
    WalkOptions o;
    o.workers = 2;
    o.raise_fd_limit = false;
    o.max_depth = max_depth;
    return o;
}

TEST_F(WalkerRace, RunNeverRecordsTheDirectoryASwappedSymlinkPointsTo) {
    Walker walker(race_options(0));
    race([&](Tally& tally) {
        bool own = false, leak = false, erred = false;
        const Status s = walker.run(leaf_, [&](std::span<WalkResult> batch) {
            for (const WalkResult& r : batch) {
                if (r.name() == "mine-0") own = true;
                if (leaked(r, tally, "run")) leak = true;
                if (r.error != 0) erred = true;
            }
            return Status{};
        });
        if (own) ++tally.own_seen;
        if (!s) {
            EXPECT_TRUE(refused(s)) << s.to_string();
        }
        return leak || erred || !s;
    });
}

TEST_F(WalkerRace, RunManyNeverRecordsTheDirectoryASwappedSymlinkPointsTo) {
    Walker lister(race_options(1));  // as the live index re-lists: one level per root
    race([&](Tally& tally) {
        // Her leaf and its parent, as a batch re-lists both when a name moves between them.
        const std::string parent = leaf_.substr(0, leaf_.rfind('/'));
        const std::vector<std::string> roots{leaf_, parent};
        std::vector<Status> root_status;
        bool own = false, leak = false, erred = false;
        const Status s = lister.run_many(
            roots,
            [&](std::span<WalkResult> batch) {
                for (const WalkResult& r : batch) {
                    if (r.name() == "mine-0") own = true;
                    if (leaked(r, tally, "run_many")) leak = true;
                    if (r.error != 0) erred = true;
                }
                return Status{};
            },
            &root_status);
        EXPECT_TRUE(s) << s.to_string();
        bool any_refused = false;
        for (const Status& rs : root_status) {
            if (!rs) {
                EXPECT_TRUE(refused(rs)) << rs.to_string();
                any_refused = true;
            }
        }
        if (own) ++tally.own_seen;
        return leak || erred || any_refused;
    });
}

TEST_F(WalkerRace, StatNamedNeverStatsNamesInTheDirectoryASwappedSymlinkPointsTo) {
    // Her own names and the target's: a secret found, or her own name gone, would both tell
    // her what the target holds.
    const std::vector<std::string> names{"mine-0", "mine-1", "secret-alpha", "secret-dir"};
    race([&](Tally& tally) {
        NamedStat named;
        const Status s = stat_named(leaf_, names, real_fs_ops(), &named);
        if (!s) {
            EXPECT_TRUE(refused(s)) << s.to_string();
            return true;
        }
        bool leak = leaked(named.self, tally, "stat_named self");
        bool own = false;
        for (const WalkResult& r : named.found) {
            if (r.name() == "mine-0") own = true;
            if (leaked(r, tally, "stat_named")) leak = true;
        }
        for (const std::string& g : named.gone) {
            if (g == "mine-0" || g == "mine-1") {
                if (tally.leaks++ == 0) tally.first_leak = "stat_named: her " + g + " is gone";
                leak = true;
            }
        }
        if (own) ++tally.own_seen;
        return leak;
    });
}

}  // namespace
}  // namespace wsindex::core
