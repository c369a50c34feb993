// name_search_bench: substring search over N synthetic names by a serial scan, the parallel scan
// on a RangeExecutor, and a trigram posting-list index; prints one table per N.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/range_executor.hpp"
#include "name_file_image.hpp"
#include "scan_search.hpp"
#include "synthetic_names.hpp"
#include "trigram_index.hpp"

namespace {

using namespace wsindex;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// A rare 6-letter word, a combination of common words (long lists, short intersection), a
// frequent word, a common 3-letter fragment (one list), a 2-letter fragment (no trigram).
constexpr std::size_t kNamesPerDir = 64;

const std::vector<std::string> kNeedles = {"zephyr", "str_fmt", "cache", "txt", "io"};

struct Options {
    std::size_t names = 1000000;
    std::uint64_t seed = 1;
    int runs = 5;
    unsigned workers = 2;
    std::string dir = "/dev/shm";
    std::string paths;  // also write the names as paths, one a line (plocate-build --plaintext)
};

[[noreturn]] void usage() {
    std::fprintf(
        stderr,
        "usage: name_search_bench [--names N] [--seed S] [--runs R] [--workers W] "
        "[--dir DIR] [--paths FILE]\n"
        "  DIR holds the name file while it is written (tmpfs keeps disk out of it)\n"
        "  FILE receives /bench/d<dir>/<name> per line, the names as the index holds them\n");
    std::exit(2);
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (i + 1 >= argc) usage();
        const char* v = argv[++i];
        if (a == "--names") {
            o.names = std::strtoull(v, nullptr, 10);
        } else if (a == "--seed") {
            o.seed = std::strtoull(v, nullptr, 10);
        } else if (a == "--runs") {
            o.runs = std::atoi(v);
        } else if (a == "--workers") {
            o.workers = static_cast<unsigned>(std::atoi(v));
        } else if (a == "--dir") {
            o.dir = v;
        } else if (a == "--paths") {
            o.paths = v;
        } else {
            usage();
        }
    }
    if (o.names == 0 || o.names >= UINT32_MAX || o.runs < 1 || o.workers < 1) usage();
    return o;
}

// Median milliseconds of `runs` calls of `search`, which returns the matching ids; every run's
// ids must equal `expected` (the serial scan's) or the benchmark stops.
template <typename F>
double median_ms(int runs, const std::vector<std::uint32_t>& expected, const char* method,
                 const std::string& needle, F&& search) {
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r) {
        const auto t = Clock::now();
        const std::vector<std::uint32_t> ids = search();
        ms.push_back(seconds_since(t) * 1000.0);
        if (ids != expected) {
            std::fprintf(stderr, "MISMATCH: %s for \"%s\": %zu matches, serial scan %zu\n", method,
                         needle.c_str(), ids.size(), expected.size());
            std::exit(1);
        }
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

// CPU time of this thread: the build's cost without the time other processes had the core.
double thread_cpu_s() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The names as paths, in the directories write_and_open_name_file gives them.
bool write_paths(const bench::NameSet& names, std::size_t names_per_dir, const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) return false;
    bool ok = true;
    for (std::size_t i = 0; i < names.size() && ok; ++i) {
        const std::string_view name(names.bytes.data() + names.starts[i],
                                    names.starts[i + 1] - names.starts[i] - 1);
        ok = std::fprintf(f, "/bench/d%zu/%.*s\n", i / names_per_dir, static_cast<int>(name.size()),
                          name.data()) > 0;
    }
    return std::fclose(f) == 0 && ok;
}

double peak_rss_mib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    const double n = static_cast<double>(o.names);

    auto t = Clock::now();
    std::shared_ptr<const storage::NameFile> file;
    std::size_t name_bytes = 0;
    double generate_s = 0;
    double open_s = 0;
    {
        bench::NameSet names = bench::make_names(o.names, o.seed);
        generate_s = seconds_since(t);
        name_bytes = names.bytes.size();
        if (!o.paths.empty() && !write_paths(names, kNamesPerDir, o.paths)) {
            std::fprintf(stderr, "cannot write %s\n", o.paths.c_str());
            return 1;
        }
        t = Clock::now();
        const std::string path = o.dir + "/name_search_bench." + std::to_string(::getpid());
        if (auto s = bench::write_and_open_name_file(names, kNamesPerDir, path, &file); !s) {
            std::fprintf(stderr, "name file: %s\n", s.message().c_str());
            return 1;
        }
        open_s = seconds_since(t);
    }

    t = Clock::now();
    const double cpu_before = thread_cpu_s();
    const bench::TrigramIndex trigrams = bench::TrigramIndex::build(*file);
    const double trigram_build_s = seconds_since(t);
    const double trigram_build_cpu_s = thread_cpu_s() - cpu_before;

    core::RangeOptions ro;
    ro.workers = o.workers;
    core::RangeExecutor executor(ro);

    std::printf(
        "## N = %zu names (seed %llu), %.1f bytes per name with its terminator on average\n",
        o.names, static_cast<unsigned long long>(o.seed), static_cast<double>(name_bytes) / n);
    std::printf(
        "name file image: %.1f MiB (%.1f B/name); generated in %.2f s, written and "
        "opened (validated) in %.2f s\n",
        static_cast<double>(file->image_bytes()) / 1048576.0,
        static_cast<double>(file->image_bytes()) / n, generate_s, open_s);
    std::printf("trigram index: %zu trigrams, %llu postings (%.1f per name)\n\n",
                trigrams.trigrams(), static_cast<unsigned long long>(trigrams.postings()),
                static_cast<double>(trigrams.postings()) / n);

    std::printf("| method | build s | extra bytes | B/name |");
    for (const std::string& needle : kNeedles) std::printf(" `%s` ms |", needle.c_str());
    std::printf("\n|---|---:|---:|---:|");
    for (std::size_t i = 0; i < kNeedles.size(); ++i) std::printf("---:|");
    std::printf("\n");

    std::vector<std::vector<std::uint32_t>> expected;
    for (const std::string& needle : kNeedles) {
        expected.push_back(bench::scan_search(*file, needle, nullptr));
    }
    std::vector<double> serial, parallel, indexed;
    std::vector<bool> fell_back;
    for (std::size_t q = 0; q < kNeedles.size(); ++q) {
        const std::string& needle = kNeedles[q];
        serial.push_back(median_ms(o.runs, expected[q], "serial scan", needle,
                                   [&] { return bench::scan_search(*file, needle, nullptr); }));
        parallel.push_back(median_ms(o.runs, expected[q], "parallel scan", needle,
                                     [&] { return bench::scan_search(*file, needle, &executor); }));
        fell_back.push_back(needle.size() < 3);
        indexed.push_back(median_ms(o.runs, expected[q], "trigram", needle, [&] {
            std::vector<std::uint32_t> ids;
            if (!trigrams.search(*file, needle, &ids))
                ids = bench::scan_search(*file, needle, &executor);
            return ids;
        }));
    }
    auto row = [&](const char* method, const char* build, std::size_t bytes,
                   const std::vector<double>& ms) {
        std::printf("| %s | %s | %zu | %.1f |", method, build, bytes,
                    static_cast<double>(bytes) / n);
        for (std::size_t q = 0; q < ms.size(); ++q) {
            std::printf(" %.2f%s |", ms[q], &ms == &indexed && fell_back[q] ? " (scan)" : "");
        }
        std::printf("\n");
    };
    row("scan, 1 core", "0", 0, serial);
    const std::string workers = "scan, " + std::to_string(o.workers) + " workers";
    row(workers.c_str(), "0", 0, parallel);
    char build[32];
    std::snprintf(build, sizeof build, "%.2f (%.2f CPU)", trigram_build_s, trigram_build_cpu_s);
    row("trigram lists", build, trigrams.bytes(), indexed);
    std::printf("| matches (all methods equal) | | | |");
    for (const auto& ids : expected) std::printf(" %zu |", ids.size());
    std::printf("\n\nmedian of %d runs per query; peak RSS %.0f MiB (names, image, index)\n\n",
                o.runs, peak_rss_mib());
    return 0;
}
