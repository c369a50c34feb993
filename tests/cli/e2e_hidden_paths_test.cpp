// End to end with real users: a path the caller may not see answers exactly as a path the index
// does not hold (find --under, du), and what moves with changes in directories the caller may
// not see (the live index's counters and times in status, a dupes run's elapsed time) is not
// given to them (docs/security.md). The real wsindexd runs as root; wsctl runs as users created
// for the test (setpriv), as in e2e_users_test.cpp.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/cli/support/accounts.hpp"
#include "tests/cli/support/fixture.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::cli::test {
namespace {

void make_dir(const std::string& path, mode_t mode, uid_t uid, gid_t gid) {
    ASSERT_EQ(::mkdir(path.c_str(), mode), 0) << path;
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
    ASSERT_EQ(::chown(path.c_str(), uid, gid), 0) << path;
}

void write_owned(const std::string& path, const std::string& content, uid_t uid, gid_t gid) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << path;
    ASSERT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
    ::close(fd);
    ASSERT_EQ(::chown(path.c_str(), uid, gid), 0) << path;
}

// Every occurrence of `what` in `text` replaced by "PATH".
std::string without(std::string text, const std::string& what) {
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at)) {
        text.replace(at, what.size(), "PATH");
    }
    return text;
}

class HiddenPaths : public EndToEnd {
  protected:
    void SetUp() override {
        if (const std::string why = missing_for_real_users(); !why.empty()) {
            WSINDEX_SKIP_OR_FAIL_IN_CI() << why;
        }
        const std::string tag = std::to_string(::getpid());
        alice_.emplace("wsiha" + tag, scratch_.path());
        ASSERT_TRUE(alice_->error().empty()) << alice_->error();
        bob_.emplace("wsihb" + tag, scratch_.path());
        ASSERT_TRUE(bob_->error().empty()) << bob_->error();
        const std::string config = scratch_ / "wsindexd.conf";
        FILE* f = std::fopen(config.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fprintf(f, "socket_mode = 0666\n");
        std::fclose(f);
        extra_args_ = {"--config", config};
        start_daemon();

        // tree/ 0755 root, home/ 0755 root,
        //   alice/ 0700 alice: sub/ (0755) with f (3000), twin1 and twin2 (equal, 5000)
        //   bob/   0755 bob:   b1 and b2 (equal, 4000)
        tree_ = scratch_ / "tree";
        make_dir(tree_, 0755, 0, 0);
        make_dir(tree_ + "/home", 0755, 0, 0);
        alice_home_ = tree_ + "/home/alice";
        bob_home_ = tree_ + "/home/bob";
        const uid_t a = alice_->uid();
        const gid_t ag = alice_->gid();
        make_dir(alice_home_, 0700, a, ag);
        make_dir(alice_home_ + "/sub", 0755, a, ag);
        write_owned(alice_home_ + "/sub/f", std::string(3000, 'f'), a, ag);
        write_owned(alice_home_ + "/sub/twin1", std::string(5000, 't'), a, ag);
        write_owned(alice_home_ + "/sub/twin2", std::string(5000, 't'), a, ag);
        make_dir(bob_home_, 0755, bob_->uid(), bob_->gid());
        write_owned(bob_home_ + "/b1", std::string(4000, 'b'), bob_->uid(), bob_->gid());
        write_owned(bob_home_ + "/b2", std::string(4000, 'b'), bob_->uid(), bob_->gid());
        scan(tree_);
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

    std::optional<TestUser> alice_;
    std::optional<TestUser> bob_;
    std::string tree_;
    std::string alice_home_;
    std::string bob_home_;
};

// Before: `find --under` a hidden directory exited 0 and `du` of it answered PermissionDenied
// (exit 4), where a name that does not exist answered NotIndexed (exit 5).
TEST_F(HiddenPaths, AHiddenPathAnswersExactlyAsOneThatDoesNotExist) {
    const std::vector<std::pair<std::string, std::string>> pairs = {
        {alice_home_ + "/sub", alice_home_ + "/nosuch"},
        {alice_home_ + "/sub/f", alice_home_ + "/sub/nosuch"},
    };
    const std::vector<std::vector<std::string>> commands = {
        {"find", "--under"}, {"find", "-l", "--json", "--under"}, {"du"}, {"du", "--json"}};
    for (const auto& [hidden, absent] : pairs) {
        for (const auto& command : commands) {
            std::vector<std::string> a = command;
            a.push_back(hidden);
            std::vector<std::string> b = command;
            b.push_back(absent);
            const Exit seen = ctl_as(*bob_, a);
            const Exit missing = ctl_as(*bob_, b);
            const std::string what = command[0] + " " + hidden;
            EXPECT_NE(missing.code, 0) << what << missing.out << missing.err;
            EXPECT_EQ(seen.code, missing.code) << what << "\n" << seen.err << "\n" << missing.err;
            EXPECT_EQ(without(seen.out, hidden), without(missing.out, absent)) << what;
            EXPECT_EQ(without(seen.err, hidden), without(missing.err, absent)) << what;
            // Positive control: the owner sees it (find --under asks for a directory).
            if (command[0] != "find" || !hidden.ends_with("/f")) {
                const Exit own = ctl_as(*alice_, a);
                EXPECT_EQ(own.code, 0) << what << own.out << own.err;
            }
        }
    }
}

// Before: every caller got the live index's lag and last-applied time, which move when root
// writes in a 0700 directory.
TEST_F(HiddenPaths, LiveCountersOnlyForCallersWhoMayListEveryRoot) {
    const nlohmann::json root = json_of({"status"});
    ASSERT_TRUE(root.contains("live") && root["live"].is_object()) << root.dump();
    const Exit r = ctl_as(*bob_, {"status", "--json"});
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    const nlohmann::json bob = parse_json(r.out);
    EXPECT_TRUE(!bob.contains("live") || bob["live"].is_null()) << bob.dump();
    EXPECT_FALSE(bob.value("roots", nlohmann::json::array()).empty()) << bob.dump();
}

// Before: the dupes reply's elapsed_ms counted the work on candidates the caller may not see.
TEST_F(HiddenPaths, DupesTimingsOnlyForCallersWhoMayListEveryDirectoryAskedFor) {
    const Exit r = ctl_as(*bob_, {"dupes", "--json", tree_});
    ASSERT_EQ(r.code, 0) << r.out << r.err << log();
    const nlohmann::json bob = parse_json(r.out);
    EXPECT_EQ(bob.value("elapsed_ms", std::uint64_t{1}), 0u) << bob.dump();
    // Positive control: his own pair is found, alice's twins are not.
    const std::string dump = bob.dump();
    ASSERT_EQ(bob.value("groups", nlohmann::json::array()).size(), 1u) << dump;
    EXPECT_EQ(dump.find("twin"), std::string::npos) << dump;
    // Over his own directory nothing is hidden: the time is his to know.
    const Exit own = ctl_as(*bob_, {"dupes", "--json", bob_home_});
    ASSERT_EQ(own.code, 0) << own.out << own.err;
    EXPECT_TRUE(parse_json(own.out).contains("elapsed_ms")) << own.out;
    // A hidden path and one that does not exist answer alike.
    for (const std::string& path : {alice_home_ + "/sub", alice_home_ + "/nosuch"}) {
        const Exit h = ctl_as(*bob_, {"dupes", "--json", path});
        ASSERT_EQ(h.code, 0) << path << h.out << h.err;
        const nlohmann::json doc = parse_json(h.out);
        EXPECT_EQ(doc.value("elapsed_ms", std::uint64_t{1}), 0u) << path << h.out;
        EXPECT_EQ(doc.value("candidates", std::uint64_t{1}), 0u) << path << h.out;
    }
}

}  // namespace
}  // namespace wsindex::cli::test
