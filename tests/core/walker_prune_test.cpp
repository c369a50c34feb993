// PruneMatcher and fs_type_name: updatedb-style rules, literal and glob, case-insensitive fs types.
#include <gtest/gtest.h>

#include "core/fs_types.hpp"
#include "core/prune.hpp"
#include "core/walk_errors.hpp"

namespace wsindex::core {
namespace {

TEST(WalkerPrune, NamesPathsAndGlobs) {
    PruneRules rules;
    rules.names = {".git", "*.cache", "node_modules"};
    rules.paths = {"/tmp/", "/var/spool/*"};
    const PruneMatcher m(rules);
    EXPECT_TRUE(m.has_dir_rules());
    EXPECT_FALSE(m.has_fs_rules());
    EXPECT_TRUE(m.prune_dir("/src/x/.git", ".git"));
    EXPECT_TRUE(m.prune_dir("/home/u/thumb.cache", "thumb.cache"));
    EXPECT_FALSE(m.prune_dir("/home/u/.gitignore", ".gitignore"));
    EXPECT_TRUE(m.prune_dir("/tmp", "tmp"));  // a trailing slash in the rule is ignored
    EXPECT_FALSE(m.prune_dir("/tmp2", "tmp2"));
    EXPECT_TRUE(m.prune_dir("/var/spool/cron", "cron"));
    EXPECT_FALSE(m.prune_dir("/var/spool/cron/crontabs", "crontabs"))
        << "FNM_PATHNAME: * does not cross /";
    EXPECT_FALSE(m.prune_dir("/var/spool", "spool"));
}

TEST(WalkerPrune, FileSystemTypes) {
    PruneRules rules;
    rules.fs_types = {"NFS", "proc", "fuse.sshfs", "cgroup*"};
    const PruneMatcher m(rules);
    EXPECT_FALSE(m.has_dir_rules());
    EXPECT_TRUE(m.has_fs_rules());
    EXPECT_TRUE(m.prune_fs("nfs"));
    EXPECT_TRUE(m.prune_fs("proc"));
    EXPECT_TRUE(m.prune_fs("fuse")) << "f_type has no FUSE subtype";
    EXPECT_TRUE(m.prune_fs("cgroup2"));
    EXPECT_FALSE(m.prune_fs("ext4"));
    EXPECT_FALSE(PruneMatcher(PruneRules{}).prune_fs("proc"));
}

TEST(WalkerPrune, FsTypeNames) {
    EXPECT_EQ(fs_type_name(0x9fa0), "proc");
    EXPECT_EQ(fs_type_name(0x62656572), "sysfs");
    EXPECT_EQ(fs_type_name(0x01021994), "tmpfs");
    EXPECT_EQ(fs_type_name(0x6969), "nfs");
    EXPECT_EQ(fs_type_name(0x65735546), "fuse");
    EXPECT_EQ(fs_type_name(0xef53), "ext4");
    EXPECT_EQ(fs_type_name(0x12345678), "unknown");
}

TEST(WalkerPrune, ErrorClassification) {
    for (int e : {EACCES, EPERM, ENOENT, ENOTDIR, ELOOP}) EXPECT_TRUE(walk_error_is_recoverable(e));
    for (int e : {EIO, ENOMEM, EMFILE, ENFILE, EOVERFLOW, EINVAL, 0}) {
        EXPECT_FALSE(walk_error_is_recoverable(e)) << e;
    }
}

}  // namespace
}  // namespace wsindex::core
