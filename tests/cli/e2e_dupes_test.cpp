// End to end: wsctl dupes against the real wsindexd. Groups must equal exactly the groups of
// equal content found by reading every file; a second run reads nothing; a changed file is
// rehashed; an unprivileged caller never sees a file it cannot read; cancel stops a run.
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "cli/format.hpp"
#include "tests/cli/support/accounts.hpp"
#include "tests/cli/support/fixture.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::cli::test {
namespace {

using Group = std::set<std::string>;  // every name of every file of one group
using Groups = std::set<Group>;

void write_file(const std::string& path, const std::string& content, mode_t mode = 0644) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    ASSERT_GE(fd, 0) << path;
    ASSERT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
    ::close(fd);
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
}

std::string read_all(const std::string& path) { return read_file(path); }

std::string random_bytes(std::size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(gen() & 0xff);
    return s;
}

// Groups from -0 output: paths NUL-terminated, one more NUL after each group.
Groups parse_groups0(const std::string& out) {
    Groups groups;
    Group current;
    std::size_t pos = 0;
    while (pos < out.size()) {
        const std::size_t end = out.find('\0', pos);
        if (end == std::string::npos) {
            ADD_FAILURE() << "output does not end with NUL";
            break;
        }
        if (end == pos) {
            EXPECT_FALSE(current.empty()) << "an empty group";
            groups.insert(current);
            current.clear();
        } else {
            current.insert(out.substr(pos, end - pos));
        }
        pos = end + 1;
    }
    EXPECT_TRUE(current.empty()) << "the last group has no closing NUL";
    return groups;
}

// The reference: every regular non-empty file below `dir` read whole and grouped by content;
// groups of one inode (hard links only) are no duplicates. `may_read` filters names.
Groups reference_groups(const std::string& dir) {
    std::map<std::string, std::map<std::pair<dev_t, ino_t>, Group>> by_content;
    std::vector<std::string> stack{dir};
    while (!stack.empty()) {
        const std::string d = stack.back();
        stack.pop_back();
        for (const auto& entry : std::filesystem::directory_iterator(d)) {
            const std::string p = entry.path().native();
            struct stat st {};
            EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
            if (S_ISDIR(st.st_mode)) {
                stack.push_back(p);
            } else if (S_ISREG(st.st_mode) && st.st_size > 0) {
                by_content[read_all(p)][{st.st_dev, st.st_ino}].insert(p);
            }
        }
    }
    Groups out;
    for (const auto& [content, inodes] : by_content) {
        if (inodes.size() < 2) continue;
        Group g;
        for (const auto& [inode, names] : inodes) g.insert(names.begin(), names.end());
        out.insert(g);
    }
    return out;
}

std::string describe(const Groups& groups) {
    std::string s;
    for (const Group& g : groups) {
        s += "{";
        for (const std::string& p : g) s += " " + printable(p);
        s += " }\n";
    }
    return s;
}

// Moves a file's mtime one second past its indexed value, so that a rewrite with the same size
// is a change even when the write and the scan fell into one tick of the kernel's coarse clock.
void set_distinct_mtime(const std::string& path) {
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    timespec times[2] = {st.st_atim, st.st_mtim};
    times[1].tv_sec += 1;
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

class Dupes : public EndToEnd {
  protected:
    // tree/ with a known duplicate structure (see the comments inline).
    void make_tree() {
        tree_ = scratch_ / "tree";
        ASSERT_EQ(::mkdir(tree_.c_str(), 0755), 0);
        for (const char* d : {"/a", "/b", "/c", "/c/d", "/odd"}) {
            ASSERT_EQ(::mkdir((tree_ + d).c_str(), 0755), 0);
        }
        // Larger than the partial window, under three names in three directories.
        const std::string a = random_bytes(40000, 1);
        write_file(tree_ + "/a/x", a);
        write_file(tree_ + "/b/y", a);
        write_file(tree_ + "/c/d/z", a);
        // A hard link: one more name of /a/x, not a duplicate of it.
        ASSERT_EQ(::link((tree_ + "/a/x").c_str(), (tree_ + "/a/x-link").c_str()), 0);
        // Same size, different content at the first, the middle and the last byte.
        std::string b = random_bytes(20000, 2);
        write_file(tree_ + "/b/b", b);
        write_file(tree_ + "/c/b-copy", b);
        for (std::size_t at : {std::size_t{0}, b.size() / 2, b.size() - 1}) {
            std::string v = b;
            v[at] = static_cast<char>(v[at] ^ 0x5a);
            write_file(tree_ + "/b/b-differs-at-" + std::to_string(at), v);
        }
        // Small files (read whole for the partial hash).
        write_file(tree_ + "/a/hello", "hello\n");
        write_file(tree_ + "/c/hello", "hello\n");
        write_file(tree_ + "/c/hellp", "hellp\n");
        // Empty files are no duplicates by default.
        write_file(tree_ + "/a/empty1", "");
        write_file(tree_ + "/b/empty2", "");
        // A file only linked to itself: one inode, two names, same size as nothing else.
        write_file(tree_ + "/a/alone", random_bytes(777, 3));
        ASSERT_EQ(::link((tree_ + "/a/alone").c_str(), (tree_ + "/b/alone-link").c_str()), 0);
        // Odd names: a newline, invalid UTF-8.
        write_file(tree_ + "/odd/new\nline", a);
        write_file(tree_ + "/odd/\xff\xfe-bad", b);
        // Large and equal at both ends: the partial hashes collide, the full ones decide.
        std::string big = random_bytes(300000, 4);
        write_file(tree_ + "/c/big1", big);
        write_file(tree_ + "/c/big2", big);
        big[150000] = static_cast<char>(big[150000] ^ 1);
        write_file(tree_ + "/c/big3", big);
        // A symlink to a duplicate is not a file.
        ASSERT_EQ(::symlink((tree_ + "/a/x").c_str(), (tree_ + "/odd/symlink").c_str()), 0);
    }

    Groups dupes0(std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"dupes", tree_, "-0"};
        args.insert(args.end(), extra.begin(), extra.end());
        const Exit r = ctl(args);
        EXPECT_EQ(r.code, 0) << r.err << "\ndaemon log:\n" << log();
        return parse_groups0(r.out);
    }

    // The tree scanned and its groups checked, then b/y rewritten with other content of the
    // same size (a duplicate of a/x no more) and a distinct mtime.
    void scan_then_change_b_y() {
        make_tree();
        scan(tree_);
        ASSERT_EQ(dupes0(), reference_groups(tree_));
        std::string other = read_all(tree_ + "/b/y");
        other[0] = static_cast<char>(other[0] ^ 1);
        write_file(tree_ + "/b/y", other);
        set_distinct_mtime(tree_ + "/b/y");
    }

    std::string tree_;
};

TEST_F(Dupes, GroupsEqualThoseFoundByReadingEveryFileAndASecondRunReadsNothing) {
    make_tree();
    scan(tree_);
    const Groups expected = reference_groups(tree_);
    ASSERT_EQ(expected.size(), 4u) << describe(expected);  // a, b, hello, big1/2
    const Groups first = dupes0();
    EXPECT_EQ(first, expected) << "wsctl:\n"
                               << describe(first) << "reference:\n"
                               << describe(expected);
    EXPECT_EQ(dupes0({"--paranoid"}), expected);

    const nlohmann::json second = json_of({"dupes", tree_});
    EXPECT_EQ(second.at("files_read").get<std::uint64_t>(), 0u) << second.dump();
    EXPECT_EQ(second.at("bytes_read").get<std::uint64_t>(), 0u) << second.dump();
    EXPECT_EQ(second.at("groups").size(), 4u);
    // Largest wasted space first: big1/big2 (300000), then a's group, 3 * 40000 (x and its
    // link are one file).
    EXPECT_EQ(second.at("groups")[0].at("wasted").get<std::uint64_t>(), 300000u);
    EXPECT_EQ(second.at("groups")[1].at("wasted").get<std::uint64_t>(), 3u * 40000u);
    EXPECT_EQ(second.at("groups")[1].at("files").size(), 4u);
    EXPECT_EQ(second.at("wasted").get<std::uint64_t>(), 3u * 40000 + 2u * 20000 + 6 + 300000);

    // With empty files allowed they form a group of their own.
    Groups with_empty = expected;
    with_empty.insert(Group{tree_ + "/a/empty1", tree_ + "/b/empty2"});
    EXPECT_EQ(dupes0({"--min-size", "0"}), with_empty);
    // --type f is what every run does; another type is a usage error.
    EXPECT_EQ(dupes0({"--type", "f"}), expected);
    const Exit dirs = ctl({"dupes", tree_, "--type", "d", "-0"});
    EXPECT_EQ(dirs.code, 2) << dirs.err;
    EXPECT_TRUE(dirs.out.empty()) << dirs.out;
    // Only below one directory.
    EXPECT_EQ(parse_groups0(ctl({"dupes", tree_ + "/c", "-0"}).out),
              (Groups{{tree_ + "/c/big1", tree_ + "/c/big2"}}));
}

// The three outputs give the same groups in the same order: the plain text (written group by
// group as the frames come) is what the --json document's groups say, formatted; -0 lists the
// same names. The --json document is one document whose members are the daemon's.
TEST_F(Dupes, PlainAndNulSeparatedOutputsListTheJsonDocumentsGroupsInItsOrder) {
    make_tree();
    scan(tree_);
    const nlohmann::json doc = json_of({"dupes", tree_});
    ASSERT_EQ(doc.at("groups").size(), 4u) << doc.dump();
    for (const char* member : {"wasted", "candidates", "files_read", "bytes_read", "elapsed_ms"}) {
        EXPECT_TRUE(doc.contains(member)) << member << " in " << doc.dump();
    }
    std::string plain;
    std::string nul;
    for (const auto& g : doc.at("groups")) {
        plain += format_count(g.at("files").size()) + " files of " +
                 format_bytes(g.at("size").get<std::uint64_t>()) + ", " +
                 format_bytes(g.at("wasted").get<std::uint64_t>()) + " wasted\n";
        for (const auto& f : g.at("files")) {
            const auto& names = f.at("names");
            for (std::size_t i = 0; i < names.size(); ++i) {
                plain += (i == 0 ? "  " : "    = ") + path_of(names[i]) + "\n";
                nul += path_of(names[i]) + std::string(1, '\0');
            }
        }
        plain += "\n";
        nul += std::string(1, '\0');
    }
    plain += "4 groups, " + format_bytes(doc.at("wasted").get<std::uint64_t>()) + " wasted\n";
    const Exit text = ctl({"dupes", tree_});
    EXPECT_EQ(text.code, 0) << text.err;
    EXPECT_EQ(text.out, plain);
    const Exit zero = ctl({"dupes", tree_, "-0"});
    EXPECT_EQ(zero.code, 0) << zero.err;
    EXPECT_EQ(zero.out, nul);
}

// The index of this daemon changes only when a scan says so (no live index), so a file changed
// behind its back stays stale until the rescan.
class DupesWithoutLiveIndex : public Dupes {
  protected:
    void SetUp() override {
        extra_args_ = {"--no-watch"};
        start_daemon();
    }
};

TEST_F(DupesWithoutLiveIndex, AChangedFileIsRehashedAndReportedUntilRescanned) {
    // Same size, other content: the index still has the old metadata until the rescan.
    ASSERT_NO_FATAL_FAILURE(scan_then_change_b_y());
    const nlohmann::json stale = json_of({"dupes", tree_});
    bool reported = false;
    for (const auto& p : stale.at("changed")) reported |= path_of(p) == tree_ + "/b/y";
    EXPECT_TRUE(reported) << stale.dump();
    scan(tree_);
    const nlohmann::json fresh = json_of({"dupes", tree_});
    EXPECT_EQ(fresh.at("files_read").get<std::uint64_t>(), 1u) << fresh.dump();
    EXPECT_EQ(dupes0(), reference_groups(tree_));
}

TEST_F(Dupes, ALiveUpdateRehashesAChangedFileWithoutARescan) {
    ASSERT_NO_FATAL_FAILURE(scan_then_change_b_y());
    // Until the live update lands, b/y is reported as changed; once it has, it is hashed again
    // and leaves its old group, with no scan in between.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    nlohmann::json run;
    do {
        run = json_of({"dupes", tree_});
    } while (!run.at("changed").empty() && std::chrono::steady_clock::now() < deadline);
    ASSERT_TRUE(run.at("changed").empty()) << run.dump() << "\ndaemon log:\n" << log();
    EXPECT_EQ(dupes0(), reference_groups(tree_));
}

TEST_F(Dupes, CancelStopsARunningDupes) {
    // 48 sparse files of 512 MiB, all zeros: every partial hash collides, and the full hashes
    // read 24 GiB (from no disk, seconds of CPU) — long enough to be cancelled while running.
    tree_ = scratch_ / "sparse";
    ASSERT_EQ(::mkdir(tree_.c_str(), 0755), 0);
    for (int i = 0; i < 48; ++i) {
        const std::string p = tree_ + "/z" + std::to_string(i);
        const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::ftruncate(fd, off_t{512} << 20), 0);
        ::close(fd);
    }
    scan(tree_);
    Process run =
        spawn_wsctl(daemon_->socket(), {"dupes", tree_, "--json"}, scratch_.path(), "dupes");
    // Wait until status shows the run, then cancel it.
    bool seen = false;
    for (int i = 0; i < 2000 && !seen; ++i) {
        const nlohmann::json s = json_of({"status"});
        seen = s.contains("dupes") && !s.at("dupes").empty();
        if (seen) {
            const auto& d = s.at("dupes")[0];
            EXPECT_FALSE(d.at("phase").get<std::string>().empty());
            EXPECT_EQ(d.at("workers").size() > 0, true) << d.dump();
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }
    ASSERT_TRUE(seen) << "the run never showed in wsctl status";
    const nlohmann::json c = json_of({"cancel"});
    EXPECT_EQ(c.value("dupes", 0u), 1u) << c.dump();
    const std::optional<Exit> e = run.wait(std::chrono::minutes(2));
    ASSERT_TRUE(e);
    EXPECT_NE(e->code, 0) << e->out;
    EXPECT_NE(e->out.find("Cancelled"), std::string::npos) << e->out << e->err;
    // The daemon still answers, and no run is left.
    const nlohmann::json after = json_of({"status"});
    EXPECT_TRUE(!after.contains("dupes") || after.at("dupes").empty()) << after.dump();
}

TEST_F(Dupes, AnUnprivilegedCallerNeverSeesFilesItCannotRead) {
    if (::geteuid() != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root (useradd, setpriv)";
    if (::access("/usr/sbin/useradd", X_OK) != 0 || ::access("/usr/bin/setpriv", X_OK) != 0 ||
        ::access("/usr/bin/setfacl", X_OK) != 0) {
        WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs useradd, setpriv and setfacl";
    }
    TestUser carol("wsidc" + std::to_string(::getpid()), scratch_.path());
    ASSERT_TRUE(carol.ok()) << carol.error();
    // The daemon's socket must be reachable by carol.
    daemon_->stop();
    const std::string config = scratch_ / "wsindexd.conf";
    write_file(config, "socket_mode = 0666\n");
    extra_args_ = {"--config", config};
    daemon_.reset();
    std::filesystem::remove_all(scratch_ / "daemon");
    start_daemon();
    ASSERT_EQ(::chmod(scratch_.path().c_str(), 0755), 0);

    // pub/ readable by all; closed/ (0700 root) hides its names; one 0600 root file in pub
    // is unreadable, another 0600 one is granted to carol by an ACL.
    tree_ = scratch_ / "tree";
    ASSERT_EQ(::mkdir(tree_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((tree_ + "/pub").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((tree_ + "/closed").c_str(), 0700), 0);
    const std::string content = random_bytes(12000, 9);
    write_file(tree_ + "/pub/open1", content);
    write_file(tree_ + "/pub/open2", content);
    write_file(tree_ + "/pub/private", content, 0600);
    write_file(tree_ + "/pub/granted", content, 0600);
    write_file(tree_ + "/closed/hidden", content);
    // Two files only root can read, equal to each other: no group for carol at all.
    const std::string secret = random_bytes(5000, 10);
    write_file(tree_ + "/pub/secret1", secret, 0600);
    write_file(tree_ + "/pub/secret2", secret, 0600);
    const Exit acl = run({"/usr/bin/setfacl", "-m", "u:" + std::to_string(carol.uid()) + ":r",
                          tree_ + "/pub/granted"},
                         scratch_.path());
    ASSERT_EQ(acl.code, 0) << acl.err;
    scan(tree_);

    // Root sees everything (the hash cache is now filled for all of them).
    EXPECT_EQ(dupes0(), (Groups{{tree_ + "/pub/open1", tree_ + "/pub/open2", tree_ + "/pub/private",
                                 tree_ + "/pub/granted", tree_ + "/closed/hidden"},
                                {tree_ + "/pub/secret1", tree_ + "/pub/secret2"}}));
    const Exit r = run({"/usr/bin/setpriv", "--reuid=" + std::to_string(carol.uid()),
                        "--regid=" + std::to_string(carol.gid()), "--init-groups", "--",
                        WSINDEX_WSCTL, "dupes", tree_, "-0", "--socket", daemon_->socket()},
                       scratch_.path(), std::chrono::minutes(2));
    ASSERT_EQ(r.code, 0) << r.err << log();
    EXPECT_EQ(parse_groups0(r.out),
              (Groups{{tree_ + "/pub/open1", tree_ + "/pub/open2", tree_ + "/pub/granted"}}));
}

}  // namespace
}  // namespace wsindex::cli::test
