// wsbench-ingest: walk ROOT with the parallel walker and ingest into --db through ScanIngest,
// the daemon's code path; one JSON line: entries, errors, seconds, db_bytes, peak RSS.
//
//   wsbench-ingest ROOT --db FILE [--workers N] [--inline] [--rows-per-txn N] [--replay]
//
// An existing FILE makes it a rescan: unchanged directories are kept, not rewritten
// (reused_dirs, reused_rows in the JSON).
//
// --replay (a measurement aid, not the daemon's path): walk first into memory, untimed, then
// time only the ingest of those batches, and report the thread CPU seconds of the writer.
//
// --inline writes on the walk's consumer thread instead of the writer thread (the comparison
// asked for in issue 4). seconds covers begin → finish (the swap and garbage collection
// included); db_bytes is the database's size once checkpointed (page_count x page_size).
#include <sys/resource.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/walker.hpp"
#include "storage/database.hpp"
#include "storage/scan_ingest.hpp"

namespace {

using wsindex::core::Status;

// Absolute and lexically normal, no trailing slash, symlinks not resolved (like the walker).
std::string normalize_root(const std::string& root) {
    std::string p = std::filesystem::absolute(root).lexically_normal().string();
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Walk ROOT and ingest it into an index the way wsindexd does"};
    std::string root;
    std::string db_path;
    unsigned workers = 0;
    bool threaded = false;
    std::size_t rows_per_txn = 20000;
    app.add_option("ROOT", root, "directory to index")->required();
    app.add_option("--db", db_path, "index database (created if missing)")->required();
    app.add_option("--workers", workers, "walker threads (default: number of CPUs)");
    app.add_flag("--thread", threaded, "write on a writer thread behind a bounded queue");
    bool inline_flag = false;  // the old spelling of the default, kept for scripts
    app.add_flag("--inline", inline_flag, "write on the consumer thread (the default)");
    app.add_option("--rows-per-txn", rows_per_txn, "rows per transaction");
    int checkpoint_ms = -1;
    app.add_option("--checkpoint-ms", checkpoint_ms,
                   "checkpoint period during the scan (0: SQLite's automatic checkpoints)");
    bool replay = false;
    bool full_paths = false;
    app.add_flag("--full-paths", full_paths, "walk with full paths in every record (comparison)");
    app.add_flag("--replay", replay, "walk into memory first; time the ingest alone");
    CLI11_PARSE(app, argc, argv);

    root = normalize_root(root);
    wsindex::storage::ScanIngestOptions options;
    options.threaded = threaded && !inline_flag;
    options.scan.rows_per_transaction = rows_per_txn;
    if (checkpoint_ms >= 0)
        options.scan.checkpoint_period = std::chrono::milliseconds(checkpoint_ms);
    std::unique_ptr<wsindex::storage::ScanIngest> writer;
    if (Status s = wsindex::storage::ScanIngest::open(db_path, options, &writer); !s) {
        std::fprintf(stderr, "wsbench-ingest: %s\n", s.to_string().c_str());
        return 1;
    }
    wsindex::core::WalkOptions walk_options;
    walk_options.workers = workers;
    walk_options.full_paths = full_paths;  // the daemon walks with names only (scan_service)
    wsindex::core::Walker walker(walk_options);

    std::vector<std::vector<wsindex::core::WalkResult>> batches;
    if (replay) {
        const Status walked = walker.run(root, [&](std::span<wsindex::core::WalkResult> batch) {
            batches.emplace_back(std::make_move_iterator(batch.begin()),
                                 std::make_move_iterator(batch.end()));
            return Status::ok();
        });
        if (!walked) {
            std::fprintf(stderr, "wsbench-ingest: %s\n", walked.to_string().c_str());
            return 1;
        }
    }
    rusage before{};
    getrusage(RUSAGE_SELF, &before);
    const auto t0 = std::chrono::steady_clock::now();
    Status status = writer->begin(root);
    if (status) {
        Status walked;
        if (replay) {
            for (auto& b : batches) {
                walked = writer->consume(b);
                if (!walked) break;
            }
        } else {
            walked = walker.run(root, [&](std::span<wsindex::core::WalkResult> batch) {
                return writer->consume(batch);
            });
        }
        status = walked ? writer->finish() : writer->abort(walked, false);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rusage after{};
    getrusage(RUSAGE_SELF, &after);
    auto cpu = [](const rusage& r) {
        return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
               static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
    };
    const double cpu_seconds = cpu(after) - cpu(before);

    const auto entries = writer->writer().entries();
    const auto errors = writer->writer().errors();
    // The database's size once checkpointed (pages in the WAL included), without running a
    // checkpoint here: that would be work of the benchmark, not of the ingest, inside the
    // process time that bench/ingest_compare.sh compares with the peers'.
    std::int64_t pages = 0;
    std::int64_t page_size = 0;
    (void)writer->writer().database().query_int64("PRAGMA page_count", &pages);
    (void)writer->writer().database().query_int64("PRAGMA page_size", &page_size);
    const long long db_bytes = pages * page_size;
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    std::printf(
        "{\"entries\":%llu,\"errors\":%llu,\"seconds\":%.3f,\"cpu_seconds\":%.3f,"
        "\"swap_seconds\":%.3f,\"gc_seconds\":%.3f,\"db_bytes\":%lld,"
        "\"bytes_per_entry\":%.1f,\"peak_rss_kib\":%ld,\"workers\":%u,\"writer\":\"%s\","
        "\"replay\":%s,\"reused_dirs\":%llu,\"reused_rows\":%llu,\"status\":\"%s\"}\n",
        static_cast<unsigned long long>(entries), static_cast<unsigned long long>(errors), seconds,
        cpu_seconds, writer->writer().last_swap_seconds(), writer->writer().last_gc_seconds(),
        db_bytes, entries ? static_cast<double>(db_bytes) / static_cast<double>(entries) : 0.0,
        ru.ru_maxrss, walker.workers(), options.threaded ? "thread" : "inline",
        replay ? "true" : "false", static_cast<unsigned long long>(writer->writer().reused_dirs()),
        static_cast<unsigned long long>(writer->writer().reused_rows()), status ? "ok" : "error");
    if (!status) {
        std::fprintf(stderr, "wsbench-ingest: %s\n", status.to_string().c_str());
        return 1;
    }
    return 0;
}
