// Config parsing: CLI11's TOML reader lexes the text into (section, key, values); this file gives
// those items their meaning, checks them, and reports the first problem by key name.
#include "daemon/config.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace wsindex::daemon {
namespace {

// Thrown inside this file only, caught by parse_config: the first problem ends the parse.
struct Problem {
    std::string message;
};

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string key_name(const CLI::ConfigItem& item) {
    return item.parents.empty() ? item.name : item.fullname();
}

const std::string& one_value(const CLI::ConfigItem& item) {
    if (item.inputs.size() != 1) {
        throw Problem{"'" + key_name(item) + "' takes one value (quote values with spaces)"};
    }
    return item.inputs.front();
}

std::string text_value(const CLI::ConfigItem& item) { return one_value(item); }

std::uint64_t number_value(const CLI::ConfigItem& item, std::uint64_t min, std::uint64_t max) {
    const std::string& s = one_value(item);
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max) {
        throw Problem{"'" + key_name(item) + "' must be a whole number from " +
                      std::to_string(min) + " to " + std::to_string(max) + ", got '" + s + "'"};
    }
    return v;
}

bool bool_value(const CLI::ConfigItem& item) {
    const std::string s = lower(one_value(item));
    if (s == "true" || s == "yes" || s == "on" || s == "1") return true;
    if (s == "false" || s == "no" || s == "off" || s == "0") return false;
    throw Problem{"'" + key_name(item) + "' must be true or false, got '" + s + "'"};
}

std::chrono::seconds duration_value(const CLI::ConfigItem& item) {
    const std::string& s = one_value(item);
    if (auto d = parse_duration(s)) return *d;
    throw Problem{"'" + key_name(item) +
                  "' must be a duration like 90s, 30m, 6h, 1d or off, got '" + s + "'"};
}

std::string absolute_path_value(const CLI::ConfigItem& item) {
    std::string s = one_value(item);
    if (s.empty() || s.front() != '/') {
        throw Problem{"'" + key_name(item) + "' must be an absolute path, got '" + s + "'"};
    }
    return s;
}

// A list: an array (["a", "b"]) or, as in updatedb.conf, one string of space-separated words.
std::vector<std::string> list_value(const CLI::ConfigItem& item) {
    std::vector<std::string> out;
    for (const std::string& input : item.inputs) {
        std::istringstream words(input);
        for (std::string w; words >> w;) out.push_back(w);
    }
    return out;
}

std::vector<std::string> path_list_value(const CLI::ConfigItem& item) {
    std::vector<std::string> out = list_value(item);
    for (const std::string& p : out) {
        if (p.front() != '/') {
            throw Problem{"'" + key_name(item) + "' holds paths, which must be absolute: '" + p +
                          "'"};
        }
    }
    return out;
}

void append(std::vector<std::string>& to, std::vector<std::string> from) {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

mode_t mode_value(const CLI::ConfigItem& item) {
    const std::string& s = one_value(item);
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 8);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v > 0777) {
        throw Problem{"'" + key_name(item) + "' must be octal permission bits like 0660, got '" +
                      s + "'"};
    }
    return static_cast<mode_t>(v);
}

void apply_top_level(Config& c, const CLI::ConfigItem& item) {
    const std::string& k = item.name;
    const std::string folded = lower(k);
    constexpr std::uint64_t kMaxU = std::numeric_limits<unsigned>::max();
    if (k == "socket")
        c.socket_path = absolute_path_value(item);
    else if (k == "db")
        c.db_path = absolute_path_value(item);
    else if (k == "socket_mode")
        c.socket_mode = mode_value(item);
    else if (k == "socket_group")
        c.socket_group = text_value(item);
    else if (k == "workers")
        c.workers = static_cast<unsigned>(number_value(item, 0, 1024));
    else if (k == "log_level")
        c.log_level = text_value(item);
    else if (k == "rescan_interval")
        c.rescan_interval = duration_value(item);
    else if (k == "one_file_system")
        c.one_file_system = bool_value(item);
    else if (k == "max_queued_scans")
        c.max_queued_scans = number_value(item, 1, 100000);
    else if (k == "query_threads")
        c.query_threads = static_cast<unsigned>(number_value(item, 1, 64));
    else if (k == "max_pending_queries")
        c.max_pending_queries = number_value(item, 1, 1000000);
    else if (k == "max_queries_per_uid")
        c.max_queries_per_uid = static_cast<unsigned>(number_value(item, 0, 64));
    else if (k == "max_find_results")
        c.max_find_results = number_value(item, 0, kMaxU);
    else if (k == "max_connections")
        c.max_connections = number_value(item, 1, 100000);
    else if (k == "max_connections_per_uid")
        c.max_connections_per_uid = number_value(item, 1, 100000);
    else if (k == "reserved_connections")
        c.reserved_connections = number_value(item, 0, 100000);
    else if (k == "max_unstreamed_find_results") {
        c.max_unstreamed_find_results = number_value(item, 1, 100000);
    } else if (k == "progress_interval_ms") {
        c.progress_interval = std::chrono::milliseconds(number_value(item, 10, 3600000));
    } else if (k == "name_index")
        c.name_index = bool_value(item);
    else if (k == "search_workers")
        c.search_workers = static_cast<unsigned>(number_value(item, 0, 256));
    else if (k == "search_reserve_core")
        c.search_reserve_core = bool_value(item);
    else if (k == "trigram_min_names")
        c.trigram_min_names = number_value(item, 0, std::numeric_limits<std::int64_t>::max());
    else if (k == "watch")
        c.watch = bool_value(item);
    else if (k == "watch_backend") {
        const std::string b = lower(text_value(item));
        if (b == "auto") {
            c.watch_backend = WatchBackend::Auto;
        } else if (b == "fanotify") {
            c.watch_backend = WatchBackend::Fanotify;
        } else if (b == "inotify") {
            c.watch_backend = WatchBackend::Inotify;
        } else {
            throw Problem{"watch_backend is '" + b + "' (auto, fanotify or inotify)"};
        }
    } else if (k == "watch_settle_ms")
        c.watch_settle = std::chrono::milliseconds(number_value(item, 0, 600000));
    else if (k == "watch_max_delay_ms")
        c.watch_max_delay = std::chrono::milliseconds(number_value(item, 1, 3600000));
    else if (k == "roots") {
        for (std::string& p : path_list_value(item))
            c.roots.push_back(RootConfig{std::move(p), {}, {}, {}});
    }
    // updatedb.conf's own spelling, so its lines can be pasted in.
    else if (folded == "prunepaths")
        append(c.prune.paths, path_list_value(item));
    else if (folded == "prunenames")
        append(c.prune.names, list_value(item));
    else if (folded == "prunefs")
        append(c.prune.fs_types, list_value(item));
    else
        throw Problem{"unknown key '" + k + "'"};
}

void apply_prune(Config& c, const CLI::ConfigItem& item) {
    if (item.name == "paths")
        append(c.prune.paths, path_list_value(item));
    else if (item.name == "names")
        append(c.prune.names, list_value(item));
    else if (item.name == "fs")
        append(c.prune.fs_types, list_value(item));
    else
        throw Problem{"unknown key '" + key_name(item) + "' (prune takes paths, names, fs)"};
}

struct RootTable {
    RootConfig root;
    bool has_path = false;
    std::vector<std::string> keys;  // seen, to refuse duplicates
};

void apply_root(RootTable& t, const CLI::ConfigItem& item) {
    if (std::find(t.keys.begin(), t.keys.end(), item.name) != t.keys.end()) {
        throw Problem{"'" + key_name(item) + "' is set twice in one [[root]] table"};
    }
    t.keys.push_back(item.name);
    if (item.name == "path") {
        t.root.path = absolute_path_value(item);
        t.has_path = true;
    } else if (item.name == "interval") {
        t.root.interval = duration_value(item);
    } else if (item.name == "one_file_system") {
        t.root.one_file_system = bool_value(item);
    } else if (item.name == "watch") {
        t.root.watch = bool_value(item);
    } else {
        throw Problem{"unknown key '" + key_name(item) +
                      "' (root takes path, interval, one_file_system, watch)"};
    }
}

void apply_fleet(FleetConfig& f, const CLI::ConfigItem& item) {
    if (item.name == "url")
        f.url = text_value(item);
    else if (item.name == "host")
        f.host = text_value(item);
    else if (item.name == "password_file")
        f.password_file = absolute_path_value(item);
    else
        throw Problem{"unknown key '" + key_name(item) +
                      "' (fleet takes url, host, password_file)"};
}

void check(Config& c) {
    if (c.fleet && c.fleet->url.empty()) throw Problem{"[fleet] needs a 'url'"};
    for (RootConfig& r : c.roots) {
        // "/home/" and "/home" are one root: drop trailing slashes (not from "/").
        while (r.path.size() > 1 && r.path.back() == '/') r.path.pop_back();
    }
    for (std::size_t i = 0; i < c.roots.size(); ++i) {
        for (std::size_t j = i + 1; j < c.roots.size(); ++j) {
            if (c.roots[i].path == c.roots[j].path) {
                throw Problem{"root '" + c.roots[i].path + "' is configured twice"};
            }
        }
    }
    static constexpr std::string_view kLevels[] = {"trace",   "debug", "info",     "warn",
                                                   "warning", "error", "critical", "off"};
    if (std::find(std::begin(kLevels), std::end(kLevels), c.log_level) == std::end(kLevels)) {
        throw Problem{
            "'log_level' must be one of trace, debug, info, warn, error, critical, off; got '" +
            c.log_level + "'"};
    }
}

Config parse_items(const std::vector<CLI::ConfigItem>& items) {
    Config c;
    std::vector<std::string> seen;  // top-level and prune keys, to refuse duplicates
    std::optional<RootTable> root;
    // The file's first list of file-system types replaces the built-in one; later ones add.
    bool fs_types_from_file = false;
    auto take_fs_types = [&] {
        if (!fs_types_from_file) c.prune.fs_types.clear();
        fs_types_from_file = true;
    };
    auto close_root = [&] {
        if (!root) return;
        if (!root->has_path) throw Problem{"a [[root]] table has no 'path'"};
        c.roots.push_back(std::move(root->root));
        root.reset();
    };
    for (const CLI::ConfigItem& item : items) {
        const bool marker = item.name == "++" || item.name == "--";  // CLI11's section edges
        if (item.parents.empty()) {
            const std::string key = lower(item.name);
            if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
                throw Problem{"'" + item.name + "' is set twice"};
            }
            seen.push_back(key);
            if (key == "prunefs") take_fs_types();
            apply_top_level(c, item);
            continue;
        }
        const std::string& section = item.parents.front();
        if (item.parents.size() > 1) {
            throw Problem{"unknown section '[" + CLI::detail::join(item.parents, ".") + "]'"};
        }
        if (section == "root") {
            if (item.name == "++") {
                close_root();
                root.emplace();
            } else if (item.name == "--") {
                close_root();
            } else {
                if (!root) root.emplace();
                apply_root(*root, item);
            }
        } else if (section == "prune") {
            if (marker) continue;
            const std::string key = "prune." + item.name;
            if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
                throw Problem{"'" + key + "' is set twice"};
            }
            seen.push_back(key);
            if (item.name == "fs") take_fs_types();
            apply_prune(c, item);
        } else if (section == "fleet") {
            if (marker) continue;
            const std::string key = "fleet." + item.name;
            if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
                throw Problem{"'" + key + "' is set twice"};
            }
            seen.push_back(key);
            if (!c.fleet) c.fleet.emplace();
            apply_fleet(*c.fleet, item);
        } else {
            throw Problem{"unknown section '[" + section +
                          "]' (sections: [prune], [fleet], [[root]])"};
        }
    }
    close_root();
    check(c);
    return c;
}

}  // namespace

ConfigResult parse_config(std::string_view text, std::string_view origin) {
    const std::string where(origin);
    try {
        std::istringstream in{std::string(text)};
        CLI::ConfigTOML reader;
        return parse_items(reader.from_config(in));
    } catch (const Problem& p) {
        return ConfigError{where + ": " + p.message};
    } catch (const std::exception& e) {
        return ConfigError{where + ": " + e.what()};
    }
}

ConfigResult load_config_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return ConfigError{path + ": cannot open: " + std::strerror(errno)};
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return ConfigError{path + ": cannot read: " + std::strerror(errno)};
    return parse_config(text.str(), path);
}

std::optional<std::chrono::seconds> parse_duration(std::string_view text) {
    const std::string s = lower(text);
    if (s == "0" || s == "off" || s == "never") return std::chrono::seconds(0);
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc() || end == s.data()) return std::nullopt;
    const std::string_view unit(end, static_cast<std::size_t>(s.data() + s.size() - end));
    std::uint64_t scale = 0;
    if (unit.empty() || unit == "s")
        scale = 1;
    else if (unit == "m" || unit == "min")
        scale = 60;
    else if (unit == "h")
        scale = 3600;
    else if (unit == "d")
        scale = 86400;
    else if (unit == "w")
        scale = 7 * 86400;
    else
        return std::nullopt;
    // A century is plenty; the cap keeps the arithmetic below from overflowing.
    constexpr std::uint64_t kMaxSeconds = 100ULL * 365 * 86400;
    if (n > kMaxSeconds / scale) return std::nullopt;
    return std::chrono::seconds(static_cast<std::int64_t>(n * scale));
}

std::vector<std::string> default_pruned_fs_types() {
    return {"proc",     "sysfs",      "devpts",      "cgroup", "cgroup2", "debugfs",
            "tracefs",  "securityfs", "pstore",      "bpf",    "mqueue",  "hugetlbfs",
            "configfs", "fusectl",    "binfmt_misc", "autofs", "efivarfs"};
}

std::string default_db_path() {
    if (::geteuid() == 0) return "/var/lib/wsindexd/index.db";
    if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && state[0] == '/') {
        return std::string(state) + "/wsindexd/index.db";
    }
    const char* home = std::getenv("HOME");
    return std::string(home != nullptr ? home : "") + "/.local/state/wsindexd/index.db";
}

std::chrono::seconds effective_interval(const Config& config, const RootConfig& root) {
    return root.interval.value_or(config.rescan_interval);
}

bool effective_watch(const Config& config, const RootConfig& root) {
    return root.watch.value_or(config.watch);
}

bool effective_one_file_system(const Config& config, const RootConfig& root) {
    return root.one_file_system.value_or(config.one_file_system);
}

}  // namespace wsindex::daemon
