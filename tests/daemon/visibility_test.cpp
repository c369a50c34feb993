// Visibility: the rule on hand-made tables, the per-directory cache, the seam adaptors, and (as
// root) the filter's decisions against what real unprivileged processes can do.
#include "daemon/visibility.hpp"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/support/prerequisite.hpp"

namespace wsindex::daemon {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kAlice = 1000;
constexpr uid_t kBob = 1001;
constexpr gid_t kAliceGroup = 1000;
constexpr gid_t kBobGroup = 1001;
constexpr gid_t kStaff = 50;

// An "index": directory path -> (mode, uid, gid); counts lookups per path.
struct Table {
    std::map<std::string, DirPerm> dirs;
    std::map<std::string, int> asked;

    DirPermSource source() {
        return [this](const std::string& dir) -> std::optional<DirPerm> {
            ++asked[dir];
            auto it = dirs.find(dir);
            if (it == dirs.end()) return std::nullopt;
            return it->second;
        };
    }
};

Table home_table() {
    Table t;
    t.dirs["/"] = {040755, 0, 0};
    t.dirs["/home"] = {040755, 0, 0};
    t.dirs["/home/alice"] = {040700, kAlice, kAliceGroup};
    t.dirs["/home/alice/docs"] = {040755, kAlice, kAliceGroup};
    t.dirs["/home/bob"] = {040755, kBob, kBobGroup};
    t.dirs["/srv"] = {040755, 0, 0};
    t.dirs["/srv/staff"] = {040750, 0, kStaff};  // listable by the staff group
    t.dirs["/srv/dropbox"] = {040711, 0, 0};     // searchable, not listable
    t.dirs["/srv/dropbox/open"] = {040755, 0, 0};
    t.dirs["/srv/owner_denied"] = {040077, kBob, kStaff};  // owner class denies its owner
    return t;
}

TEST(Visibility, OtherUsersPrivateHomeIsHidden) {
    Table t = home_table();
    VisibilityFilter bob(make_caller(kBob, kBobGroup, {}), t.source());
    EXPECT_TRUE(bob.can_see("/home/alice"));  // the name of the home is in readable /home
    EXPECT_FALSE(bob.can_see("/home/alice/secret.txt"));
    EXPECT_FALSE(bob.can_see("/home/alice/docs/report.pdf"));  // 0755 below 0700 does not help
    EXPECT_FALSE(bob.can_list("/home/alice"));
    EXPECT_FALSE(bob.can_list("/home/alice/docs"));
    EXPECT_TRUE(bob.can_see("/home/bob/notes"));
    EXPECT_TRUE(bob.can_list("/home/bob"));

    VisibilityFilter alice(make_caller(kAlice, kAliceGroup, {}), t.source());
    EXPECT_TRUE(alice.can_see("/home/alice/secret.txt"));
    EXPECT_TRUE(alice.can_see("/home/alice/docs/report.pdf"));
    EXPECT_TRUE(alice.can_see("/home/bob/notes"));  // bob's home is world-readable
}

TEST(Visibility, GroupsSearchOnlyDirectoriesAndOwnerClass) {
    Table t = home_table();
    VisibilityFilter bob(make_caller(kBob, kBobGroup, {kStaff}), t.source());
    VisibilityFilter alice(make_caller(kAlice, kAliceGroup, {}), t.source());
    EXPECT_TRUE(bob.can_see("/srv/staff/plan"));
    EXPECT_FALSE(alice.can_see("/srv/staff/plan"));
    // 0711: names inside cannot be listed, nor the names below a readable directory inside
    // (find / could never reach them), although the path can be searched.
    EXPECT_FALSE(alice.can_see("/srv/dropbox/open"));
    EXPECT_FALSE(alice.can_see("/srv/dropbox/open/file"));
    EXPECT_FALSE(alice.can_list("/srv/dropbox/open"));
    EXPECT_TRUE(alice.can_search("/srv/dropbox/open"));
    EXPECT_FALSE(alice.can_list("/srv/dropbox"));
    EXPECT_FALSE(bob.can_see("/srv/owner_denied/x"));
    EXPECT_TRUE(alice.can_see("/srv/owner_denied/x"));
}

TEST(Visibility, RootSeesEverythingWithoutLookups) {
    Table t = home_table();
    VisibilityFilter root(make_caller(0, 0, {}), t.source());
    EXPECT_TRUE(root.can_see("/home/alice/secret.txt"));
    EXPECT_TRUE(root.can_see("/not/in/the/index"));
    EXPECT_TRUE(root.can_list("/home/alice"));
    EXPECT_EQ(root.lookups(), 0U);
}

// A per-user daemon trusts its own user: that uid sees everything, any other goes through the
// policy (and an invalid peer too, whatever uid it carries).
TEST(Visibility, TrustingOwnUserLetsOnlyThatUidSeeEverything) {
    int policy_calls = 0;
    VisibilityPolicy hide_all = [&](const ipc::PeerCredentials&) {
        ++policy_calls;
        const PathFilter none = [](std::string_view) { return false; };
        return CallerView{none, none, false};
    };
    const VisibilityPolicy policy = trusting_own_user(hide_all, 1234);
    ipc::PeerCredentials own{};
    own.valid = true;
    own.uid = 1234;
    const CallerView mine = policy(own);
    EXPECT_TRUE(mine.sees_everything);
    EXPECT_TRUE(mine.can_see("/home/u/private"));
    EXPECT_TRUE(mine.can_list("/home/u"));
    EXPECT_EQ(policy_calls, 0);
    ipc::PeerCredentials other = own;
    other.uid = 1235;
    EXPECT_FALSE(policy(other).sees_everything);
    EXPECT_FALSE(policy(other).can_see("/home/u/private"));
    ipc::PeerCredentials invalid = own;
    invalid.valid = false;
    EXPECT_FALSE(policy(invalid).sees_everything);
    EXPECT_EQ(policy_calls, 3);
}

// Root may read past permission bits; the same process after dropping to an unprivileged uid
// (which clears its capabilities) may not: then main.cpp trusts the daemon's own user.
TEST(Visibility, OnlyRootOrACapabilityBypassesPermissions) {
    if (::geteuid() == 0) {
        EXPECT_TRUE(process_may_bypass_permissions());
    }
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (::geteuid() == 0 &&
            (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
             ::setresuid(65534, 65534, 65534) != 0)) {
            ::_exit(2);
        }
        ::_exit(process_may_bypass_permissions() ? 1 : 0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: still may bypass; 2: could not drop privileges";
}

TEST(Visibility, UnknownDirectoriesAndBadPathsAreHidden) {
    Table t = home_table();
    VisibilityFilter alice(make_caller(kAlice, kAliceGroup, {}), t.source());
    EXPECT_FALSE(alice.can_see("/var/log/syslog"));  // /var not in the table
    EXPECT_TRUE(alice.can_see("/"));
    EXPECT_TRUE(alice.can_see("/var"));  // its name is in readable "/"
    for (const char* bad :
         {"", "relative/x", "/home/../home/alice", "/home//bob/x", "/home/bob/./x", "/home/bob/"}) {
        EXPECT_FALSE(alice.can_see(bad)) << bad;
        EXPECT_FALSE(alice.can_list(bad)) << bad;
    }
}

TEST(Visibility, DecisionsAreCachedPerDirectory) {
    Table t = home_table();
    VisibilityFilter bob(make_caller(kBob, kBobGroup, {}), t.source());
    for (int i = 0; i < 1000; ++i) {
        EXPECT_TRUE(bob.can_see("/home/bob/file" + std::to_string(i)));
        EXPECT_FALSE(bob.can_see("/home/alice/docs/file" + std::to_string(i)));
    }
    // "/", "/home", "/home/bob", "/home/alice" — and never "/home/alice/docs": nothing below
    // an unsearchable directory is looked up.
    EXPECT_EQ(bob.lookups(), 4U);
    for (const auto& [dir, count] : t.asked) EXPECT_EQ(count, 1) << dir;
    EXPECT_EQ(t.asked.count("/home/alice/docs"), 0U);
}

TEST(Visibility, ClosedRootDirectoryHidesEverything) {
    Table t;
    t.dirs["/"] = {040700, 0, 0};
    t.dirs["/a"] = {040777, 0, 0};
    VisibilityFilter alice(make_caller(kAlice, kAliceGroup, {}), t.source());
    EXPECT_FALSE(alice.can_see("/a"));
    EXPECT_FALSE(alice.can_see("/a/b"));
}

fs::path make_temp_dir(const char* stem) {
    std::string pattern = (fs::temp_directory_path() / (std::string(stem) + "-XXXXXX")).string();
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    return pattern;
}

TEST(Visibility, SeamAdaptors) {
    Table t = home_table();
    // The caller is this process, so /proc/self agrees with the credentials.
    ipc::PeerCredentials me{::getpid(), ::geteuid(), ::getegid(), true};
    const VisibilityPolicy policy = make_visibility_policy(t.source());
    const PathFilter filter = policy(me).can_see;
    EXPECT_TRUE(filter("/home/bob/x"));
    if (::geteuid() != 0) {
        EXPECT_FALSE(filter("/home/alice/x"));
    }

    ipc::PeerCredentials bob{::getpid(), kBob, kBobGroup, true};  // pid mismatch: primary only
    EXPECT_FALSE(policy(bob).can_see("/home/alice/x"));
    EXPECT_TRUE(policy(bob).can_see("/home/bob/x"));
    EXPECT_FALSE(policy(bob).can_see("/srv/staff/x"));
    ipc::PeerCredentials invalid{};
    EXPECT_FALSE(policy(invalid).can_see("/home/bob/x"));

    const ControlPolicy control = make_control_policy(kStaff);
    EXPECT_FALSE(control(bob));
    EXPECT_FALSE(control(invalid));
    EXPECT_TRUE(control(ipc::PeerCredentials{::getpid(), kBob, kStaff, true}));
    EXPECT_EQ(control(me), ::geteuid() == 0);
}

// ---- against the kernel: real directories, real unprivileged processes (root only) ---------

struct Identity {
    uid_t uid;
    gid_t gid;
    std::vector<gid_t> groups;
};

// For each directory in `dirs`: could `find /` run as `who` list it, i.e. can `who` open and
// search every directory from / down to it (access R_OK|X_OK and opendir, as the kernel
// decides)? Asked in a child that drops to `who` for good; answers come back through a pipe.
std::vector<bool> kernel_can_list(const Identity& who, const std::vector<std::string>& dirs) {
    int pipefd[2];
    EXPECT_EQ(::pipe(pipefd), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(pipefd[0]);
        if (::setgroups(who.groups.size(), who.groups.data()) != 0 || ::setgid(who.gid) != 0 ||
            ::setuid(who.uid) != 0) {
            ::_exit(2);
        }
        if (::setuid(0) == 0) ::_exit(3);  // really dropped
        const auto listable = [](const std::string& dir) {
            if (::access(dir.c_str(), R_OK | X_OK) != 0) return false;
            // opendir must agree: read permission on the directory itself.
            const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (fd >= 0) ::close(fd);
            return fd >= 0;
        };
        for (const auto& dir : dirs) {
            bool ok = listable("/");
            for (std::size_t slash = dir.find('/', 1); ok && slash != std::string::npos;
                 slash = dir.find('/', slash + 1)) {
                ok = listable(dir.substr(0, slash));
            }
            ok = ok && listable(dir);
            const char c = ok ? '1' : '0';
            if (::write(pipefd[1], &c, 1) != 1) ::_exit(4);
        }
        ::_exit(0);
    }
    ::close(pipefd[1]);
    std::vector<bool> out;
    char c = 0;
    while (::read(pipefd[0], &c, 1) == 1) out.push_back(c == '1');
    ::close(pipefd[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
    return out;
}

TEST(VisibilityAsRoot, FilterAgreesWithTheKernelForRealUsers) {
    if (::geteuid() != 0)
        WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root to create owners and drop privileges";
    // Numeric ids need no passwd entries: the kernel checks numbers. 65534 is nobody.
    constexpr uid_t kUser = 61001;
    constexpr gid_t kUserGroup = 61001, kSupp = 61002, kOtherGroup = 61003;
    const std::vector<Identity> who = {
        {65534, 65534, {65534}},
        {kUser, kUserGroup, {kUserGroup, kSupp}},
        {kUser + 1, kOtherGroup, {kOtherGroup}},
    };

    // The test root sits below the temp dir, so the real ancestors (/, /tmp) count as well.
    const fs::path root = make_temp_dir("wsvis-real");
    ASSERT_EQ(::chmod(root.c_str(), 0755), 0);
    struct Spec {
        const char* rel;
        mode_t mode;
        uid_t uid;
        gid_t gid;
    };
    const std::vector<Spec> specs = {
        {"pub", 0755, 0, 0},
        {"pub/deep", 0755, kUser, kUserGroup},
        {"priv", 0700, 0, 0},
        {"priv/inside", 0777, 0, 0},
        {"home_user", 0700, kUser, kUserGroup},
        {"home_user/docs", 0755, kUser, kUserGroup},
        {"owner_denied", 0077, kUser, kSupp},
        {"group_primary", 0750, 0, kUserGroup},
        {"group_supp", 0750, 0, kSupp},
        {"group_supp/x_only", 0710, 0, kSupp},
        {"group_supp/x_only/open", 0755, 0, 0},
        {"search_only", 0711, 0, 0},
        {"search_only/open", 0755, 0, 0},
        {"search_only/closed", 0750, 0, kOtherGroup},
        {"read_only", 0744, 0, 0},
        {"read_only/sub", 0755, 0, 0},
        {"sticky", 01777, 0, 0},
        {"other_group", 0770, kUser + 1, kOtherGroup},
    };
    std::vector<std::string> dirs = {root.string()};
    for (const auto& s : specs) {
        const fs::path p = root / s.rel;
        ASSERT_EQ(::mkdir(p.c_str(), 0700), 0) << p;
        ASSERT_EQ(::chown(p.c_str(), s.uid, s.gid), 0);
        ASSERT_EQ(::chmod(p.c_str(), s.mode), 0);
        dirs.push_back(p.string());
    }

    // The "index": every directory's metadata as a scan records it (lstat), looked up live.
    for (const auto& id : who) {
        const std::vector<bool> truth = kernel_can_list(id, dirs);
        ASSERT_EQ(truth.size(), dirs.size());
        VisibilityFilter filter(make_caller(id.uid, id.gid, id.groups), live_dir_perm);
        for (std::size_t i = 0; i < dirs.size(); ++i) {
            EXPECT_EQ(filter.can_list(dirs[i]), truth[i])
                << "uid " << id.uid << " listing " << dirs[i];
            // An entry is visible exactly when its directory is listable.
            EXPECT_EQ(filter.can_see(dirs[i] + "/some-file"), truth[i])
                << "uid " << id.uid << " seeing a name in " << dirs[i];
        }
    }
    // Spot checks that the table above exercises what it claims.
    VisibilityFilter user(make_caller(kUser, kUserGroup, {kUserGroup, kSupp}), live_dir_perm);
    VisibilityFilter nobody(make_caller(65534, 65534, {65534}), live_dir_perm);
    EXPECT_TRUE(user.can_see((root / "home_user/docs/f").string()));
    EXPECT_FALSE(nobody.can_see((root / "home_user/docs/f").string()));
    EXPECT_FALSE(user.can_see((root / "group_supp/x_only/f").string()));
    EXPECT_FALSE(user.can_see((root / "owner_denied/f").string()));
    EXPECT_TRUE(nobody.can_see((root / "owner_denied/f").string()));
    // A search-only ancestor hides the names below an open directory (find cannot reach them).
    EXPECT_FALSE(nobody.can_see((root / "search_only/open/f").string()));
    EXPECT_FALSE(user.can_see((root / "group_supp/x_only/open/f").string()));
    EXPECT_TRUE(user.can_see((root / "group_supp/f").string()));
    EXPECT_FALSE(nobody.can_see((root / "read_only/f").string()));

    fs::remove_all(root);
}

// Removes a chain of directories named `name` below `root` (and `root`), however deep and
// whatever stops the test: rmdir from the bottom through descriptors (std::filesystem uses
// whole paths, which the kernel refuses past PATH_MAX). A symlink `link` may sit at any level.
struct ChainRemover {
    std::string root;
    std::string name;
    ~ChainRemover() {
        std::vector<int> fds = {::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)};
        while (fds.back() >= 0) {
            fds.push_back(::openat(fds.back(), name.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        }
        fds.pop_back();
        for (std::size_t i = fds.size(); i-- > 0;) {
            ::unlinkat(fds[i], "link", 0);
            if (i + 1 < fds.size()) ::unlinkat(fds[i], name.c_str(), AT_REMOVEDIR);
            ::close(fds[i]);
        }
        fs::remove_all(root);
    }
};

TEST(VisibilityAsRoot, PathsLongerThanPathMaxAreJudgedLikeShortOnes) {
    if (::geteuid() != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root to create owners";
    // A chain of directories made through descriptors (the kernel refuses such paths whole),
    // all 0755 but one 0700 level past PATH_MAX: nobody sees everything down to that level's
    // entry and nothing below it. Past 2 * PATH_MAX, so the deepest paths take three pieces.
    const fs::path root = make_temp_dir("wsvis-long");
    ASSERT_EQ(::chmod(root.c_str(), 0755), 0);
    const std::string name(200, 'L');
    const ChainRemover remover{root.string(), name};
    std::vector<std::string> dirs = {root.string()};
    int fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    std::size_t closed = 0;  // index in dirs of the 0700 level
    while (dirs.back().size() < 2 * PATH_MAX + 1000) {
        ASSERT_EQ(::mkdirat(fd, name.c_str(), 0755), 0);
        const bool close_this =
            closed == 0 && dirs.back().size() + 1 + name.size() > PATH_MAX + 300;
        ASSERT_EQ(::fchmodat(fd, name.c_str(), close_this ? 0700 : 0755, 0), 0);
        const int next = ::openat(fd, name.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        ::close(fd);
        ASSERT_GE(next, 0);
        fd = next;
        dirs.push_back(dirs.back() + "/" + name);
        if (close_this) closed = dirs.size() - 1;
    }
    // A symlink to a directory, at the deepest level: not a directory.
    EXPECT_EQ(::symlinkat(".", fd, "link"), 0);
    ::close(fd);
    ASSERT_GT(closed, 0U);
    ASSERT_GT(dirs[closed - 1].size(), static_cast<std::size_t>(PATH_MAX));

    const auto perm = live_dir_perm(dirs[closed]);
    ASSERT_TRUE(perm.has_value());
    EXPECT_EQ(perm->mode & 0777U, 0700U);
    const auto deepest = live_dir_perm(dirs.back());
    EXPECT_TRUE(deepest.has_value() && (deepest->mode & 0777U) == 0755U);
    EXPECT_FALSE(live_dir_perm(dirs.back() + "/missing").has_value());
    EXPECT_FALSE(live_dir_perm(dirs.back() + "/link").has_value());

    VisibilityFilter nobody(make_caller(65534, 65534, {65534}), live_dir_perm);
    for (std::size_t i = 0; i < dirs.size(); ++i) {
        EXPECT_EQ(nobody.can_list(dirs[i]), i < closed) << "level " << i;
        EXPECT_EQ(nobody.can_see(dirs[i] + "/f"), i < closed) << "level " << i;
    }
    EXPECT_TRUE(nobody.can_see(dirs[closed]));  // its name, in a listable parent
}

// setfacl ARGS... on `path`; false if setfacl is missing or the file system refuses ACLs.
bool setfacl(const std::vector<std::string>& args, const fs::path& path) {
    std::string cmd = "setfacl";
    for (const auto& a : args) cmd += " '" + a + "'";
    cmd += " '" + path.string() + "' 2>/dev/null";
    return std::system(cmd.c_str()) == 0;
}

TEST(VisibilityAsRoot, PosixAclsAgreeWithTheKernel) {
    if (::geteuid() != 0)
        WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root to create owners and drop privileges";
    if (std::system("command -v setfacl >/dev/null 2>&1") != 0)
        WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs setfacl";
    constexpr uid_t kUser = 61011;
    constexpr gid_t kUserGroup = 61011, kSupp = 61012, kOtherGroup = 61013;
    const std::vector<Identity> who = {
        {65534, 65534, {65534}},
        {kUser, kUserGroup, {kUserGroup, kSupp}},
        {kUser + 1, kOtherGroup, {kOtherGroup}},
    };
    const fs::path root = make_temp_dir("wsvis-acl");
    ASSERT_EQ(::chmod(root.c_str(), 0755), 0);
    if (!setfacl({"-m", "u:" + std::to_string(kUser) + ":rx"}, root) || !setfacl({"-b"}, root)) {
        fs::remove_all(root);
        WSINDEX_SKIP_OR_FAIL_IN_CI() << "no POSIX ACLs on " << root;
    }
    struct Spec {
        const char* rel;
        mode_t mode;
        gid_t gid;
        std::vector<std::string> acl;  // setfacl arguments
    };
    const std::string user = std::to_string(kUser);
    const std::vector<Spec> specs = {
        // A named user entry opens a 0700 directory to that user only.
        {"named_user", 0700, 0, {"-m", "u:" + user + ":rx"}},
        {"named_user/inner", 0755, 0, {}},
        // The owning group entry narrower than the mask: the group bits of the mode show the
        // mask (r-x), the ACL denies the owning group. Mode bits alone would wrongly allow it.
        {"narrow_group",
         0750,
         kUserGroup,
         {"-m", "g::---,g:" + std::to_string(kOtherGroup) + ":rx"}},
        // The mask limits a named user to search only.
        {"masked_user", 0700, 0, {"-m", "u:" + user + ":rwx,m::x"}},
        {"masked_user/open", 0755, 0, {}},
        // A named supplementary group.
        {"named_group", 0700, 0, {"-m", "g:" + std::to_string(kSupp) + ":rx"}},
        // A named user entry denies what the other class would grant.
        {"user_denied", 0755, 0, {"-m", "u:65534:---"}},
        // One matching group that does not grant, one that does: allowed.
        {"two_groups", 0750, kUserGroup, {"-m", "g::---,g:" + std::to_string(kSupp) + ":rx"}},
        // Only a default ACL: the access check is the mode's.
        {"default_only", 0750, 0, {"-d", "-m", "u:" + user + ":rwx"}},
    };
    std::vector<std::string> dirs = {root.string()};
    for (const auto& s : specs) {
        const fs::path p = root / s.rel;
        ASSERT_EQ(::mkdir(p.c_str(), 0700), 0) << p;
        ASSERT_EQ(::chown(p.c_str(), 0, s.gid), 0);
        ASSERT_EQ(::chmod(p.c_str(), s.mode), 0);
        if (!s.acl.empty()) {
            ASSERT_TRUE(setfacl(s.acl, p)) << p;
        }
        dirs.push_back(p.string());
    }
    for (const auto& id : who) {
        const std::vector<bool> truth = kernel_can_list(id, dirs);
        ASSERT_EQ(truth.size(), dirs.size());
        VisibilityFilter filter(make_caller(id.uid, id.gid, id.groups), live_dir_perm);
        for (std::size_t i = 0; i < dirs.size(); ++i) {
            EXPECT_EQ(filter.can_list(dirs[i]), truth[i])
                << "uid " << id.uid << " listing " << dirs[i];
            EXPECT_EQ(filter.can_see(dirs[i] + "/f"), truth[i])
                << "uid " << id.uid << " in " << dirs[i];
        }
    }
    // The cases the table is about.
    VisibilityFilter u(make_caller(kUser, kUserGroup, {kUserGroup, kSupp}), live_dir_perm);
    VisibilityFilter other(make_caller(kUser + 1, kOtherGroup, {kOtherGroup}), live_dir_perm);
    VisibilityFilter nobody(make_caller(65534, 65534, {65534}), live_dir_perm);
    EXPECT_TRUE(u.can_see((root / "named_user/inner/f").string()));
    EXPECT_FALSE(other.can_see((root / "named_user/f").string()));
    EXPECT_FALSE(u.can_see((root / "narrow_group/f").string()));
    EXPECT_TRUE(other.can_see((root / "narrow_group/f").string()));
    EXPECT_FALSE(u.can_list((root / "masked_user").string()));
    EXPECT_FALSE(u.can_see((root / "masked_user/open/f").string()));  // search-only ancestor
    EXPECT_TRUE(u.can_see((root / "named_group/f").string()));
    EXPECT_FALSE(nobody.can_see((root / "user_denied/f").string()));
    EXPECT_TRUE(other.can_see((root / "user_denied/f").string()));
    EXPECT_TRUE(u.can_see((root / "two_groups/f").string()));
    EXPECT_FALSE(u.can_see((root / "default_only/f").string()));
    // And the ACL is what live_dir_perm hands over.
    const auto perm = live_dir_perm((root / "narrow_group").string());
    ASSERT_TRUE(perm.has_value());
    EXPECT_FALSE(perm->acl.empty());
    EXPECT_TRUE(live_dir_perm((root / "named_user/inner").string())->acl.empty());
    fs::remove_all(root);
}

}  // namespace
}  // namespace wsindex::daemon
