// Directories judged and read along one descriptor chain (daemon/permission_check.hpp, DirChain),
// as root, with a symlink swapped in (renameat2 RENAME_EXCHANGE) exactly between two steps:
// between judging a directory and judging the one below it (the visibility filter), and between
// the caller's visibility check and the read (the dupes finder). Deterministic: the swap is made
// by the test at that point, not raced.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/range_executor.hpp"
#include "daemon/credentials.hpp"
#include "daemon/dupes_finder.hpp"
#include "daemon/permission_check.hpp"
#include "daemon/visibility_filter.hpp"
#include "storage/database.hpp"
#include "tests/daemon/support/daemon_test_support.hpp"
#include "tests/storage/support/tree_walk.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::daemon {
namespace {

using storage::test::TempDir;

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

void make_dir(const std::string& path, mode_t mode, uid_t uid) {
    ASSERT_EQ(::mkdir(path.c_str(), mode), 0) << path;
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
    ASSERT_EQ(::chown(path.c_str(), uid, uid == 0 ? 0 : kNogroup), 0) << path;
}

void exchange(const std::string& a, const std::string& b) {
    ASSERT_EQ(::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE), 0)
        << a << " <-> " << b;
}

class DescriptorChainAsRoot : public ::testing::Test {
  protected:
    void SetUp() override {
        if (::geteuid() != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root (chown)";
        ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
        t_ = dir_.path();
    }
    TempDir dir_;
    std::string t_;
};

// T/E (the user's), T/E/m and T/E/m/sub hers; T/vault 0700 root with T/vault/sub 0755 root;
// T/E/L -> T/vault. Exchanged right after T/E/m was judged, T/E/m is the symlink: the directory
// judged for T/E/m/sub must be her sub below the T/E/m just judged, not the vault's. (With the
// old live_dir_perm, a path lookup per directory, it was the vault's: uid 0, 0755.)
TEST_F(DescriptorChainAsRoot, EachDirectoryIsJudgedBelowTheAncestorJudgedForIt) {
    make_dir(t_ + "/E", 0755, kNobody);
    make_dir(t_ + "/E/m", 0755, kNobody);
    make_dir(t_ + "/E/m/sub", 0750, kNobody);
    make_dir(t_ + "/vault", 0700, 0);
    make_dir(t_ + "/vault/sub", 0755, 0);
    ASSERT_EQ(::symlink((t_ + "/vault").c_str(), (t_ + "/E/L").c_str()), 0);

    DirChain chain;
    std::map<std::string, std::optional<DirPerm>> judged;
    bool swapped = false;
    const DirPermSource source = [&](const std::string& dir) -> std::optional<DirPerm> {
        std::optional<DirPerm> perm = chain.perm(dir);
        judged[dir] = perm;
        if (dir == t_ + "/E/m" && !swapped) {
            exchange(t_ + "/E/m", t_ + "/E/L");
            swapped = true;
        }
        return perm;
    };
    VisibilityFilter filter(make_caller(kNobody, kNogroup, {}), source);
    EXPECT_TRUE(filter.can_see(t_ + "/E/m/sub/pin"));
    ASSERT_TRUE(swapped);
    const std::optional<DirPerm>& sub = judged[t_ + "/E/m/sub"];
    ASSERT_TRUE(sub.has_value());
    EXPECT_EQ(sub->uid, kNobody);
    EXPECT_EQ(sub->mode & 07777, 0750u);

    // A new chain reaches the path as it is now: the symlink is refused, not followed.
    EXPECT_FALSE(live_dir_perm(t_ + "/E/m/sub").has_value());
    EXPECT_FALSE(live_dir_perm(t_ + "/E/m").has_value());
    // Positive control: the same directories by their real path.
    const std::optional<DirPerm> real = live_dir_perm(t_ + "/E/L/sub");
    ASSERT_TRUE(real.has_value());
    EXPECT_EQ(real->uid, kNobody);
}

// A symlink in any component, not only the last, makes the lookup fail. (The old live_dir_perm
// followed every component but the last.)
TEST_F(DescriptorChainAsRoot, ASymlinkInAnyComponentIsRefused) {
    make_dir(t_ + "/vault", 0700, 0);
    make_dir(t_ + "/vault/open", 0755, 0);
    ASSERT_EQ(::symlink((t_ + "/vault").c_str(), (t_ + "/L").c_str()), 0);
    EXPECT_FALSE(live_dir_perm(t_ + "/L/open").has_value());
    EXPECT_FALSE(live_dir_perm(t_ + "/L").has_value());
    EXPECT_TRUE(live_dir_perm(t_ + "/vault/open").has_value());  // positive control

    DirChain chain;
    const int fd = chain.open(t_ + "/L/open");
    EXPECT_TRUE(fd == -ELOOP || fd == -ENOTDIR) << fd;
    EXPECT_GE(chain.open(t_ + "/vault/open"), 0);
}

// Each component is judged on the descriptor the next one is opened from: a swap right after a
// component was judged (the hook) cannot redirect the rest of the chain, and a judge that
// refuses a component stops it there.
TEST_F(DescriptorChainAsRoot, AComponentSwappedAfterItsJudgmentCannotRedirectTheRest) {
    make_dir(t_ + "/E", 0755, kNobody);
    make_dir(t_ + "/E/m", 0755, kNobody);
    make_dir(t_ + "/E/m/in", 0755, kNobody);
    make_dir(t_ + "/vault", 0700, 0);
    make_dir(t_ + "/vault/in", 0755, 0);
    ASSERT_EQ(::symlink((t_ + "/vault").c_str(), (t_ + "/E/L").c_str()), 0);

    const Caller nobody = make_caller(kNobody, kNogroup, {});
    std::map<std::string, uid_t> owners;
    DirChain chain([&](const DirPerm& perm) { return permits(nobody, perm, kRead | kSearch); });
    bool swapped = false;
    chain.after_component = [&](std::string_view path) {
        if (path == t_ + "/E/m" && !swapped) {
            exchange(t_ + "/E/m", t_ + "/E/L");
            swapped = true;
        }
    };
    const int fd = chain.open(t_ + "/E/m/in");
    ASSERT_TRUE(swapped);
    ASSERT_GE(fd, 0);
    struct stat st {};
    ASSERT_EQ(::fstat(fd, &st), 0);
    EXPECT_EQ(st.st_uid, kNobody);  // hers, below the m judged, not the vault's

    // The vault is refused by the judge: its 0700 root directory is not the caller's to list.
    DirChain judged([&](const DirPerm& perm) { return permits(nobody, perm, kRead | kSearch); });
    EXPECT_EQ(judged.open(t_ + "/vault/in"), -EACCES);
    EXPECT_GE(judged.open(t_ + "/E/L/in"), 0);  // positive control
}

// A path the chain reached before and must open again (it left the prefix meanwhile) must be
// the object reached there before: what was judged about it still holds only then.
TEST_F(DescriptorChainAsRoot, APathOpenedAgainMustBeTheObjectReachedBefore) {
    make_dir(t_ + "/a", 0755, 0);
    make_dir(t_ + "/a/x", 0755, 0);
    make_dir(t_ + "/b", 0755, 0);
    make_dir(t_ + "/b/x", 0755, 0);
    make_dir(t_ + "/c", 0755, 0);
    DirChain chain;
    ASSERT_TRUE(chain.perm(t_ + "/a/x").has_value());
    ASSERT_TRUE(chain.perm(t_ + "/c").has_value());
    exchange(t_ + "/a", t_ + "/b");
    EXPECT_EQ(chain.open(t_ + "/a/x"), -ESTALE);
    EXPECT_FALSE(chain.perm(t_ + "/a/x").has_value());
    // A chain of its own has no such memory: the directory at /a now.
    DirChain fresh;
    EXPECT_GE(fresh.open(t_ + "/a/x"), 0);
}

// Deeper than PATH_MAX and deeper than the descriptors a chain keeps: reached one component at
// a time, and a level whose descriptor was let go is opened again when a path needs it.
TEST_F(DescriptorChainAsRoot, PathsDeeperThanPathMaxAreReachedAndReachedAgain) {
    const std::string name(8, 'd');
    std::vector<std::string> dirs = {t_};
    int fd = ::open(t_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    while (dirs.back().size() < PATH_MAX + 1000) {
        ASSERT_EQ(::mkdirat(fd, name.c_str(), 0755), 0);
        if (dirs.size() == 11) {
            ASSERT_EQ(::mkdirat(fd, "side", 0755), 0);  // in dirs[10]
        }
        const int next = ::openat(fd, name.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        ::close(fd);
        ASSERT_GE(next, 0);
        fd = next;
        dirs.push_back(dirs.back() + "/" + name);
    }
    ::close(fd);
    ASSERT_GT(dirs.size(), 200u);
    DirChain chain;
    const std::optional<DirPerm> deepest = chain.perm(dirs.back());
    ASSERT_TRUE(deepest.has_value());
    EXPECT_EQ(deepest->mode & 0777U, 0755U);
    EXPECT_GE(chain.open(dirs[10] + "/side"), 0);  // shares a prefix whose descriptor was let go
    EXPECT_GE(chain.open(dirs.back()), 0);
    EXPECT_GE(chain.open(dirs[150]), 0);
    EXPECT_EQ(chain.open(dirs.back() + "/missing"), -ENOENT);
    EXPECT_TRUE(live_dir_perm(dirs.back()).has_value());
}

// The dupes finder over a "poisoned" index: it says tree/E/m/secret/pin is an inode that now
// lives in a 0700 root directory (tree/vault/m/secret/pin), while tree/E/m is the user's own
// directory again; her probe has the pin's size and content. Her visibility check passes (her
// directories); right after it, before anything is read, tree/E/m is exchanged with a symlink to
// the vault's m. The pin must be neither hashed nor grouped with the probe (it is reported
// changed); her own pair of equal files is grouped (the run worked). With the old reader (the
// whole path opened from AT_FDCWD) the pin was read through the symlink and grouped.
TEST_F(DescriptorChainAsRoot, DupesReadNoFileBehindASymlinkSwappedInAfterTheVisibilityCheck) {
    const std::string tree = t_ + "/tree";
    make_dir(tree, 0755, 0);
    make_dir(tree + "/E", 0755, kNobody);
    make_dir(tree + "/E/m", 0755, kNobody);
    make_dir(tree + "/E/m/secret", 0755, kNobody);
    const std::string pin(5000, '7');
    test::write_file(tree + "/E/m/secret/pin", pin);  // root's, 0644: only the vault hides it
    test::write_file(tree + "/E/probe", pin);
    test::write_file(tree + "/E/own1", std::string(3000, 'o'));
    test::write_file(tree + "/E/own2", std::string(3000, 'o'));
    for (const char* f : {"/E/probe", "/E/own1", "/E/own2"}) {
        ASSERT_EQ(::chown((tree + f).c_str(), kNobody, kNogroup), 0);
    }
    const std::string db_path = t_ + "/index.db";
    ASSERT_TRUE(storage::test::scan_db(db_path, tree));
    make_dir(tree + "/vault", 0700, 0);
    ASSERT_EQ(::rename((tree + "/E/m").c_str(), (tree + "/vault/m").c_str()), 0);
    make_dir(tree + "/E/m", 0755, kNobody);
    make_dir(tree + "/E/m/secret", 0755, kNobody);
    ASSERT_EQ(::symlink((tree + "/vault/m").c_str(), (tree + "/E/L").c_str()), 0);

    storage::Database db;
    ASSERT_TRUE(storage::Database::open(db_path, storage::OpenMode::read_write, &db));
    const Caller nobody = make_caller(kNobody, kNogroup, {});
    DirChain filter_chain;
    VisibilityFilter filter(nobody, [&](const std::string& dir) -> std::optional<DirPerm> {
        return filter_chain.perm(dir);
    });
    bool swapped = false;
    const NameFilter can_see = [&](std::string_view path) {
        const bool seen = filter.can_see(path);
        if (path == tree + "/E/m/secret/pin" && !swapped) {
            EXPECT_TRUE(seen);  // her directories, as they are at the check
            exchange(tree + "/E/m", tree + "/E/L");
            swapped = true;
        }
        return seen;
    };
    const ReadPermission may_read = [&](int fd) {
        const std::optional<DirPerm> perm = live_fd_perm(fd);
        return perm && permits(nobody, *perm, kRead);
    };
    const DirJudge may_list = [&](const DirPerm& perm) {
        return permits(nobody, perm, kRead | kSearch);
    };
    core::RangeOptions ro;
    ro.workers = 2;
    ro.use_topology = false;
    core::RangeExecutor executor(ro);
    DupesProgress progress(executor.size());
    DupesEnvironment env{&db, executor, can_see, may_read, progress, {}, nullptr, may_list};
    DupesResult result;
    const core::Status st = find_dupes(env, DupesRequest{}, {}, &result);
    ASSERT_TRUE(st) << st.to_string();
    ASSERT_TRUE(swapped);

    bool own_pair = false;
    for (const DupesGroup& g : result.groups) {
        for (const DupesFile& f : g.files) {
            for (const std::string& n : f.names) {
                EXPECT_NE(n, tree + "/E/m/secret/pin") << "grouped a file behind the symlink";
                EXPECT_NE(n, tree + "/E/probe") << "the probe found its equal";
            }
        }
        if (g.files.size() == 2 && g.files[0].names.at(0) == tree + "/E/own1") own_pair = true;
    }
    EXPECT_TRUE(own_pair) << "positive control: her own equal files";
    EXPECT_NE(std::find(result.changed.begin(), result.changed.end(), tree + "/E/m/secret/pin"),
              result.changed.end());
}

}  // namespace
}  // namespace wsindex::daemon
