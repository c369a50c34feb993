// Tests of the configuration file parser, the flags and how flags override the file.
#include "daemon/config.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <variant>

#include "daemon/command_line.hpp"

namespace wsindex::daemon {
namespace {

Config parse_ok(std::string_view text) {
    ConfigResult r = parse_config(text, "test.toml");
    if (auto* e = std::get_if<ConfigError>(&r)) {
        ADD_FAILURE() << "unexpected error: " << e->message;
        return {};
    }
    return std::get<Config>(r);
}

std::string parse_error(std::string_view text) {
    ConfigResult r = parse_config(text, "test.toml");
    if (auto* e = std::get_if<ConfigError>(&r)) return e->message;
    ADD_FAILURE() << "expected an error for: " << text;
    return {};
}

TEST(Config, EmptyTextGivesDefaults) {
    const Config c = parse_ok("");
    EXPECT_TRUE(c.roots.empty());
    EXPECT_TRUE(c.prune.paths.empty());
    EXPECT_TRUE(c.prune.names.empty());
    EXPECT_EQ(c.prune.fs_types, default_pruned_fs_types());
    EXPECT_EQ(c.workers, 0u);
    EXPECT_EQ(c.socket_mode, 0660u);
    EXPECT_EQ(c.rescan_interval, std::chrono::hours(24));
    EXPECT_EQ(c.log_level, "info");
}

TEST(Config, FullFile) {
    const Config c = parse_ok(R"(
# wsindexd.toml
socket = "/run/wsindexd/wsindexd.sock"
db = "/var/lib/wsindexd/index.db"
socket_mode = "0660"
socket_group = "wsindex"
workers = 4
log_level = "debug"
rescan_interval = "12h"
one_file_system = true
max_find_results = 500
max_connections = 300
max_connections_per_uid = 128
reserved_connections = 4

[prune]
paths = ["/tmp", "/var/spool/*"]
names = [".git", ".cache",
         "node_modules"]
fs = "proc sysfs tmpfs"

[[root]]
path = "/home/"      # trailing slash dropped
interval = "6h"

[[root]]
path = "/srv/my files"
one_file_system = false

[[root]]
path = "/opt"
interval = "off"
)");
    EXPECT_EQ(c.socket_path, "/run/wsindexd/wsindexd.sock");
    EXPECT_EQ(c.db_path, "/var/lib/wsindexd/index.db");
    EXPECT_EQ(c.socket_mode, 0660u);
    EXPECT_EQ(c.socket_group, "wsindex");
    EXPECT_EQ(c.workers, 4u);
    EXPECT_EQ(c.log_level, "debug");
    EXPECT_EQ(c.rescan_interval, std::chrono::hours(12));
    EXPECT_EQ(c.max_find_results, 500u);
    EXPECT_EQ(c.max_connections, 300u);
    EXPECT_EQ(c.max_connections_per_uid, 128u);
    EXPECT_EQ(c.reserved_connections, 4u);
    EXPECT_EQ(c.prune.paths, (std::vector<std::string>{"/tmp", "/var/spool/*"}));
    EXPECT_EQ(c.prune.names, (std::vector<std::string>{".git", ".cache", "node_modules"}));
    EXPECT_EQ(c.prune.fs_types, (std::vector<std::string>{"proc", "sysfs", "tmpfs"}));
    ASSERT_EQ(c.roots.size(), 3u);
    EXPECT_EQ(c.roots[0].path, "/home");
    EXPECT_EQ(effective_interval(c, c.roots[0]), std::chrono::hours(6));
    EXPECT_TRUE(effective_one_file_system(c, c.roots[0]));
    EXPECT_EQ(c.roots[1].path, "/srv/my files");
    EXPECT_EQ(effective_interval(c, c.roots[1]), std::chrono::hours(12));
    EXPECT_FALSE(effective_one_file_system(c, c.roots[1]));
    EXPECT_EQ(effective_interval(c, c.roots[2]), std::chrono::seconds(0));
}

bool contains(const std::vector<std::string>& list, std::string_view item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

// The per-uid bound of the query pool: 0 (the pool's default, query_threads - 1) unless set.
TEST(Config, MaxQueriesPerUid) {
    EXPECT_EQ(parse_ok("").max_queries_per_uid, 0u);
    EXPECT_EQ(parse_ok("max_queries_per_uid = 3\n").max_queries_per_uid, 3u);
    EXPECT_FALSE(parse_error("max_queries_per_uid = 65\n").empty());
}

TEST(Config, WithoutAFileThePseudoFileSystemsArePruned) {
    ConfigResult r = resolve_config(CommandLine{});
    ASSERT_TRUE(std::holds_alternative<Config>(r));
    const std::vector<std::string>& fs = std::get<Config>(r).prune.fs_types;
    for (std::string_view type : {"proc", "sysfs", "cgroup", "cgroup2", "devpts", "debugfs",
                                  "tracefs", "securityfs", "bpf", "mqueue"}) {
        EXPECT_TRUE(contains(fs, type)) << type;
    }
    // Real file systems stay indexed by default.
    for (std::string_view type : {"tmpfs", "ext4", "xfs", "btrfs", "nfs"}) {
        EXPECT_FALSE(contains(fs, type)) << type;
    }
}

TEST(Config, TheFilesFsListReplacesTheBuiltInOne) {
    EXPECT_EQ(parse_ok("[prune]\nfs = [\"nfs\"]").prune.fs_types,
              (std::vector<std::string>{"nfs"}));
    EXPECT_EQ(parse_ok("PRUNEFS = \"nfs\"\n[prune]\nfs = [\"cifs\"]").prune.fs_types,
              (std::vector<std::string>{"nfs", "cifs"}));
    // A file that says nothing of file-system types keeps the built-in list.
    EXPECT_EQ(parse_ok("[prune]\npaths = [\"/tmp\"]").prune.fs_types, default_pruned_fs_types());
}

TEST(Config, ThePackagedFilePrunesEveryBuiltInType) {
    ConfigResult r = load_config_file(WSINDEX_SOURCE_DIR "/packaging/wsindexd.conf");
    ASSERT_TRUE(std::holds_alternative<Config>(r)) << std::get<ConfigError>(r).message;
    const std::vector<std::string>& packaged = std::get<Config>(r).prune.fs_types;
    for (const std::string& type : default_pruned_fs_types()) {
        EXPECT_TRUE(contains(packaged, type)) << type;
    }
}

TEST(Config, UpdatedbSpelling) {
    const Config c = parse_ok(R"(
PRUNEPATHS="/tmp /var/spool /media"
PRUNENAMES=".git .bzr .hg .svn"
PRUNEFS="NFS proc"
roots = ["/home", "/srv"]
)");
    EXPECT_EQ(c.prune.paths, (std::vector<std::string>{"/tmp", "/var/spool", "/media"}));
    EXPECT_EQ(c.prune.names.size(), 4u);
    EXPECT_EQ(c.prune.fs_types, (std::vector<std::string>{"NFS", "proc"}));
    ASSERT_EQ(c.roots.size(), 2u);
    EXPECT_EQ(c.roots[1].path, "/srv");
}

TEST(Config, BadInputIsAClearError) {
    EXPECT_NE(parse_error("workers = many").find("'workers' must be a whole number"),
              std::string::npos);
    EXPECT_NE(parse_error("workers = -1").find("workers"), std::string::npos);
    EXPECT_NE(parse_error("colour = blue").find("unknown key 'colour'"), std::string::npos);
    EXPECT_NE(parse_error("[[root]]\ninterval = \"1h\"").find("no 'path'"), std::string::npos);
    EXPECT_NE(parse_error("[[root]]\npath = \"relative\"").find("absolute"), std::string::npos);
    EXPECT_NE(parse_error("[[root]]\npath = \"/a\"\nintervl = \"1h\"").find("root.intervl"),
              std::string::npos);
    EXPECT_NE(parse_error("[[root]]\npath = \"/a\"\ninterval = \"soon\"").find("duration"),
              std::string::npos);
    EXPECT_NE(parse_error("socket_mode = 999").find("octal"), std::string::npos);
    EXPECT_NE(parse_error("[watch]\nx = 1").find("unknown section"), std::string::npos);
    EXPECT_NE(parse_error("roots = [\"/a\", \"/a/\"]").find("twice"), std::string::npos);
    EXPECT_NE(parse_error("workers = 1\nsocket = \"/x\"\nworkers = 3").find("twice"),
              std::string::npos);
    EXPECT_NE(parse_error("log_level = loud").find("log_level"), std::string::npos);
    EXPECT_NE(parse_error("db = /unquoted path").find("one value"), std::string::npos);
    EXPECT_NE(parse_error("[prune]\npaths = [\"tmp\"]").find("absolute"), std::string::npos);
    EXPECT_NE(parse_error("PRUNE_BIND_MOUNTS = yes").find("unknown key"), std::string::npos);
    // Every message starts with where it came from.
    EXPECT_EQ(parse_error("nope = 1").rfind("test.toml: ", 0), 0u);
}

// parse_config's result for `text`, which must come back as a value, never as an exception (one
// would end the daemon's start or a reload without a message).
std::optional<ConfigResult> parse_without_throwing(const std::string& text) {
    std::optional<ConfigResult> r;
    EXPECT_NO_THROW(r.emplace(parse_config(text, "garbage.toml")));
    return r;
}

TEST(Config, GarbageNeverThrows) {
    const std::string refused[] = {"]]]]",
                                   "= = =",
                                   "a = [",
                                   "a = [\"x\"",
                                   "\"\"\" = 1",
                                   std::string(1000, '['),
                                   "x = \"unterminated",
                                   "\x01\x02\x03"};
    for (const std::string& in : refused) {
        SCOPED_TRACE(testing::PrintToString(in.substr(0, 40)));
        const auto r = parse_without_throwing(in);
        ASSERT_TRUE(r.has_value());
        const auto* error = std::get_if<ConfigError>(&*r);
        ASSERT_NE(error, nullptr) << "accepted as a configuration";
        EXPECT_EQ(error->message.rfind("garbage.toml: ", 0), 0u) << error->message;
    }

    // CLI11's TOML lexer skips a line that is a lone '[' or '[[': accepted, and sets nothing.
    for (const std::string in : {"[", "[["}) {
        SCOPED_TRACE(in);
        const auto r = parse_without_throwing(in);
        ASSERT_TRUE(r.has_value());
        const auto* config = std::get_if<Config>(&*r);
        ASSERT_NE(config, nullptr) << std::get<ConfigError>(*r).message;
        const Config defaults;
        EXPECT_TRUE(config->roots.empty());
        EXPECT_EQ(config->socket_path, defaults.socket_path);
        EXPECT_EQ(config->db_path, defaults.db_path);
        EXPECT_EQ(config->workers, defaults.workers);
        EXPECT_EQ(config->log_level, defaults.log_level);
        EXPECT_EQ(config->rescan_interval, defaults.rescan_interval);
    }
}

TEST(Config, Durations) {
    EXPECT_EQ(parse_duration("90"), std::chrono::seconds(90));
    EXPECT_EQ(parse_duration("90s"), std::chrono::seconds(90));
    EXPECT_EQ(parse_duration("30m"), std::chrono::minutes(30));
    EXPECT_EQ(parse_duration("6h"), std::chrono::hours(6));
    EXPECT_EQ(parse_duration("1d"), std::chrono::hours(24));
    EXPECT_EQ(parse_duration("2w"), std::chrono::hours(24 * 14));
    EXPECT_EQ(parse_duration("off"), std::chrono::seconds(0));
    EXPECT_EQ(parse_duration("never"), std::chrono::seconds(0));
    EXPECT_FALSE(parse_duration(""));
    EXPECT_FALSE(parse_duration("h"));
    EXPECT_FALSE(parse_duration("5y"));
    EXPECT_FALSE(parse_duration("99999999999999999999d"));
}

std::variant<CommandLine, int> parse_args(std::vector<const char*> args) {
    args.insert(args.begin(), "wsindexd");
    return parse_command_line(static_cast<int>(args.size()), args.data());
}

TEST(CommandLine, FlagsOverrideTheFile) {
    const std::string path = ::testing::TempDir() + "/wsindexd_flags.toml";
    {
        std::ofstream out(path);
        out << "socket = \"/from/file.sock\"\ndb = \"/from/file.db\"\nworkers = 8\n"
               "log_level = \"warn\"\nroots = [\"/home\"]\n";
    }
    auto parsed =
        parse_args({"--config", path.c_str(), "--socket", "/tmp/x.sock", "--workers", "2"});
    ASSERT_TRUE(std::holds_alternative<CommandLine>(parsed));
    ConfigResult r = resolve_config(std::get<CommandLine>(parsed));
    ASSERT_TRUE(std::holds_alternative<Config>(r)) << std::get<ConfigError>(r).message;
    const Config& c = std::get<Config>(r);
    EXPECT_EQ(c.socket_path, "/tmp/x.sock");  // flag
    EXPECT_EQ(c.db_path, "/from/file.db");    // file
    EXPECT_EQ(c.workers, 2u);                 // flag
    EXPECT_EQ(c.log_level, "warn");           // file
    ASSERT_EQ(c.roots.size(), 1u);
    std::remove(path.c_str());
}

TEST(CommandLine, NoConfigFileUsesDefaultsAndFlags) {
    auto parsed = parse_args({"--socket", "/tmp/x.sock", "--db", "/tmp/x.db"});
    ASSERT_TRUE(std::holds_alternative<CommandLine>(parsed));
    ConfigResult r = resolve_config(std::get<CommandLine>(parsed));
    ASSERT_TRUE(std::holds_alternative<Config>(r));
    EXPECT_EQ(std::get<Config>(r).socket_path, "/tmp/x.sock");
    EXPECT_EQ(std::get<Config>(r).db_path, "/tmp/x.db");
}

TEST(CommandLine, DefaultsFillMissingPaths) {
    ConfigResult r = resolve_config(CommandLine{});
    ASSERT_TRUE(std::holds_alternative<Config>(r));
    EXPECT_FALSE(std::get<Config>(r).socket_path.empty());
    EXPECT_FALSE(std::get<Config>(r).db_path.empty());
}

TEST(CommandLine, MissingConfigFileIsAnError) {
    auto parsed = parse_args({"--config", "/nonexistent/wsindexd.toml"});
    ASSERT_TRUE(std::holds_alternative<CommandLine>(parsed));
    ConfigResult r = resolve_config(std::get<CommandLine>(parsed));
    ASSERT_TRUE(std::holds_alternative<ConfigError>(r));
    EXPECT_NE(std::get<ConfigError>(r).message.find("/nonexistent/wsindexd.toml"),
              std::string::npos);
}

TEST(CommandLine, UsageErrorsAndVersion) {
    testing::internal::CaptureStderr();
    auto bad = parse_args({"--workers", "lots"});
    testing::internal::GetCapturedStderr();
    ASSERT_TRUE(std::holds_alternative<int>(bad));
    EXPECT_EQ(std::get<int>(bad), 2);

    testing::internal::CaptureStderr();
    auto level = parse_args({"--log-level", "loud"});
    testing::internal::GetCapturedStderr();
    ASSERT_TRUE(std::holds_alternative<int>(level));
    EXPECT_EQ(std::get<int>(level), 2);

    testing::internal::CaptureStdout();
    auto version = parse_args({"--version"});
    const std::string out = testing::internal::GetCapturedStdout();
    ASSERT_TRUE(std::holds_alternative<int>(version));
    EXPECT_EQ(std::get<int>(version), 0);
    EXPECT_NE(out.find("wsindexd "), std::string::npos);
}

}  // namespace
}  // namespace wsindex::daemon
