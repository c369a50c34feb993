// The wsctl commands: the options each one takes (filled by main's parser) and its entry point.
// Every run_* function talks to the daemon once, prints, and returns an exit code (exit_codes.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/context.hpp"

namespace wsindex::cli {

struct ScanOptions {
    std::vector<std::string> paths;  // as given; made absolute by run_scan
    bool wait = false;
};
int run_scan(const Context& ctx, const ScanOptions& options);

int run_status(const Context& ctx);

struct CancelOptions {
    std::optional<std::uint64_t> scan_id;  // absent: the running scan
};
int run_cancel(const Context& ctx, const CancelOptions& options);

struct ForgetOptions {
    std::string root;  // as given; made absolute (lexically) by run_forget
};
int run_forget(const Context& ctx, const ForgetOptions& options);

struct FindOptions {
    std::optional<std::string> pattern;
    bool glob = false;
    bool regex = false;
    bool ignore_case = false;
    std::string types;               // as given ("f,d")
    std::vector<std::string> sizes;  // each "+N", "-N" or "N"
    std::string newer;               // as given; empty: no filter
    std::string under;               // as given; empty: everywhere
    std::uint64_t limit = 0;
    bool null_separated = false;  // -0
    bool long_format = false;     // -l
};
int run_find(const Context& ctx, const FindOptions& options);

struct DuOptions {
    std::string path;  // as given; empty: every indexed root
    std::uint32_t depth = 0;
    std::uint64_t top = 0;
    bool bytes = false;  // -b: exact byte counts instead of units
};
int run_du(const Context& ctx, const DuOptions& options);

struct ErrorsOptions {
    std::optional<std::uint64_t> scan_id;  // absent: the latest scan
    std::uint64_t limit = 0;
};
int run_errors(const Context& ctx, const ErrorsOptions& options);

struct ScansOptions {
    std::uint64_t limit = 0;
};
int run_scans(const Context& ctx, const ScansOptions& options);

int run_version(const Context& ctx);

struct UiOptions {
    std::string path;    // as given; empty: the cwd if indexed, else the largest visible root
    bool bytes = false;  // -b: exact byte counts instead of units
};
// The interactive browser (cli/ui/); needs a terminal. Not in wsindex::cli but in
// wsindex::cli_ui, which only wsctl links (it brings ncursesw).
int run_ui(const Context& ctx, const UiOptions& options);

struct DupesOptions {
    std::vector<std::string> paths;  // as given; made absolute by run_dupes; empty: everything
    std::string min_size = "1";      // a byte count (1k, 4M ...); 0 lets empty files in
    bool null_separated = false;     // -0: each path NUL-terminated, one more NUL per group
    bool paranoid = false;           // byte comparison after hashing
    std::string type = "f";          // --type: only "f" (regular files) is accepted
};
int run_dupes(const Context& ctx, const DupesOptions& options);

// wsctl fleet ...: the fleet index on PostgreSQL (cmd_fleet.cpp, docs/fleet.md).
struct FleetOptions {
    std::string action;  // init, hosts, find, du, release
    std::string url;     // empty: $WSINDEX_FLEET_URL
    std::string host;    // empty: every host (records then start with "host:"); release: the name
    std::string pattern;
    bool glob = false;  // find's filters, as in FindOptions
    bool regex = false;
    bool ignore_case = false;
    std::string types;
    std::vector<std::string> sizes;
    std::string newer;
    std::string under;
    std::uint64_t limit = 0;
    bool null_separated = false;
    bool long_format = false;
    std::uint32_t depth = 0;
    bool bytes = false;
};
int run_fleet(const Context& ctx, const FleetOptions& options);
// wsctl only (cli/fleet/exec_fleet.cpp): replaces this process with wsctl-fleet given `args`
// (args[0] is replaced); returns only if no candidate could be run, each listed in `tried`.
void exec_fleet_helper(std::vector<std::string> args, std::string* tried);

// The client's own version (the project version at build time).
const char* client_version();

}  // namespace wsindex::cli
