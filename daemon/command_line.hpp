// CommandLine: wsindexd's flags, and how they override the configuration file.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "daemon/config.hpp"

namespace wsindex::daemon {

struct CommandLine {
    std::optional<std::string> config_path;
    std::optional<std::string> socket_path;
    std::optional<std::string> db_path;
    std::optional<unsigned> workers;
    std::optional<std::string> log_level;
    std::optional<bool> watch;  // --no-watch
};

// The flags, or the exit code when the process should stop now: 0 after --help or --version
// (printed to stdout), 2 after a usage error (printed to stderr).
std::variant<CommandLine, int> parse_command_line(int argc, const char* const* argv);

// Flags win over the file: sets the fields the command line gave.
void apply_overrides(Config& config, const CommandLine& line);

// The configuration the daemon runs with: the file (if --config), the flags over it, and the
// default paths filled in. A ConfigError names the file and the problem.
ConfigResult resolve_config(const CommandLine& line);

}  // namespace wsindex::daemon
