// CommandLine: CLI11 parses the flags; resolve_config layers them over the configuration file.
#include "daemon/command_line.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>

namespace wsindex::daemon {

std::variant<CommandLine, int> parse_command_line(int argc, const char* const* argv) {
    CommandLine line;
    CLI::App app{"wsindexd: the file-system indexing daemon (runs in the foreground)", "wsindexd"};
    std::string config, socket, db, level;
    unsigned workers = 0;
    bool version = false;
    auto* o_config = app.add_option("--config", config, "configuration file (docs/daemon.md)");
    auto* o_socket = app.add_option("--socket", socket, "Unix socket path to listen on");
    auto* o_db = app.add_option("--db", db, "index database path");
    auto* o_workers =
        app.add_option("--workers", workers, "walker threads (0: one per CPU, at least 16)")
            ->check(CLI::Range(0u, 1024u));
    auto* o_level = app.add_option("--log-level", level, "trace, debug, info, warn, error, off")
                        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "warning", "error",
                                               "critical", "off"}));
    bool no_watch = false;
    app.add_flag("--no-watch", no_watch,
                 "no live index: roots are current as of their last scan (watch = false)");
    app.add_flag("--version", version, "print the version and exit");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    if (version) {
        std::printf("wsindexd %s\n", WSINDEX_VERSION);
        return 0;
    }
    if (*o_config) line.config_path = config;
    if (*o_socket) line.socket_path = socket;
    if (*o_db) line.db_path = db;
    if (*o_workers) line.workers = workers;
    if (*o_level) line.log_level = level;
    if (no_watch) line.watch = false;
    return line;
}

void apply_overrides(Config& config, const CommandLine& line) {
    if (line.socket_path) config.socket_path = *line.socket_path;
    if (line.db_path) config.db_path = *line.db_path;
    if (line.workers) config.workers = *line.workers;
    if (line.log_level) config.log_level = *line.log_level;
    if (line.watch) config.watch = *line.watch;
}

ConfigResult resolve_config(const CommandLine& line) {
    ConfigResult result = Config{};
    if (line.config_path) result = load_config_file(*line.config_path);
    auto* config = std::get_if<Config>(&result);
    if (config == nullptr) return result;
    apply_overrides(*config, line);
    if (config->socket_path.empty()) config->socket_path = default_socket_path();
    if (config->db_path.empty()) config->db_path = default_db_path();
    return result;
}

}  // namespace wsindex::daemon
