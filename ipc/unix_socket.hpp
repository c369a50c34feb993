// Unix-socket plumbing without Asio: binding a path safely, checking an inherited fd, SO_PEERCRED.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "core/status.hpp"

namespace wsindex::ipc {

// Who is on the other end of a connection, as the kernel saw it at connect() time.
struct PeerCredentials {
    pid_t pid = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    bool valid = false;  // false if SO_PEERCRED failed (never expected on AF_UNIX)
};

PeerCredentials peer_credentials(int fd);

struct BindOptions {
    mode_t mode = 0666;          // permission bits of the socket file
    std::optional<gid_t> group;  // chown the socket file to this group
    // Connections the kernel queues before accept (it caps this at net.core.somaxconn, 4096
    // by default). 128 overflowed when hundreds of clients connected at once (the load bench):
    // blocked connects then waited out their timeout. systemd's own default for sockets it
    // binds is SOMAXCONN too.
    int backlog = 4096;
};

struct BoundSocket {
    int fd = -1;  // listening, close-on-exec; owned by the caller
    dev_t dev = 0;
    ino_t ino = 0;  // of the socket file, to remove it later only if it is still ours
};

// Binds and listens on `path`. An existing socket file nobody listens on (a stale one from a
// crash) is replaced; a live one, or anything that is not a socket, is an error. The socket is
// bound under a temporary name, given its mode and group, listening, and only then renamed onto
// `path`, so no one can ever connect to it with the wrong permissions.
core::Status bind_unix_socket(const std::string& path, const BindOptions& options,
                              BoundSocket& out);

// For socket activation: `fd` must be an AF_UNIX SOCK_STREAM socket that is listening.
core::Status check_listening_socket(int fd);

// Removes the socket file if it is still the one (dev, ino) we created.
void remove_socket_file(const std::string& path, dev_t dev, ino_t ino);

}  // namespace wsindex::ipc
