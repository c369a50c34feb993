// End to end: a damaged index file is found (at start and at run time), set aside, and rebuilt
// from the roots it held; the daemon keeps serving, and status says what happened. A start after
// a clean stop skips the check of every page unless the file changed since (a write to a stopped
// daemon's file is still found at start); a start after a crash checks.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <random>
#include <thread>

#include "tests/cli/support/fixture.hpp"
#include "tests/cli/support/tree.hpp"

namespace wsindex::cli::test {
namespace {

using Clock = std::chrono::steady_clock;

class DamagedIndex : public EndToEnd {
  protected:
    void SetUp() override {
        EndToEnd::SetUp();
        root_ = scratch_ / "tree";
        make_big_tree(root_, 4000);  // a database of some hundreds of pages
        scan(root_);
        expected_ = find_print0(root_, scratch_.path(), /*with_root=*/false);
        ASSERT_GT(expected_.size(), 3000u);
    }

    // Overwrites 8 KiB in the middle of the database file with seeded random bytes: pages of
    // the entries table, the biggest one.
    void damage_database() {
        const int fd = ::open(daemon_->db().c_str(), O_WRONLY | O_CLOEXEC);
        ASSERT_GE(fd, 0) << daemon_->db();
        struct stat st {};
        ASSERT_EQ(::fstat(fd, &st), 0);
        ASSERT_GT(st.st_size, 64 * 1024) << "database too small to damage its middle";
        std::mt19937 rng(20261204);
        std::string garbage(8192, '\0');
        for (char& c : garbage) c = static_cast<char>(rng());
        const off_t middle = (st.st_size / 2) & ~off_t{4095};
        ASSERT_EQ(::pwrite(fd, garbage.data(), garbage.size(), middle),
                  static_cast<ssize_t>(garbage.size()));
        ::close(fd);
    }

    // Polls status until it reports a finished rebuild and no scan runs or waits; the document
    // of that moment, or null after the deadline.
    nlohmann::json wait_for_rebuild(std::chrono::seconds deadline) {
        const auto until = Clock::now() + deadline;
        while (Clock::now() < until) {
            const auto r = ctl({"status", "--json"});
            if (r.code == 0) {
                auto doc = parse_json(r.out);
                const auto& b = doc["index_rebuild"];
                if (b.is_object() && b["pending"] == 0 && doc["running"].is_null() &&
                    doc["queued"].empty()) {
                    return doc;
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));  // polling, not a race
        }
        return nullptr;
    }

    // Database files set aside in the daemon's folder (without their -wal and -shm).
    std::vector<std::string> set_aside_files() const {
        std::vector<std::string> out;
        const std::string dir = scratch_ / "daemon";
        const std::string prefix = "db.damaged-";
        DIR* d = ::opendir(dir.c_str());
        if (d == nullptr) return out;
        while (const dirent* e = ::readdir(d)) {
            const std::string_view name(e->d_name);
            if (name.substr(0, prefix.size()) == prefix && name.find("-wal") == name.npos &&
                name.find("-shm") == name.npos) {
                out.emplace_back(e->d_name);
            }
        }
        ::closedir(d);
        return out;
    }

    std::string root_;
    std::set<std::string> expected_;
};

TEST_F(DamagedIndex, FoundAtStartSetAsideAndRebuilt) {
    ASSERT_TRUE(daemon_->stop().has_value());
    damage_database();
    start_daemon();

    const nlohmann::json doc = wait_for_rebuild(std::chrono::minutes(3));
    ASSERT_FALSE(doc.is_null()) << "no finished rebuild in status\n" << log();
    EXPECT_FALSE(doc["index_rebuild"]["detail"].get<std::string>().empty());
    // Root sees where the damaged file went, and it is there.
    ASSERT_TRUE(doc["index_rebuild"].contains("set_aside_as")) << doc.dump();
    EXPECT_EQ(set_aside_files().size(), 1u);

    EXPECT_EQ(find0_under(root_), expected_);
    const auto human = ctl({"status"});
    EXPECT_EQ(human.code, 0) << human.err;
    EXPECT_NE(human.out.find("index rebuilt"), std::string::npos) << human.out;
    EXPECT_NE(log().find("is damaged"), std::string::npos) << log();
}

TEST_F(DamagedIndex, ACleanStopSkipsTheCheckAtStartAndACrashDoesNot) {
    const std::string mark = daemon_->db() + ".clean";
    const std::string skipped = "was closed cleanly and is unchanged since: not checked";
    ASSERT_TRUE(daemon_->stop().has_value());
    struct stat st {};
    EXPECT_EQ(::stat(mark.c_str(), &st), 0) << mark;
    start_daemon();
    EXPECT_NE(log().find(skipped), std::string::npos) << log();
    EXPECT_NE(::stat(mark.c_str(), &st), 0);  // taken at start: a crash from now leaves none
    EXPECT_EQ(find0_under(root_), expected_);

    ASSERT_TRUE(daemon_->stop(SIGKILL).has_value());
    EXPECT_NE(::stat(mark.c_str(), &st), 0);
    start_daemon();
    EXPECT_EQ(log().find(skipped), std::string::npos) << log();
    EXPECT_EQ(find0_under(root_), expected_);
}

TEST_F(DamagedIndex, FoundWhileServingSetAsideAndRebuilt) {
    // A restart leaves the log empty, so readers read the damaged pages from the file itself.
    ASSERT_TRUE(daemon_->stop().has_value());
    start_daemon();
    damage_database();

    // Queries that read every entry's row meet the damage; each either answers or fails with
    // a clear error, and the daemon keeps serving.
    nlohmann::json doc;
    const auto until = Clock::now() + std::chrono::minutes(3);
    while (doc.is_null() && Clock::now() < until) {
        const auto r = ctl({"find", "-l", "--under", root_});
        EXPECT_TRUE(r.code == 0 || !r.err.empty()) << r.code;
        doc = wait_for_rebuild(std::chrono::seconds(2));
    }
    ASSERT_FALSE(doc.is_null()) << "no finished rebuild in status\n" << log();
    EXPECT_EQ(set_aside_files().size(), 1u);
    EXPECT_EQ(find0_under(root_), expected_);
    const auto listed = ctl({"find", "-l", "--under", root_});
    EXPECT_EQ(listed.code, 0) << listed.err << "\n" << log();
}

}  // namespace
}  // namespace wsindex::cli::test
