// The one rule for the default socket path, shared by wsindexd and wsctl (docs/daemon.md,
// docs/wsctl.md, and the systemd units in systemd/ and systemd/user/ agree with it).
#pragma once

#include <string>

namespace wsindex::ipc {

// The system daemon's socket (root's default; systemd/wsindexd.socket).
inline constexpr const char* kSystemSocket = "/run/wsindexd/wsindexd.sock";

// The default socket of the calling user: kSystemSocket for root (euid 0); otherwise
// $XDG_RUNTIME_DIR/wsindexd/wsindexd.sock (systemd/user/wsindexd.socket: %t/wsindexd/...), or
// /run/user/<uid>/wsindexd/wsindexd.sock when XDG_RUNTIME_DIR is unset or not absolute.
std::string default_socket_path();

}  // namespace wsindex::ipc
