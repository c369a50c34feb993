// default_socket_path: root's system socket, else the per-user runtime directory.
#include "ipc/default_socket.hpp"

#include <unistd.h>

#include <cstdlib>

namespace wsindex::ipc {

std::string default_socket_path() {
    if (::geteuid() == 0) return kSystemSocket;
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    const std::string dir = runtime != nullptr && runtime[0] == '/'
                                ? std::string(runtime)
                                : "/run/user/" + std::to_string(::geteuid());
    return dir + "/wsindexd/wsindexd.sock";
}

}  // namespace wsindex::ipc
