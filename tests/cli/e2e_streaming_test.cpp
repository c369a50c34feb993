// End to end: wsctl's --json and -l outputs, written as the batches arrive, are byte-identical to
// the whole-document output built here from the tree, and wsctl's memory does not grow with the
// size of the answer.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "ipc/methods.hpp"
#include "ipc/protocol.hpp"
#include "tests/cli/support/fixture.hpp"

namespace wsindex::cli::test {
namespace {

using Streaming = EndToEnd;

// NUL-separated records in their order (the trailing empty record dropped).
std::vector<std::string> split_nul_ordered(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t nul = text.find('\0', start);
        if (nul == std::string::npos) nul = text.size();
        out.push_back(text.substr(start, nul - start));
        start = nul + 1;
    }
    return out;
}

char type_letter(mode_t mode) {
    switch (mode & S_IFMT) {
        case S_IFREG:
            return 'f';
        case S_IFDIR:
            return 'd';
        case S_IFLNK:
            return 'l';
        case S_IFIFO:
            return 'p';
        case S_IFSOCK:
            return 's';
        case S_IFCHR:
            return 'c';
        case S_IFBLK:
            return 'b';
        default:
            return '?';
    }
}

// The entry as the file system describes it; nullopt when lstat cannot reach it by path (the
// chain deeper than PATH_MAX).
std::optional<ipc::FindEntry> entry_from_lstat(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
    ipc::FindEntry entry;
    entry.path = path;
    entry.type = type_letter(st.st_mode);
    entry.size = static_cast<std::uint64_t>(st.st_size);
    entry.mtime_ns =
        static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    return entry;
}

// What `wsctl find -l` prints for one entry into a pipe (raw path).
std::string long_line(const ipc::FindEntry& entry) {
    char head[64];
    std::snprintf(head, sizeof head, "%c  %10s  %s  ", entry.type, format_bytes(entry.size).c_str(),
                  format_time_ns(entry.mtime_ns).c_str());
    return head + entry.path + "\n";
}

// The peak resident set (KiB) of `argv` run to completion with stdout to `out_path`; its exit
// code in `code`.
// The environment for a measured wsctl: this one, and under AddressSanitizer no quarantine.
// ASan keeps freed blocks (256 MiB by default) so that a use after free is caught: the peak
// would grow with everything ever allocated, not with what is live at once.
std::vector<std::string> measured_environment() {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        if (std::string_view(*e).starts_with("ASAN_OPTIONS=")) continue;
        env.emplace_back(*e);
    }
#ifdef WSINDEX_SANITIZED
    const char* asan = std::getenv("ASAN_OPTIONS");
    env.push_back(std::string("ASAN_OPTIONS=") + (asan != nullptr ? asan : "") +
                  ":quarantine_size_mb=0:thread_local_quarantine_size_kb=0");
#else
    if (const char* asan = std::getenv("ASAN_OPTIONS"))
        env.push_back(std::string("ASAN_OPTIONS=") + asan);
#endif
    return env;
}

long peak_rss_kib(const std::vector<std::string>& argv, const std::string& out_path, int& code) {
    const std::vector<std::string> env = measured_environment();
    std::vector<char*> envp;
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || ::dup2(fd, 1) < 0) ::_exit(126);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        ::execve(args[0], args.data(), envp.data());
        ::_exit(127);
    }
    EXPECT_GT(pid, 0) << std::strerror(errno);
    int status = 0;
    rusage usage{};
    while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return usage.ru_maxrss;
}

TEST_F(Streaming, FindJsonAndLongAreTheWholeDocumentByteForByte) {
    const std::string tree = scratch_ / "odd";
    make_odd_tree(tree);
    scan(tree);

    // The daemon's order, and the paths themselves, from -0.
    const auto nul = ctl({"find", "-0"});
    ASSERT_EQ(nul.code, 0) << nul.err;
    const auto order = split_nul_ordered(nul.out);
    ASSERT_GT(order.size(), 40u);

    const auto json = ctl({"find", "--json"});
    ASSERT_EQ(json.code, 0) << json.err;
    const auto doc = parse_json(json.out);
    ASSERT_TRUE(doc.contains("entries") && doc["entries"].is_array()) << json.out.substr(0, 300);
    ASSERT_EQ(doc["entries"].size(), order.size());

    // The document the whole-DOM implementation printed: every entry in the daemon's order,
    // described from the file system (the daemon's own entry only where lstat cannot reach:
    // past PATH_MAX), dumped at once.
    nlohmann::json expected_entries = nlohmann::json::array();
    std::string expected_long;
    std::size_t from_lstat = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
        auto entry = entry_from_lstat(order[i]);
        if (entry) {
            ++from_lstat;
        } else {
            auto decoded = ipc::from_json<ipc::FindEntry>(doc["entries"][i]);
            ASSERT_TRUE(decoded.ok()) << doc["entries"][i].dump();
            entry = decoded.value();
            EXPECT_EQ(entry->path, order[i]);
        }
        expected_entries.push_back(ipc::to_json(*entry));
        expected_long += long_line(*entry);
    }
    EXPECT_GT(from_lstat, 40u);
    const auto expected_text =
        ipc::dump_json(nlohmann::json{{"entries", expected_entries}, {"truncated", false}});
    ASSERT_TRUE(expected_text.has_value());
    EXPECT_EQ(json.out, *expected_text + "\n");

    // -l into a pipe: one line per entry, raw paths, no gathering needed to match.
    const auto long_listing = ctl({"find", "-l"});
    ASSERT_EQ(long_listing.code, 0) << long_listing.err;
    EXPECT_EQ(long_listing.out, expected_long);

    // A limited answer ends with "truncated": true, still one document.
    const auto limited = ctl({"find", "--json", "--limit", "5"});
    ASSERT_EQ(limited.code, 0) << limited.err;
    nlohmann::json first_five(expected_entries.begin(), expected_entries.begin() + 5);
    EXPECT_EQ(limited.out,
              *ipc::dump_json(nlohmann::json{{"entries", first_five}, {"truncated", true}}) + "\n");

    // Nothing matches: the empty document.
    const auto none = ctl({"find", "--json", "no-such-name-anywhere"});
    ASSERT_EQ(none.code, 0) << none.err;
    EXPECT_EQ(none.out, "{\"entries\":[],\"truncated\":false}\n");

    // An error before any entry is the error document alone, as before.
    const auto bad = ctl({"find", "--json", "--regex", "("});
    EXPECT_EQ(bad.code, 2) << bad.out;
    const auto bad_doc = parse_json(bad.out);
    EXPECT_EQ(bad_doc["error"], "wsindex.InvalidParameter") << bad.out;
    EXPECT_FALSE(bad_doc.contains("entries")) << bad.out;
}

// wsctl's peak memory for a 100k-entry --json answer stays within a few MiB of -0's (which
// never held more than a batch). Gathering the answer first took ~100 MiB more here; memory
// does not depend on machine load, so the bound cannot flake.
TEST_F(Streaming, FindJsonMemoryDoesNotGrowWithTheAnswer) {
#ifdef WSINDEX_SANITIZED
    constexpr std::size_t kEntries = 60'000;
#else
    constexpr std::size_t kEntries = 100'000;
#endif
    const std::string tree = scratch_ / "big";
    make_big_tree(tree, kEntries);
    scan(tree);

    const std::vector<std::string> base{WSINDEX_WSCTL, "--socket", daemon_->socket(), "find"};
    auto with = [&](std::vector<std::string> extra) {
        auto argv = base;
        argv.insert(argv.end(), extra.begin(), extra.end());
        return argv;
    };
    int code = -1;
    const std::string nul_out = scratch_ / "find.nul";
    const long nul_kib = peak_rss_kib(with({"-0"}), nul_out, code);
    ASSERT_EQ(code, 0);
    const std::string json_out = scratch_ / "find.json";
    const long json_kib = peak_rss_kib(with({"--json"}), json_out, code);
    ASSERT_EQ(code, 0);
    const std::string long_out = scratch_ / "find.long";
    const long long_kib = peak_rss_kib(with({"-l"}), long_out, code);
    ASSERT_EQ(code, 0);

    // The answers are complete (the whole tree, root included).
    const auto doc = parse_json(read_file(json_out));
    EXPECT_EQ(doc["entries"].size(), kEntries + 1);
    EXPECT_EQ(split_nul(read_file(nul_out)).size(), kEntries + 1);
    const std::string listing = read_file(long_out);
    EXPECT_EQ(static_cast<std::size_t>(std::count(listing.begin(), listing.end(), '\n')),
              kEntries + 1);

    // The JSON text alone is ~10 MiB here; a gathered DOM is several times that.
    constexpr long kSlackKib = 8 * 1024;
    EXPECT_LT(json_kib, nul_kib + kSlackKib)
        << "find --json peak " << json_kib << " KiB, find -0 peak " << nul_kib << " KiB";
    EXPECT_LT(long_kib, nul_kib + kSlackKib)
        << "find -l peak " << long_kib << " KiB, find -0 peak " << nul_kib << " KiB";
}

// The daemon runs as nobody so that the locked directories produce errors.
class StreamingErrors : public EndToEnd {
  protected:
    void SetUp() override { start_daemon(65534); }
};

TEST_F(StreamingErrors, ErrorsJsonIsTheWholeDocumentByteForByte) {
    const std::string tree = scratch_ / "locked";
    const auto locked = make_locked_tree(tree, 3);
    scan(tree);

    const auto r = ctl({"errors", "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto doc = parse_json(r.out);
    ASSERT_EQ(doc["errors"].size(), locked.size()) << r.out;
    // Built here: the errors as one DOM (keys sorted, as the daemon's values), then the scan id.
    nlohmann::json errors = nlohmann::json::array();
    for (const auto& e : doc["errors"]) {
        EXPECT_EQ(e["errno_name"], "EACCES") << e.dump();
        errors.push_back(e);
    }
    const auto scans = json_of({"scans"});
    ASSERT_FALSE(scans["scans"].empty());
    const auto expected = ipc::dump_json(
        nlohmann::json{{"errors", errors}, {"scan_id", scans["scans"][0]["scan_id"]}});
    ASSERT_TRUE(expected.has_value());
    EXPECT_EQ(r.out, *expected + "\n");
}

}  // namespace
}  // namespace wsindex::cli::test
