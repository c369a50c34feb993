// stat_named: the live index's per-name records equal what a one-level walk makes for them.
#include "core/named_stat.hpp"

#include <gtest/gtest.h>

#include <map>

#include "support/walk_support.hpp"

namespace wsindex::core {
namespace {

using test::TempDir;

TEST(NamedStat, RecordsEqualAOneLevelWalksAndMissingNamesAreGone) {
    TempDir t;
    test::make_dir(t / "d");
    test::make_dir(t / "d/sub");
    test::make_file(t / "d/f", "12345");
    test::make_symlink("nowhere", t / "d/link");
    const std::string odd = std::string("new\nline\xff") + std::string(200, 'x');
    test::make_file(t / ("d/" + odd), "z");
    NamedStat named;
    const std::vector<std::string> names = {"f", "sub", "link", odd, "absent"};
    ASSERT_TRUE(stat_named(t / "d", names, real_fs_ops(), &named));
    EXPECT_EQ(named.gone, std::vector<std::string>{"absent"});
    ASSERT_EQ(named.found.size(), 4u);

    WalkOptions options;
    options.full_paths = true;
    options.max_depth = 1;
    const test::Walked walked = test::walk(t / "d", options);
    ASSERT_TRUE(walked.status);
    for (const WalkResult& r : named.found) {
        const WalkResult* w = test::find_result(walked.results, r.path);
        ASSERT_NE(w, nullptr) << r.path;
        EXPECT_EQ(r.name(), w->name());
        EXPECT_EQ(r.type, w->type) << r.path;
        EXPECT_EQ(r.size, w->size) << r.path;
        EXPECT_EQ(r.ino, w->ino) << r.path;
        EXPECT_EQ(r.mtime_ns, w->mtime_ns) << r.path;
        EXPECT_EQ(r.ctime_ns, w->ctime_ns) << r.path;
        EXPECT_EQ(r.mode, w->mode) << r.path;
        EXPECT_EQ(r.nlink, w->nlink) << r.path;
        EXPECT_TRUE(r.has_stat);
    }
    const WalkResult* self = test::find_result(walked.results, t / "d");
    ASSERT_NE(self, nullptr);
    EXPECT_EQ(named.self.path, t / "d");
    EXPECT_EQ(named.self.ino, self->ino);
    EXPECT_TRUE(named.self.is_dir());
}

TEST(NamedStat, ADirectoryThatIsGoneOrNotADirectoryIsAnError) {
    TempDir t;
    test::make_file(t / "file");
    NamedStat named;
    const std::vector<std::string> names = {"x"};
    EXPECT_EQ(stat_named(t / "missing", names, real_fs_ops(), &named).code(),
              std::errc::no_such_file_or_directory);
    EXPECT_EQ(stat_named(t / "file", names, real_fs_ops(), &named).code(),
              std::errc::not_a_directory);
    const std::vector<std::string> bad = {"a/b"};
    test::make_dir(t / "d");
    EXPECT_EQ(stat_named(t / "d", bad, real_fs_ops(), &named).code(), std::errc::invalid_argument);
}

}  // namespace
}  // namespace wsindex::core
