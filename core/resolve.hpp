// Resolution by descriptor: how a daemon that runs as root, beside users who can rename anything
// they own at any moment, reaches a directory named by a path string (docs/security.md,
// "Resolution by descriptor").
//
// The rule: a path string is resolved only from a descriptor the daemon holds ("/" or a
// directory it opened and checked), never following a symlink in *any* component and never
// stepping up with "..". A user who swaps a symlink into the path (renameat2 RENAME_EXCHANGE,
// timed on inotify IN_OPEN of her own directory) makes the open fail with ELOOP instead of
// redirecting it to a directory she cannot read. Renaming her own directories around can only
// show her own directories; the identity check (same_object) tells the caller that what it
// opened is not what the listing or the index says is there, and the caller then treats the
// directory as changed (it is listed again from its parent) instead of recording it.
//
// One call on Linux 5.6+: openat2(RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
// RESOLVE_BENEATH), in pieces shorter than PATH_MAX (the kernel refuses a longer path whole).
// Where openat2 is not available (ENOSYS, or refused by a seccomp filter), one component at a
// time with openat(O_NOFOLLOW | O_DIRECTORY), which gives the same guarantee.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace wsindex::core {

struct FileStat;  // core/fs_ops.hpp

// What identifies a file system object while it exists: device, inode and file type (S_IFMT
// bits of st_mode). Two descriptors (or a descriptor and a listing's stat) name the same object
// exactly when all three agree.
struct ObjectId {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint32_t type = 0;  // st_mode & S_IFMT
    friend bool operator==(const ObjectId&, const ObjectId&) = default;
};
ObjectId object_id(const FileStat& st);

// Opens the directory `path` below the directory `base_fd` (`path` relative; a leading '/' is
// ignored, "" and "." open base_fd's directory again). `flags` are added to O_DIRECTORY |
// O_NOFOLLOW | O_CLOEXEC: O_RDONLY (0) to list it, O_PATH to only hold it. Fails with -ELOOP
// or -ENOTDIR when a component is a symlink (the kernel says ENOTDIR for a symlink opened with
// O_NOFOLLOW | O_DIRECTORY), -EXDEV for a ".." component (refused before any lookup), else the
// errno of the component that failed. Returns the fd or -errno.
int open_dir_beneath(int base_fd, std::string_view path, int flags = 0) noexcept;

// The fallback of open_dir_beneath where openat2 is missing, with the same contract: one
// component at a time, openat(O_NOFOLLOW | O_DIRECTORY) relative to the one before. Public so
// that its tests run on kernels that have openat2.
int open_dir_by_components(int base_fd, std::string_view path, int flags = 0) noexcept;

// open_dir_beneath from "/" for an absolute path ("/" itself included). -EINVAL for a relative
// path.
int open_dir_absolute(std::string_view path, int flags = 0) noexcept;

// Splits an absolute path into the directory that holds its last component and that component:
// "/a/b/c" -> ("/a/b", "c"), "/a" -> ("/", "a"). "/" has no parent: returns false (and for a
// relative or empty path). Trailing slashes are ignored ("/a/b/" -> ("/a", "b")).
bool split_parent(std::string_view path, std::string_view* parent, std::string_view* name);

// fstat of an open descriptor (statx with AT_EMPTY_PATH, or fstat): 0 or -errno.
int stat_fd(int fd, FileStat& out) noexcept;

// Whether `fd` is the object `expected` says (dev, ino, type). A failed fstat counts as not.
bool same_object(int fd, const ObjectId& expected) noexcept;

}  // namespace wsindex::core
