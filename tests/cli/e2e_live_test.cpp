// The live index end to end: a real wsindexd following a real tree through fanotify (and the
// inotify fallback), asked through the real wsctl. Changes must show without a scan; each
// wait is a poll of wsctl with a generous deadline (sanitizer builds, a loaded machine), never
// a sleep.
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "tests/cli/support/fixture.hpp"

namespace wsindex::cli::test {
namespace {

using namespace std::chrono_literals;
constexpr auto kDeadline = 60s;

void write(const std::string& path, std::size_t bytes) {
    std::ofstream(path, std::ios::binary) << std::string(bytes, 'x');
}

class LiveIndex : public EndToEnd {
  protected:
    void SetUp() override {}  // each test starts its daemon with its configuration

    void start_with(const std::string& config_text) {
        const std::string config = scratch_ / "wsindexd.conf";
        std::ofstream(config) << config_text;
        extra_args_ = {"--config", config};
        start_daemon();
        root_ = scratch_ / "tree";
        std::filesystem::create_directories(root_ + "/a/deep");
        std::filesystem::create_directories(root_ + "/b");
        write(root_ + "/a/f1", 100);
        write(root_ + "/a/deep/f2", 200);
        write(root_ + "/b/g", 300);
        scan(root_);
    }

    // Polls `condition` over wsctl answers until it holds or the deadline passes.
    bool eventually(const std::function<bool()>& condition) {
        const auto deadline = std::chrono::steady_clock::now() + kDeadline;
        while (std::chrono::steady_clock::now() < deadline) {
            if (condition()) return true;
        }
        return false;
    }
    bool indexed(const std::string& path) { return find0_under(root_).count(path) == 1; }
    std::uint64_t indexed_size(const std::string& path) {
        const auto doc = json_of({"find", "--under", root_, "-l"});
        for (const auto& e : doc["entries"]) {
            if (path_of(e["path"]) == path) return e.value("size", std::uint64_t{0});
        }
        return UINT64_MAX;
    }
    // The link count the index holds for a file (sqlite3 on the database the daemon writes;
    // `path` has no quote).
    std::uint64_t indexed_nlink(const std::string& path) {
        const Exit r = run({"/usr/bin/sqlite3", daemon_->db(),
                            "SELECT nlink FROM files WHERE path = '" + path + "'"},
                           scratch_.path());
        EXPECT_EQ(r.code, 0) << r.err;
        return r.out.empty() ? UINT64_MAX : std::stoull(r.out);
    }
    std::uint64_t indexed_total() {
        const auto doc = json_of({"du", root_});
        return doc["entries"][0].value("size", std::uint64_t{0});
    }
    nlohmann::json root_status() {
        const auto doc = json_of({"status"});
        for (const auto& r : doc["roots"]) {
            if (path_of(r["root"]) == root_) return r;
        }
        return {};
    }

    std::string root_;
};

TEST_F(LiveIndex, CreatesDeletesRenamesAndWritesShowWithoutAScan) {
    start_with("");
    ASSERT_TRUE(eventually([&] { return root_status().value("live", "") == "fanotify"; }))
        << root_status().dump() << "\n"
        << log();

    write(root_ + "/b/new file\nwith newline", 42);
    EXPECT_TRUE(eventually([&] { return indexed(root_ + "/b/new file\nwith newline"); })) << log();

    ASSERT_EQ(::unlink((root_ + "/a/f1").c_str()), 0);
    EXPECT_TRUE(eventually([&] { return !indexed(root_ + "/a/f1"); })) << log();

    ASSERT_EQ(::rename((root_ + "/a/deep").c_str(), (root_ + "/b/moved").c_str()), 0);
    EXPECT_TRUE(eventually([&] {
        return indexed(root_ + "/b/moved/f2") && !indexed(root_ + "/a/deep");
    })) << log();

    write(root_ + "/b/g", 12345);
    EXPECT_TRUE(eventually([&] { return indexed_size(root_ + "/b/g") == 12345; })) << log();

    std::filesystem::create_directories(root_ + "/c/d/e");
    write(root_ + "/c/d/e/deepest", 7);
    EXPECT_TRUE(eventually([&] { return indexed(root_ + "/c/d/e/deepest"); })) << log();

    std::filesystem::remove_all(root_ + "/b/moved");
    EXPECT_TRUE(eventually([&] { return !indexed(root_ + "/b/moved/f2"); })) << log();

    // The totals follow: du of the root equals du -sb of the tree.
    EXPECT_TRUE(eventually([&] { return indexed_total() == du_sb(root_, scratch_.path()); }))
        << indexed_total() << " vs " << du_sb(root_, scratch_.path()) << "\n"
        << log();
    const auto status = json_of({"status"});
    EXPECT_GT(status["live"].value("rows_changed", std::uint64_t{0}), 0u) << status.dump();
}

// A file with a second name outside the root, written and linked again through names outside
// it: no event names a directory under the root, yet the indexed name follows.
TEST_F(LiveIndex, AFileChangedThroughAHardLinkOutsideTheRootIsFollowed) {
    start_with("");
    ASSERT_TRUE(eventually([&] { return root_status().value("live", "") == "fanotify"; }))
        << root_status().dump() << "\n"
        << log();
    const std::string inside = root_ + "/b/g";
    const std::string outside = scratch_ / "outside";
    ASSERT_EQ(::mkdir(outside.c_str(), 0755), 0);
    ASSERT_EQ(::link(inside.c_str(), (outside + "/g1").c_str()), 0);
    scan(root_);
    ASSERT_EQ(indexed_nlink(inside), 2u);

    write(outside + "/g1", 4321);
    EXPECT_TRUE(eventually([&] { return indexed_size(inside) == 4321; })) << log();
    ASSERT_EQ(::link((outside + "/g1").c_str(), (outside + "/g2").c_str()), 0);
    EXPECT_TRUE(eventually([&] { return indexed_nlink(inside) == 3; })) << log();
    ASSERT_EQ(::unlink((outside + "/g2").c_str()), 0);
    EXPECT_TRUE(eventually([&] { return indexed_nlink(inside) == 2; })) << log();
    // A file indexed with one name, linked from outside, then written through that link.
    const std::string single = root_ + "/a/f1";
    ASSERT_EQ(indexed_nlink(single), 1u);
    ASSERT_EQ(::link(single.c_str(), (outside + "/f1").c_str()), 0);
    EXPECT_TRUE(eventually([&] { return indexed_nlink(single) == 2; })) << log();
    write(outside + "/f1", 777);
    EXPECT_TRUE(eventually([&] { return indexed_size(single) == 777; })) << log();
    EXPECT_TRUE(eventually([&] { return indexed_total() == du_sb(root_, scratch_.path()); }))
        << indexed_total() << " vs " << du_sb(root_, scratch_.path()) << "\n"
        << log();
}

TEST_F(LiveIndex, InotifyFallbackFollowsTheTreeToo) {
    start_with("watch_backend = \"inotify\"\n");
    ASSERT_TRUE(eventually([&] { return root_status().value("live", "") == "inotify"; }))
        << root_status().dump() << "\n"
        << log();
    write(root_ + "/a/deep/created", 5);
    EXPECT_TRUE(eventually([&] { return indexed(root_ + "/a/deep/created"); })) << log();
    std::filesystem::create_directories(root_ + "/n/m");
    write(root_ + "/n/m/inside", 6);
    EXPECT_TRUE(eventually([&] { return indexed(root_ + "/n/m/inside"); })) << log();
    // A directory made after the root was watched is watched too.
    write(root_ + "/n/m/later", 6);
    EXPECT_TRUE(eventually([&] { return indexed(root_ + "/n/m/later"); })) << log();
    EXPECT_GE(root_status().value("live_watches", 0), 5) << root_status().dump();
}

// inotify: a directory moved out of the root, changed there while unwatched, and moved back
// before the batch that saw it leave was applied (a long settle time holds it). The root is
// re-listed whole and finds the same directory (same inode) where it was: it is walked again
// all the same, because the move named it.
TEST_F(LiveIndex, InotifyWalksAgainADirectoryThatCameBackChanged) {
    start_with("watch_backend = \"inotify\"\nwatch_settle_ms = 3000\nwatch_max_delay_ms = 20000\n");
    ASSERT_TRUE(eventually([&] { return root_status().value("live", "") == "inotify"; }))
        << root_status().dump() << "\n"
        << log();
    const int watches = root_status().value("live_watches", 0);  // root, a, a/deep, b
    const std::string away = scratch_ / "away";
    ASSERT_EQ(::rename((root_ + "/a").c_str(), away.c_str()), 0);
    // Its watches are gone once the monitor has read the move: what follows is unseen.
    ASSERT_TRUE(eventually([&] { return root_status().value("live_watches", 0) == watches - 2; }))
        << root_status().dump();
    write(away + "/deep/while-away", 9);
    ASSERT_EQ(::rename(away.c_str(), (root_ + "/a").c_str()), 0);
    EXPECT_TRUE(eventually([&] { return indexed(root_ + "/a/deep/while-away"); })) << log();
    EXPECT_TRUE(indexed(root_ + "/a/deep/f2"));
}

// A chain of directories deeper than PATH_MAX in the root: the kernel cannot print the path of
// a directory at its bottom (the fanotify monitor's readlink of /proc/self/fd/N fails), which
// once made every change there a rescan of the whole root. Each change must be applied as any
// other, by the path found from descriptors, and no rescan may start.
// inotify: the directories of the chain are watched by descriptor too (their changes were
// never seen before).
class LiveIndexDeep : public LiveIndex, public ::testing::WithParamInterface<const char*> {};

TEST_P(LiveIndexDeep, ChangesDeeperThanPathMaxAreAppliedWithoutARescan) {
    const std::string backend = GetParam();
    start_with("watch_backend = \"" + backend + "\"\n");
    ASSERT_TRUE(eventually([&] { return root_status().value("live", "") == backend; }))
        << root_status().dump() << "\n"
        << log();
    // Built by descriptor: no call below takes the whole path.
    std::string bottom = root_;
    int fd = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    for (int level = 0; bottom.size() <= PATH_MAX + 256; ++level) {
        const std::string name = std::string(200, static_cast<char>('a' + level % 26));
        ASSERT_EQ(::mkdirat(fd, name.c_str(), 0755), 0);
        const int next = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ::close(fd);
        ASSERT_GE(next, 0);
        fd = next;
        bottom += "/" + name;
    }
    const auto create_at = [&](const std::string& name) {
        const int f = ::openat(fd, name.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT_GE(f, 0) << name;
        ::close(f);
    };
    create_at("seed");
    scan(root_);
    const std::size_t scans_before = json_of({"scans"})["scans"].size();
    ASSERT_TRUE(indexed(bottom + "/seed")) << "the scan indexed the chain";
    // Positive control above the chain: an ordinary change is applied.
    write(root_ + "/b/control", 3);
    ASSERT_TRUE(eventually([&] { return indexed(root_ + "/b/control"); })) << log();

    constexpr int kTouches = 6;
    for (int i = 0; i < kTouches; ++i) {
        // A file at the bottom, and a new directory there with a file in it: a directory the
        // monitor has never resolved, each time.
        const std::string n = std::to_string(i);
        create_at("touch-" + n);
        ASSERT_EQ(::mkdirat(fd, ("d" + n).c_str(), 0755), 0);
        create_at("d" + n + "/f");
        EXPECT_TRUE(eventually([&] {
            const auto all = find0_under(root_);
            return all.count(bottom + "/touch-" + n) == 1 &&
                   all.count(bottom + "/d" + n + "/f") == 1;
        })) << "change "
            << i << " not applied\n"
            << log();
    }
    ::close(fd);
    EXPECT_EQ(json_of({"scans"})["scans"].size(), scans_before) << "a rescan started\n" << log();
    EXPECT_EQ(root_status().value("live_overflows", std::uint64_t{0}), 0u) << root_status().dump();
    EXPECT_EQ(log().find("rescanning"), std::string::npos) << log();
}
INSTANTIATE_TEST_SUITE_P(Backends, LiveIndexDeep, ::testing::Values("fanotify", "inotify"));

TEST_F(LiveIndex, WatchFalseKeepsTheIndexAsOfItsLastScan) {
    start_with("watch = false\n");
    const auto status = json_of({"status"});
    EXPECT_TRUE(status["live"].is_null()) << status.dump();
    EXPECT_EQ(root_status().value("live", ""), "") << root_status().dump();
    EXPECT_NE(log().find("live index off"), std::string::npos) << log();
}

TEST_F(LiveIndex, ARestartedDaemonCatchesUpAndSaysSo) {
    start_with("");
    const auto stopped = daemon_->stop();
    ASSERT_TRUE(stopped.has_value());
    write(root_ + "/b/while-down", 9);  // no daemon sees this happen
    start_daemon();
    EXPECT_TRUE(eventually([&] { return indexed(root_ + "/b/while-down"); })) << log();
    EXPECT_NE(log().find("catching up on " + root_), std::string::npos) << log();
}

TEST_F(LiveIndex, ADeletedRootIsForgotten) {
    start_with("");
    ASSERT_TRUE(eventually([&] { return root_status().value("live", "") == "fanotify"; }));
    std::filesystem::remove_all(root_);
    EXPECT_TRUE(eventually([&] { return log().find("was deleted") != std::string::npos; }))
        << log();
    // Out of status, find and du: nothing of it lives on in the index.
    EXPECT_TRUE(eventually([&] { return root_status().is_null(); })) << root_status().dump();
    const auto all = ctl({"find", "-0"});
    ASSERT_EQ(all.code, 0) << all.err;
    EXPECT_EQ(all.out.find(root_), std::string::npos);
    EXPECT_NE(ctl({"du", root_}).code, 0);
}

}  // namespace
}  // namespace wsindex::cli::test
