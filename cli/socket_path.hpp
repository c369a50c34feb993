// Which socket wsctl talks to: --socket, then $WSINDEX_SOCKET, then the default for this user.
#pragma once

#include <string>

namespace wsindex::cli {

// The system daemon's socket (root's default).
inline constexpr const char* kSystemSocket = "/run/wsindexd/wsindexd.sock";

// The default socket for the calling user: kSystemSocket for root (euid 0), otherwise
// $XDG_RUNTIME_DIR/wsindexd/wsindexd.sock, or /run/user/<uid>/wsindexd/wsindexd.sock when
// XDG_RUNTIME_DIR is unset or empty (where systemd --user would put it).
std::string default_socket_path();

// `flag` if non-empty, else $WSINDEX_SOCKET if set and non-empty, else default_socket_path().
std::string resolve_socket_path(const std::string& flag);

}  // namespace wsindex::cli
