// Issue #33 end to end: the real wsindexd runs as root with the live index on (fanotify), and a
// real unprivileged user attacks it with tests/support/swap_attacker.cpp. In her own directory
// E, inside the indexed root, she builds a chain of her directories spelling the path of a
// root-only 0700 directory outside every root (the vault), and a symlink E/L -> "/"; each time
// the daemon opens one of her directories or files she exchanges E/m with E/L and back. Each
// test makes the daemon work in her chain through one entry point: a named stat, a re-listing
// of a directory, a whole re-listing past the coalescer's name cap, a new subtree, a subtree
// rescan and a two-path scan asked by her as a control-group member, and dupes.
//
// The oracle, at every round and at the end: the index read as root (sqlite3 over the `files`
// view) holds no name and no inode of the vault (but at the vault's own path, which the test
// never asks for, and no scan of that path either), nothing under E owned by anyone but her,
// and no file in her chain of a vault file's size; every answer her wsctl gets holds no vault name,
// no file of a vault size in her chain, and (dupes) never groups her probe, whose content
// equals a vault file's, with anything. Positive controls: her own files are indexed and found by
// her, and the attacker swapped while the daemon had one of her directories or files open.
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/cli/support/accounts.hpp"
#include "tests/cli/support/fixture.hpp"
#include "tests/cli/support/index_watch.hpp"
#include "tests/support/prerequisite.hpp"
#include "tests/support/swap_attacker_process.hpp"

namespace wsindex::cli::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// How long each test attacks: long enough for a few hundred of the daemon's batches or scans
// in her chain, short enough for the suite's budget.
constexpr auto kAttackFor = 8s;
constexpr auto kDeadline = 60s;  // for the index to reach a state (live on, her files)
// The attacker against the live index: the length of a burst of swaps (microseconds), and the
// files her trigger renames in the directory the daemon visits before its target.
constexpr long kBurstUs = 3000;
constexpr int kDelayFiles = 20;
// Directories of hers above her m and L: the daemon's open of a path of her chain walks them
// before it reaches m, which is how long she has to swap between its stat and its open.
constexpr int kDepth = 200;
// Against the new-subtree walk: the longest swap she holds after the parent's open.
constexpr long kNewSubtreeHoldUs = 40000;

// Sizes no file of hers has: a file of one of them under E can only be a vault file.
constexpr std::size_t kAlphaSize = 7001;
constexpr std::size_t kPinSize = 7013;
// Names of the vault that no file of hers has (her rename trigger may own a "secret-alpha").
constexpr const char* kNamesNotHers[] = {"secret-pin", "secret-dir", "secret-inner"};

void write_file(const std::string& path, const std::string& content, mode_t mode) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    ASSERT_GE(fd, 0) << path;
    ASSERT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
    ::close(fd);
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
}

void make_dir(const std::string& path, mode_t mode, uid_t uid, gid_t gid) {
    ASSERT_EQ(::mkdir(path.c_str(), mode), 0) << path;
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
    ASSERT_EQ(::chown(path.c_str(), uid, gid), 0) << path;
}

// The PIN of the vault: a 0644 file under the 0700 directory, which she must not learn.
std::string pin_content() {
    std::string s = "PIN 4711\n";
    s.resize(kPinSize, '.');
    return s;
}

class SwapAttack : public EndToEnd {
  protected:
    void SetUp() override {
        if (const std::string why = missing_for_real_users({"/usr/bin/sqlite3"}); !why.empty()) {
            WSINDEX_SKIP_OR_FAIL_IN_CI() << why;
        }
        const std::string tag = std::to_string(::getpid());
        group_.emplace("wsiag" + tag, scratch_.path());
        ASSERT_TRUE(group_->error().empty()) << group_->error();
        user_.emplace("wsiax" + tag, scratch_.path());
        ASSERT_TRUE(user_->error().empty()) << user_->error();

        // Anyone may connect (the packaged default); changes are applied at once.
        const std::string config = scratch_ / "wsindexd.conf";
        std::ofstream(config) << "socket_mode = 0666\nsocket_group = \"" << group_->name()
                              << "\"\nwatch_settle_ms = 3\nwatch_max_delay_ms = 20\n";
        extra_args_ = {"--config", config};
        start_daemon();

        // scratch/vault        0700 root, outside every root
        //   secret-alpha       kAlphaSize bytes
        //   secret-pin         0644, pin_content()
        //   secret-dir/secret-inner
        // scratch/tree         0755 root, the indexed root
        //   E                  0755 hers: the attacker's chain, L, her files
        vault_ = scratch_ / "vault";
        make_dir(vault_, 0700, 0, 0);
        write_file(vault_ + "/secret-alpha", std::string(kAlphaSize, 'a'), 0600);
        write_file(vault_ + "/secret-pin", pin_content(), 0644);
        make_dir(vault_ + "/secret-dir", 0755, 0, 0);
        write_file(vault_ + "/secret-dir/secret-inner", "inner", 0644);
        for (const char* p :
             {"", "/secret-alpha", "/secret-pin", "/secret-dir", "/secret-dir/secret-inner"}) {
            struct stat st {};
            ASSERT_EQ(::lstat((vault_ + p).c_str(), &st), 0);
            vault_dev_ = st.st_dev;
            vault_inodes_ += (vault_inodes_.empty() ? "" : ",") + std::to_string(st.st_ino);
        }
        tree_ = scratch_ / "tree";
        make_dir(tree_, 0755, 0, 0);
        base_ = tree_ + "/E";
        make_dir(base_, 0755, user_->uid(), user_->gid());
    }

    // Makes her a member of the control group (for her wsctl: setpriv --init-groups).
    void join_control_group() {
        const Exit r = run_account_tool(
            {"/usr/sbin/usermod", "-a", "-G", group_->name(), user_->name()}, scratch_.path());
        ASSERT_EQ(r.code, 0) << r.err;
    }

    // Starts the attacker (her chain is built when this returns), scans the root and waits
    // until the live index follows it. `blind`: she also swaps between the daemon's opens (a
    // scan's first open has no open before it to time a swap on); against the live index she
    // times her swaps on its opens only, since blind swaps make it see E/m as the symlink it
    // then is, over and over, and her chain is out of the index most of the time.
    // Against the live index each of its opens starts a burst of swaps (kBurstUs), and each
    // trigger gives the daemon a directory of named changes to stat just before its target
    // (kDelayFiles), which is what lets her swap between its stat of the target's path and its
    // open of the same string.
    void start_attack(const std::string& trigger, const std::string& rename = "mine-0",
                      bool blind = false) {
        wsindex::test::SwapAttackerOptions o;
        o.program = WSINDEX_SWAP_ATTACKER;
        o.uid = user_->uid();
        o.gid = user_->gid();
        o.base = base_;
        o.target = vault_;
        o.trigger = trigger;
        o.rename = rename;
        o.blind = blind;
        if (trigger == "subdir") {
            // The new subtree is walked by a walker made for it, a long and varying while
            // after the parent's open: one long swap is in place then.
            o.hold_us = kNewSubtreeHoldUs;
            o.depth = kDepth;
        } else if (trigger != "none") {
            o.burst_us = kBurstUs;
            o.delay = kDelayFiles;
            o.depth = kDepth;
        }
        o.attempts = 1000000;  // the test stops it
        o.seconds = 120;
        std::string error;
        ASSERT_TRUE(attacker_.start(o, &error)) << error;
        leaf_ = attacker_.leaf();
        ASSERT_GT(leaf_.size(), base_.size() + vault_.size());
        ASSERT_EQ(leaf_.substr(0, base_.size() + 1), base_ + "/");
        ASSERT_EQ(leaf_.substr(leaf_.size() - vault_.size() - 2), "/m" + vault_);
        m_ = leaf_.substr(0, leaf_.size() - vault_.size());
        scan(tree_);
        const auto until = Clock::now() + kDeadline;
        while (Clock::now() < until && live_mode() != "fanotify") {
        }
        ASSERT_EQ(live_mode(), "fanotify") << log();
    }

    std::string live_mode() {
        const auto doc = json_of({"status"});
        for (const auto& r : doc["roots"]) {
            if (path_of(r["root"]) == tree_) return r.value("live", "");
        }
        return "";
    }

    // wsctl as her, with the groups /etc/group gives her now.
    Exit as_her(std::vector<std::string> args) {
        std::vector<std::string> argv{"/usr/bin/setpriv",
                                      "--reuid=" + std::to_string(user_->uid()),
                                      "--regid=" + std::to_string(user_->gid()),
                                      "--init-groups",
                                      "--",
                                      WSINDEX_WSCTL};
        argv.insert(argv.end(), args.begin(), args.end());
        argv.push_back("--socket");
        argv.push_back(daemon_->socket());
        return run(argv, scratch_.path(), std::chrono::minutes(2));
    }

    // Rows of the index that came from the vault (empty: none), read as root: a vault name or
    // inode anywhere but at the vault's own path, anything under E not hers, a file of a vault
    // size in her chain (her probe, outside the chain, has one on purpose); and any scan whose
    // root is the vault or below it: she never names it, so such a scan can only come from her
    // path resolved through her symlink.
    std::string leak_sql() const {
        const auto below = [](const std::string& dir) {
            const std::string prefix = dir + "/";
            return "substr(path, 1, " + std::to_string(prefix.size()) + ") = '" + prefix + "'";
        };
        const std::string sql =
            "SELECT path || ' uid ' || ifnull(uid, '-') || ' ino ' || ifnull(ino, '-') || "
            "' size ' || ifnull(size, '-') FROM files WHERE ((name IN ('secret-alpha', "
            "'secret-pin', 'secret-dir', 'secret-inner') AND (uid IS NULL OR uid <> " +
            std::to_string(user_->uid()) + ")) OR (dev = " + std::to_string(vault_dev_) +
            " AND ino IN (" + vault_inodes_ + "))) AND path <> '" + vault_ + "' AND NOT " +
            below(vault_) + " OR (" + below(base_) + " AND uid IS NOT NULL AND uid <> " +
            std::to_string(user_->uid()) + ") OR (" + below(m_) + " AND type = 'f' AND size IN (" +
            std::to_string(kAlphaSize) + ", " + std::to_string(kPinSize) + "));" +
            "SELECT 'scan ' || id || ' of ' || CAST(root AS TEXT) || ' ' || state FROM scans "
            "WHERE CAST(root AS TEXT) = '" +
            vault_ + "' OR substr(CAST(root AS TEXT), 1, " + std::to_string(vault_.size() + 1) +
            ") = '" + vault_ + "/';";
        return sql;
    }

    std::string index_leaks() {
        const Exit r =
            run({"/usr/bin/sqlite3", "-readonly", daemon_->db(), leak_sql()}, scratch_.path());
        EXPECT_EQ(r.code, 0) << r.err;
        return r.out;
    }

    // Checks one answer she got; counts a leak (with the first one kept for the message).
    void check_answer(const std::string& what, const Exit& r) {
        ++answers_;
        for (const char* name : kNamesNotHers) {
            for (const std::string* text : {&r.out, &r.err}) {
                const std::size_t at = text->find(name);
                if (at == std::string::npos) continue;
                // Around the name: the answer may be long.
                const std::size_t from = at > 300 ? at - 300 : 0;
                note_leak(what + " answered the vault name " + name + ": ..." +
                          text->substr(from, 600) + "...");
            }
        }
    }

    // Her find over E: no vault name, no file of a vault size in her chain; true if her own
    // mine-1 is in it (the attacker never renames mine-1).
    bool her_find_round() {
        const Exit names = as_her({"find", "--under", base_, "-0"});
        check_answer("find -0", names);
        const Exit listed = as_her({"find", "--under", base_, "-l", "--json"});
        check_answer("find -l --json", listed);
        if (listed.code == 0) {
            const auto doc = nlohmann::json::parse(listed.out, nullptr, false);
            if (!doc.is_discarded()) {
                for (const auto& e : doc.value("entries", nlohmann::json::array())) {
                    const std::uint64_t size = e.value("size", std::uint64_t{0});
                    const bool in_chain = path_of(e["path"]).rfind(m_ + "/", 0) == 0;
                    if (in_chain && e.value("type", "") == "f" &&
                        (size == kAlphaSize || size == kPinSize)) {
                        note_leak("find -l --json: a file of a vault size: " + e.dump());
                    }
                }
            }
        }
        const Exit du = as_her({"du", base_, "--json"});
        check_answer("du --json", du);
        return names.code == 0 && split_nul(names.out).count(leaf_ + "/mine-1") == 1;
    }

    void check_index(const char* when) {
        const std::string rows = index_leaks();
        if (!rows.empty())
            note_leak(std::string("the index ") + when + ":\n" + rows.substr(0, 4000));
    }

    void note_leak(const std::string& what) {
        if (leaks_++ == 0) first_leak_ = what;
    }

    // Rounds of `round` (true when her own files showed in it) for kAttackFor, each followed by
    // a look at the index; then the attacker is stopped and the controls checked: her files
    // are found by her once her tree stands still, and she swapped while the daemon had one of
    // her directories or files open.
    void attack(const std::function<bool()>& round) {
        long rounds = 0, own_seen = 0;
        // The index as root, all the time: a leaked row that the next change removes again
        // is caught too.
        IndexWatch watch(daemon_->db(), leak_sql());
        const auto until = Clock::now() + kAttackFor;
        while (Clock::now() < until) {
            ++rounds;
            if (round()) ++own_seen;
            check_index("during the attack");
        }
        report_ = attacker_.stop();
        check_index("after the attack");
        // Her files are hers to see: once the last changes are applied, her find shows them.
        bool found = false;
        const auto deadline = Clock::now() + kDeadline;
        while (!found && Clock::now() < deadline) {
            const Exit r = as_her({"find", "--under", base_, "-0"});
            check_answer("find -0 after the attack", r);
            found = r.code == 0 && split_nul(r.out).count(leaf_ + "/mine-0") == 1 &&
                    split_nul(r.out).count(leaf_ + "/mine-1") == 1;
        }
        check_index("at the end");
        watch.stop();
        EXPECT_EQ(watch.error(), "");
        if (!watch.first_rows().empty()) {
            note_leak("the index while she attacked:\n" + watch.first_rows().substr(0, 4000));
        }
        const std::string summary =
            "rounds " + std::to_string(rounds) + ", her files seen in " + std::to_string(own_seen) +
            ", answers checked " + std::to_string(answers_) + ", index looks " +
            std::to_string(watch.queries()) + " (with leaks " + std::to_string(watch.hits()) +
            "), leaks " + std::to_string(leaks_) + "; " + report_.describe();
        std::printf("%s\n", summary.c_str());
        RecordProperty("rounds", std::to_string(rounds));
        RecordProperty("swaps", std::to_string(report_.swaps));
        RecordProperty("during_open", std::to_string(report_.during_open));
        EXPECT_EQ(leaks_, 0) << "first: " << first_leak_ << "\n" << summary;
        EXPECT_TRUE(found) << "her own files are not found by her\n" << summary << "\n" << log();
        // own_seen is not asserted: while she swaps, the index rightly shows E/m as the symlink
        // it is at times, and her files are not below it then.
        EXPECT_GT(report_.swaps, 0) << summary;
        EXPECT_GT(report_.during_open, 0) << summary;
        EXPECT_TRUE(daemon_->running()) << log();
    }

    std::optional<TestGroup> group_;
    std::optional<TestUser> user_;
    std::string vault_, tree_, base_, leaf_;
    std::string m_;  // her m (BASE/m, or deeper when she has directories above it)
    std::uint64_t vault_dev_ = 0;
    std::string vault_inodes_;  // comma-separated
    wsindex::test::SwapAttacker attacker_;
    wsindex::test::SwapReport report_;
    long answers_ = 0;
    long leaks_ = 0;
    std::string first_leak_;
};

// A file of her leaf renamed back and forth: the daemon stats the changed names in the leaf.
// Her file has the name of a vault file: stat'ed in the vault, it would be root's, of its size.
TEST_F(SwapAttack, NamedStatOfHerDirectoryNeverReadsTheVault) {
    start_attack("rename", "secret-alpha");
    if (HasFatalFailure()) return;
    attack([&] { return her_find_round(); });
}

// Her leaf's own mode changed back and forth: the daemon re-lists the leaf whole.
TEST_F(SwapAttack, RelistingHerDirectoryNeverListsTheVault) {
    start_attack("attrib");
    if (HasFatalFailure()) return;
    attack([&] { return her_find_round(); });
}

// More than 256 names made and removed beside her leaf: its parent is re-listed whole, and a
// subdirectory the index does not know as it is now is walked again.
TEST_F(SwapAttack, WholeRelistingPastTheNameCapNeverListsTheVault) {
    start_attack("many");
    if (HasFatalFailure()) return;
    attack([&] { return her_find_round(); });
}

// A new directory of hers takes her leaf's place: a new subdirectory appears, and the daemon
// walks it.
TEST_F(SwapAttack, NewSubtreeWalkNeverWalksTheVault) {
    start_attack("subdir");
    if (HasFatalFailure()) return;
    attack([&] { return her_find_round(); });
}

// She is a control-group member and rescans her leaf, over and over.
TEST_F(SwapAttack, SubtreeRescanNeverScansTheVault) {
    join_control_group();
    start_attack("none", "mine-0", /*blind=*/true);
    if (HasFatalFailure()) return;
    attack([&] {
        check_answer("scan", as_her({"scan", leaf_, "--wait"}));
        return her_find_round();
    });
    // Unattacked, her scan succeeds (a scan met by the swap may fail; it must not leak).
    const Exit r = as_her({"scan", leaf_, "--wait"});
    check_answer("scan after the attack", r);
    EXPECT_EQ(r.code, 0) << r.out << r.err << log();
    check_index("after her last scan");
    EXPECT_EQ(leaks_, 0) << first_leak_;
}

// She is a control-group member and asks for two scans in one request: both paths are judged
// when it arrives, the second is walked after the first scan (whose opens time her swaps).
TEST_F(SwapAttack, ScanOfTwoRootsByAMemberNeverScansTheVault) {
    join_control_group();
    start_attack("none", "mine-0", /*blind=*/true);
    if (HasFatalFailure()) return;
    const std::string parent = leaf_.substr(0, leaf_.rfind('/'));
    attack([&] {
        check_answer("scan of two paths", as_her({"scan", parent, leaf_, "--wait"}));
        return her_find_round();
    });
    const Exit r = as_her({"scan", parent, leaf_, "--wait"});
    check_answer("scan of two paths after the attack", r);
    EXPECT_EQ(r.code, 0) << r.out << r.err << log();
    check_index("after her last scan");
    EXPECT_EQ(leaks_, 0) << first_leak_;
}

// Her probe holds exactly the vault's PIN file's bytes; her leaf is re-listed over and over (to
// poison the index, if the daemon can be made to list the vault under her path) while she asks
// for duplicates over E: no group may ever hold her probe (nothing of hers has its content).
// Her own pair of equal files is found once the attack is over.
TEST_F(SwapAttack, DupesNeverGroupsHerProbeWithAVaultFile) {
    write_file(base_ + "/probe", pin_content(), 0644);
    write_file(base_ + "/pair-a", std::string(3001, 'p'), 0644);
    write_file(base_ + "/pair-b", std::string(3001, 'p'), 0644);
    for (const char* f : {"/probe", "/pair-a", "/pair-b"}) {
        ASSERT_EQ(::chown((base_ + f).c_str(), user_->uid(), user_->gid()), 0);
    }
    start_attack("attrib");
    if (HasFatalFailure()) return;
    // Her dupes over E; true when her pair is one of the groups.
    const auto dupes_round = [&](const std::string& when) {
        const Exit r = as_her({"dupes", base_, "-0"});
        check_answer("dupes " + when, r);
        // Groups: NUL-terminated paths, one more NUL after each group.
        std::set<std::string> group;
        bool pair = false;
        std::size_t pos = 0;
        while (r.code == 0 && pos < r.out.size()) {
            const std::size_t end = r.out.find('\0', pos);
            if (end == std::string::npos) break;
            if (end == pos) {
                if (group.count(base_ + "/probe") != 0) {
                    std::string names;
                    for (const std::string& p : group) names += " " + p;
                    note_leak("dupes " + when + " grouped her probe with:" + names);
                }
                pair = pair || group == std::set<std::string>{base_ + "/pair-a", base_ + "/pair-b"};
                group.clear();
            } else {
                group.insert(r.out.substr(pos, end - pos));
            }
            pos = end + 1;
        }
        return pair;
    };
    attack([&] {
        dupes_round("during the attack");
        return her_find_round();
    });
    EXPECT_TRUE(dupes_round("after the attack")) << log();
    EXPECT_EQ(leaks_, 0) << first_leak_;
}

}  // namespace
}  // namespace wsindex::cli::test
