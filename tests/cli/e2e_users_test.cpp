// End to end with real users: the real wsindexd runs as root on a temporary socket and database,
// the real wsctl runs as two users created for the test (useradd, removed afterwards), and the
// answers must show each user what they could see themselves and nothing else
// (docs/security.md): no names or sizes inside the other user's 0700 home in find, du or
// errors; their own and world-readable files; scan and cancel only for the control group.
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "tests/cli/support/accounts.hpp"
#include "tests/cli/support/fixture.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::cli::test {
namespace {

void write_sized(const std::string& path, off_t size, mode_t mode) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    ASSERT_GE(fd, 0) << path;
    ASSERT_EQ(::ftruncate(fd, size), 0) << path;  // sparse: the apparent size is what counts
    ::close(fd);
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
}

void make_dir(const std::string& path, mode_t mode, uid_t uid, gid_t gid) {
    ASSERT_EQ(::mkdir(path.c_str(), mode), 0) << path;
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;  // no umask
    ASSERT_EQ(::chown(path.c_str(), uid, gid), 0) << path;
}

std::uint64_t apparent_size(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return static_cast<std::uint64_t>(st.st_size);
}

class RealUsers : public EndToEnd {
  protected:
    void SetUp() override {
        if (const std::string why = missing_for_real_users(); !why.empty()) {
            WSINDEX_SKIP_OR_FAIL_IN_CI() << why;
        }
        // Unique names (pid), short enough for useradd's 32-character limit.
        const std::string tag = std::to_string(::getpid());
        group_.emplace("wsitg" + tag, scratch_.path());
        ASSERT_TRUE(group_->error().empty()) << group_->error();
        alice_.emplace("wsita" + tag, scratch_.path());
        ASSERT_TRUE(alice_->error().empty()) << alice_->error();
        bob_.emplace("wsitb" + tag, scratch_.path());
        ASSERT_TRUE(bob_->error().empty()) << bob_->error();

        // Anyone may connect; the test group controls scans (the daemon's control group is its
        // socket group when one is configured).
        const std::string config = scratch_ / "wsindexd.conf";
        FILE* f = std::fopen(config.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fprintf(f, "socket_mode = 0666\nsocket_group = \"%s\"\n", group_->name().c_str());
        std::fclose(f);
        extra_args_ = {"--config", config};
        start_daemon();
        make_tree();
        scan(tree_);
    }

    // tree/                      0755 root
    //   home/                    0755 root
    //     alice/                 0700 alice   secret.bin (1 MiB), deep/inner.bin (2 MiB)
    //     bob/                   0700 bob     bob.txt (3000)
    //   pub/                     0755 root    world.txt (300, 0644)
    void make_tree() {
        tree_ = scratch_ / "tree";
        make_dir(tree_, 0755, 0, 0);
        make_dir(tree_ + "/home", 0755, 0, 0);
        alice_home_ = tree_ + "/home/alice";
        bob_home_ = tree_ + "/home/bob";
        make_dir(alice_home_, 0700, alice_->uid(), alice_->gid());
        write_sized(alice_home_ + "/secret.bin", 1 << 20, 0600);
        make_dir(alice_home_ + "/deep", 0755, alice_->uid(), alice_->gid());
        write_sized(alice_home_ + "/deep/inner.bin", 2 << 20, 0644);
        make_dir(bob_home_, 0700, bob_->uid(), bob_->gid());
        write_sized(bob_home_ + "/bob.txt", 3000, 0644);
        make_dir(tree_ + "/pub", 0755, 0, 0);
        write_sized(tree_ + "/pub/world.txt", 300, 0644);
        for (const std::string& p :
             {alice_home_ + "/secret.bin", alice_home_ + "/deep/inner.bin"}) {
            ASSERT_EQ(::chown(p.c_str(), alice_->uid(), alice_->gid()), 0);
        }
        ASSERT_EQ(::chown((bob_home_ + "/bob.txt").c_str(), bob_->uid(), bob_->gid()), 0);
    }

    // wsctl as `user`, with the groups /etc/group gives them now (setpriv --init-groups).
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

    std::set<std::string> find_as(const TestUser& user) {
        const Exit r = ctl_as(user, {"find", "--under", tree_, "-0"});
        EXPECT_EQ(r.code, 0) << r.out << r.err;
        return split_nul(r.out);
    }

    nlohmann::json json_as(const TestUser& user, std::vector<std::string> args) {
        args.push_back("--json");
        const Exit r = ctl_as(user, args);
        EXPECT_EQ(r.code, 0) << r.out << r.err << "\ndaemon log:\n" << log();
        return parse_json(r.out);
    }

    // The du row of `path` in a `du --json` reply, or a null json.
    static nlohmann::json du_row(const nlohmann::json& reply, const std::string& path) {
        for (const auto& e : reply.value("entries", nlohmann::json::array())) {
            if (path_of(e.at("path")) == path) return e;
        }
        return {};
    }

    // What `find DIR` run as `user` prints (-print0), errors (unreadable homes) ignored.
    std::set<std::string> real_find_as(const TestUser& user, const std::string& dir) {
        const Exit r = run({"/usr/bin/setpriv", "--reuid=" + std::to_string(user.uid()),
                            "--regid=" + std::to_string(user.gid()), "--init-groups", "--",
                            "/usr/bin/find", dir, "-print0"},
                           scratch_.path(), std::chrono::minutes(2));
        EXPECT_FALSE(r.out.empty()) << r.err;
        return split_nul(r.out);
    }

    // What `du -sb DIR` run as `user` says, in bytes.
    std::uint64_t real_du_as(const TestUser& user, const std::string& dir) {
        const Exit r = run({"/usr/bin/setpriv", "--reuid=" + std::to_string(user.uid()),
                            "--regid=" + std::to_string(user.gid()), "--init-groups", "--",
                            "/usr/bin/du", "-sb", dir},
                           scratch_.path(), std::chrono::minutes(2));
        EXPECT_EQ(r.code, 0) << r.err;
        return std::strtoull(r.out.c_str(), nullptr, 10);
    }

    std::optional<TestGroup> group_;
    std::optional<TestUser> alice_;
    std::optional<TestUser> bob_;
    std::string tree_, alice_home_, bob_home_;
};

TEST_F(RealUsers, FindShowsOwnAndWorldReadableButNothingInsideAnotherUsersHome) {
    const std::set<std::string> all = find0_under(tree_);  // root sees everything
    ASSERT_TRUE(all.count(alice_home_ + "/deep/inner.bin")) << describe_diff(all, {});
    ASSERT_TRUE(all.count(bob_home_ + "/bob.txt"));

    const std::set<std::string> alice = find_as(*alice_);
    const std::set<std::string> bob = find_as(*bob_);
    // Own files and world-readable ones.
    for (const std::string& p : {alice_home_ + "/secret.bin", alice_home_ + "/deep",
                                 alice_home_ + "/deep/inner.bin", tree_ + "/pub/world.txt"}) {
        EXPECT_TRUE(alice.count(p)) << "alice misses " << p;
    }
    for (const std::string& p : {bob_home_ + "/bob.txt", tree_ + "/pub/world.txt"}) {
        EXPECT_TRUE(bob.count(p)) << "bob misses " << p;
    }
    // The other's home is a visible name in a listable /home, but nothing inside it is.
    EXPECT_TRUE(bob.count(alice_home_));
    EXPECT_TRUE(alice.count(bob_home_));
    for (const std::string& p : bob) {
        EXPECT_NE(p.rfind(alice_home_ + "/", 0), 0U) << "bob sees " << p;
    }
    for (const std::string& p : alice) {
        EXPECT_NE(p.rfind(bob_home_ + "/", 0), 0U) << "alice sees " << p;
    }
    // Exactly what root sees minus the other home's contents.
    std::set<std::string> expected_bob;
    for (const std::string& p : all) {
        if (p.rfind(alice_home_ + "/", 0) != 0) expected_bob.insert(p);
    }
    EXPECT_EQ(bob, expected_bob) << describe_diff(bob, expected_bob);

    // A name search does not find them either.
    const Exit r = ctl_as(*bob_, {"find", "secret", "-0"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(split_nul(r.out).empty()) << r.out;
}

TEST_F(RealUsers, DuTotalsLeakNoSizesFromAnotherUsersHome) {
    const nlohmann::json root_du = json_of({"du", tree_, "--depth", "2"});
    const std::uint64_t private_bytes =
        (1 << 20) + (2 << 20) + apparent_size(alice_home_ + "/deep");
    const std::uint64_t root_total = du_row(root_du, tree_).value("size", 0ULL);
    ASSERT_GE(root_total, private_bytes) << root_du.dump();

    // Bob's totals are the sizes of what he can see: the whole tree minus alice's contents
    // (her home directory's own size is visible: its name is in a listable /home).
    const nlohmann::json bob_du = json_as(*bob_, {"du", tree_, "--depth", "2"});
    const nlohmann::json bob_tree = du_row(bob_du, tree_);
    ASSERT_FALSE(bob_tree.is_null()) << bob_du.dump();
    EXPECT_EQ(bob_tree.value("size", 0ULL), root_total - private_bytes) << bob_du.dump();
    EXPECT_TRUE(bob_tree.value("partial", false)) << bob_du.dump();
    const nlohmann::json bob_home = du_row(bob_du, tree_ + "/home");
    EXPECT_EQ(bob_home.value("size", 0ULL),
              du_row(root_du, tree_ + "/home").value("size", 0ULL) - private_bytes);
    // Alice's home: listed by name, with nothing but its own size.
    const nlohmann::json alice_row = du_row(bob_du, alice_home_);
    ASSERT_FALSE(alice_row.is_null()) << bob_du.dump();
    EXPECT_EQ(alice_row.value("size", 0ULL), apparent_size(alice_home_));
    EXPECT_EQ(alice_row.value("files", 1ULL), 0U);
    EXPECT_EQ(alice_row.value("dirs", 1ULL), 0U);
    EXPECT_TRUE(alice_row.value("partial", false));
    // Nothing below it, at any depth.
    for (const auto& e : bob_du.at("entries")) {
        EXPECT_NE(path_of(e.at("path")).rfind(alice_home_ + "/", 0), 0U) << e.dump();
    }
    // Asked directly: the same.
    const nlohmann::json direct = json_as(*bob_, {"du", alice_home_, "--depth", "3"});
    ASSERT_EQ(direct.at("entries").size(), 1U) << direct.dump();
    EXPECT_EQ(direct.at("entries")[0].value("size", 0ULL), apparent_size(alice_home_));
    // --top ranks by what bob may see: alice's 3 MiB directory is not the biggest for him.
    const nlohmann::json top = json_as(*bob_, {"du", tree_, "--top", "10"});
    for (const auto& e : top.at("entries")) {
        const std::string p = path_of(e.at("path"));
        EXPECT_NE(p.rfind(alice_home_ + "/", 0), 0U) << top.dump();
        EXPECT_LT(e.value("size", 0ULL), std::uint64_t{1} << 20) << top.dump();
    }

    // Alice sees all of her own home: exact totals, nothing missing below it.
    const nlohmann::json alice_du = json_as(*alice_, {"du", alice_home_, "--depth", "1"});
    const nlohmann::json own = du_row(alice_du, alice_home_);
    EXPECT_EQ(own.value("size", 0ULL), du_row(root_du, alice_home_).value("size", 0ULL));
    EXPECT_FALSE(own.value("partial", true)) << alice_du.dump();
    // Root: the precomputed totals, never partial.
    EXPECT_FALSE(du_row(root_du, tree_).value("partial", false)) << root_du.dump();
}

TEST_F(RealUsers, ErrorsInsideAnotherUsersHomeAreHidden) {
    // A root walker meets no permission errors, so the errors are recorded the way a scan
    // records them: rows in the errors table of the latest complete scan.
    const std::string sql =
        "INSERT INTO errors(scan_id, path, errno, message) SELECT max(id), CAST('" + alice_home_ +
        "/deep/vanished' AS BLOB), 2, '' FROM scans WHERE state = 'complete';"
        "INSERT INTO errors(scan_id, path, errno, message) SELECT max(id), CAST('" +
        tree_ + "/pub/vanished' AS BLOB), 2, '' FROM scans WHERE state = 'complete';";
    const Exit s = run({"/usr/bin/sqlite3", daemon_->db(), sql}, scratch_.path());
    ASSERT_EQ(s.code, 0) << s.err;

    const auto paths = [&](const nlohmann::json& reply) {
        std::set<std::string> out;
        for (const auto& e : reply.value("errors", nlohmann::json::array())) {
            out.insert(path_of(e.at("path")));
        }
        return out;
    };
    const std::set<std::string> root = paths(json_of({"errors"}));
    EXPECT_TRUE(root.count(alice_home_ + "/deep/vanished"));
    const std::set<std::string> bob = paths(json_as(*bob_, {"errors"}));
    EXPECT_TRUE(bob.count(tree_ + "/pub/vanished")) << log();
    EXPECT_FALSE(bob.count(alice_home_ + "/deep/vanished"));
    const std::set<std::string> alice = paths(json_as(*alice_, {"errors"}));
    EXPECT_TRUE(alice.count(alice_home_ + "/deep/vanished"));
    EXPECT_TRUE(alice.count(tree_ + "/pub/vanished"));
}

TEST_F(RealUsers, ScanAndCancelOnlyForTheControlGroup) {
    // Not a member: refused (exit 4, PermissionDenied), and nothing was queued.
    Exit r = ctl_as(*alice_, {"scan", tree_ + "/pub", "--wait"});
    EXPECT_EQ(r.code, 4) << r.out << r.err;
    EXPECT_NE(r.err.find("needs root or the"), std::string::npos) << r.err;
    r = ctl_as(*alice_, {"cancel"});
    EXPECT_EQ(r.code, 4) << r.out << r.err;
    const nlohmann::json scans_before = json_of({"scans"});

    // Added to the group (a new login picks it up: setpriv --init-groups reads /etc/group).
    const Exit add = run_account_tool(
        {"/usr/sbin/usermod", "-a", "-G", group_->name(), alice_->name()}, scratch_.path());
    ASSERT_EQ(add.code, 0) << add.err;
    r = ctl_as(*alice_, {"scan", tree_ + "/pub", "--wait"});
    EXPECT_EQ(r.code, 0) << r.out << r.err << "\ndaemon log:\n" << log();
    r = ctl_as(*alice_, {"cancel"});
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(json_of({"scans"}).at("scans").size(), scans_before.at("scans").size() + 1);

    // Bob is still not a member.
    r = ctl_as(*bob_, {"scan", tree_ + "/pub"});
    EXPECT_EQ(r.code, 4) << r.out << r.err;
    // A member cannot learn what exists inside a home they cannot search by scanning it: a
    // hidden path answers as a missing one (e2e_scan_roots_test.cpp compares the answers).
    r = ctl_as(*alice_, {"scan", bob_home_ + "/no-such-dir"});
    EXPECT_EQ(r.code, 5) << r.out << r.err;
    r = ctl_as(*alice_, {"scan", bob_home_});  // the name is visible; the scan is allowed
    EXPECT_EQ(r.code, 0) << r.out << r.err;
}

// Status and scans name roots and count what is below them: a root nobody but root may see is
// withheld from the others, and so are the counts of a root whose subtree holds directories the
// caller may not list, and the reason a scan of it failed (docs/security.md).
TEST_F(RealUsers, StatusAndScansWithholdRootsCountsAndFailuresTheCallerCannotSee) {
    // vault/private/, indexed as its own root: vault is 0700 root, so nobody else may learn
    // the name of private or of anything below it.
    make_dir(scratch_ / "vault", 0700, 0, 0);
    const std::string hidden_root = scratch_ / "vault/private";
    make_dir(hidden_root, 0755, 0, 0);
    write_sized(hidden_root + "/secret-name.bin", 4096, 0600);
    scan(hidden_root);
    // Its last scan failed, with a reason that names a file below it. Written the way the
    // scan writer records a failure, newest of all scans.
    const std::string sql =
        "INSERT INTO scans(root, state, started_ns, finished_ns, entries, errors, error, dir_base,"
        " dir_max) VALUES (CAST('" +
        hidden_root +
        "' AS BLOB), 'failed', 1700000000000000000,"
        " 1700000001000000000, 7, 1, 'reading " +
        hidden_root + "/secret-name.bin: EIO', 0, 0);";
    const Exit s = run({"/usr/bin/sqlite3", daemon_->db(), sql}, scratch_.path());
    ASSERT_EQ(s.code, 0) << s.err;

    // Root sees it all, the reason included, in both outputs.
    const nlohmann::json root_status = json_of({"status"});
    ASSERT_TRUE(root_status.at("last_failed").is_object()) << root_status.dump();
    EXPECT_EQ(path_of(root_status.at("last_failed").at("root")), hidden_root);
    EXPECT_NE(root_status.at("last_failed").value("error", "").find("secret-name"),
              std::string::npos);
    Exit r = ctl({"status"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("last failed: scan"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("secret-name.bin: EIO"), std::string::npos) << r.out;

    for (const TestUser* user : {&*alice_, &*bob_}) {
        SCOPED_TRACE(user->name());
        const nlohmann::json status = json_as(*user, {"status"});
        const nlohmann::json scans = json_as(*user, {"scans"});
        for (const nlohmann::json* reply : {&status, &scans}) {
            EXPECT_EQ(reply->dump().find(hidden_root), std::string::npos) << reply->dump();
            EXPECT_EQ(reply->dump().find("secret-name"), std::string::npos) << reply->dump();
        }
        // The failure is still reported, without its root or reason.
        const nlohmann::json& failed = status.at("last_failed");
        ASSERT_TRUE(failed.is_object()) << status.dump();
        EXPECT_EQ(failed.value("state", ""), "failed");
        EXPECT_TRUE(failed.value("root_hidden", false)) << status.dump();
        EXPECT_EQ(failed.value("entries", 1ULL), 0U);
        // Roots: private/ left out; the tree shown by name, its counts withheld (each user's
        // view of it lacks the other's home).
        ASSERT_EQ(status.at("roots").size(), 1U) << status.dump();
        const nlohmann::json& tree_root = status.at("roots")[0];
        EXPECT_EQ(path_of(tree_root.at("root")), tree_);
        EXPECT_TRUE(tree_root.value("counts_hidden", false)) << status.dump();
        EXPECT_EQ(tree_root.value("entries", 1ULL), 0U);
        // Scans: every scan listed, private/'s by id and state only.
        EXPECT_EQ(scans.at("scans").size(), json_of({"scans"}).at("scans").size());

        r = ctl_as(*user, {"status"});
        ASSERT_EQ(r.code, 0) << r.err;
        EXPECT_NE(r.out.find("last failed: scan"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("a directory you cannot see, failed"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find("secret-name"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find(hidden_root), std::string::npos) << r.out;
        r = ctl_as(*user, {"scans"});
        ASSERT_EQ(r.code, 0) << r.err;
        EXPECT_NE(r.out.find("(hidden)"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find(hidden_root), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find("secret-name"), std::string::npos) << r.out;
    }

    // Alice may list everything below her own home: indexed as a root, its counts are hers.
    // Looked up by its id, not as the newest scan: the live index may start one of its own
    // meanwhile (a rescan of the tree after a fanotify queue overflow, when tests running
    // beside this one flood the file system with changes).
    const Exit waited = ctl({"scan", alice_home_, "--wait", "--json"});
    ASSERT_EQ(waited.code, 0) << waited.err;
    const std::uint64_t id = parse_json(waited.out).at("scans")[0].value("scan_id", 0ULL);
    ASSERT_NE(id, 0U) << waited.out;
    const auto scan_with_id = [id](const nlohmann::json& reply) -> nlohmann::json {
        for (const nlohmann::json& listed : reply.at("scans")) {
            if (listed.value("scan_id", 0ULL) == id) return listed;
        }
        return nlohmann::json::object();
    };
    const nlohmann::json own = scan_with_id(json_as(*alice_, {"scans"}));
    ASSERT_TRUE(own.contains("root")) << "scan " << id << " not listed for alice";
    EXPECT_EQ(path_of(own.at("root")), alice_home_);
    EXPECT_FALSE(own.value("counts_hidden", false)) << own.dump();
    EXPECT_GE(own.value("entries", 0ULL), 3U) << own.dump();  // secret.bin, deep, inner.bin
    const nlohmann::json bobs = scan_with_id(json_as(*bob_, {"scans"}));
    ASSERT_TRUE(bobs.contains("root")) << "scan " << id << " not listed for bob";
    EXPECT_EQ(path_of(bobs.at("root")), alice_home_);  // a visible name
    EXPECT_TRUE(bobs.value("counts_hidden", false)) << bobs.dump();
}

// A chain of directories whose paths grow past PATH_MAX, one file at each level, made with
// descriptors (the kernel refuses such paths whole). Returns the number of levels.
int make_long_chain(const std::string& top, std::size_t min_length) {
    EXPECT_EQ(::mkdir(top.c_str(), 0755), 0) << top;
    EXPECT_EQ(::chmod(top.c_str(), 0755), 0);
    int fd = ::open(top.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    const std::string name(200, 'L');
    int levels = 0;
    for (std::size_t length = top.size(); fd >= 0 && length <= min_length + 400; ++levels) {
        const int file = ::openat(fd, "f", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        EXPECT_GE(file, 0);
        const std::string data(1000 + 100 * static_cast<std::size_t>(levels), 'x');
        EXPECT_EQ(::write(file, data.data(), data.size()), static_cast<ssize_t>(data.size()));
        ::close(file);
        EXPECT_EQ(::mkdirat(fd, name.c_str(), 0755), 0);
        EXPECT_EQ(::fchmodat(fd, name.c_str(), 0755, 0), 0);
        const int next = ::openat(fd, name.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        ::close(fd);
        fd = next;
        length += 1 + name.size();
    }
    if (fd >= 0) ::close(fd);
    return levels;
}

TEST_F(RealUsers, FindAndDuPastPathMaxAgreeWithFindAndDuAsTheUser) {
    const std::string chain = tree_ + "/chain";
    const int levels = make_long_chain(chain, PATH_MAX);
    ASSERT_GT(levels, 20);
    scan(tree_);
    const std::set<std::string> root_view = find0_under(chain);
    const std::set<std::string> real = real_find_as(*bob_, chain);
    std::size_t long_paths = 0;
    for (const std::string& p : real) long_paths += p.size() >= PATH_MAX ? 1 : 0;
    ASSERT_GT(long_paths, 2U) << "the chain does not reach past PATH_MAX";
    // find prints the starting point; --under lists what is below it.
    std::set<std::string> expected = real;
    expected.erase(chain);
    std::set<std::string> root_expected = root_view;
    root_expected.erase(chain);
    EXPECT_EQ(root_expected, expected) << describe_diff(root_expected, expected);

    const std::set<std::string> bob = find_as(*bob_);
    std::set<std::string> bob_chain;
    for (const std::string& p : bob) {
        if (p.rfind(chain + "/", 0) == 0) bob_chain.insert(p);
    }
    EXPECT_EQ(bob_chain, expected) << describe_diff(bob_chain, expected);

    const nlohmann::json du = json_as(*bob_, {"du", chain, "--depth", "0"});
    const nlohmann::json row = du_row(du, chain);
    ASSERT_FALSE(row.is_null()) << du.dump();
    EXPECT_EQ(row.value("size", 0ULL), real_du_as(*bob_, chain)) << du.dump();
    EXPECT_FALSE(row.value("partial", true)) << du.dump();
}

TEST_F(RealUsers, SearchOnlyDirectoriesHideTheNamesBelowThem) {
    // xonly/ 0711: a user may open xonly/sub by its name, but `find` cannot list xonly, so it
    // never prints xonly/sub or anything below it.
    const std::string xonly = tree_ + "/xonly";
    make_dir(xonly, 0711, 0, 0);
    make_dir(xonly + "/sub", 0755, 0, 0);
    write_sized(xonly + "/sub/g0", 500, 0644);
    make_dir(tree_ + "/readable", 0755, 0, 0);
    write_sized(tree_ + "/readable/g1", 700, 0644);
    scan(tree_);
    ASSERT_TRUE(find0_under(tree_).count(xonly + "/sub/g0"));

    std::set<std::string> real = real_find_as(*bob_, tree_);
    real.erase(tree_);
    ASSERT_TRUE(real.count(xonly));
    ASSERT_FALSE(real.count(xonly + "/sub"));
    ASSERT_TRUE(real.count(tree_ + "/readable/g1"));
    // alice's 0700 home: find prints its name but cannot read it, and so does wsctl.
    const std::set<std::string> bob = find_as(*bob_);
    EXPECT_EQ(bob, real) << describe_diff(bob, real);
    EXPECT_FALSE(bob.count(xonly + "/sub/g0"));

    // Totals follow the same rule: nothing below xonly counts, for xonly or its parents.
    const nlohmann::json du = json_as(*bob_, {"du", tree_, "--depth", "1"});
    const nlohmann::json row = du_row(du, xonly);
    ASSERT_FALSE(row.is_null()) << du.dump();
    EXPECT_EQ(row.value("size", 0ULL), apparent_size(xonly)) << du.dump();
    EXPECT_TRUE(row.value("partial", false)) << du.dump();
    const nlohmann::json root_du = json_of({"du", tree_, "--depth", "0"});
    const std::uint64_t hidden = apparent_size(xonly + "/sub") + 500 + (1 << 20) + (2 << 20) +
                                 apparent_size(alice_home_ + "/deep");
    EXPECT_EQ(du_row(du, tree_).value("size", 0ULL),
              du_row(root_du, tree_).value("size", 0ULL) - hidden)
        << du.dump() << root_du.dump();
}

}  // namespace
}  // namespace wsindex::cli::test
