// Walker on special entries: symlinks (to /, loops, dangling), FIFOs, sockets, devices, hard
// links; bind-mount loops and mounts in a private mount namespace; a tiny RLIMIT_NOFILE.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "core/walker.hpp"
#include "tests/core/support/walk_support.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::test {
namespace {

using core::EntryType;
using core::WalkOptions;

TEST(WalkerSpecial, SymlinksFifosSocketsDevicesHardLinks) {
    TempDir tmp;
    const std::string root = tmp / "s";
    make_dir(root);
    make_symlink("/", root + "/to_root");
    make_symlink("loop_b", root + "/loop_a");
    make_symlink("loop_a", root + "/loop_b");
    make_symlink("self", root + "/self");
    make_symlink("does/not/exist", root + "/dangling");
    make_symlink("..", root + "/up");
    ASSERT_EQ(::mkfifo((root + "/fifo").c_str(), 0644), 0);
    {
        const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        const std::string p = root + "/sock";
        std::strncpy(addr.sun_path, p.c_str(), sizeof addr.sun_path - 1);
        ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        ::close(s);
    }
    const bool root_user = ::geteuid() == 0;
    if (root_user) {
        ASSERT_EQ(::mknod((root + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
        ASSERT_EQ(::mknod((root + "/loop0").c_str(), S_IFBLK | 0660, makedev(7, 0)), 0);
    }
    make_file(root + "/original", "hello");
    ASSERT_EQ(::link((root + "/original").c_str(), (root + "/hardlink").c_str()), 0);

    const Walked w = walk(root);
    ASSERT_TRUE(w.status) << w.status.to_string();
    EXPECT_EQ(paths_of(w.results), find_paths(root));
    EXPECT_EQ(w.results.size(), root_user ? 13u : 11u) << "nothing followed";
    for (const char* l : {"to_root", "loop_a", "loop_b", "self", "dangling", "up"}) {
        const auto* r = find_result(w.results, root + "/" + l);
        ASSERT_NE(r, nullptr) << l;
        EXPECT_EQ(r->type, EntryType::Symlink) << l;
        EXPECT_EQ(r->error, 0) << l;
    }
    EXPECT_EQ(find_result(w.results, root + "/to_root")->size, 1u);  // strlen("/")
    EXPECT_EQ(find_result(w.results, root + "/fifo")->type, EntryType::Fifo);
    EXPECT_EQ(find_result(w.results, root + "/sock")->type, EntryType::Socket);
    if (root_user) {
        EXPECT_EQ(find_result(w.results, root + "/null")->type, EntryType::CharDevice);
        EXPECT_EQ(find_result(w.results, root + "/loop0")->type, EntryType::BlockDevice);
    }
    const auto* a = find_result(w.results, root + "/original");
    const auto* b = find_result(w.results, root + "/hardlink");
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->ino, b->ino);
    EXPECT_EQ(a->dev, b->dev);
    EXPECT_EQ(a->nlink, 2u);
    EXPECT_EQ(b->size, 5u);
}

// Runs `body` in a child with a private mount namespace (mounts vanish with the child).
std::optional<std::string> in_mount_namespace(const std::function<std::string()>& body) {
    return run_in_child([&]() -> std::string {
        if (::unshare(CLONE_NEWNS) != 0) return "unshare failed";
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
            return "make-rprivate failed";
        }
        return body();
    });
}

TEST(WalkerSpecial, BindMountLoopIsElooP) {
    if (::geteuid() != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root for mount namespaces";
    TempDir tmp;
    const std::string root = tmp / "m";
    make_dir(root);
    make_dir(root + "/a");
    make_file(root + "/a/file");
    make_dir(root + "/a/loop");
    const auto out = in_mount_namespace([&]() -> std::string {
        if (::mount(root.c_str(), (root + "/a/loop").c_str(), nullptr, MS_BIND, nullptr) != 0) {
            return std::string("bind failed: ") + std::strerror(errno);
        }
        const Walked w = walk(root);
        return encode(w.results, w.status);
    });
    ASSERT_TRUE(out.has_value());
    ASSERT_EQ(out->find("failed"), std::string::npos) << *out;
    const Decoded d = decode(*out);
    EXPECT_EQ(d.status_errno, 0);
    const auto* loop = find_result(d.results, root + "/a/loop");
    ASSERT_NE(loop, nullptr);
    EXPECT_EQ(loop->error, ELOOP);
    EXPECT_EQ(loop->type, EntryType::Directory);
    EXPECT_TRUE(loop->has_stat);
    EXPECT_EQ(d.results.size(), 4u) << "root, a, a/file, a/loop; nothing below the loop";
}

TEST(WalkerSpecial, OneFileSystemAndPruneFsInANamespace) {
    if (::geteuid() != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root for mount namespaces";
    TempDir tmp;
    const std::string root = tmp / "fs";
    make_dir(root);
    make_dir(root + "/t");
    make_file(root + "/kept");
    const auto out = in_mount_namespace([&]() -> std::string {
        if (::mount("wstest", (root + "/t").c_str(), "tmpfs", 0, "size=1m") != 0) {
            return std::string("tmpfs failed: ") + std::strerror(errno);
        }
        make_file(root + "/t/inside");
        std::string all;
        WalkOptions plain;
        WalkOptions xdev;
        xdev.one_file_system = true;
        WalkOptions prunefs;
        prunefs.prune.fs_types = {"proc", "TMPFS"};
        for (const auto& o : {plain, xdev, prunefs}) {
            const Walked w = walk(root, o);
            all += std::to_string(w.status ? 0 : 1) + ":" + std::to_string(w.results.size()) + ":" +
                   (find_result(w.results, root + "/t") ? "t" : "-") + ";";
        }
        return all;
    });
    ASSERT_TRUE(out.has_value());
    EXPECT_EQ(*out, "0:4:t;0:3:t;0:3:t;") << "mount point recorded, its contents only when allowed";
}

// Times that 64-bit nanoseconds cannot hold (tmpfs keeps any 64-bit second) come out as the
// nearest end, not as an overflowed value; a file and a directory (statx) alike.
TEST(WalkerSpecial, TimesOutsideWhatNanosecondsHoldSaturate) {
    if (::geteuid() != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root for mount namespaces";
    TempDir tmp;
    const std::string root = tmp / "times";
    make_dir(root);
    const auto out = in_mount_namespace([&]() -> std::string {
        if (::mount("wstest", root.c_str(), "tmpfs", 0, "size=1m") != 0) {
            return std::string("tmpfs failed: ") + std::strerror(errno);
        }
        const std::pair<const char*, std::int64_t> files[] = {
            {"y2300", 10'413'792'000},   // 2300-01-01
            {"y1600", -11'676'096'000},  // 1600-01-01
            {"y2001", 1'000'000'000},
        };
        std::string result;
        for (const auto& [name, sec] : files) {
            const std::string path = root + "/" + name;
            for (const std::string& p : {path + "-file", path + "-dir"}) {
                if (p.ends_with("-file")) {
                    make_file(p);
                } else {
                    make_dir(p);
                }
                const struct timespec times[2] = {{sec, 5}, {sec, 5}};
                if (::utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
                    return std::string("utimensat failed: ") + std::strerror(errno);
                }
            }
        }
        const Walked w = walk(root);
        for (const auto& r : w.results) {
            if (r.path == root) continue;
            result += r.path.substr(root.size() + 1) + "=" + std::to_string(r.mtime_ns) + ";";
        }
        return result;
    });
    ASSERT_TRUE(out.has_value());
    ASSERT_EQ(out->find("failed"), std::string::npos) << *out;
    const std::string max = std::to_string(INT64_MAX);
    const std::string min = std::to_string(INT64_MIN);
    for (const std::string& expected :
         {"y2300-file=" + max, "y2300-dir=" + max, "y1600-file=" + min, "y1600-dir=" + min,
          std::string("y2001-file=1000000000000000005"),
          std::string("y2001-dir=1000000000000000005")}) {
        EXPECT_NE(out->find(expected + ";"), std::string::npos) << expected << " in " << *out;
    }
}

TEST(WalkerSpecial, DeepTreesUnderTinyFdLimit) {
    TempDir tmp;
    const std::string deep = tmp / "deep";
    if (!make_tree(deep, 4000, "deep")) WSINDEX_SKIP_OR_FAIL_IN_CI() << "mktree.py not available";
    // A binary-ish chain: each level has "a" (goes on) and "b" (a leaf with a file), so whichever
    // the walk takes first, the other pins its parent's fd unless the budget says otherwise.
    const std::string bushy = tmp / "bushy";
    make_dir(bushy);
    std::string cur = bushy;
    for (int level = 0; level < 300; ++level) {
        make_dir(cur + "/b");
        make_file(cur + "/b/leaf");
        make_dir(cur + "/a");
        cur += "/a";
    }
    const auto expected_deep = find_paths(deep).size();
    const auto expected_bushy = find_paths(bushy).size();
    ASSERT_EQ(expected_deep, 4001u);
    const auto out = run_in_child([&]() -> std::string {
        const rlimit lim{64, 64};
        if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) return "setrlimit failed";
        std::string s;
        for (const auto& root : {deep, bushy}) {
            WalkOptions o;
            o.workers = 2;
            const Walked w = walk(root, o);
            s += w.status ? "ok" : w.status.to_string();
            s += ":" + std::to_string(w.results.size()) + ":" + std::to_string(w.stats.fd_budget) +
                 ":" + std::to_string(w.stats.max_open_fds) + ";";
        }
        return s;
    });
    ASSERT_TRUE(out.has_value());
    const std::string want_prefix_deep = "ok:" + std::to_string(expected_deep) + ":";
    EXPECT_EQ(out->rfind(want_prefix_deep, 0), 0u) << *out;
    EXPECT_NE(out->find(";ok:" + std::to_string(expected_bushy) + ":"), std::string::npos) << *out;
}

}  // namespace
}  // namespace wsindex::test
