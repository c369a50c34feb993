// wsbench-synth-index: writes N synthetic entries into a fresh index database through
// ScanIngest, the daemon's scan path, as if a walk of ROOT had found them — without a file
// system, so that the query side can be measured at sizes no test disk holds (100M entries).
// The result is an index wsindexd opens and serves as after a scan of ROOT; ROOT must not
// exist, so that nothing on disk contradicts it (start the daemon with --no-watch and without
// ROOT in its configuration: then nothing rescans it).
//
//   wsbench-synth-index --db FILE --entries N [--root /synthetic] [--seed S]
//                       [--files-per-dir 20] [--paths LIST] [--no-index]
//
// --paths also writes every entry's path to LIST, one per line, in the same order, for
// `plocate-build --plaintext LIST DB` (the same names for plocate). Memory does not grow with
// N on this side (one batch at a time); the writer's own per-directory state does, as in a
// scan. One JSON line: entries, dirs, the tree's shape, seconds (begin .. finish, the swap
// included), db_bytes (index.db and its WAL after the writer closed) and peak RSS. --no-index
// makes the records and drops them: the generator's own time and memory, apart from the writer's.
#include <sys/resource.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "bench/synth_index/synthetic_tree.hpp"
#include "storage/scan_ingest.hpp"

namespace {

using wsindex::core::Status;

long long file_bytes(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : 0;
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

int fail(const std::string& what) {
    std::fprintf(stderr, "wsbench-synth-index: %s\n", what.c_str());
    return 1;
}

double cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// --no-index: the records are made and dropped, the paths written if asked.
int generate_only(const std::string& root, std::uint64_t entries, std::uint64_t seed,
                  std::uint64_t files_per_dir, std::size_t batch_rows, std::FILE* paths) {
    wsindex::bench::SyntheticTree tree(root, entries, seed, files_per_dir);
    const auto t0 = std::chrono::steady_clock::now();
    const wsindex::bench::SyntheticTree::BatchSink drop = [](std::span<wsindex::core::WalkResult>) {
        return Status::ok();
    };
    wsindex::bench::SyntheticTree::PathSink to_list;
    if (paths != nullptr) {
        to_list = [paths](std::string_view path) {
            std::fwrite(path.data(), 1, path.size(), paths);
            std::fputc('\n', paths);
        };
    }
    const Status status = tree.generate(batch_rows, drop, to_list);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (paths != nullptr && std::fclose(paths) != 0) return fail("writing the paths");
    if (!status) return fail(status.to_string());
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    std::printf(
        "{\"entries\":%llu,\"dirs\":%llu,\"no_index\":true,\"seconds\":%.3f,"
        "\"cpu_seconds\":%.3f,\"peak_rss_kib\":%ld}\n",
        static_cast<unsigned long long>(tree.entries()),
        static_cast<unsigned long long>(tree.dirs()), seconds, cpu_seconds(), ru.ru_maxrss);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Write N synthetic entries into a fresh wsindexd index"};
    std::string db_path;
    std::uint64_t entries = 0;
    std::string root = "/synthetic";
    std::uint64_t seed = 1;
    std::uint64_t files_per_dir = 20;
    std::string paths_file;
    std::size_t batch_rows = 4096;
    std::size_t rows_per_txn = 20000;
    app.add_option("--db", db_path, "index database to create (must not exist)")->required();
    app.add_option("--entries", entries, "entries, the root included")->required();
    app.add_option("--root", root, "the root the entries are under (must not exist on disk)");
    app.add_option("--seed", seed, "name generator seed");
    app.add_option("--files-per-dir", files_per_dir, "files per leaf directory (and ~fan-out)");
    app.add_option("--paths", paths_file, "also write the paths here, one per line");
    app.add_option("--batch-rows", batch_rows, "records per batch handed to the writer");
    app.add_option("--rows-per-txn", rows_per_txn, "rows per transaction");
    bool no_index = false;
    app.add_flag("--no-index", no_index,
                 "generate without writing the index (the generator's own cost and memory)");
    CLI11_PARSE(app, argc, argv);

    if (root.size() < 2 || root.front() != '/' || root.back() == '/' ||
        root.find("//") != std::string::npos) {
        return fail("--root must be absolute and normalized, not '/': " + root);
    }
    if (exists(root)) return fail(root + " exists: a synthetic root must not");
    if (!no_index && exists(db_path)) return fail(db_path + " exists: the index must be fresh");
    if (files_per_dir == 0 || entries == 0)
        return fail("--entries and --files-per-dir must be > 0");

    std::FILE* paths = nullptr;
    if (!paths_file.empty()) {
        paths = std::fopen(paths_file.c_str(), "w");
        if (paths == nullptr) return fail("cannot write " + paths_file);
        static char buffer[1 << 20];
        std::setvbuf(paths, buffer, _IOFBF, sizeof buffer);
    }

    if (no_index) return generate_only(root, entries, seed, files_per_dir, batch_rows, paths);

    wsindex::storage::ScanIngestOptions options;
    options.scan.rows_per_transaction = rows_per_txn;
    std::unique_ptr<wsindex::storage::ScanIngest> writer;
    if (Status s = wsindex::storage::ScanIngest::open(db_path, options, &writer); !s) {
        return fail(s.to_string());
    }
    wsindex::bench::SyntheticTree tree(root, entries, seed, files_per_dir);
    const auto t0 = std::chrono::steady_clock::now();
    Status status = writer->begin(root);
    if (status) {
        const wsindex::bench::SyntheticTree::BatchSink to_writer =
            [&](std::span<wsindex::core::WalkResult> batch) { return writer->consume(batch); };
        wsindex::bench::SyntheticTree::PathSink to_list;
        if (paths != nullptr) {
            to_list = [paths](std::string_view path) {
                std::fwrite(path.data(), 1, path.size(), paths);
                std::fputc('\n', paths);
            };
        }
        const Status generated = tree.generate(batch_rows, to_writer, to_list);
        status = generated ? writer->finish() : writer->abort(generated, false);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (status) status = writer->writer().checkpoint();
    const std::uint64_t written = writer->writer().entries();  // the writer's own count
    writer.reset();  // the last connection closes: SQLite checkpoints and removes the WAL
    const double total_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (paths != nullptr && std::fclose(paths) != 0) return fail("writing " + paths_file);
    if (!status) return fail(status.to_string());

    const long long db_bytes = file_bytes(db_path) + file_bytes(db_path + "-wal");
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const auto& shape = tree.shape();
    if (written != tree.entries()) {
        return fail("the writer counted " + std::to_string(written) + " entries, not " +
                    std::to_string(tree.entries()));
    }
    std::printf(
        "{\"entries\":%llu,\"dirs\":%llu,\"levels\":%u,\"fanout\":%llu,\"files_per_dir\":%llu,"
        "\"root\":\"%s\",\"seed\":%llu,\"seconds\":%.3f,\"seconds_closed\":%.3f,"
        "\"db_bytes\":%lld,\"bytes_per_entry\":%.1f,\"peak_rss_kib\":%ld}\n",
        static_cast<unsigned long long>(tree.entries()),
        static_cast<unsigned long long>(tree.dirs()), shape.levels,
        static_cast<unsigned long long>(shape.fanout),
        static_cast<unsigned long long>(shape.files_per_dir), root.c_str(),
        static_cast<unsigned long long>(seed), seconds, total_seconds, db_bytes,
        static_cast<double>(db_bytes) / static_cast<double>(tree.entries()), ru.ru_maxrss);
    return 0;
}
