// bind_unix_socket: stale-socket detection, mode and group before the name appears, SO_PEERCRED.
#include "ipc/unix_socket.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace wsindex::ipc {

namespace {

core::Status errno_status(const std::string& context) {
    return core::Status::from_errno(errno, context);
}

bool make_address(const std::string& path, sockaddr_un& addr) {
    std::memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof addr.sun_path) return false;
    std::memcpy(addr.sun_path, path.data(), path.size());
    return true;
}

// Does something accept connections on `path`? A non-blocking probe, so a live server with a
// full backlog (EAGAIN) counts as live instead of hanging us.
enum class Probe { Live, Stale, Error };
Probe probe(const sockaddr_un& addr, int& err) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        err = errno;
        return Probe::Error;
    }
    const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    err = rc == 0 ? 0 : errno;
    ::close(fd);
    if (rc == 0 || err == EAGAIN || err == EINPROGRESS) return Probe::Live;
    if (err == ECONNREFUSED) return Probe::Stale;
    return Probe::Error;
}

}  // namespace

PeerCredentials peer_credentials(int fd) {
    PeerCredentials out;
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof cred) {
        out.pid = cred.pid;
        out.uid = cred.uid;
        out.gid = cred.gid;
        out.valid = true;
    }
    return out;
}

core::Status bind_unix_socket(const std::string& path, const BindOptions& options,
                              BoundSocket& out) {
    sockaddr_un addr{};
    if (!make_address(path, addr)) {
        return {std::make_error_code(std::errc::filename_too_long),
                "socket path '" + path + "' must be 1 to " +
                    std::to_string(sizeof addr.sun_path - 1) + " bytes"};
    }

    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            return {std::make_error_code(std::errc::file_exists),
                    path + " exists and is not a socket; refusing to replace it"};
        }
        int err = 0;
        switch (probe(addr, err)) {
            case Probe::Live:
                return {std::make_error_code(std::errc::address_in_use),
                        "another server is already listening on " + path};
            case Probe::Error:
                return core::Status::from_errno(err, "cannot check the existing socket " + path);
            case Probe::Stale:
                break;  // replaced by the rename below
        }
    } else if (errno != ENOENT) {
        return errno_status("cannot inspect " + path);
    }

    // Bind under a temporary name next to `path` when it fits, so the final name appears only
    // once mode and group are right; otherwise bind in place (a short window with umask's mode).
    const std::string temp = path + "." + std::to_string(::getpid()) + ".new";
    sockaddr_un temp_addr{};
    const bool use_temp = make_address(temp, temp_addr);
    const std::string& bind_path = use_temp ? temp : path;
    const sockaddr_un& bind_addr = use_temp ? temp_addr : addr;

    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno_status("socket");
    const auto fail = [&](const std::string& what) {
        const int err = errno;
        ::close(fd);
        ::unlink(bind_path.c_str());
        return core::Status::from_errno(err, what);
    };

    if (use_temp) {
        // A leftover temporary from a crashed start of a process with our pid: only a socket.
        struct stat tst {};
        if (::lstat(temp.c_str(), &tst) == 0 && S_ISSOCK(tst.st_mode)) ::unlink(temp.c_str());
    } else if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
        ::unlink(path.c_str());  // the stale socket found above
    }
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&bind_addr), sizeof bind_addr) != 0) {
        const int err = errno;
        ::close(fd);
        return core::Status::from_errno(err, "cannot bind " + bind_path);
    }
    if (::chmod(bind_path.c_str(), options.mode) != 0) return fail("cannot chmod " + bind_path);
    if (options.group && ::chown(bind_path.c_str(), static_cast<uid_t>(-1), *options.group) != 0) {
        return fail("cannot give " + bind_path + " to group " + std::to_string(*options.group));
    }
    if (::listen(fd, options.backlog) != 0) return fail("cannot listen on " + bind_path);
    if (use_temp && ::rename(temp.c_str(), path.c_str()) != 0) {
        return fail("cannot rename " + temp + " to " + path);
    }
    if (::stat(path.c_str(), &st) != 0) return fail("cannot stat " + path);
    out.fd = fd;
    out.dev = st.st_dev;
    out.ino = st.st_ino;
    return {};
}

core::Status check_listening_socket(int fd) {
    int value = 0;
    socklen_t len = sizeof value;
    if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &value, &len) != 0) {
        return errno_status("fd " + std::to_string(fd) + " is not a socket");
    }
    if (value != AF_UNIX) {
        return {std::make_error_code(std::errc::address_family_not_supported),
                "fd " + std::to_string(fd) + " is not a Unix socket"};
    }
    len = sizeof value;
    if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &len) != 0 || value != SOCK_STREAM) {
        return {std::make_error_code(std::errc::wrong_protocol_type),
                "fd " + std::to_string(fd) + " is not a stream socket"};
    }
    len = sizeof value;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &len) != 0 || value == 0) {
        return {std::make_error_code(std::errc::invalid_argument),
                "fd " + std::to_string(fd) + " is not listening"};
    }
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    return {};
}

void remove_socket_file(const std::string& path, dev_t dev, ino_t ino) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == dev &&
        st.st_ino == ino) {
        ::unlink(path.c_str());
    }
}

}  // namespace wsindex::ipc
