// Synthetic file names: a seeded generator of word/digit/hash components, separators and
// extensions, with a skewed word choice so that some fragments are common and others rare.
#include "synthetic_names.hpp"

#include <array>
#include <string_view>

namespace wsindex::bench {
namespace {

// splitmix64: tiny, fast and the same on every platform (std distributions are not).
struct Rng {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
    // Uniform in [0, 1).
    double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

// mktree.py's words, then more of the kind real trees hold.
constexpr std::array<std::string_view, 112> kWords = {
    "alpha",   "beta",   "core",    "util",    "net",     "fs",         "io",       "lib",
    "src",     "test",   "doc",     "kernel",  "driver",  "mem",        "sched",    "proc",
    "user",    "data",   "cache",   "log",     "conf",    "ui",         "api",      "db",
    "http",    "json",   "xml",     "img",     "font",    "pkg",        "build",    "tools",
    "include", "common", "main",    "parse",   "lex",     "vm",         "gc",       "alloc",
    "thread",  "sync",   "hash",    "tree",    "list",    "map",        "queue",    "str",
    "fmt",     "time",   "os",      "crypto",  "zip",     "index",      "report",   "invoice",
    "photo",   "scan",   "backup",  "config",  "setup",   "readme",     "license",  "changelog",
    "module",  "plugin", "server",  "client",  "session", "request",    "response", "handler",
    "widget",  "layout", "render",  "shader",  "texture", "audio",      "video",    "frame",
    "buffer",  "stream", "socket",  "packet",  "record",  "schema",     "table",    "query",
    "model",   "view",   "control", "service", "worker",  "monitor",    "debug",    "release",
    "draft",   "final",  "notes",   "summary", "budget",  "meeting",    "project",  "archive",
    "old",     "new",    "copy",    "temp",    "image",   "screenshot", "export",   "import"};

// Weighted: the first are the most common, as in real trees.
constexpr std::array<std::string_view, 24> kExts = {
    ".c",  ".h",   ".txt", ".py",  ".o",   ".js",  ".json", ".md", ".cc",  ".hpp", ".html", ".go",
    ".rs", ".css", ".sh",  ".jpg", ".png", ".pdf", ".log",  ".gz", ".xml", ".so",  ".yaml", ".csv"};

constexpr std::size_t kMinLength = 5;
constexpr std::size_t kMaxLength = 40;

void append_letters(Rng& rng, std::string& out, std::size_t n, std::string_view alphabet) {
    for (std::size_t i = 0; i < n; ++i) out.push_back(alphabet[rng.below(alphabet.size())]);
}

void append_component(Rng& rng, std::string& out, bool capitalize) {
    const double u = rng.unit();
    const std::size_t at = out.size();
    if (u < 0.00001) {
        out.append("zephyr");
    } else if (u < 0.62) {
        // u^2 skews toward the first words: a few are everywhere, most are uncommon.
        const double w = rng.unit();
        out.append(kWords[static_cast<std::size_t>(w * w * kWords.size())]);
    } else if (u < 0.77) {
        append_letters(rng, out, 3 + rng.below(6), "abcdefghijklmnopqrstuvwxyz");
    } else if (u < 0.92) {
        append_letters(rng, out, 1 + rng.below(6), "0123456789");
    } else {
        append_letters(rng, out, 6 + rng.below(7), "0123456789abcdef");
    }
    if (capitalize && out[at] >= 'a' && out[at] <= 'z') out[at] = static_cast<char>(out[at] - 32);
}

void append_name(Rng& rng, std::string& name) {
    name.clear();
    if (rng.unit() < 0.02) name.push_back('.');
    const std::size_t components = 1 + rng.below(3);
    const bool camel = rng.unit() < 0.2;
    static constexpr std::string_view kSeparators = "_-._ ";
    const char separator = kSeparators[rng.below(kSeparators.size())];
    for (std::size_t c = 0; c < components; ++c) {
        if (c > 0 && !camel) name.push_back(separator);
        append_component(rng, name, camel && c > 0);
    }
    if (rng.unit() < 0.4) append_letters(rng, name, 1 + rng.below(4), "0123456789");
    std::string_view ext;
    if (rng.unit() < 0.85) {
        const double e = rng.unit();
        ext = kExts[static_cast<std::size_t>(e * e * kExts.size())];
    }
    if (name.size() + ext.size() > kMaxLength) name.resize(kMaxLength - ext.size());
    name.append(ext);
    while (name.size() < kMinLength) name.push_back(static_cast<char>('0' + rng.below(10)));
}

}  // namespace

void NameGenerator::next(std::string& name) {
    Rng rng{state_};
    append_name(rng, name);
    state_ = rng.state;
}

NameSet make_names(std::size_t n, std::uint64_t seed) {
    NameSet set;
    set.starts.reserve(n + 1);
    set.bytes.reserve(n * 20);
    NameGenerator names(seed);
    std::string name;
    for (std::size_t i = 0; i < n; ++i) {
        names.next(name);
        set.starts.push_back(set.bytes.size());
        set.bytes.append(name);
        set.bytes.push_back('\0');
    }
    set.starts.push_back(set.bytes.size());
    return set;
}

}  // namespace wsindex::bench
