// wsbench-walk: walk ROOT with the parallel walker; one JSON line of counts, seconds and peak RSS.
//
//   wsbench-walk ROOT [--workers N] [--one-file-system] [--print0] [--batch N] [--full-paths]
//
// Results are consumed and dropped batch by batch (as a database writer would take them), so the
// peak RSS is the walker's own. With --print0 every path goes to stdout NUL-terminated (the set
// equals `find ROOT -print0`) and the JSON line goes to stderr. Without --print0 the walk runs
// as the index runs it (WalkOptions::full_paths = false: files' records carry their names
// only), as walkfloor does (it builds paths for directories only); --full-paths builds every
// path anyway.
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/walker.hpp"

namespace {

using wsindex::core::EntryType;
using wsindex::core::Status;
using wsindex::core::WalkResult;

struct Counts {
    std::uint64_t entries = 0, dirs = 0, files = 0, symlinks = 0, other = 0, errors = 0;
};

// Buffered writes of NUL-terminated paths to fd 1 (stdio would work too; this avoids a lock per
// path).
class Print0 {
  public:
    void add(const std::string& path) {
        if (buf_.size() + path.size() + 1 > kFlushAt) flush();
        buf_.append(path);
        buf_.push_back('\0');
    }
    bool flush() {
        std::size_t off = 0;
        while (off < buf_.size()) {
            const ssize_t n = ::write(1, buf_.data() + off, buf_.size() - off);
            if (n < 0) {
                if (errno == EINTR) continue;
                return false;
            }
            off += static_cast<std::size_t>(n);
        }
        buf_.clear();
        return true;
    }

  private:
    static constexpr std::size_t kFlushAt = 1 << 20;
    std::string buf_;
};

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Walk ROOT with the wsindexd walker and print one JSON line of counts"};
    std::string root;
    unsigned workers = 0;
    bool one_fs = false;
    bool print0 = false;
    std::size_t batch = 1024;
    app.add_option("ROOT", root, "directory to walk")->required();
    app.add_option("--workers", workers,
                   "worker threads (default: the walker's, one per CPU and at least 16)");
    app.add_flag("--one-file-system", one_fs, "do not descend into other file systems");
    app.add_option("--batch", batch, "results per batch handed to the consumer (default 1024)");
    app.add_flag("--print0", print0, "print every path NUL-terminated on stdout, JSON on stderr");
    bool full_paths = false;
    app.add_flag("--full-paths", full_paths,
                 "build every record's full path (implied by --print0)");
    CLI11_PARSE(app, argc, argv);

    wsindex::core::WalkOptions options;
    options.workers = workers;
    options.one_file_system = one_fs;
    options.result_batch = batch;
    options.full_paths = full_paths || print0;
    wsindex::core::Walker walker(options);

    Counts c;
    Print0 out;
    bool write_failed = false;
    const auto t0 = std::chrono::steady_clock::now();
    const Status status = walker.run(root, [&](std::span<WalkResult> results) {
        for (const WalkResult& r : results) {
            ++c.entries;
            if (r.error != 0) ++c.errors;
            switch (r.type) {
                case EntryType::Directory:
                    ++c.dirs;
                    break;
                case EntryType::File:
                    ++c.files;
                    break;
                case EntryType::Symlink:
                    ++c.symlinks;
                    break;
                default:
                    ++c.other;
                    break;
            }
            if (print0) out.add(r.path);
        }
        return Status::ok();
    });
    if (print0 && !out.flush()) write_failed = true;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const auto st = walker.stats();
    std::FILE* json = print0 ? stderr : stdout;
    std::fprintf(
        json,
        "{\"entries\":%llu,\"dirs\":%llu,\"files\":%llu,\"symlinks\":%llu,"
        "\"other\":%llu,\"errors\":%llu,\"seconds\":%.3f,\"peak_rss_kib\":%ld,"
        "\"workers\":%u,\"chunks\":%llu,\"reopens\":%llu,\"max_open_fds\":%llu,"
        "\"tasks\":%llu,\"steal_attempts\":%llu,\"steals\":%llu,\"parks\":%llu,"
        "\"full_paths\":%s,\"status\":\"%s\"}\n",
        static_cast<unsigned long long>(c.entries), static_cast<unsigned long long>(c.dirs),
        static_cast<unsigned long long>(c.files), static_cast<unsigned long long>(c.symlinks),
        static_cast<unsigned long long>(c.other), static_cast<unsigned long long>(c.errors),
        seconds, ru.ru_maxrss, walker.workers(), static_cast<unsigned long long>(st.chunks),
        static_cast<unsigned long long>(st.reopens),
        static_cast<unsigned long long>(st.max_open_fds), static_cast<unsigned long long>(st.tasks),
        static_cast<unsigned long long>(st.steal_attempts),
        static_cast<unsigned long long>(st.steals), static_cast<unsigned long long>(st.parks),
        options.full_paths ? "true" : "false", status ? "ok" : "error");
    if (!status) {
        std::fprintf(stderr, "wsbench-walk: %s\n", status.to_string().c_str());
        return 1;
    }
    if (write_failed) {
        std::perror("wsbench-walk: write");
        return 1;
    }
    return 0;
}
