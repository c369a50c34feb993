// wsbench-dupes-skew: full XXH3-128 hashes of every regular file below a directory, one file per
// index on the range executor as `wsctl dupes` hashes them (daemon/dupes_finder.cpp), with one
// worker slowed by a sleep per file (a stand-in for a file on a slow disk, or a busy core).
//
// Per repetition it prints one JSON line: the wall time, the work done (the workers' busy time
// summed, the slow worker's sleeps included), the even split's ideal (that work / workers), their
// ratio, and per worker the files it hashed and the steals it made. The ratio is what range
// stealing is judged by: 1.0 is a perfect split of the work as it was done; the static schedule
// (--schedule static: one fixed range per worker) shows what the same run costs without stealing.
//
//   wsbench-dupes-skew DIR [--workers N] [--slow-worker W] [--delay-us D] [--schedule S]
//                          [--repeat R]
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/range_executor.hpp"
#include "daemon/file_hash.hpp"

namespace {

using namespace wsindex;
using Clock = std::chrono::steady_clock;

struct File {
    std::string path;
    daemon::IndexedInode inode;
};

std::vector<File> list_files(const std::string& root) {
    std::vector<File> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
        struct stat st {};
        if (::lstat(e.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        File f;
        f.path = e.path().string();
        f.inode = {st.st_dev, st.st_ino, st.st_size,
                   st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec,
                   st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec};
        out.push_back(std::move(f));
    }
    // The finder's order: largest first (candidates come by size descending).
    std::sort(out.begin(), out.end(),
              [](const File& a, const File& b) { return a.inode.size > b.inode.size; });
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Hash a tree on the range executor with one worker slowed"};
    std::string root;
    unsigned workers = 2;
    unsigned slow_worker = 1;
    unsigned delay_us = 200;
    std::string schedule = "stealing";
    unsigned repeat = 3;
    app.add_option("dir", root, "Directory whose regular files are hashed")->required();
    app.add_option("--workers", workers, "Workers, the calling thread included");
    app.add_option("--slow-worker", slow_worker, "The worker that sleeps after each file");
    app.add_option("--delay-us", delay_us, "Its sleep per file, in microseconds");
    app.add_option("--schedule", schedule, "stealing or static")
        ->check(CLI::IsMember({"stealing", "static"}));
    app.add_option("--repeat", repeat, "Repetitions");
    CLI11_PARSE(app, argc, argv);

    const std::vector<File> files = list_files(root);
    core::RangeOptions ro;
    ro.workers = workers;
    ro.schedule =
        schedule == "static" ? core::RangeSchedule::Static : core::RangeSchedule::Stealing;
    core::RangeExecutor executor(ro);
    daemon::FileHasher hasher({});
    std::vector<daemon::DirChain> dirs(executor.size());
    for (unsigned r = 0; r < repeat; ++r) {
        std::atomic<std::uint64_t> failed{0};
        const auto t0 = Clock::now();
        const core::Status st = executor.parallel_for(
            files.size(), [&](std::size_t begin, std::size_t end, unsigned worker) {
                for (std::size_t i = begin; i < end; ++i) {
                    storage::Hash128 hash{};
                    daemon::ReadCounters read;
                    if (hasher.full(dirs[worker], files[i].path, files[i].inode, &hash, &read) !=
                        daemon::HashOutcome::Hashed) {
                        ++failed;
                    }
                    if (worker == slow_worker) {
                        std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
                    }
                }
            });
        const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
        if (!st) {
            std::fprintf(stderr, "parallel_for: %s\n", st.to_string().c_str());
            return 1;
        }
        const std::vector<core::RangeWorkerStats> stats = executor.stats();
        double busy = 0;
        std::string per_worker;
        for (std::size_t w = 0; w < stats.size(); ++w) {
            busy += static_cast<double>(stats[w].busy_ns) / 1e9;
            per_worker += (w == 0 ? "" : ",") + std::string("{\"files\":") +
                          std::to_string(stats[w].items) +
                          ",\"steals\":" + std::to_string(stats[w].steals) + "}";
        }
        const double ideal = busy / static_cast<double>(stats.size());
        std::printf(
            "{\"schedule\":\"%s\",\"files\":%zu,\"failed\":%llu,\"workers\":%u,\"slow_worker\":%u,"
            "\"delay_us\":%u,\"seconds\":%.4f,\"work_seconds\":%.4f,\"ideal_seconds\":%.4f,"
            "\"ratio\":%.3f,\"per_worker\":[%s]}\n",
            schedule.c_str(), files.size(), static_cast<unsigned long long>(failed.load()), workers,
            slow_worker, delay_us, wall, busy, ideal, wall / ideal, per_worker.c_str());
        std::fflush(stdout);
    }
    return 0;
}
