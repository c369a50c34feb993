// End to end with a real member of the control group: the scan roots she asks for are filtered
// like everything else she asks about (docs/security.md). A root she may not see answers exactly
// as a path that does not exist, and her paths are resolved without following symlinks, so she
// cannot make the root daemon index a directory under a name she chose. Root keeps realpath's
// behaviour (a symlink names the directory it points to, by that directory's own path).
#include <fcntl.h>
#include <grp.h>
#include <linux/fs.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/cli/support/accounts.hpp"
#include "tests/cli/support/fixture.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::cli::test {
namespace {

void make_dir(const std::string& path, mode_t mode, uid_t uid, gid_t gid) {
    ASSERT_EQ(::mkdir(path.c_str(), mode), 0) << path;
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;  // no umask
    ASSERT_EQ(::chown(path.c_str(), uid, gid), 0) << path;
}

void make_link(const std::string& target, const std::string& path, uid_t uid, gid_t gid) {
    ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0) << path;
    ASSERT_EQ(::lchown(path.c_str(), uid, gid), 0) << path;
}

// `text` with every occurrence of `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
    }
    return text;
}

class MemberScanRoots : public EndToEnd {
  protected:
    void SetUp() override {
        if (const std::string why = missing_for_real_users(); !why.empty()) {
            WSINDEX_SKIP_OR_FAIL_IN_CI() << why;
        }
        const std::string tag = std::to_string(::getpid());
        group_.emplace("wsirg" + tag, scratch_.path());
        ASSERT_TRUE(group_->error().empty()) << group_->error();
        alice_.emplace("wsira" + tag, scratch_.path());
        ASSERT_TRUE(alice_->error().empty()) << alice_->error();
        bob_.emplace("wsirb" + tag, scratch_.path());
        ASSERT_TRUE(bob_->error().empty()) << bob_->error();
        const Exit add = run_account_tool(
            {"/usr/sbin/usermod", "-a", "-G", group_->name(), alice_->name()}, scratch_.path());
        ASSERT_EQ(add.code, 0) << add.err;

        const std::string config = scratch_ / "wsindexd.conf";
        FILE* f = std::fopen(config.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fprintf(f, "socket_mode = 0666\nsocket_group = \"%s\"\n", group_->name().c_str());
        std::fclose(f);
        extra_args_ = {"--config", config};
        start_daemon();

        // tree/                 0755 root
        //   pub/                0755 root    world.txt
        //   vault/              0700 root    secret/ secret-name.bin
        //   bob/                0700 bob     inner/ bob-file.txt
        //   alice/              0755 alice   own/ own-file.txt
        //     to-vault -> ../vault/secret    to-pub -> ../pub     (alice's symlinks)
        tree_ = scratch_ / "tree";
        make_dir(tree_, 0755, 0, 0);
        make_dir(tree_ + "/pub", 0755, 0, 0);
        ASSERT_TRUE(write_file(tree_ + "/pub/world.txt", "w"));
        make_dir(tree_ + "/vault", 0700, 0, 0);
        make_dir(tree_ + "/vault/secret", 0755, 0, 0);
        ASSERT_TRUE(write_file(tree_ + "/vault/secret/secret-name.bin", "s"));
        make_dir(tree_ + "/bob", 0700, bob_->uid(), bob_->gid());
        make_dir(tree_ + "/bob/inner", 0755, bob_->uid(), bob_->gid());
        ASSERT_TRUE(write_file(tree_ + "/bob/inner/bob-file.txt", "b"));
        alice_home_ = tree_ + "/alice";
        make_dir(alice_home_, 0755, alice_->uid(), alice_->gid());
        make_dir(alice_home_ + "/own", 0755, alice_->uid(), alice_->gid());
        ASSERT_TRUE(write_file(alice_home_ + "/own/own-file.txt", "a"));
        make_link("../vault/secret", alice_home_ + "/to-vault", alice_->uid(), alice_->gid());
        make_link("../pub", alice_home_ + "/to-pub", alice_->uid(), alice_->gid());
    }

    static bool write_file(const std::string& path, const std::string& text) {
        FILE* f = std::fopen(path.c_str(), "w");
        if (f == nullptr) return false;
        const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
        return std::fclose(f) == 0 && ok;
    }

    Exit ctl_as(const TestUser& user, std::vector<std::string> args) {
        std::vector<std::string> argv{"/usr/bin/setpriv",
                                      "--reuid=" + std::to_string(user.uid()),
                                      "--regid=" + std::to_string(user.gid()),
                                      "--init-groups",
                                      "--",
                                      WSINDEX_WSCTL};
        argv.insert(argv.end(), args.begin(), args.end());
        argv.push_back("--socket");
        argv.push_back(daemon_->socket());
        return run(argv, scratch_.path(), std::chrono::minutes(2));
    }

    std::size_t scans_run() { return json_of({"scans"}).at("scans").size(); }

    std::optional<TestGroup> group_;
    std::optional<TestUser> alice_;
    std::optional<TestUser> bob_;
    std::string tree_, alice_home_;
};

// What she cannot see answers as what does not exist: same exit code, same message (the path
// put aside), same JSON error; whether the hidden path exists or not.
TEST_F(MemberScanRoots, AHiddenRootAnswersExactlyAsAPathThatDoesNotExist) {
    const std::string missing = tree_ + "/pub/no-such-dir";  // visible parent, nothing there
    const Exit absent = ctl_as(*alice_, {"scan", missing});
    ASSERT_EQ(absent.code, 5) << absent.out << absent.err << log();
    const std::string absent_err = replaced(absent.err, missing, "PATH");
    const Exit absent_json = ctl_as(*alice_, {"scan", missing, "--json"});
    EXPECT_EQ(parse_json(absent_json.out).value("error", ""), "wsindex.NoSuchPath")
        << absent_json.out;
    // Below a home she cannot search: existing or not, a directory or a file.
    for (const std::string& hidden :
         {tree_ + "/bob/inner", tree_ + "/bob/no-such-dir", tree_ + "/bob/inner/bob-file.txt",
          tree_ + "/vault/secret", tree_ + "/vault/secret/x/y"}) {
        SCOPED_TRACE(hidden);
        const Exit r = ctl_as(*alice_, {"scan", hidden});
        EXPECT_EQ(r.code, absent.code) << r.out << r.err;
        EXPECT_EQ(replaced(r.err, hidden, "PATH"), absent_err);
        EXPECT_EQ(r.out, absent.out);
        const Exit j = ctl_as(*alice_, {"scan", hidden, "--json"});
        EXPECT_EQ(j.code, absent_json.code);
        EXPECT_EQ(replaced(j.out, hidden, "PATH"), replaced(absent_json.out, missing, "PATH"));
        EXPECT_EQ(replaced(j.err, hidden, "PATH"), replaced(absent_json.err, missing, "PATH"));
    }
    // Positive control: a hidden root exists and root may scan it.
    const Exit root_scan = ctl({"scan", tree_ + "/bob/inner", "--wait"});
    EXPECT_EQ(root_scan.code, 0) << root_scan.out << root_scan.err;
}

// Her symlinks are not followed, wherever they are in the path, and nothing is queued; a real
// directory of hers is scanned under its own name.
TEST_F(MemberScanRoots, AMembersSymlinkIsNotFollowed) {
    const std::size_t before = scans_run();
    for (const std::string& path :
         {alice_home_ + "/to-vault", alice_home_ + "/to-vault/", alice_home_ + "/to-pub",
          alice_home_ + "/to-pub/", alice_home_ + "/to-pub/.", alice_home_ + "/to-vault/x/.."}) {
        SCOPED_TRACE(path);
        const Exit r = ctl_as(*alice_, {"scan", path, "--wait"});
        EXPECT_EQ(r.code, 5) << r.out << r.err;
        EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
    }
    // ".." is lexical for her, as her visibility was judged: this names alice/pub, which
    // does not exist, and never tree/pub through the link.
    const Exit through = ctl_as(*alice_, {"scan", alice_home_ + "/to-pub/../pub"});
    EXPECT_EQ(through.code, 5) << through.err;
    EXPECT_NE(through.err.find("no such path"), std::string::npos) << through.err;
    EXPECT_EQ(scans_run(), before) << log();

    // Positive control: her own directory, by its own name, is scanned and found.
    const Exit own = ctl_as(*alice_, {"scan", alice_home_ + "/own", "--wait", "--json"});
    ASSERT_EQ(own.code, 0) << own.out << own.err << log();
    EXPECT_EQ(path_of(parse_json(own.out).at("scans")[0].at("root")), alice_home_ + "/own");
    EXPECT_EQ(scans_run(), before + 1);
    const std::set<std::string> found = find0_under(alice_home_ + "/own");
    EXPECT_TRUE(found.count(alice_home_ + "/own/own-file.txt")) << describe_diff(found, {});
    // Nothing of the vault entered the index under any name (asked as root).
    const Exit secret = ctl({"find", "secret-name", "-0"});
    EXPECT_EQ(secret.code, 0) << secret.err;
    EXPECT_EQ(secret.out, "");
}

// The race of the issue: she asks to scan two of her directories while her own process swaps
// one of them with a symlink to a root-only directory (renameat2 RENAME_EXCHANGE, in a loop),
// so that the swap lands between the check of a path and its walk, or inside the resolution.
// Whatever the timing, no name of the root-only directory enters the index; positive control:
// her own files are indexed. Bounded by attempts and time.
TEST_F(MemberScanRoots, SwappingASymlinkIntoHerScanRootsNeverIndexesAnotherDirectory) {
    const std::string race = alice_home_ + "/race";
    make_dir(race, 0755, alice_->uid(), alice_->gid());
    make_dir(race + "/m", 0755, alice_->uid(), alice_->gid());
    make_dir(race + "/m/sub", 0755, alice_->uid(), alice_->gid());
    ASSERT_TRUE(write_file(race + "/m/sub/mine.txt", "m"));
    make_dir(race + "/first", 0755, alice_->uid(), alice_->gid());
    ASSERT_TRUE(write_file(race + "/first/first.txt", "f"));
    make_link(tree_ + "/vault/secret", race + "/L", alice_->uid(), alice_->gid());
    const std::string m = race + "/m";
    const std::string l = race + "/L";

    // The attacker, as alice: exchanges m and L until killed.
    const pid_t attacker = ::fork();
    ASSERT_GE(attacker, 0);
    if (attacker == 0) {
        if (::setgroups(0, nullptr) != 0 || ::setgid(alice_->gid()) != 0 ||
            ::setuid(alice_->uid()) != 0) {
            ::_exit(3);
        }
        for (;;) {
            (void)::syscall(SYS_renameat2, AT_FDCWD, m.c_str(), AT_FDCWD, l.c_str(),
                            RENAME_EXCHANGE);
        }
    }
    int succeeded = 0;
    int attempts = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (; attempts < 60 && std::chrono::steady_clock::now() < deadline; ++attempts) {
        const Exit r = ctl_as(*alice_, {"scan", race + "/first", m, "--wait"});
        if (r.code == 0) ++succeeded;
    }
    ASSERT_EQ(::kill(attacker, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(attacker, &status, 0), attacker);
    EXPECT_TRUE(WIFSIGNALED(status)) << "the attacker did not run: " << status;
    struct stat st {};
    ASSERT_EQ(::lstat(m.c_str(), &st), 0);
    if (S_ISLNK(st.st_mode)) {  // left swapped: put her directory back, then scan it as root
        ASSERT_EQ(
            ::syscall(SYS_renameat2, AT_FDCWD, m.c_str(), AT_FDCWD, l.c_str(), RENAME_EXCHANGE), 0);
    }

    // Never a name of the vault, for root or for her, under any path.
    for (const bool as_root : {true, false}) {
        const Exit found = as_root ? ctl({"find", "secret-name", "-0"})
                                   : ctl_as(*alice_, {"find", "secret-name", "-0"});
        EXPECT_EQ(found.code, 0) << found.err;
        EXPECT_EQ(found.out, "") << (as_root ? "root" : "alice") << " after " << attempts
                                 << " attempts";
    }
    // Positive control, after the race (its successes depend on timing): the same request
    // indexes her own files, under the same names.
    const Exit after = ctl_as(*alice_, {"scan", race + "/first", m, "--wait"});
    EXPECT_EQ(after.code, 0) << after.out << after.err << log();
    const std::set<std::string> found = find0_under(m);
    EXPECT_TRUE(found.count(m + "/sub/mine.txt")) << describe_diff(found, {});
    const Exit first = ctl({"find", "first.txt", "-0"});
    EXPECT_NE(first.out.find(race + "/first/first.txt"), std::string::npos) << first.out;
    const Exit secret = ctl({"find", "secret-name", "-0"});
    EXPECT_EQ(secret.out, "");
    std::printf("%d scans of %d succeeded under the swap\n", succeeded, attempts);
}

// Root keeps realpath: her symlink names the directory it points to, scanned by its own path.
TEST_F(MemberScanRoots, RootFollowsSymlinksToTheDirectorysOwnName) {
    const nlohmann::json reply = json_of({"scan", alice_home_ + "/to-pub", "--wait"});
    ASSERT_EQ(reply.at("scans")[0].value("state", ""), "done") << reply.dump();
    ASSERT_TRUE(reply.contains("scans")) << reply.dump();
    EXPECT_EQ(path_of(reply.at("scans")[0].at("root")), tree_ + "/pub") << reply.dump();
    const std::set<std::string> found = find0_under(tree_ + "/pub");
    EXPECT_TRUE(found.count(tree_ + "/pub/world.txt")) << describe_diff(found, {});
    const Exit under_link = ctl({"find", "world", "-0"});
    EXPECT_EQ(under_link.out.find(alice_home_), std::string::npos) << under_link.out;
}

}  // namespace
}  // namespace wsindex::cli::test
