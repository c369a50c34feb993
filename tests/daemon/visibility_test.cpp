// Visibility: the permission rule on hand-made tables, the per-directory cache, credential
// parsing, and (as root) the filter's decisions against what real unprivileged processes can do.
#include "daemon/visibility.hpp"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

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

TEST(Visibility, PermitsUsesTheKernelsClassSelection) {
    const Caller bob = make_caller(kBob, kBobGroup, {kStaff});
    const Caller alice = make_caller(kAlice, kAliceGroup, {});
    const DirPerm owner_denied{040077, kBob, kStaff};
    EXPECT_FALSE(permits(bob, owner_denied, kSearch));  // owner bits 0, group bits not used
    EXPECT_TRUE(permits(alice, owner_denied, kRead | kSearch));  // other bits 7
    const DirPerm staff{040750, 0, kStaff};
    EXPECT_TRUE(permits(bob, staff, kRead | kSearch));  // supplementary group
    EXPECT_FALSE(permits(alice, staff, kSearch));
    EXPECT_FALSE(permits(bob, staff, kWrite));
    const DirPerm primary{040070, 0, kAliceGroup};
    EXPECT_TRUE(permits(alice, primary, kRead | kSearch));  // primary group
    EXPECT_TRUE(permits(make_caller(0, 0, {}), DirPerm{040000, 5, 5}, kRead | kSearch));
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
    // 0711: names inside cannot be listed, but a readable directory below can.
    EXPECT_FALSE(alice.can_see("/srv/dropbox/open"));
    EXPECT_TRUE(alice.can_see("/srv/dropbox/open/file"));
    EXPECT_TRUE(alice.can_search("/srv/dropbox"));
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

TEST(Visibility, MayControl) {
    EXPECT_TRUE(may_control(make_caller(0, 0, {}), std::nullopt));
    EXPECT_FALSE(may_control(make_caller(kBob, kBobGroup, {}), std::nullopt));
    EXPECT_TRUE(may_control(make_caller(kBob, kBobGroup, {kStaff}), kStaff));
    EXPECT_TRUE(may_control(make_caller(kBob, kStaff, {}), kStaff));  // primary group
    EXPECT_FALSE(may_control(make_caller(kBob, kBobGroup, {kStaff}), gid_t{999}));
}

TEST(Visibility, ParsesProcStatusGroups) {
    std::vector<gid_t> groups;
    EXPECT_TRUE(parse_status_groups("Name:\tx\nGroups:\t4 24 27 1000 \nNSpid:\t1\n", &groups));
    EXPECT_EQ(groups, (std::vector<gid_t>{4, 24, 27, 1000}));
    EXPECT_TRUE(parse_status_groups("Groups:\t\n", &groups));
    EXPECT_TRUE(groups.empty());
    EXPECT_FALSE(parse_status_groups("Name:\tx\n", &groups));
    EXPECT_FALSE(parse_status_groups("Groups:\t4 x\n", &groups));
}

fs::path make_temp_dir(const char* stem) {
    std::string pattern = (fs::temp_directory_path() / (std::string(stem) + "-XXXXXX")).string();
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    return pattern;
}

TEST(Visibility, CallerFromProcessChecksTheIdentity) {
    const fs::path proc = make_temp_dir("wsvis-proc");
    fs::create_directories(proc / "42");
    std::ofstream(proc / "42" / "status")
        << "Name:\tfake\nUid:\t1000\t1000\t1000\t1000\nGid:\t100\t100\t100\t100\n"
           "Groups:\t100 27 4 27 \n";
    Caller caller;
    ASSERT_TRUE(caller_from_process(42, 1000, 100, &caller, proc.string()));
    EXPECT_EQ(caller.groups, (std::vector<gid_t>{4, 27, 100}));  // sorted, unique
    // The pid now belongs to someone else: refused.
    EXPECT_FALSE(caller_from_process(42, 1001, 100, &caller, proc.string()));
    EXPECT_FALSE(caller_from_process(43, 1000, 100, &caller, proc.string()));
    fs::remove_all(proc);
}

std::vector<gid_t> my_groups() {
    std::vector<gid_t> groups(static_cast<std::size_t>(::getgroups(0, nullptr)));
    groups.resize(
        static_cast<std::size_t>(::getgroups(static_cast<int>(groups.size()), groups.data())));
    return make_caller(0, 0, groups).groups;
}

TEST(Visibility, CallerFromRealProcessAndSocketMatchOurCredentials) {
    Caller from_proc;
    ASSERT_TRUE(caller_from_process(::getpid(), ::geteuid(), ::getegid(), &from_proc));
    EXPECT_EQ(from_proc.uid, ::geteuid());
    EXPECT_EQ(from_proc.groups, my_groups());

    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    Caller from_socket;
    ASSERT_TRUE(caller_from_socket(pair[0], &from_socket));
    EXPECT_EQ(from_socket.uid, ::geteuid());
    EXPECT_EQ(from_socket.gid, ::getegid());
    EXPECT_EQ(from_socket.groups, my_groups());
    ::close(pair[0]);
    ::close(pair[1]);
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

TEST(Visibility, LookupGroup) {
    EXPECT_EQ(lookup_group("root").value_or(12345), 0U);
    EXPECT_FALSE(lookup_group("wsindex-no-such-group-xyz").has_value());
}

// ---- against the kernel: real directories, real unprivileged processes (root only) ---------

struct Identity {
    uid_t uid;
    gid_t gid;
    std::vector<gid_t> groups;
};

// For each directory in `dirs`: can `who` list it (access R_OK|X_OK and opendir, as the kernel
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
        for (const auto& dir : dirs) {
            bool ok = ::access(dir.c_str(), R_OK | X_OK) == 0;
            if (ok) {
                // opendir must agree: read permission on the directory itself.
                const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                ok = fd >= 0;
                if (fd >= 0) ::close(fd);
            }
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
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create owners and drop privileges";
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
    EXPECT_TRUE(user.can_see((root / "group_supp/x_only/open/f").string()));
    EXPECT_FALSE(user.can_see((root / "group_supp/x_only/f").string()));
    EXPECT_FALSE(user.can_see((root / "owner_denied/f").string()));
    EXPECT_TRUE(nobody.can_see((root / "owner_denied/f").string()));
    EXPECT_TRUE(nobody.can_see((root / "search_only/open/f").string()));
    EXPECT_FALSE(nobody.can_see((root / "read_only/f").string()));

    fs::remove_all(root);
}

// setfacl ARGS... on `path`; false if setfacl is missing or the file system refuses ACLs.
bool setfacl(const std::vector<std::string>& args, const fs::path& path) {
    std::string cmd = "setfacl";
    for (const auto& a : args) cmd += " '" + a + "'";
    cmd += " '" + path.string() + "' 2>/dev/null";
    return std::system(cmd.c_str()) == 0;
}

TEST(VisibilityAsRoot, PosixAclsAgreeWithTheKernel) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create owners and drop privileges";
    if (std::system("command -v setfacl >/dev/null 2>&1") != 0) GTEST_SKIP() << "needs setfacl";
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
        GTEST_SKIP() << "no POSIX ACLs on " << root;
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
    EXPECT_TRUE(u.can_see((root / "masked_user/open/f").string()));
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

TEST(Visibility, AclAlgorithmOnTables) {
    using T = AclEntry::Tag;
    // user::rwx user:7:rwx group::r-x group:9:--- mask::r-x other::---, owner 1, group 5.
    DirPerm p{040700,
              1,
              5,
              {{T::user_obj, 0, 7},
               {T::user, 7, 7},
               {T::group_obj, 0, 5},
               {T::group, 9, 0},
               {T::mask, 0, 5},
               {T::other, 0, 0}}};
    EXPECT_TRUE(permits(make_caller(1, 100, {}), p, kRead | kWrite | kSearch));  // owner, no mask
    EXPECT_TRUE(permits(make_caller(7, 100, {}), p, kRead | kSearch));
    EXPECT_FALSE(permits(make_caller(7, 100, {}), p, kWrite));        // masked
    EXPECT_TRUE(permits(make_caller(8, 5, {}), p, kRead | kSearch));  // owning group
    EXPECT_FALSE(permits(make_caller(8, 9, {}), p, kSearch));         // named group grants nothing
    EXPECT_TRUE(permits(make_caller(8, 9, {5}), p, kSearch));    // ... but the owning group does
    EXPECT_FALSE(permits(make_caller(8, 100, {}), p, kSearch));  // other
    EXPECT_TRUE(permits(make_caller(0, 0, {}), p, kRead | kSearch));  // root
    // A named user entry is not a fallback to the groups: user 7 in group 5 is still masked.
    EXPECT_FALSE(permits(make_caller(7, 5, {}), p, kWrite));
}

}  // namespace
}  // namespace wsindex::daemon
