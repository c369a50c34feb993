// FsOps: the real system calls behind the walker's injection seam.
#include "core/fs_ops.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "core/resolve.hpp"

namespace wsindex::core {

namespace {

// Only the fields WalkResult needs (statx is used for directories, see stat_at).
constexpr unsigned kStatxMask = STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_UID | STATX_GID |
                                STATX_MTIME | STATX_CTIME | STATX_INO | STATX_SIZE | STATX_BLOCKS;

// Nanoseconds since the epoch, saturated at the ends: 64 bits of nanoseconds hold only
// 1677-09-21 .. 2262-04-11, and file systems hold times outside that (tmpfs, btrfs and XFS
// bigtime any 64-bit second, ext4 up to 2446): `touch -d 2300-01-01` must not overflow.
std::int64_t ns_since_epoch(std::int64_t sec, std::int64_t nsec) {
    std::int64_t ns = 0;
    if (__builtin_mul_overflow(sec, std::int64_t{1'000'000'000}, &ns) ||
        __builtin_add_overflow(ns, nsec, &ns)) {
        return sec < 0 ? INT64_MIN : INT64_MAX;
    }
    return ns;
}

std::int64_t to_ns(const struct statx_timestamp& t) { return ns_since_epoch(t.tv_sec, t.tv_nsec); }

void fill_from_statx(const struct statx& sx, FileStat& out) {
    out.size = sx.stx_size;
    out.blocks = sx.stx_blocks;
    out.dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
    out.ino = sx.stx_ino;
    out.nlink = sx.stx_nlink;
    out.mode = sx.stx_mode;
    out.uid = sx.stx_uid;
    out.gid = sx.stx_gid;
    out.mtime_ns = to_ns(sx.stx_mtime);
    out.ctime_ns = to_ns(sx.stx_ctime);
    out.maybe_mount_root = (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) == 0 ||
                           (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

}  // namespace

int FsOps::open_dir(int dirfd, const char* name) const noexcept {
    const int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

long FsOps::read_dir(int fd, char* buf, std::size_t len) const noexcept {
    const long n = ::syscall(SYS_getdents64, fd, buf, len);
    return n >= 0 ? n : -errno;
}

int FsOps::stat_at(int dirfd, const char* name, FileStat& out, bool probably_dir) const noexcept {
    if (!probably_dir) {
        struct stat st;
        if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) != 0) return -errno;
        out.size = static_cast<std::uint64_t>(st.st_size);
        out.blocks = static_cast<std::uint64_t>(st.st_blocks);
        out.dev = st.st_dev;
        out.ino = st.st_ino;
        out.nlink = st.st_nlink;
        out.mode = st.st_mode;
        out.uid = st.st_uid;
        out.gid = st.st_gid;
        out.mtime_ns = ns_since_epoch(st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
        out.ctime_ns = ns_since_epoch(st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
        out.maybe_mount_root = true;
        return 0;
    }
    struct statx sx;
    if (::statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, kStatxMask, &sx) != 0) {
        return -errno;
    }
    fill_from_statx(sx, out);
    return 0;
}

int FsOps::open_dir_path(int dirfd, const char* path) const noexcept {
    if (dirfd == AT_FDCWD) return open_dir_absolute(path);
    return open_dir_beneath(dirfd, path);
}

int FsOps::stat_fd(int fd, FileStat& out) const noexcept {
    struct statx sx;
    if (::statx(fd, "", AT_EMPTY_PATH, kStatxMask, &sx) != 0) return -errno;
    fill_from_statx(sx, out);
    return 0;
}

int FsOps::fs_magic(int fd, std::uint64_t& magic) const noexcept {
    struct statfs sf;
    if (::fstatfs(fd, &sf) != 0) return -errno;
    magic = static_cast<std::uint64_t>(sf.f_type);
    return 0;
}

int FsOps::close_fd(int fd) const noexcept { return ::close(fd) == 0 ? 0 : -errno; }

const FsOps& real_fs_ops() {
    static const FsOps ops;
    return ops;
}

}  // namespace wsindex::core
