// Socket path resolution: flag, environment, the shared default.
#include "cli/socket_path.hpp"

#include <cstdlib>

namespace wsindex::cli {

std::string resolve_socket_path(const std::string& flag) {
    if (!flag.empty()) return flag;
    const char* env = std::getenv("WSINDEX_SOCKET");
    if (env != nullptr && env[0] != '\0') return env;
    return default_socket_path();
}

}  // namespace wsindex::cli
