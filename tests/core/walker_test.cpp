// Walker: path sets against find -print0, metadata against lstat, ids, roots, prune, cancel.
#include "core/walker.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <set>
#include <string>
#include <thread>

#include "tests/core/support/walk_support.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::test {
namespace {

using core::EntryType;
using core::WalkOptions;
using core::WalkResult;

int open_fd_count() {
    int n = 0;
    if (DIR* d = ::opendir("/proc/self/fd")) {
        while (::readdir(d) != nullptr) ++n;
        ::closedir(d);
    }
    return n;
}

// The walk's path set equals find's, and every record's type and size agree with lstat.
void expect_matches_find_and_lstat(const std::string& root, const Walked& w) {
    ASSERT_TRUE(w.status) << w.status.to_string();
    const auto paths = paths_of(w.results);
    const auto found = find_paths(root);
    ASSERT_EQ(paths.size(), found.size());
    EXPECT_TRUE(paths == found);
    EXPECT_EQ(std::set<std::string>(paths.begin(), paths.end()).size(), paths.size())
        << "a path was reported twice";
    for (const auto& r : w.results) {
        ASSERT_TRUE(r.has_stat) << r.path;
        EXPECT_EQ(r.error, 0) << r.path;
        const auto st = lstat_any(r.path);
        ASSERT_TRUE(st.has_value()) << r.path;
        EXPECT_EQ(r.type, core::entry_type_from_mode(st->st_mode)) << r.path;
        EXPECT_EQ(r.ino, st->st_ino) << r.path;
        if (r.type == EntryType::File || r.type == EntryType::Symlink) {
            EXPECT_EQ(r.size, static_cast<std::uint64_t>(st->st_size)) << r.path;
        }
        EXPECT_EQ(r.nlink, st->st_nlink) << r.path;
        EXPECT_EQ(r.mtime_ns, st->st_mtim.tv_sec * 1'000'000'000LL + st->st_mtim.tv_nsec);
        EXPECT_EQ(r.name(), r.path == root ? root : r.path.substr(r.path.rfind('/') + 1));
    }
}

// Ids: root 1, unique, every parent_id names a directory of this walk, depth follows.
void expect_consistent_ids(const std::string& root, const std::vector<WalkResult>& results) {
    std::map<std::string, const WalkResult*> by_path;
    std::set<std::uint64_t> ids;
    for (const auto& r : results) {
        by_path[r.path] = &r;
        if (r.is_dir()) {
            EXPECT_NE(r.dir_id, 0u) << r.path;
            EXPECT_TRUE(ids.insert(r.dir_id).second) << "duplicate id " << r.dir_id;
        } else {
            EXPECT_EQ(r.dir_id, 0u) << r.path;
        }
    }
    for (const auto& r : results) {
        if (r.path == root) {
            EXPECT_EQ(r.dir_id, 1u);
            EXPECT_EQ(r.parent_id, 0u);
            EXPECT_EQ(r.depth, 0u);
            continue;
        }
        std::string parent = r.path.substr(0, r.path.rfind('/'));
        if (parent.size() < root.size()) parent = root;  // root given with a trailing slash
        auto it = by_path.find(parent);
        if (it == by_path.end()) it = by_path.find(root);
        ASSERT_NE(it, by_path.end()) << r.path;
        EXPECT_EQ(r.parent_id, it->second->dir_id) << r.path;
        EXPECT_EQ(r.depth, it->second->depth + 1) << r.path;
    }
    // A listed directory's `children` counts the records that name it as their parent (the
    // index writer relies on it to know when a directory is complete); others report 0.
    std::map<std::uint64_t, std::uint32_t> records_below;
    for (const auto& r : results) ++records_below[r.parent_id];
    for (const auto& r : results) {
        const std::uint32_t expected = r.is_dir() ? records_below[r.dir_id] : 0;
        EXPECT_EQ(r.children, expected) << r.path;
    }
}

class WalkerShapes : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(WalkerShapes, MatchesFindAndLstat) {
    const auto& [shape, n] = GetParam();
    TempDir tmp;
    const std::string root = tmp / "tree";
    if (!make_tree(root, n, shape))
        WSINDEX_SKIP_OR_FAIL_IN_CI() << "shared/bench/mktree.py not available";
    const int fds_before = open_fd_count();
    const Walked w = walk(root);
    expect_matches_find_and_lstat(root, w);
    expect_consistent_ids(root, w.results);
    EXPECT_EQ(open_fd_count(), fds_before) << "directory fds leaked";

    // Tiny chunks (every directory split) and a budget of one fd (every child reopens through
    // its ancestors) walk the same set.
    WalkOptions odd;
    odd.split_threshold = 5;
    odd.chunk_entries = 3;
    odd.fd_budget = 1;
    odd.result_batch = 7;
    const Walked w2 = walk(root, odd, /*copy_results=*/true);  // recycled path buffers too
    EXPECT_EQ(paths_of(w2.results), paths_of(w.results));
    expect_consistent_ids(root, w2.results);
    EXPECT_GT(w2.stats.reopens, 0u);
    EXPECT_EQ(open_fd_count(), fds_before) << "directory fds leaked";
}

// Names only (what the index walks with): a file's record carries just its name, with no
// allocation for short names; directories carry full paths; rebuilt, it is the same walk.
void expect_names_only_walk_equals_full_walk(const std::string& root, const Walked& full) {
    WalkOptions names_only;
    names_only.full_paths = false;
    names_only.result_batch = 5;
    const Walked w = walk(root, names_only, /*copy_results=*/true);
    ASSERT_TRUE(w.status) << w.status.to_string();
    std::size_t files = 0;
    for (const auto& r : w.results) {
        if (r.is_dir() || r.parent_id == 0) {
            EXPECT_EQ(r.path.rfind(root, 0), 0u) << "a directory's record lacks its path";
        } else {
            ++files;
            EXPECT_EQ(r.name_offset, 0u) << r.path;
            EXPECT_EQ(r.path.find('/'), std::string::npos) << r.path;
        }
    }
    EXPECT_GT(files, 0u);
    const auto rebuilt = with_full_paths(w.results);
    expect_matches_find_and_lstat(root, Walked{w.status, rebuilt, w.stats});
    expect_consistent_ids(root, rebuilt);
    EXPECT_EQ(paths_of(rebuilt), paths_of(full.results));
}

class WalkerNamesOnly : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(WalkerNamesOnly, RecordsRebuildTheSameWalk) {
    const auto& [shape, n] = GetParam();
    TempDir tmp;
    const std::string root = tmp / "tree";
    if (!make_tree(root, n, shape))
        WSINDEX_SKIP_OR_FAIL_IN_CI() << "shared/bench/mktree.py not available";
    expect_names_only_walk_equals_full_walk(root, walk(root));
}

// Paths past PATH_MAX: OddNamesAndPathsPastPathMax.
INSTANTIATE_TEST_SUITE_P(Mktree, WalkerNamesOnly,
                         ::testing::Values(std::make_tuple("balanced", 3000),
                                           std::make_tuple("wide", 9000)),
                         [](const auto& param_info) { return std::get<0>(param_info.param); });

INSTANTIATE_TEST_SUITE_P(Mktree, WalkerShapes,
                         ::testing::Values(std::make_tuple("balanced", 3000),
                                           std::make_tuple("lopsided", 3000),
                                           std::make_tuple("wide", 9000),
                                           std::make_tuple("deep", 2600)),
                         [](const auto& param_info) { return std::get<0>(param_info.param); });

TEST(Walker, WideDirectoryIsSplitIntoChunks) {
    TempDir tmp;
    const std::string root = tmp / "wide";
    make_dir(root);
    for (int i = 0; i < 5000; ++i) make_file(root + "/f" + std::to_string(i));
    make_dir(root + "/sub");
    make_file(root + "/sub/x");
    WalkOptions o;
    o.workers = 2;
    o.split_threshold = 1000;
    o.chunk_entries = 256;
    o.result_batch = 100;
    const Walked w = walk(root, o, /*copy_results=*/true);
    expect_matches_find_and_lstat(root, w);
    EXPECT_GE(w.stats.chunks, 5000u / 256);
}

TEST(Walker, OddNamesAndPathsPastPathMax) {
    TempDir tmp;
    const std::string root = tmp / "odd";
    make_dir(root);
    make_file(root + "/new\nline");
    make_file(root + "/bad\xff\xfeutf8");
    make_file(root + "/" + std::string(255, 'n'));
    make_dir(root + "/" + std::string(255, 'd'));
    make_file(root + "/" + std::string(255, 'd') + "/inside", "12345");
    make_file(root + "/ spaces and * glob?");
    make_dir(root + "/-dash");
    make_file(root + "/\\backslash");
    // A chain of 40 directories with 200-byte names: paths of ~8 KB, twice PATH_MAX.
    int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    for (int level = 0; level < 40; ++level) {
        const std::string name = std::to_string(level) + std::string(200, 'x');
        ASSERT_EQ(::mkdirat(fd, name.c_str(), 0755), 0);
        const int sub = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ::close(fd);
        ASSERT_GE(sub, 0);
        fd = sub;
        const int f = ::openat(fd, "leaf", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT_GE(f, 0);
        ASSERT_EQ(::write(f, "abc", 3), 3);
        ::close(f);
    }
    ::close(fd);
    const Walked w = walk(root);
    expect_matches_find_and_lstat(root, w);
    expect_consistent_ids(root, w.results);
    std::size_t longest = 0;
    for (const auto& r : w.results) longest = std::max(longest, r.path.size());
    EXPECT_GT(longest, static_cast<std::size_t>(PATH_MAX));
    expect_names_only_walk_equals_full_walk(root, w);
}

TEST(Walker, MissingRootFailsBeforeAnyWork) {
    TempDir tmp;
    core::Walker walker;
    int calls = 0;
    const auto status = walker.run(tmp / "nope", [&](std::span<WalkResult>) {
        ++calls;
        return core::Status::ok();
    });
    EXPECT_FALSE(status);
    EXPECT_EQ(status.code(), std::errc::no_such_file_or_directory);
    EXPECT_NE(status.message().find("nope"), std::string::npos);
    EXPECT_EQ(calls, 0);
    EXPECT_FALSE(walker.run("", [](std::span<WalkResult>) { return core::Status::ok(); }));
}

TEST(Walker, SymlinkRootIsRecordedNotFollowed) {
    TempDir tmp;
    make_dir(tmp / "real");
    make_file(tmp / "real/a");
    make_symlink("real", tmp / "link");
    const Walked w = walk(tmp / "link");
    ASSERT_TRUE(w.status);
    ASSERT_EQ(w.results.size(), 1u);
    EXPECT_EQ(w.results[0].type, EntryType::Symlink);
    EXPECT_EQ(paths_of(w.results), find_paths(tmp / "link"));
    // A trailing slash does not make it followed either (find would follow it): the walker
    // never resolves a symlink (core/resolve.hpp), whoever names it.
    const Walked w2 = walk(tmp / "link/");
    ASSERT_TRUE(w2.status);
    ASSERT_EQ(w2.results.size(), 1u);
    EXPECT_EQ(w2.results[0].type, EntryType::Symlink);
}

TEST(Walker, ARootBelowASymlinkIsRefused) {
    TempDir tmp;
    make_dir(tmp / "real");
    make_dir(tmp / "real/sub");
    make_file(tmp / "real/sub/a");
    make_symlink("real", tmp / "link");
    int calls = 0;
    core::Walker walker;
    const auto status = walker.run(tmp / "link/sub", [&](std::span<WalkResult>) {
        ++calls;
        return core::Status::ok();
    });
    // ELOOP for a symlink met on the way, ENOTDIR when it is the last component opened as a
    // directory (O_NOFOLLOW | O_DIRECTORY): either way, not followed.
    EXPECT_TRUE(status.code() == std::errc::too_many_symbolic_link_levels ||
                status.code() == std::errc::not_a_directory)
        << status.to_string();
    EXPECT_EQ(calls, 0);
    // The same directory by its real path is walked.
    const Walked w = walk(tmp / "real/sub");
    ASSERT_TRUE(w.status);
    EXPECT_EQ(paths_of(w.results), find_paths(tmp / "real/sub"));
}

TEST(Walker, FileRootAndTrailingSlashes) {
    TempDir tmp;
    make_file(tmp / "file", "xyz");
    const Walked w = walk(tmp / "file");
    ASSERT_TRUE(w.status);
    ASSERT_EQ(w.results.size(), 1u);
    EXPECT_EQ(w.results[0].size, 3u);
    make_dir(tmp / "d");
    make_file(tmp / "d/a");
    for (const std::string& root : {tmp / "d/", tmp / "d//", tmp.path() + "/./d"}) {
        const Walked wd = walk(root);
        EXPECT_EQ(paths_of(wd.results), find_paths(root)) << root;
        expect_consistent_ids(root, wd.results);
    }
}

TEST(Walker, PruneNamesAndPaths) {
    TempDir tmp;
    const std::string root = tmp / "p";
    make_dir(root);
    for (const char* d : {"keep", ".git", "keep/.git", "cache.d", "skipme", "keep/skipme"}) {
        make_dir(root + "/" + d);
        make_file(root + "/" + d + "/file");
    }
    WalkOptions o;
    o.prune.names = {".git", "*.d"};
    o.prune.paths = {root + "/skipme/"};
    const Walked w = walk(root, o);
    ASSERT_TRUE(w.status);
    const auto expected = find_paths(
        root, "\\( -name .git -o -name '*.d' -o -path '" + root + "/skipme' \\) -print0 -prune -o");
    EXPECT_EQ(paths_of(w.results), expected);
    EXPECT_NE(find_result(w.results, root + "/keep/skipme/file"), nullptr);
    EXPECT_EQ(find_result(w.results, root + "/keep/.git/file"), nullptr);
    ASSERT_NE(find_result(w.results, root + "/.git"), nullptr);  // recorded, not descended

    WalkOptions glob;
    glob.prune.paths = {root + "/k*"};
    const Walked w2 = walk(root, glob);
    EXPECT_EQ(find_result(w2.results, root + "/keep/file"), nullptr);
    EXPECT_NE(find_result(w2.results, root + "/keep"), nullptr);
}

TEST(Walker, CancelFromConsumerAndBeforeRun) {
    TempDir tmp;
    const std::string root = tmp / "c";
    make_dir(root);
    for (int i = 0; i < 50; ++i) {
        make_dir(root + "/d" + std::to_string(i));
        for (int j = 0; j < 40; ++j)
            make_file(root + "/d" + std::to_string(i) + "/f" + std::to_string(j));
    }
    WalkOptions o;
    o.result_batch = 16;
    core::Walker walker(o);
    auto status = walker.run(root, [&](std::span<WalkResult>) {
        walker.cancel();
        return core::Status::ok();
    });
    EXPECT_EQ(status.code(), std::errc::operation_canceled);
    // The walker is reusable after a cancelled run.
    std::size_t n = 0;
    status = walker.run(root, [&](std::span<WalkResult> b) {
        n += b.size();
        return core::Status::ok();
    });
    EXPECT_TRUE(status) << status.to_string();
    EXPECT_EQ(n, 50u * 41 + 1);

    // A token cancelled before the run.
    WalkOptions t;
    t.cancel.cancel();
    const Walked w = walk(root, t);
    EXPECT_EQ(w.status.code(), std::errc::operation_canceled);

    // A token cancelled from another thread while the run goes on.
    WalkOptions t2;
    t2.result_batch = 8;
    core::CancelToken token = t2.cancel;
    core::Walker w2(t2);
    std::thread canceller([token] { token.cancel(); });
    status = w2.run(root, [](std::span<WalkResult>) { return core::Status::ok(); });
    canceller.join();
    // Either the cancel came in time, or the walk finished first.
    EXPECT_TRUE(status || status.code() == std::errc::operation_canceled) << status.to_string();
}

TEST(Walker, SingleWorkerAndManyWorkersAgree) {
    TempDir tmp;
    const std::string root = tmp / "tree";
    if (!make_tree(root, 2000, "balanced"))
        WSINDEX_SKIP_OR_FAIL_IN_CI() << "mktree.py not available";
    // 0: the default, more workers than this machine's CPUs; 64: far more than tasks at times.
    for (unsigned workers : {1u, 3u, 8u, 0u, 64u}) {
        WalkOptions o;
        o.workers = workers;
        o.split_threshold = 8;
        o.chunk_entries = 4;
        const Walked w = walk(root, o, /*copy_results=*/true);
        ASSERT_TRUE(w.status);
        EXPECT_EQ(paths_of(w.results), find_paths(root)) << workers << " workers";
    }
}

// The default keeps more requests in flight than there are CPUs (for cold disks), and every
// entry still comes exactly once, also when workers outnumber the directories.
TEST(Walker, DefaultWorkersOutnumberTheCpus) {
    EXPECT_GE(core::default_walk_workers(), core::kMinDefaultWalkWorkers);
    EXPECT_GE(core::default_walk_workers(), std::thread::hardware_concurrency());
    const core::Walker walker;
    EXPECT_EQ(walker.workers(), core::default_walk_workers());

    TempDir tmp;
    const std::string root = tmp / "tree";
    if (!make_tree(root, 3000, "lopsided"))
        WSINDEX_SKIP_OR_FAIL_IN_CI() << "mktree.py not available";
    const Walked w = walk(root);
    ASSERT_TRUE(w.status) << w.status.to_string();
    const auto paths = paths_of(w.results);
    EXPECT_EQ(std::set<std::string>(paths.begin(), paths.end()).size(), paths.size())
        << "a path was reported twice";
    EXPECT_EQ(paths, find_paths(root));
}

}  // namespace
}  // namespace wsindex::test
