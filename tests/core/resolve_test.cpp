// core/resolve: directories reached by descriptor, never through a symlink, deeper than PATH_MAX.
#include "core/resolve.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <string>

#include "core/fs_ops.hpp"
#include "core/unique_fd.hpp"
#include "tests/core/support/walk_support.hpp"

namespace wsindex::test {
namespace {

using core::FileStat;
using core::UniqueFd;

core::ObjectId id_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return {st.st_dev, st.st_ino, st.st_mode & S_IFMT};
}

// Both resolvers: openat2 (through open_dir_beneath) and the per-component fallback.
using Resolver = int (*)(int, std::string_view, int) noexcept;
const Resolver kResolvers[] = {&core::open_dir_beneath, &core::open_dir_by_components};

TEST(Resolve, OpensNestedDirectoriesAndTheOpenedObjectIsTheOneAtThePath) {
    TempDir tmp;
    make_dir(tmp / "a");
    make_dir(tmp / "a/b");
    make_dir(tmp / "a/b/c");
    const UniqueFd base(::open(tmp.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(base.valid());
    for (const Resolver open : kResolvers) {
        for (const char* rel : {"a/b/c", "/a/b/c", "a//b/./c/", "./a/b/c"}) {
            const UniqueFd fd(open(base.get(), rel, 0));
            ASSERT_TRUE(fd.valid()) << rel << ": " << -fd.get();
            EXPECT_TRUE(core::same_object(fd.get(), id_of(tmp / "a/b/c"))) << rel;
            EXPECT_FALSE(core::same_object(fd.get(), id_of(tmp / "a/b"))) << rel;
        }
        const UniqueFd self(open(base.get(), "", 0));
        ASSERT_TRUE(self.valid());
        EXPECT_TRUE(core::same_object(self.get(), id_of(tmp.path())));
    }
    const UniqueFd abs(core::open_dir_absolute(tmp / "a/b", O_PATH));
    ASSERT_TRUE(abs.valid());
    EXPECT_TRUE(core::same_object(abs.get(), id_of(tmp / "a/b")));
    const UniqueFd slash(core::open_dir_absolute("/"));
    ASSERT_TRUE(slash.valid());
    EXPECT_TRUE(core::same_object(slash.get(), id_of("/")));
    EXPECT_EQ(core::open_dir_absolute("relative/path"), -EINVAL);
}

TEST(Resolve, ASymlinkInAnyComponentIsNeverFollowed) {
    TempDir tmp;
    make_dir(tmp / "real");
    make_dir(tmp / "real/inner");
    make_symlink("real", tmp / "link");
    make_symlink(tmp / "real/inner", tmp / "abs_link");
    make_file(tmp / "file");
    const UniqueFd base(::open(tmp.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(base.valid());
    for (const Resolver open : kResolvers) {
        // ELOOP (openat2 meeting a symlink) or ENOTDIR (a symlink opened as a directory with
        // O_NOFOLLOW), in the middle or as the last component: never followed.
        for (const char* last : {"link/inner", "link", "abs_link"}) {
            const int rc = open(base.get(), last, 0);
            EXPECT_TRUE(rc == -ELOOP || rc == -ENOTDIR) << last << ": " << rc;
        }
        EXPECT_EQ(open(base.get(), "file", 0), -ENOTDIR);
        EXPECT_EQ(open(base.get(), "missing/x", 0), -ENOENT);
        // ".." is refused, not resolved (the daemon's paths never hold it).
        EXPECT_EQ(open(base.get(), "real/../real", 0), -EXDEV);
        EXPECT_EQ(open(base.get(), "..", 0), -EXDEV);
    }
    const int rc = core::open_dir_absolute(tmp / "link/inner");
    EXPECT_TRUE(rc == -ELOOP || rc == -ENOTDIR) << rc;
}

TEST(Resolve, PathsLongerThanPathMaxAreOpenedInPieces) {
    TempDir tmp;
    std::string rel;
    const std::string component(200, 'd');
    while (rel.size() < 2 * PATH_MAX + 100) {
        rel += (rel.empty() ? "" : "/") + component;
        const std::string where = tmp.path() + "/" + rel;
        // mkdir by a path longer than PATH_MAX fails: make each level relative to its parent.
        const std::size_t slash = where.rfind('/');
        const UniqueFd parent(
            core::open_dir_absolute(std::string_view(where).substr(0, slash), O_PATH));
        ASSERT_TRUE(parent.valid()) << rel.size();
        ASSERT_EQ(::mkdirat(parent.get(), component.c_str(), 0755), 0);
    }
    ASSERT_GT(tmp.path().size() + rel.size(), 2u * PATH_MAX);
    const UniqueFd base(::open(tmp.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    for (const Resolver open : kResolvers) {
        const UniqueFd fd(open(base.get(), rel, 0));
        ASSERT_TRUE(fd.valid()) << -fd.get();
        FileStat st;
        ASSERT_EQ(core::stat_fd(fd.get(), st), 0);
        EXPECT_TRUE(S_ISDIR(st.mode));
        // The deepest directory is empty: its listing holds only "." and "..".
        EXPECT_EQ(st.nlink, 2u);
    }
    const UniqueFd deep(core::open_dir_absolute(tmp.path() + "/" + rel));
    EXPECT_TRUE(deep.valid()) << -deep.get();
}

TEST(Resolve, SplitParent) {
    std::string_view parent;
    std::string_view name;
    ASSERT_TRUE(core::split_parent("/a/b/c", &parent, &name));
    EXPECT_EQ(parent, "/a/b");
    EXPECT_EQ(name, "c");
    ASSERT_TRUE(core::split_parent("/a", &parent, &name));
    EXPECT_EQ(parent, "/");
    EXPECT_EQ(name, "a");
    ASSERT_TRUE(core::split_parent("/a/b//", &parent, &name));
    EXPECT_EQ(parent, "/a");
    EXPECT_EQ(name, "b");
    ASSERT_TRUE(core::split_parent("//a//b", &parent, &name));
    EXPECT_EQ(parent, "//a");
    EXPECT_EQ(name, "b");
    EXPECT_FALSE(core::split_parent("/", &parent, &name));
    EXPECT_FALSE(core::split_parent("//", &parent, &name));
    EXPECT_FALSE(core::split_parent("a/b", &parent, &name));
    EXPECT_FALSE(core::split_parent("", &parent, &name));
}

}  // namespace
}  // namespace wsindex::test
