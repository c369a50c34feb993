// dir_path_by_descriptors: the path of a directory deeper than the kernel prints, found by
// walking up and naming each level from its parent's listing.
#include "monitor/dir_path.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "core/unique_fd.hpp"

namespace wsindex::monitor {
namespace {

class DirPathTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/dir-path-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        top_ = tmpl;
        ASSERT_EQ(::stat(top_.c_str(), &top_st_), 0);
    }
    void TearDown() override {
        // Bottom up, by descriptor: the chain is deeper than a path can name.
        for (std::size_t i = names_.size(); i-- > 0;) {
            const core::UniqueFd parent(open_level(i));
            ASSERT_TRUE(parent.valid());
            ASSERT_EQ(::unlinkat(parent.get(), names_[i].c_str(), AT_REMOVEDIR), 0);
        }
        ::rmdir(top_.c_str());
    }
    // The directory holding level `i` of the chain (0: top).
    int open_level(std::size_t i) const {
        int fd = ::open(top_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (std::size_t k = 0; k < i && fd >= 0; ++k) {
            const int next = ::openat(fd, names_[k].c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            ::close(fd);
            fd = next;
        }
        return fd;
    }
    // Makes a chain of directories below top_ whose path is longer than PATH_MAX; returns
    // the bottom, open.
    core::UniqueFd make_chain(std::string* path) {
        *path = top_;
        core::UniqueFd fd(::open(top_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        for (int level = 0; path->size() <= PATH_MAX + 100; ++level) {
            names_.push_back(std::string(250, static_cast<char>('a' + level % 26)));
            EXPECT_EQ(::mkdirat(fd.get(), names_.back().c_str(), 0755), 0);
            fd.reset(::openat(fd.get(), names_.back().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
            *path += "/" + names_.back();
        }
        return fd;
    }
    DirPathSources sources(bool print_nothing) const {
        DirPathSources s;
        s.known = [this](const struct stat& st) -> std::optional<std::string> {
            if (st.st_dev == top_st_.st_dev && st.st_ino == top_st_.st_ino) return top_;
            return std::nullopt;
        };
        s.printed = [print_nothing](int fd, std::string* out) {
            if (print_nothing) return Printed::unreadable;
            char buf[PATH_MAX];
            const std::string link = "/proc/self/fd/" + std::to_string(fd);
            const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
            if (n < 0 || static_cast<std::size_t>(n) >= sizeof buf) return Printed::unreadable;
            out->assign(buf, static_cast<std::size_t>(n));
            return Printed::ok;
        };
        return s;
    }

    std::string top_;
    struct stat top_st_ {};
    std::vector<std::string> names_;
};

TEST_F(DirPathTest, ADirectoryDeeperThanPathMaxIsNamedUpToAKnownRoot) {
    std::string expected;
    const core::UniqueFd bottom = make_chain(&expected);
    ASSERT_TRUE(bottom.valid());
    ASSERT_GT(expected.size(), static_cast<std::size_t>(PATH_MAX));
    const DirPath found = dir_path_by_descriptors(bottom.get(), sources(true));
    EXPECT_EQ(found.kind, DirPath::Kind::full);
    EXPECT_EQ(found.path, expected);
}

TEST_F(DirPathTest, APrintableAncestorEndsTheWalk) {
    std::string expected;
    const core::UniqueFd bottom = make_chain(&expected);
    const DirPath found = dir_path_by_descriptors(bottom.get(), sources(false));
    EXPECT_EQ(found.kind, DirPath::Kind::full);
    EXPECT_EQ(found.path, expected);
}

TEST_F(DirPathTest, AChildIsNamedByItsIdentityInItsParent) {
    ASSERT_EQ(::mkdir((top_ + "/x").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((top_ + "/y").c_str(), 0755), 0);
    struct stat y {};
    ASSERT_EQ(::stat((top_ + "/y").c_str(), &y), 0);
    const core::UniqueFd top(::open(top_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    EXPECT_EQ(name_in_parent(top.get(), y), std::optional<std::string>("y"));
    ASSERT_EQ(::rmdir((top_ + "/y").c_str()), 0);
    EXPECT_EQ(name_in_parent(top.get(), y), std::nullopt) << "gone: not named";
    ASSERT_EQ(::rmdir((top_ + "/x").c_str()), 0);
}

TEST_F(DirPathTest, OutsideEveryKnownDirectoryIsOutside) {
    DirPathSources s = sources(true);
    s.known = [](const struct stat&) { return std::optional<std::string>(); };
    const core::UniqueFd top(::open(top_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    EXPECT_EQ(dir_path_by_descriptors(top.get(), s).kind, DirPath::Kind::outside);
}

}  // namespace
}  // namespace wsindex::monitor
