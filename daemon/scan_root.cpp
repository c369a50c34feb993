// Scan roots: realpath, or a walk from "/" without symlinks; the result must be a directory.
#include "daemon/scan_root.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/resolve.hpp"
#include "core/unique_fd.hpp"
#include "ipc/bytes_codec.hpp"
#include "ipc/path_text.hpp"

namespace wsindex::daemon {
namespace {

nlohmann::json details_of(std::string_view path) {
    return nlohmann::json{{"path", ipc::encode_bytes(path)}};
}

ipc::Error from_errno(int err, std::string_view path) {
    const std::string shown = ipc::display_bytes(path);
    switch (err) {
        case ENOENT:
            return no_such_scan_root(path);
        case ENOTDIR:
            return ipc::make_error(ipc::ErrorKind::NotADirectory,
                                   "not a directory (a component is a file): " + shown,
                                   details_of(path));
        case ELOOP:
            return ipc::make_error(ipc::ErrorKind::NotADirectory,
                                   "not a directory (a component is a symbolic link, which a "
                                   "scan asked for by a control-group member does not follow; "
                                   "name the directory itself): " +
                                       shown,
                                   details_of(path));
        case EACCES:
        case EPERM:
            return ipc::make_error(ipc::ErrorKind::PermissionDenied,
                                   "the daemon cannot reach " + shown + ": " + std::strerror(err),
                                   details_of(path));
        default:
            return ipc::make_error(ipc::ErrorKind::NoSuchPath,
                                   "cannot resolve " + shown + ": " + std::strerror(err),
                                   details_of(path));
    }
}

ipc::Result<std::string> follow(std::string_view path) {
    const std::string p(path);
    std::unique_ptr<char, decltype(&std::free)> real(::realpath(p.c_str(), nullptr), &std::free);
    if (!real) return from_errno(errno, path);
    struct stat st {};
    if (::lstat(real.get(), &st) != 0) {
        return ipc::make_error(
            ipc::ErrorKind::NoSuchPath,
            "no such path: " + ipc::display_bytes(path) + ": " + std::strerror(errno),
            details_of(path));
    }
    if (!S_ISDIR(st.st_mode)) {
        return ipc::make_error(ipc::ErrorKind::NotADirectory,
                               "not a directory: " + ipc::display_bytes(path), details_of(path));
    }
    return std::string(real.get());
}

// Whether the last component of `normal` is a symlink, looked at from its parent opened
// without symlinks: O_DIRECTORY fails a trailing symlink with ENOTDIR, as for a file, and the
// answer should say which.
bool trailing_symlink(const std::string& normal) {
    std::string_view parent;
    std::string_view name;
    if (!core::split_parent(normal, &parent, &name)) return false;
    const core::UniqueFd pfd(core::open_dir_absolute(parent, O_PATH));
    if (!pfd.valid()) return false;
    struct stat st {};
    return ::fstatat(pfd.get(), std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISLNK(st.st_mode);
}

ipc::Result<std::string> refuse(std::string_view path) {
    // Lexical "..", as the caller's visibility was judged: with no symlink on the way, the
    // directory this names is the one the kernel reaches.
    std::string normal = ipc::lexically_normal(path);
    // Read-only, not O_PATH: with O_PATH a trailing symlink would be opened itself (and then
    // fail O_DIRECTORY as ENOTDIR) instead of failing with ELOOP like the other components.
    // Only to learn what is there: the walk opens it again, also without symlinks.
    const core::UniqueFd fd(core::open_dir_absolute(normal));
    if (!fd.valid()) return from_errno(trailing_symlink(normal) ? ELOOP : -fd.get(), path);
    return normal;
}

}  // namespace

ipc::Error no_such_scan_root(std::string_view path) {
    return ipc::make_error(ipc::ErrorKind::NoSuchPath, "no such path: " + ipc::display_bytes(path),
                           details_of(path));
}

ipc::Result<std::string> resolve_scan_root(std::string_view path, RootSymlinks symlinks) {
    if (path.empty() || path.front() != '/') {
        return ipc::invalid_parameter("paths", "must be absolute: " + ipc::display_bytes(path));
    }
    if (path.find('\0') != std::string_view::npos) {
        return ipc::invalid_parameter("paths", "holds a NUL byte");
    }
    return symlinks == RootSymlinks::Follow ? follow(path) : refuse(path);
}

}  // namespace wsindex::daemon
