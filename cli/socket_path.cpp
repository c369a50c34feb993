// Socket path resolution: flag, environment, per-user default.
#include "cli/socket_path.hpp"

#include <unistd.h>

#include <cstdlib>

namespace wsindex::cli {

std::string default_socket_path() {
    if (::geteuid() == 0) return kSystemSocket;
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    std::string dir = runtime != nullptr && runtime[0] != '\0'
                          ? std::string(runtime)
                          : "/run/user/" + std::to_string(::geteuid());
    return dir + "/wsindexd/wsindexd.sock";
}

std::string resolve_socket_path(const std::string& flag) {
    if (!flag.empty()) return flag;
    const char* env = std::getenv("WSINDEX_SOCKET");
    if (env != nullptr && env[0] != '\0') return env;
    return default_socket_path();
}

}  // namespace wsindex::cli
