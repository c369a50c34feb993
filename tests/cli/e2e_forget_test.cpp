// End to end: `wsctl forget ROOT` takes a deleted root out of every answer (find, du, status, the
// database's views) and leaves the other roots exactly as they were; a rescan of a deleted root
// says how to forget it; what is not an indexed root, a configured root and an unprivileged
// caller are refused with a clear error while the daemon keeps serving.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/path.hpp"
#include "tests/cli/support/fixture.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::cli::test {
namespace {

class Forget : public EndToEnd {
  protected:
    void SetUp() override {
        configured_ = scratch_ / "configured";
        std::filesystem::create_directories(configured_ + "/sub");
        std::ofstream(configured_ + "/sub/file") << "configured";
        // Anyone may connect (the unprivileged caller must reach the daemon to be refused by
        // it); one configured root.
        const std::string config = scratch_ / "wsindexd.conf";
        FILE* f = std::fopen(config.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fprintf(f, "socket_mode = 0666\nroots = [\"%s\"]\n", configured_.c_str());
        std::fclose(f);
        // Without the live index, which forgets a deleted root by itself (LiveIndex tests it):
        // here the root must outlive its directory until `wsctl forget`.
        extra_args_ = {"--config", config, "--no-watch"};
        start_daemon();
        a_ = scratch_ / "a";
        b_ = scratch_ / "b";
        make_odd_tree(a_);
        make_odd_tree(b_);
        scan(a_);
        scan(b_);
        scan(configured_);  // the periodic first scan may still be queued: wait for one
    }

    // sqlite3's answer to `sql` on the daemon's database (read while the daemon runs).
    std::string query(const std::string& sql) {
        const Exit r = run({"/usr/bin/sqlite3", daemon_->db(), sql}, scratch_.path());
        EXPECT_EQ(r.code, 0) << r.err;
        return r.out;
    }

    // Every row, every column, of the views `files` and `dir_totals` at or below `root`
    // (paths in hex: byte-exact for the odd names).
    std::string view_rows(const std::string& root) {
        const std::string lo = root + "/";
        const std::string hi = root + "0";  // '0' follows '/'
        const std::string range =
            "(path = '" + root + "' OR (path >= '" + lo + "' AND path < '" + hi + "'))";
        return query(
                   "SELECT hex(path), type, size, blocks, mtime_ns, ctime_ns, mode, uid, gid,"
                   " dev, ino, nlink, errno FROM files WHERE " +
                   range + " ORDER BY path") +
               query("SELECT hex(path), size, blocks, files, dirs, depth FROM dir_totals WHERE " +
                     range + " ORDER BY path");
    }

    std::vector<std::string> status_roots() {
        std::vector<std::string> roots;
        for (const auto& root : json_of({"status"}).value("roots", nlohmann::json::array())) {
            roots.push_back(path_of(root.at("root")));
        }
        return roots;
    }

    std::string configured_, a_, b_;
};

TEST_F(Forget, ADeletedRootLeavesEveryAnswerAndOtherRootsStayAsTheyWere) {
    const std::set<std::string> b_find = find0_under(b_);
    const nlohmann::json b_du = json_of({"du", b_, "--depth", "3"});
    const std::string b_rows = view_rows(b_);
    ASSERT_FALSE(b_find.empty());
    ASSERT_FALSE(view_rows(a_).empty());

    ASSERT_TRUE(remove_tree(a_));           // fd-relative: the odd tree has a path past PATH_MAX
    ASSERT_FALSE(find0_under(a_).empty());  // still in the index until forgotten

    // A rescan of it says what to do.
    Exit r = ctl({"scan", a_});
    EXPECT_EQ(r.code, 5) << r.out << r.err;
    EXPECT_NE(r.err.find(a_ + ": no such directory; it is still in the index: `wsctl forget " + a_ +
                         "` removes it"),
              std::string::npos)
        << r.err;

    r = ctl({"forget", a_});
    ASSERT_EQ(r.code, 0) << r.out << r.err << "\ndaemon log:\n" << log();
    EXPECT_NE(r.out.find("forgot " + a_ + ": "), std::string::npos) << r.out;

    r = ctl({"find", "-0"});
    ASSERT_EQ(r.code, 0) << r.err;
    const std::set<std::string> all = split_nul(r.out);
    for (const std::string& path : all)
        EXPECT_FALSE(core::at_or_below(path, a_)) << printable(path);
    EXPECT_TRUE(all.count(b_));
    for (const std::string& root : status_roots()) EXPECT_NE(root, a_);
    for (const auto& e : json_of({"du"}).value("entries", nlohmann::json::array())) {
        EXPECT_FALSE(core::at_or_below(path_of(e.at("path")), a_)) << e.dump();
    }
    EXPECT_EQ(ctl({"du", a_}).code, 5);
    EXPECT_EQ(view_rows(a_), "");
    // Its history went with it: `scans` names it no more.
    for (const auto& scan : json_of({"scans"}).value("scans", nlohmann::json::array())) {
        EXPECT_NE(path_of(scan.at("root")), a_) << scan.dump();
    }

    // The other root: every row, every total, every answer as before.
    EXPECT_EQ(view_rows(b_), b_rows);
    EXPECT_EQ(find0_under(b_), b_find);
    EXPECT_EQ(json_of({"du", b_, "--depth", "3"}), b_du);

    // Forgotten for good; made again, it is scanned afresh.
    r = ctl({"forget", a_});
    EXPECT_EQ(r.code, 5) << r.out << r.err;
    make_odd_tree(a_);
    scan(a_);
    EXPECT_EQ(find0_under(a_), find_print0(a_, scratch_.path(), /*with_root=*/false));
}

TEST_F(Forget, WhatIsNotAnIndexedRootIsRefusedAndTheDaemonKeepsServing) {
    const std::set<std::string> a_find = find0_under(a_);

    // A directory inside an indexed root.
    Exit r = ctl({"forget", a_ + "/sub"});
    EXPECT_EQ(r.code, 5) << r.out << r.err;
    EXPECT_NE(r.err.find(a_ + "/sub is inside indexed root " + a_ + "; rescan " + a_ +
                         ", or forget " + a_),
              std::string::npos)
        << r.err;

    // A configured root, even when it is gone (an unmounted one looks the same).
    ASSERT_TRUE(remove_tree(configured_));
    r = ctl({"forget", configured_});
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("is a configured root: remove it from the configuration and reload"),
              std::string::npos)
        << r.err;
    // ... and its rescan is refused as before, without the hint to forget it.
    r = ctl({"scan", configured_});
    EXPECT_EQ(r.code, 5) << r.out << r.err;
    EXPECT_EQ(r.err.find("wsctl forget"), std::string::npos) << r.err;

    // A path the index never held.
    r = ctl({"forget", scratch_ / "never-indexed"});
    EXPECT_EQ(r.code, 5) << r.out << r.err;
    EXPECT_NE(r.err.find("is not an indexed root"), std::string::npos) << r.err;

    // A caller neither root nor in the control group, privileges dropped for real.
    if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0) {
        WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root and setpriv to run wsctl as nobody";
    }
    r = run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
             WSINDEX_WSCTL, "forget", a_, "--socket", daemon_->socket()},
            scratch_.path(), std::chrono::minutes(2));
    EXPECT_EQ(r.code, 4) << r.out << r.err;
    EXPECT_NE(r.err.find("forgetting a root needs root or the"), std::string::npos) << r.err;

    // Nothing was removed, and the daemon still answers.
    ASSERT_TRUE(daemon_->running()) << log();
    EXPECT_EQ(find0_under(a_), a_find);
    EXPECT_EQ(find0_under(configured_).size(), 2u);  // sub, sub/file
    const std::vector<std::string> roots = status_roots();
    EXPECT_EQ(std::count(roots.begin(), roots.end(), a_), 1);
    EXPECT_EQ(std::count(roots.begin(), roots.end(), configured_), 1);
}

}  // namespace
}  // namespace wsindex::cli::test
