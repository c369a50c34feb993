// wsctl: the command line of wsindexd — scan, status, cancel, forget, find, du, errors, scans,
// version.
//
// File map (cli/):
//   main.cpp          this file: the command line (CLI11), socket resolution, dispatch
//   commands.hpp      the options of each command and the run_* entry points
//   cmd_scan.cpp      scan PATH... [--wait] (follows progress, exit 1 if a scan did not finish)
//   cmd_status.cpp    status: running scan, queue, workers, indexed roots
//   cmd_cancel.cpp    cancel [ID]
//   cmd_forget.cpp    forget ROOT
//   cmd_find.cpp      find [PATTERN] with filters; -0, -l, --json
//   cmd_du.cpp        du [PATH] --depth/--top
//   cmd_dupes.cpp     dupes [PATH...] --min-size/--type/--paranoid/-0
//   cmd_errors.cpp    errors [--scan ID]
//   cmd_scans.cpp     scans (history)
//   cmd_version.cpp   version (client and daemon)
//   ui/               ui [PATH]: the interactive browser (ncursesw; see ui/browser.hpp)
//   context.{hpp,cpp} connecting, printing, error reports shared by the commands
//   progress.{hpp,cpp} the live progress line / plain progress lines of scan --wait
//   format.{hpp,cpp}  units (KiB, MiB), counts, durations, times, terminal-safe paths, tables
//   args.{hpp,cpp}    parsing of sizes, times, types; paths made absolute without realpath
//   socket_path.{hpp,cpp} --socket, then $WSINDEX_SOCKET, then the per-user default
//   exit_codes.{hpp,cpp} the documented exit codes and the mapping from protocol errors
// User documentation: docs/wsctl.md.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/exit_codes.hpp"
#include "cli/socket_path.hpp"

namespace {

using namespace wsindex::cli;

constexpr const char* kFooter =
    "Socket: --socket, else $WSINDEX_SOCKET, else /run/wsindexd/wsindexd.sock for root and\n"
    "$XDG_RUNTIME_DIR/wsindexd/wsindexd.sock for other users (wsindexd's default too).\n"
    "Exit codes: 0 ok, 1 failure (scan failed or cancelled, daemon error), 2 usage,\n"
    "3 daemon not running, 4 refused (permission, busy), 5 not found (path, scan).\n"
    "Documentation: docs/wsctl.md";

// Options every command accepts, bound to the same variables as the top-level ones so that
// "wsctl --json status" and "wsctl status --json" mean the same.
struct Common {
    bool json = false;
    std::string socket;
};

// CLI11 2.1 converts "-3" to a huge unsigned value; counts and ids must be plain digits.
const CLI::Validator kWholeNumber(
    [](std::string& value) -> std::string {
        if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) {
            return "'" + value + "' is not a whole number (0, 1, 2, ...)";
        }
        return {};
    },
    "", "whole number");

void add_common(CLI::App& app, Common& common) {
    app.add_flag("--json", common.json, "Machine output: one JSON document on stdout");
    app.add_option("--socket", common.socket, "The daemon's socket (default: see below)")
        ->type_name("PATH");
}

}  // namespace

int main(int argc, char** argv) {
#ifdef WSINDEX_FLEET_HELPER_FROM_BIN
    // wsctl (not wsctl-fleet): `wsctl fleet ...` goes to wsctl-fleet before anything else is
    // set up, since every millisecond of a fleet search's start is felt. If that fails, the
    // command line is parsed as usual and run_fleet reports why.
    if (argc > 1 && std::string_view(argv[1]) == "fleet") {
        std::string tried;
        exec_fleet_helper(std::vector<std::string>(argv, argv + argc), &tried);
    }
#endif
    // "--size -10M": CLI11 would take "-10M" for an option; glue such values to their option.
    std::vector<std::string> args(argv, argv + argc);
    args = join_option_values(args, {"--size"});
    std::vector<const char*> cargs;
    cargs.reserve(args.size());
    for (const auto& a : args) cargs.push_back(a.c_str());

    Common common;
    CLI::App app{"wsctl: control and query wsindexd, the file-system indexing daemon", "wsctl"};
    app.footer(kFooter);
    app.require_subcommand(1);
    app.set_version_flag("--version", client_version());
    add_common(app, common);

    ScanOptions scan;
    auto* scan_cmd = app.add_subcommand(
        "scan", "Index PATHs now (paths are made absolute against the current directory)");
    scan_cmd->add_option("paths", scan.paths, "Directories to scan")->required()->type_name("PATH");
    scan_cmd->add_flag("--wait", scan.wait,
                       "Follow progress until every scan ends; exit 1 if one failed or was "
                       "cancelled");
    add_common(*scan_cmd, common);

    auto* status_cmd = app.add_subcommand("status", "The running scan live, the queue, the roots");
    add_common(*status_cmd, common);

    CancelOptions cancel;
    auto* cancel_cmd = app.add_subcommand("cancel", "Cancel the running scan (or scan ID)");
    cancel_cmd->add_option("id", cancel.scan_id, "A scan id (see wsctl scans)")
        ->type_name("ID")
        ->check(kWholeNumber);
    add_common(*cancel_cmd, common);

    ForgetOptions forget;
    auto* forget_cmd = app.add_subcommand(
        "forget", "Take an indexed root out of the index (one that was deleted, say)");
    forget_cmd->add_option("root", forget.root, "An indexed root, as wsctl status lists it")
        ->required()
        ->type_name("ROOT");
    add_common(*forget_cmd, common);

    FindOptions find;
    auto* find_cmd = app.add_subcommand(
        "find", "Entries whose name (--regex: path) matches PATTERN, from the index");
    find_cmd
        ->add_option("pattern", find.pattern,
                     "Substring of the name (default), or a glob or regex (--glob, --regex); "
                     "omit for all entries")
        ->type_name("PATTERN");
    auto* glob = find_cmd->add_flag(
        "--glob", find.glob,
        "PATTERN is a glob (*, ?, [..]) over the name; over the whole path if it holds a '/'");
    auto* regex = find_cmd->add_flag(
        "--regex", find.regex,
        "PATTERN is a POSIX extended regex over the whole path, unanchored (like locate): "
        "'/[^/]*\\.log$' for a name");
    glob->excludes(regex);
    find_cmd->add_flag("-i,--ignore-case", find.ignore_case, "Match case-insensitively");
    find_cmd
        ->add_option("-t,--type", find.types,
                     "Entry types: f file, d dir, l symlink, p fifo, s socket, c/b devices "
                     "(e.g. f or f,d)")
        ->type_name("TYPES");
    find_cmd
        ->add_option("--size", find.sizes,
                     "+N larger than, -N smaller than, N exactly N bytes; k/M/G/T suffixes "
                     "(binary); repeatable")
        ->type_name("[+|-]N")
        ->allow_extra_args(false);
    find_cmd
        ->add_option("--newer", find.newer,
                     "Modified after TIME: 2024-05-01[T12:30[:45]][Z|+HH:MM], @EPOCH, or an "
                     "age: 90s, 30m, 12h, 2d, 1w")
        ->type_name("TIME");
    find_cmd->add_option("--under", find.under, "Only below this directory")->type_name("PATH");
    find_cmd->add_option("--limit", find.limit, "At most N results (0: all)")
        ->type_name("N")
        ->check(kWholeNumber);
    auto* null_flag = find_cmd->add_flag("-0,--null", find.null_separated,
                                         "NUL-separated raw paths (byte-exact, for xargs -0)");
    auto* long_flag = find_cmd->add_flag("-l,--long", find.long_format,
                                         "Type, size and modification time before each path");
    null_flag->excludes(long_flag);
    add_common(*find_cmd, common);

    DuOptions du;
    auto* du_cmd = app.add_subcommand("du", "Sizes from the index (apparent, on disk, counts)");
    du_cmd
        ->add_option("path", du.path,
                     "A directory, or a file for its own size (default: every indexed root)")
        ->type_name("PATH");
    du_cmd->add_option("--depth", du.depth, "Also list directories down to N levels below PATH")
        ->type_name("N")
        ->check(kWholeNumber);
    du_cmd
        ->add_option("--top", du.top,
                     "PATH, then only the N largest directories below it (within --depth)")
        ->type_name("N")
        ->check(kWholeNumber);
    du_cmd->add_flag("-b,--bytes", du.bytes, "Exact byte counts instead of KiB/MiB/...");
    add_common(*du_cmd, common);

    ErrorsOptions errors;
    auto* errors_cmd = app.add_subcommand("errors", "Entries a scan could not read");
    errors_cmd
        ->add_option("--scan", errors.scan_id,
                     "Only this scan's errors (default: those of the current index)")
        ->type_name("ID")
        ->check(kWholeNumber);
    errors_cmd->add_option("--limit", errors.limit, "At most N errors (0: all)")
        ->type_name("N")
        ->check(kWholeNumber);
    add_common(*errors_cmd, common);

    ScansOptions scans;
    auto* scans_cmd = app.add_subcommand("scans", "Scan history, newest first");
    scans_cmd->add_option("--limit", scans.limit, "At most N scans (0: all)")
        ->type_name("N")
        ->check(kWholeNumber);
    add_common(*scans_cmd, common);

    UiOptions ui;
    auto* ui_cmd = app.add_subcommand(
        "ui", "Browse sizes and search the index interactively (like ncdu; needs a terminal)");
    ui_cmd
        ->add_option("path", ui.path,
                     "The directory to open (default: the current one if indexed, else your "
                     "largest root)")
        ->type_name("PATH");
    ui_cmd->add_flag("-b,--bytes", ui.bytes, "Exact byte counts instead of KiB/MiB/...");
    add_common(*ui_cmd, common);

    auto* version_cmd = app.add_subcommand("version", "Versions of wsctl and of the daemon");
    add_common(*version_cmd, common);

    DupesOptions dupes;
    auto* dupes_cmd =
        app.add_subcommand("dupes", "Files with identical content (hashed by the daemon)");
    dupes_cmd->add_option("path", dupes.paths, "Only below these directories (default: all)")
        ->type_name("PATH");
    dupes_cmd
        ->add_option("--min-size", dupes.min_size,
                     "Only files of at least N bytes (1k, 4M ...; default 1: no empty files)")
        ->type_name("N");
    dupes_cmd->add_flag("--paranoid", dupes.paranoid,
                        "Compare the bytes of each group after hashing");
    dupes_cmd->add_flag("-0,--null", dupes.null_separated,
                        "NUL-terminated raw paths, one more NUL after each group");
    dupes_cmd
        ->add_option("-t,--type", dupes.type,
                     "f: regular files (the only type that takes part; accepted for scripts)")
        ->type_name("f")
        ->check(CLI::IsMember({"f"}));
    add_common(*dupes_cmd, common);

    FleetOptions fleet;
    auto* fleet_cmd = app.add_subcommand(
        "fleet", "The fleet index on PostgreSQL: every host's index in one database");
    fleet_cmd->require_subcommand(1);
    std::vector<CLI::App*> fleet_subs;
    fleet_subs.push_back(fleet_cmd->add_subcommand("init", "Create the fleet schema"));
    fleet_subs.push_back(
        fleet_cmd->add_subcommand("hosts", "Each host, its roots, its last publish"));
    auto* fleet_find = fleet_cmd->add_subcommand(
        "find", "Entries of every host (or --host H) matching PATTERN, with find's filters");
    fleet_find
        ->add_option("pattern", fleet.pattern,
                     "Substring of the name (default), or a glob or regex (--glob, --regex); "
                     "omit for all")
        ->type_name("PATTERN");
    auto* fleet_glob = fleet_find->add_flag(
        "--glob", fleet.glob,
        "PATTERN is a glob (*, ?, [..]) over the name; over the whole path if it holds a '/'");
    auto* fleet_regex =
        fleet_find->add_flag("--regex", fleet.regex,
                             "PATTERN is a POSIX extended regex over the whole path, unanchored");
    fleet_glob->excludes(fleet_regex);
    fleet_find->add_flag("-i,--ignore-case", fleet.ignore_case, "Match case-insensitively");
    fleet_find->add_option("-t,--type", fleet.types, "Entry types, as find's (e.g. f or f,d)")
        ->type_name("TYPES");
    fleet_find->add_option("--size", fleet.sizes, "+N larger, -N smaller, N exactly; repeatable")
        ->type_name("[+|-]N")
        ->allow_extra_args(false);
    fleet_find->add_option("--newer", fleet.newer, "Modified after TIME (as find's)")
        ->type_name("TIME");
    fleet_find->add_option("--under", fleet.under, "Only below this directory")->type_name("PATH");
    auto* fleet_null =
        fleet_find->add_flag("-0,--null", fleet.null_separated,
                             "NUL-separated raw paths (each prefixed 'host:' without --host)");
    auto* fleet_long = fleet_find->add_flag("-l,--long", fleet.long_format,
                                            "Type, size and modification time before each path");
    fleet_null->excludes(fleet_long);
    fleet_find->add_option("--limit", fleet.limit, "At most N results (0: all)")
        ->type_name("N")
        ->check(kWholeNumber);
    fleet_subs.push_back(fleet_find);
    auto* fleet_du = fleet_cmd->add_subcommand("du", "Directory totals of every host's roots");
    fleet_du->add_option("--depth", fleet.depth, "Also directories down to N levels below roots")
        ->type_name("N")
        ->check(kWholeNumber);
    fleet_du->add_flag("-b,--bytes", fleet.bytes, "Exact byte counts instead of KiB/MiB/...");
    fleet_subs.push_back(fleet_du);
    for (auto* sub : fleet_subs) {
        sub->add_option("--url", fleet.url,
                        "libpq URI of the fleet database (or $WSINDEX_FLEET_URL)")
            ->type_name("URL");
        sub->add_option("--host", fleet.host, "Only this host")->type_name("HOST");
        add_common(*sub, common);
        sub->callback([&fleet, sub] { fleet.action = sub->get_name(); });
    }
    auto* fleet_release = fleet_cmd->add_subcommand(
        "release",
        "Remove a host's copy and its claim on the name (once its daemon no longer publishes it)");
    fleet_release->add_option("name", fleet.host, "The host name")->required()->type_name("HOST");
    fleet_release
        ->add_option("--url", fleet.url, "libpq URI of the fleet database (or $WSINDEX_FLEET_URL)")
        ->type_name("URL");
    add_common(*fleet_release, common);
    fleet_release->callback([&fleet] { fleet.action = "release"; });
    add_common(*fleet_cmd, common);

    for (auto* sub : app.get_subcommands({})) sub->footer(kFooter);

    try {
        app.parse(static_cast<int>(cargs.size()), cargs.data());
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? kExitOk : kExitUsage;
    }

    Context ctx;
    ctx.json = common.json;
    ctx.socket = resolve_socket_path(common.socket);
    ctx.stdout_tty = ::isatty(STDOUT_FILENO) == 1;
    ctx.stderr_tty = ::isatty(STDERR_FILENO) == 1;
    // Whole blocks to pipes and files: find can print millions of lines.
    static char out_buffer[1 << 16];
    if (!ctx.stdout_tty) std::setvbuf(stdout, out_buffer, _IOFBF, sizeof out_buffer);

    if (scan_cmd->parsed()) return run_scan(ctx, scan);
    if (status_cmd->parsed()) return run_status(ctx);
    if (cancel_cmd->parsed()) return run_cancel(ctx, cancel);
    if (forget_cmd->parsed()) return run_forget(ctx, forget);
    if (find_cmd->parsed()) return run_find(ctx, find);
    if (du_cmd->parsed()) return run_du(ctx, du);
    if (errors_cmd->parsed()) return run_errors(ctx, errors);
    if (scans_cmd->parsed()) return run_scans(ctx, scans);
    if (version_cmd->parsed()) return run_version(ctx);
    if (ui_cmd->parsed()) return run_ui(ctx, ui);
    if (dupes_cmd->parsed()) return run_dupes(ctx, dupes);
    if (fleet_cmd->parsed()) return run_fleet(ctx, fleet);
    return usage_error(ctx, "no command given (see wsctl --help)");
}
