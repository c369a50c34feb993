// Walker faults through the FsOps seam: races (recoverable), EIO (fatal), consumer failure.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "core/dir_reader.hpp"
#include "core/fs_ops.hpp"
#include "core/walker.hpp"
#include "tests/core/support/walk_support.hpp"

namespace wsindex::test {
namespace {

using core::FsOps;
using core::WalkOptions;
using core::WalkResult;

// Fails one operation on entries with a given name; everything else is the real system call.
class FaultFs : public FsOps {
  public:
    enum class Op { Open, Read, Stat };
    FaultFs(Op op, std::string name, int err) : op_(op), name_(std::move(name)), err_(err) {}
    // Runs on the failing thread each time the fault is injected, before the error returns.
    std::function<void()> on_fault;

    int open_dir(int dirfd, const char* name) const noexcept override {
        if (op_ == Op::Open && name_ == name) return fault();
        const int fd = FsOps::open_dir(dirfd, name);
        if (op_ == Op::Read && fd >= 0 && name_ == name) target_fd_.store(fd);
        return fd;
    }
    long read_dir(int fd, char* buf, std::size_t len) const noexcept override {
        if (op_ == Op::Read && fd == target_fd_.load()) return fault();
        return FsOps::read_dir(fd, buf, len);
    }
    int stat_at(int dirfd, const char* name, core::FileStat& out,
                bool probably_dir) const noexcept override {
        if (op_ == Op::Stat && name_ == name) return fault();
        return FsOps::stat_at(dirfd, name, out, probably_dir);
    }
    int close_fd(int fd) const noexcept override {
        int expected = fd;
        target_fd_.compare_exchange_strong(expected, -1);
        return FsOps::close_fd(fd);
    }

  private:
    int fault() const noexcept {
        if (on_fault) on_fault();
        return -err_;
    }
    Op op_;
    std::string name_;
    int err_;
    mutable std::atomic<int> target_fd_{-1};
};

// root/{a,b,c,...}/ each with files; "victim" somewhere in the middle of the tree.
std::string make_fault_tree(const TempDir& tmp, int dirs = 30, int files = 30) {
    const std::string root = tmp / "f";
    make_dir(root);
    for (int i = 0; i < dirs; ++i) {
        const std::string d = root + "/d" + std::to_string(i);
        make_dir(d);
        for (int j = 0; j < files; ++j) make_file(d + "/file" + std::to_string(j));
    }
    make_dir(root + "/d7/victim");
    make_file(root + "/d7/victim/inside");
    make_file(root + "/d7/victim_file");
    return root;
}

Walked walk_with(const std::string& root, const FsOps& fs, std::size_t batch = 64) {
    WalkOptions o;
    o.fs = &fs;
    o.result_batch = batch;
    o.workers = 2;
    return walk(root, o);
}

// Returns every listing as the kernel does, except that the directory named `name` gets,
// after its first batch of records, one more batch repeating one of them (a file removed and
// made again between two getdents64 calls, as offset-ordered directories can report).
class RepeatFs : public FsOps {
  public:
    explicit RepeatFs(std::string name) : name_(std::move(name)) {}
    [[nodiscard]] bool injected() const { return sent_.load(); }
    int open_dir(int dirfd, const char* name) const noexcept override {
        const int fd = FsOps::open_dir(dirfd, name);
        if (fd >= 0 && name_ == name) target_fd_.store(fd);
        return fd;
    }
    long read_dir(int fd, char* buf, std::size_t len) const noexcept override {
        if (fd != target_fd_.load()) return FsOps::read_dir(fd, buf, len);
        if (repeated_.empty()) {
            const long n = FsOps::read_dir(fd, buf, len);
            // Remember the first record that is not "." or "..".
            for (long off = 0; off < n;) {
                const auto* d = reinterpret_cast<const core::LinuxDirent64*>(buf + off);
                if (std::strcmp(d->d_name, ".") != 0 && std::strcmp(d->d_name, "..") != 0) {
                    repeated_.assign(buf + off, d->d_reclen);
                    break;
                }
                off += d->d_reclen;
            }
            return n;
        }
        if (!sent_.exchange(true) && repeated_.size() <= len) {
            std::memcpy(buf, repeated_.data(), repeated_.size());
            return static_cast<long>(repeated_.size());
        }
        return FsOps::read_dir(fd, buf, len);
    }

  private:
    std::string name_;
    mutable std::atomic<int> target_fd_{-1};
    mutable std::string repeated_;  // only the walker thread that lists the target touches it
    mutable std::atomic<bool> sent_{false};
};

TEST(WalkerFaults, ANameListedTwiceIsWalkedOnce) {
    TempDir tmp;
    const std::string root = make_fault_tree(tmp);
    RepeatFs fs("d7");
    const Walked w = walk_with(root, fs);
    ASSERT_TRUE(w.status) << w.status.to_string();
    std::map<std::string, int> seen;
    for (const WalkResult& r : w.results) ++seen[r.path];
    for (const auto& [path, count] : seen) EXPECT_EQ(count, 1) << path;
    EXPECT_EQ(w.results.size(), find_paths(root).size());
    EXPECT_TRUE(fs.injected());  // the repeat did reach the walker
}

TEST(WalkerFaults, DirectoryVanishesBetweenListingAndOpen) {
    TempDir tmp;
    const std::string root = make_fault_tree(tmp);
    FaultFs fs(FaultFs::Op::Open, "victim", ENOENT);
    const Walked w = walk_with(root, fs);
    ASSERT_TRUE(w.status) << w.status.to_string();
    const auto* v = find_result(w.results, root + "/d7/victim");
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->error, ENOENT);
    EXPECT_TRUE(v->has_stat);
    EXPECT_EQ(find_result(w.results, root + "/d7/victim/inside"), nullptr);
    EXPECT_EQ(w.results.size(), find_paths(root).size() - 1);
}

TEST(WalkerFaults, ReplacedDirectoryIsRecorded) {
    TempDir tmp;
    const std::string root = make_fault_tree(tmp);
    for (int err : {ENOTDIR, ELOOP, EACCES, EPERM}) {
        FaultFs fs(FaultFs::Op::Open, "victim", err);
        const Walked w = walk_with(root, fs);
        ASSERT_TRUE(w.status) << std::strerror(err);
        ASSERT_NE(find_result(w.results, root + "/d7/victim"), nullptr);
        EXPECT_EQ(find_result(w.results, root + "/d7/victim")->error, err);
    }
}

TEST(WalkerFaults, EntryVanishesBeforeStat) {
    TempDir tmp;
    const std::string root = make_fault_tree(tmp);
    FaultFs fs(FaultFs::Op::Stat, "victim_file", ENOENT);
    const Walked w = walk_with(root, fs);
    ASSERT_TRUE(w.status);
    const auto* v = find_result(w.results, root + "/d7/victim_file");
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->error, ENOENT);
    EXPECT_FALSE(v->has_stat);
    EXPECT_EQ(v->type, core::EntryType::File);  // from d_type (ext4, tmpfs fill it)
    EXPECT_EQ(w.results.size(), find_paths(root).size());

    // Names-only walks still give a record with an error its full path (the index stores
    // errors by path).
    WalkOptions names_only;
    names_only.fs = &fs;
    names_only.full_paths = false;
    const Walked n = walk(root, names_only);
    ASSERT_TRUE(n.status);
    const auto* nv = find_result(n.results, root + "/d7/victim_file");
    ASSERT_NE(nv, nullptr);
    EXPECT_EQ(nv->error, ENOENT);
    EXPECT_EQ(nv->name(), "victim_file");
    EXPECT_EQ(find_result(n.results, root + "/d7/file0"), nullptr) << "files carry names only";
}

TEST(WalkerFaults, FatalErrorsStopTheWalk) {
    TempDir tmp;
    const std::string root = make_fault_tree(tmp, 60, 40);
    struct Case {
        FaultFs::Op op;
        const char* name;
        int err;
    };
    for (const Case c :
         {Case{FaultFs::Op::Open, "d7", EIO}, Case{FaultFs::Op::Read, "d7", EIO},
          Case{FaultFs::Op::Stat, "file3", EIO}, Case{FaultFs::Op::Open, "victim", ENOMEM},
          Case{FaultFs::Op::Stat, "victim_file", EOVERFLOW}}) {
        // Repeated: the error must win every time, and no worker may hang.
        for (int rep = 0; rep < 10; ++rep) {
            FaultFs fs(c.op, c.name, c.err);
            const Walked w = walk_with(root, fs, 16);
            ASSERT_FALSE(w.status) << c.name;
            EXPECT_EQ(w.status.code().value(), c.err) << w.status.to_string();
            EXPECT_NE(w.status.message().find(c.name), std::string::npos) << w.status.message();
        }
    }
}

// A user's cancel that arrives after a fatal error must not hide it. One worker, so nothing can
// see the cancel and record it before the failing task returns its error.
TEST(WalkerFaults, ACancelAfterAFatalErrorKeepsTheError) {
    TempDir tmp;
    const std::string root = make_fault_tree(tmp, 20, 10);
    for (const bool by_token : {true, false}) {
        FaultFs fs(FaultFs::Op::Stat, "file3", EIO);
        WalkOptions o;
        o.fs = &fs;
        o.workers = 1;
        o.result_batch = 16;
        core::Walker walker(o);
        fs.on_fault = [&] {
            if (by_token) {
                o.cancel.cancel();  // shared with the walker's copy of the options
            } else {
                walker.cancel();
            }
        };
        const auto status = walker.run(root, [](std::span<WalkResult>) {  //
            return core::Status::ok();
        });
        ASSERT_FALSE(status) << (by_token ? "token" : "Walker::cancel");
        EXPECT_EQ(status.code().value(), EIO)
            << (by_token ? "token: " : "Walker::cancel: ") << status.to_string();
    }
}

TEST(WalkerFaults, ConsumerFailureStopsTheWalk) {
    TempDir tmp;
    const std::string root = make_fault_tree(tmp, 60, 40);
    WalkOptions o;
    o.result_batch = 16;
    core::Walker walker(o);
    int calls = 0;
    const auto status = walker.run(root, [&](std::span<WalkResult>) {
        if (++calls == 3) return core::Status::from_errno(ENOSPC, "database full");
        return core::Status::ok();
    });
    EXPECT_EQ(status.code().value(), ENOSPC);
    EXPECT_EQ(calls, 3) << "no batch after the failure";
    // Workers survived and the walker still works.
    std::size_t n = 0;
    EXPECT_TRUE(walker.run(root, [&](std::span<WalkResult> b) {
        n += b.size();
        return core::Status::ok();
    }));
    EXPECT_EQ(n, find_paths(root).size());
}

}  // namespace
}  // namespace wsindex::test
