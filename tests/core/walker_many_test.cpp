// Walker::run_many: several roots in one run of the pool (the live index's one-level re-listing).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "support/walk_support.hpp"

namespace wsindex::core {
namespace {

using test::TempDir;

// A record's fields the comparison cares about, keyed by path.
std::map<std::string, std::string> summary(const std::vector<WalkResult>& results) {
    std::map<std::string, std::string> out;
    for (const WalkResult& r : results) {
        out[r.path] = std::to_string(static_cast<int>(r.type)) + "/" + std::to_string(r.error) +
                      "/" + std::to_string(r.size) + "/" + std::to_string(r.ino);
    }
    return out;
}

TEST(WalkerMany, EqualsOneRunPerRootAndGroupsByRootId) {
    TempDir t;
    for (const char* d : {"a", "a/sub", "b", "c", "c/deep", "c/deep/er"}) test::make_dir(t / d);
    for (int i = 0; i < 300; ++i) test::make_file(t / ("a/f" + std::to_string(i)), "x");
    test::make_file(t / "b/one", "12345");
    test::make_file(t / "c/deep/er/z");
    test::make_file(t / "plain", "file root");
    const std::vector<std::string> roots = {t / "a", t / "missing", t / "b", t / "plain", t / "c"};
    for (const std::uint32_t depth : {1u, 0u}) {
        WalkOptions options;
        options.workers = 2;
        options.full_paths = true;
        options.max_depth = depth;
        options.split_threshold = 64;  // `a` is split into chunks that other workers steal
        Walker walker(options);
        std::vector<WalkResult> many;
        std::vector<Status> root_status;
        const Status st = walker.run_many(
            roots,
            [&](std::span<WalkResult> batch) {
                for (WalkResult& r : batch) many.push_back(std::move(r));
                return Status::ok();
            },
            &root_status);
        ASSERT_TRUE(st) << st.to_string();
        ASSERT_EQ(root_status.size(), roots.size());
        EXPECT_EQ(root_status[1].code(), std::errc::no_such_file_or_directory);
        std::vector<WalkResult> separate;
        for (std::size_t i = 0; i < roots.size(); ++i) {
            if (i == 1) continue;
            EXPECT_TRUE(root_status[i]) << roots[i];
            ASSERT_TRUE(walker.run(roots[i], [&](std::span<WalkResult> batch) {
                for (WalkResult& r : batch) separate.push_back(std::move(r));
                return Status::ok();
            }));
        }
        EXPECT_EQ(summary(many), summary(separate)) << "max_depth " << depth;
        EXPECT_EQ(many.size(), separate.size());

        // Roots that are directories carry dir_id i + 1; one level below, every record's
        // parent_id names its root.
        std::map<std::uint64_t, std::string> root_of_id;
        for (const WalkResult& r : many) {
            if (r.parent_id == 0 && r.is_dir()) root_of_id[r.dir_id] = r.path;
        }
        EXPECT_EQ(root_of_id, (std::map<std::uint64_t, std::string>{
                                  {1, roots[0]}, {3, roots[2]}, {5, roots[4]}}));
        if (depth != 1) continue;
        std::set<std::uint64_t> ids;
        for (const WalkResult& r : many) {
            if (r.parent_id == 0) continue;
            ASSERT_TRUE(root_of_id.count(r.parent_id)) << r.path;
            EXPECT_EQ(r.path.rfind(root_of_id[r.parent_id] + "/", 0), 0u) << r.path;
            if (r.is_dir()) {
                EXPECT_TRUE(ids.insert(r.dir_id).second) << "dir ids are unique";
            }
        }
        EXPECT_FALSE(test::find_result(many, t / "c/deep/er")) << "max_depth 1 lists one level";
    }
}

TEST(WalkerMany, NoRootsAndOnlyMissingRootsAreEmptyRuns) {
    Walker walker(WalkOptions{});
    std::vector<Status> root_status;
    int calls = 0;
    const auto count = [&](std::span<WalkResult>) {
        ++calls;
        return Status::ok();
    };
    EXPECT_TRUE(walker.run_many({}, count, &root_status));
    EXPECT_TRUE(root_status.empty());
    const std::vector<std::string> gone = {"/nonexistent/wsindex/a", ""};
    EXPECT_TRUE(walker.run_many(gone, count, &root_status));
    ASSERT_EQ(root_status.size(), 2u);
    EXPECT_EQ(root_status[0].code(), std::errc::no_such_file_or_directory);
    EXPECT_EQ(root_status[1].code(), std::errc::invalid_argument);
    EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace wsindex::core
