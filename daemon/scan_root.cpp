// Scan roots: realpath, then lstat of the result must be a directory.
#include "daemon/scan_root.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "ipc/bytes_codec.hpp"

namespace wsindex::daemon {

ipc::Result<std::string> resolve_scan_root(std::string_view path) {
    const std::string shown = ipc::display_bytes(path);
    auto details = [&] { return nlohmann::json{{"path", ipc::encode_bytes(path)}}; };
    if (path.empty() || path.front() != '/') {
        return ipc::invalid_parameter("paths", "must be absolute: " + shown);
    }
    if (path.find('\0') != std::string_view::npos) {
        return ipc::invalid_parameter("paths", "holds a NUL byte");
    }
    const std::string p(path);
    std::unique_ptr<char, decltype(&std::free)> real(::realpath(p.c_str(), nullptr), &std::free);
    if (!real) {
        const int err = errno;
        switch (err) {
            case ENOENT:
                return ipc::make_error(ipc::ErrorKind::NoSuchPath, "no such path: " + shown,
                                       details());
            case ENOTDIR:
                return ipc::make_error(ipc::ErrorKind::NotADirectory,
                                       "not a directory (a component is a file): " + shown,
                                       details());
            case EACCES:
            case EPERM:
                return ipc::make_error(
                    ipc::ErrorKind::PermissionDenied,
                    "the daemon cannot reach " + shown + ": " + std::strerror(err), details());
            default:
                return ipc::make_error(ipc::ErrorKind::NoSuchPath,
                                       "cannot resolve " + shown + ": " + std::strerror(err),
                                       details());
        }
    }
    struct stat st {};
    if (::lstat(real.get(), &st) != 0) {
        return ipc::make_error(ipc::ErrorKind::NoSuchPath,
                               "no such path: " + shown + ": " + std::strerror(errno), details());
    }
    if (!S_ISDIR(st.st_mode)) {
        return ipc::make_error(ipc::ErrorKind::NotADirectory, "not a directory: " + shown,
                               details());
    }
    return std::string(real.get());
}

}  // namespace wsindex::daemon
