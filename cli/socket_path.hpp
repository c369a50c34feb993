// Which socket wsctl talks to: --socket, then $WSINDEX_SOCKET, then the default for this user.
#pragma once

#include <string>

#include "ipc/default_socket.hpp"

namespace wsindex::cli {

using ipc::default_socket_path;  // the rule wsindexd uses too (ipc/default_socket.hpp)
using ipc::kSystemSocket;

// `flag` if non-empty, else $WSINDEX_SOCKET if set and non-empty, else default_socket_path().
std::string resolve_socket_path(const std::string& flag);

}  // namespace wsindex::cli
