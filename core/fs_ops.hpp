// FsOps: the system calls the walker makes, behind virtual functions so tests can inject faults.
//
// Every call returns a negative errno on failure instead of setting errno, so a fault injector
// can fail a call without touching thread-local state, and callers never race on errno. The
// default implementation is the real system call; a virtual call costs ~1 ns next to a ~1 µs
// syscall. Implementations must be safe to call from many threads at once.
#pragma once

#include <cstddef>
#include <cstdint>

namespace wsindex::core {

// The lstat(2)-style fields the walker records (a subset of struct statx).
struct FileStat {
    std::uint64_t size = 0;
    std::uint64_t blocks = 0;  // 512-byte units
    std::uint64_t dev = 0;     // makedev(major, minor), as st_dev
    std::uint64_t ino = 0;
    std::uint64_t nlink = 0;
    std::uint32_t mode = 0;
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;
    // False only when the kernel said this is not the root of a mount (statx's
    // STATX_ATTR_MOUNT_ROOT, Linux 5.8+; fstatat cannot say, so it leaves this true). Without a
    // mount, a directory cannot be its own ancestor, so the walker's loop check (a walk up the
    // ancestors) is needed only where this is true.
    bool maybe_mount_root = true;
};

class FsOps {
  public:
    virtual ~FsOps() = default;

    // openat(dirfd, name, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC): a directory, never through
    // a symlink in the last component. dirfd may be AT_FDCWD. Returns the fd or -errno.
    virtual int open_dir(int dirfd, const char* name) const noexcept;
    // getdents64(fd, buf, len): bytes of linux_dirent64 records, 0 at the end, or -errno.
    virtual long read_dir(int fd, char* buf, std::size_t len) const noexcept;
    // lstat relative to dirfd, no automount (dirfd may be AT_FDCWD). Returns 0 or -errno.
    // `probably_dir` (the listing's d_type said directory or unknown) asks for statx, which can
    // tell a mount root (FileStat::maybe_mount_root); other entries use fstatat, which costs less
    // CPU than statx (the kernel's cp_statx copies more).
    virtual int stat_at(int dirfd, const char* name, FileStat& out,
                        bool probably_dir) const noexcept;
    // Opens the directory `path` (several components) below `dirfd`, following no symlink in any
    // component (core/resolve.hpp, open_dir_beneath; an absolute path with AT_FDCWD is resolved
    // from "/"). Returns the fd or -errno.
    virtual int open_dir_path(int dirfd, const char* path) const noexcept;
    // The stat of an open descriptor (statx AT_EMPTY_PATH): the identity check after an open
    // (core/resolve.hpp, same_object). Returns 0 or -errno.
    virtual int stat_fd(int fd, FileStat& out) const noexcept;
    // fstatfs(fd).f_type. Returns 0 or -errno.
    virtual int fs_magic(int fd, std::uint64_t& magic) const noexcept;
    // close(fd). Returns 0 or -errno.
    virtual int close_fd(int fd) const noexcept;
};

// The real system calls; a process-wide immutable instance.
const FsOps& real_fs_ops();

}  // namespace wsindex::core
