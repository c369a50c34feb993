// DirBuffer: every record across many getdents64 calls and buffer growth, "." and ".." skipped.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "core/dir_reader.hpp"
#include "core/unique_fd.hpp"
#include "tests/core/support/walk_support.hpp"

namespace wsindex::test {
namespace {

// Hands getdents64 a small window so a directory takes many calls.
class SmallReads : public core::FsOps {
  public:
    long read_dir(int fd, char* buf, std::size_t) const noexcept override {
        return FsOps::read_dir(fd, buf, 1024);
    }
};

TEST(WalkerReader, ReadsEveryEntryAcrossCallsAndGrowth) {
    TempDir tmp;
    std::set<std::string> names;
    for (int i = 0; i < 7000; ++i) {
        const std::string n =
            "entry_" + std::to_string(i) + std::string(static_cast<std::size_t>(i % 40), 'z');
        make_file(tmp / n);
        names.insert(n);
    }
    for (const core::FsOps* fs : {&core::real_fs_ops(), static_cast<const core::FsOps*>(nullptr)}) {
        SmallReads small;
        const core::FsOps& ops = fs != nullptr ? *fs : small;
        core::UniqueFd fd(::open(tmp.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        ASSERT_TRUE(fd.valid());
        core::DirBuffer buf;
        ASSERT_EQ(buf.read_all(ops, fd.get()), 0);
        ASSERT_EQ(buf.count(), names.size());
        std::set<std::string> seen;
        for (std::size_t i = 0; i < buf.count(); ++i) seen.insert(buf.entry(i).d_name);
        EXPECT_EQ(seen, names);
        EXPECT_EQ(core::entry_type_from_dtype(buf.entry(0).d_type), core::EntryType::File);
        // Re-reading replaces, it does not append.
        core::UniqueFd again(::open(tmp.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        ASSERT_EQ(buf.read_all(ops, again.get()), 0);
        EXPECT_EQ(buf.count(), names.size());
    }
}

TEST(WalkerReader, ReadErrorIsReported) {
    core::DirBuffer buf;
    EXPECT_EQ(buf.read_all(core::real_fs_ops(), -1), EBADF);
    EXPECT_EQ(buf.count(), 0u);
}

}  // namespace
}  // namespace wsindex::test
