// Config: wsindexd's settings — what the configuration file holds, its parser, and its defaults.
//
// The file is TOML-like (CLI11's config reader does the lexing; docs/daemon.md shows a full
// example). parse_config takes text and returns a Config or one clear error, never throws, and
// touches no file system: a fuzz target calls it directly.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/prune.hpp"
#include "ipc/default_socket.hpp"

namespace wsindex::daemon {

// One configured root: indexed when never indexed before, then every `interval`.
struct RootConfig {
    std::string path;  // absolute
    // nullopt: the file's rescan_interval. zero: never rescanned on a timer.
    std::optional<std::chrono::seconds> interval;
    std::optional<bool> one_file_system;  // nullopt: the file's one_file_system
    std::optional<bool> watch;            // nullopt: the file's watch
};

// How the live index follows changes (docs/live-index.md).
enum class WatchBackend { Auto, Fanotify, Inotify };

// File-system types pruned when the configuration file names none (`[prune] fs` or `PRUNEFS`
// replace the whole list): the kernel's pseudo file systems, whose contents are not files a user
// looks for (/proc alone is tens of thousands of entries and EACCES errors). The packaged
// /etc/wsindexd.conf lists these and more (tmpfs, network file systems).
std::vector<std::string> default_pruned_fs_types();

// Publishing to the fleet index on PostgreSQL ([fleet]; docs/fleet.md). Off without a url.
struct FleetConfig {
    std::string url;            // a libpq URI; no password in it (password_file, PGPASSWORD)
    std::string host;           // empty: gethostname()
    std::string password_file;  // empty: libpq's own (PGPASSWORD, ~/.pgpass)
};

struct Config {
    std::string socket_path;  // empty: default_socket_path()
    std::string db_path;      // empty: default_db_path()
    mode_t socket_mode = 0660;
    std::string socket_group;  // empty: the daemon's own group
    unsigned workers = 0;      // walker threads; 0: core::default_walk_workers()
    std::string log_level = "info";

    std::vector<RootConfig> roots;
    std::chrono::seconds rescan_interval{std::chrono::hours(24)};  // roots without their own
    core::PruneRules prune{{}, {}, default_pruned_fs_types()};
    bool one_file_system = false;  // default for roots

    // Scans waiting behind the running one; beyond it wsindex.Scan answers Busy.
    std::size_t max_queued_scans = 64;
    // Threads (each with its own read connection) that run queries off the io thread.
    unsigned query_threads = 2;
    // Query jobs waiting for a query thread; beyond it callers get Busy.
    std::size_t max_pending_queries = 256;
    // Query jobs of one uid running at once (root and the daemon's user included); 0: one less
    // than query_threads, at least one. One user's flood then leaves a thread to the others,
    // whose jobs are taken first (daemon/query_pool.hpp); one uid may also hold at most half of
    // max_pending_queries queued.
    unsigned max_queries_per_uid = 0;
    // Open connections, in all and per uid (root included); beyond: Busy (ipc::ServerOptions).
    std::size_t max_connections = 256;
    std::size_t max_connections_per_uid = 64;
    // Of max_connections, slots kept for root, the daemon's user and the control group (at most
    // half of max_connections take effect; docs/daemon.md, "Connection limits").
    std::size_t reserved_connections = 8;
    // Cap of a find's result, whatever limit the caller asks for; 0: none. Streamed answers
    // are read and sent a batch at a time, so the daemon's memory does not grow with them.
    std::size_t max_find_results = 0;
    // Without streaming ("more") one reply must fit the 1 MiB message cap: ~100 B per entry.
    std::size_t max_unstreamed_find_results = 5000;
    // How often wsindex.Scan with wait sends a progress reply.
    std::chrono::milliseconds progress_interval{500};
    // The live index: follow changes of every indexed root (fanotify, else inotify).
    bool watch = true;
    WatchBackend watch_backend = WatchBackend::Auto;
    // A changed directory is re-listed this long after its last change, and no later than
    // watch_max_delay after its first.
    std::chrono::milliseconds watch_settle{200};
    std::chrono::milliseconds watch_max_delay{1000};
    // Keep the in-memory name index (fast substring find; ~30 B per indexed name).
    bool name_index = true;
    // Workers of the parallel name search (a RangeExecutor shared by the query threads); 0: one
    // per core. search_reserve_core keeps one core free for the daemon's other work.
    unsigned search_workers = 0;
    bool search_reserve_core = false;
    // Bases of the name index with at least this many names get trigram posting lists (a file
    // <db>.names.tri, built in the background): a selective fragment then costs microseconds
    // instead of a memmem pass over every name (~45 ms at 10M). Below a few million names the
    // pass is fast enough and the lists' ~20 bytes per name are not worth it (measured,
    // docs/performance.md).
    std::uint64_t trigram_min_names = 3'000'000;
    std::optional<FleetConfig> fleet;  // absent: no [fleet] section, nothing published
};

struct ConfigError {
    std::string message;  // "config.toml: unknown key 'root.intervl'"
};

using ConfigResult = std::variant<Config, ConfigError>;

// Parses the configuration text. `origin` names it in error messages (a file name).
ConfigResult parse_config(std::string_view text, std::string_view origin = "config");

// Reads and parses a file; the error says which file and why (missing, unreadable, bad).
ConfigResult load_config_file(const std::string& path);

// "90s", "30m", "6h", "1d", "2w", a plain number of seconds, or "0"/"off"/"never" (zero).
std::optional<std::chrono::seconds> parse_duration(std::string_view text);

// Where the socket and the database live when neither the file nor a flag says:
// the socket: ipc::default_socket_path() (one rule with wsctl);
// the database: root: /var/lib/wsindexd/index.db; others: $XDG_STATE_HOME (~/.local/state)/
// wsindexd/index.db.
using ipc::default_socket_path;
std::string default_db_path();

// The interval in force for `root` under `config`.
std::chrono::seconds effective_interval(const Config& config, const RootConfig& root);
bool effective_watch(const Config& config, const RootConfig& root);
bool effective_one_file_system(const Config& config, const RootConfig& root);

}  // namespace wsindex::daemon
