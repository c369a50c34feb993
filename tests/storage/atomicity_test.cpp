// Scans are atomic to readers: old index during a scan, old index after a failed or cancelled
// scan (full dumps compared), and a subtree rescan equal to a fresh full scan.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "storage/database.hpp"
#include "storage/scan_ingest.hpp"
#include "storage/scan_writer.hpp"
#include "storage/sqlite_error.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

using test::TempDir;

// root/{a,b,c}/... with files of varied sizes, a hard-link pair inside b, a symlink, a fifo.
void make_tree(const std::string& root) {
    ASSERT_EQ(mkdir(root.c_str(), 0755), 0);
    for (const char* d : {"a", "b", "c", "b/x", "b/x/y", "c/z"}) {
        ASSERT_EQ(mkdir((root + "/" + d).c_str(), 0755), 0);
    }
    int n = 0;
    for (const char* d : {"a", "b", "c", "b/x", "b/x/y", "c/z"}) {
        for (int i = 0; i < 40; ++i) {
            test::write_file(root + "/" + d + "/file" + std::to_string(i), (n++ * 37) % 5000);
        }
    }
    ASSERT_EQ(link((root + "/b/file1").c_str(), (root + "/b/x/hard").c_str()), 0);
    ASSERT_EQ(symlink("file2", (root + "/a/link").c_str()), 0);
    ASSERT_EQ(mkfifo((root + "/c/fifo").c_str(), 0644), 0);
}

// Changes confined to b: added, removed and resized files, a new directory, a new link pair.
void change_b(const std::string& root) {
    test::write_file(root + "/b/new-file", 12345);
    ASSERT_EQ(unlink((root + "/b/file3").c_str()), 0);
    test::write_file(root + "/b/x/file5", 77777);
    ASSERT_EQ(mkdir((root + "/b/x/fresh").c_str(), 0755), 0);
    test::write_file(root + "/b/x/fresh/inner", 10);
    ASSERT_EQ(link((root + "/b/x/fresh/inner").c_str(), (root + "/b/inner-again").c_str()), 0);
    test::remove_tree(root + "/b/x/y");
}

struct Fixture {
    TempDir dir;
    std::string root = dir / "tree";
    std::string db_path = dir / "index.db";
};

core::Status scan_batched(ScanIngest& w, const std::string& root, std::size_t batch = 50) {
    if (auto s = w.begin(root); !s) return s;
    auto results = test::walk_tree(root);
    test::shuffle_results(&results, 11);
    core::Status walked = test::feed(std::move(results), batch,
                                     [&](std::span<core::WalkResult> b) { return w.consume(b); });
    return walked ? w.finish() : w.abort(walked, false);
}

TEST(Atomicity, ReaderDuringScanSeesTheOldIndex) {
    Fixture f;
    make_tree(f.root);
    ASSERT_TRUE(test::scan_db(f.db_path, f.root));
    Database reader = test::open_reader(f.db_path);
    const std::string old_dump = test::dump_index(reader);

    change_b(f.root);
    std::unique_ptr<ScanWriter> w;
    ASSERT_TRUE(ScanWriter::open(f.db_path, &w));
    ScanOptions options;
    options.rows_per_transaction = 20;  // many commits while the reader looks
    ASSERT_TRUE(w->begin(f.root, options));
    auto results = test::walk_tree(f.root);
    test::shuffle_results(&results, 2);
    std::size_t fed = 0;
    auto s = test::feed(results, 7, [&](std::span<core::WalkResult> b) {
        auto st = w->write(b);
        fed += b.size();
        if (fed % 70 == 0) {
            EXPECT_EQ(test::dump_index(reader), old_dump) << "after " << fed;
        }
        return st;
    });
    ASSERT_TRUE(s) << s.to_string();
    EXPECT_GT(test::query_int(reader, "SELECT entries FROM scans WHERE state = 'running'"), 0);
    EXPECT_EQ(test::dump_index(reader), old_dump);
    ASSERT_TRUE(w->complete());
    ASSERT_TRUE(w->collect_garbage());

    TempDir other;
    ASSERT_TRUE(test::scan_db(other / "fresh.db", f.root));
    Database fresh = test::open_reader(other / "fresh.db");
    EXPECT_EQ(test::dump_index(reader), test::dump_index(fresh));
}

TEST(Atomicity, ConcurrentReaderSeesOnlyOldOrNew) {
    Fixture f;
    make_tree(f.root);
    ASSERT_TRUE(test::scan_db(f.db_path, f.root));
    std::string old_dump;
    {
        Database reader = test::open_reader(f.db_path);
        old_dump = test::dump_files(reader);
    }
    change_b(f.root);
    std::atomic<bool> done{false};
    std::atomic<int> old_seen{0};
    std::atomic<int> other_seen{0};
    std::vector<std::string> seen_new;
    std::thread reader_thread([&] {
        Database reader = test::open_reader(f.db_path);
        while (!done.load(std::memory_order_acquire)) {
            std::string d = test::dump_files(reader);
            if (d == old_dump) {
                old_seen.fetch_add(1, std::memory_order_relaxed);
            } else {
                other_seen.fetch_add(1, std::memory_order_relaxed);
                if (seen_new.empty() || seen_new.back() != d) seen_new.push_back(d);
            }
        }
    });
    // The reader's first look precedes the scan: a rescan that rewrites only b is over fast
    // enough that the reader could otherwise first look after the swap (seen under load).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (old_seen.load(std::memory_order_relaxed) == 0 &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
    }
    std::unique_ptr<ScanIngest> w;
    ScanIngestOptions options;
    options.threaded = true;  // the queue hand-off under a concurrent reader (TSan)
    options.scan.rows_per_transaction = 25;
    ASSERT_TRUE(ScanIngest::open(f.db_path, options, &w));
    auto s = scan_batched(*w, f.root, 5);
    done.store(true, std::memory_order_release);
    reader_thread.join();
    ASSERT_TRUE(s) << s.to_string();
    Database reader = test::open_reader(f.db_path);
    const std::string new_dump = test::dump_files(reader);
    EXPECT_GT(old_seen.load(), 0);
    // Every state that was not the old index was exactly the new one.
    for (const auto& d : seen_new) EXPECT_EQ(d, new_dump);
}

TEST(Atomicity, InjectedWriteErrorLeavesTheOldIndexIdentical) {
    for (bool threaded : {true, false}) {
        Fixture f;
        make_tree(f.root);
        ASSERT_TRUE(test::scan_db(f.db_path, f.root));
        Database reader = test::open_reader(f.db_path);
        const std::string old_dump = test::dump_index(reader);
        const auto old_rows = test::query_int(reader, "SELECT count(*) FROM entries");
        change_b(f.root);

        std::unique_ptr<ScanIngest> w;
        ScanIngestOptions options;
        options.threaded = threaded;
        options.scan.rows_per_transaction = 30;
        // Low: the rescan writes only the changed directories (b and below, ~90 rows).
        options.scan.fail_after_rows = 10;
        options.queue_rows = 10;  // backpressure: the walk cannot run far ahead of the writer
        ASSERT_TRUE(ScanIngest::open(f.db_path, options, &w));
        ASSERT_TRUE(w->begin(f.root));
        auto results = test::walk_tree(f.root);
        std::size_t batches = 0;
        core::Status walked =
            test::feed(std::move(results), 10, [&](std::span<core::WalkResult> b) {
                ++batches;
                return w->consume(b);
            });
        // The consumer reported the failure, so the walk stopped early.
        ASSERT_FALSE(walked);
        EXPECT_LT(batches, 30u);
        EXPECT_EQ(walked.code(), make_error_code(StorageErrc::injected_failure));
        auto ended = w->abort(walked, false);
        EXPECT_FALSE(ended);
        EXPECT_NE(ended.message().find("injected"), std::string::npos) << ended.to_string();

        EXPECT_EQ(test::dump_index(reader), old_dump) << "threaded=" << threaded;
        EXPECT_EQ(test::query_int(reader, "SELECT count(*) FROM entries"), old_rows);
        EXPECT_EQ(test::query_text(reader, "SELECT state FROM scans ORDER BY id DESC LIMIT 1"),
                  "failed");
        EXPECT_NE(test::query_text(reader, "SELECT error FROM scans ORDER BY id DESC LIMIT 1")
                      .find("injected"),
                  std::string::npos);
        EXPECT_EQ(test::integrity(reader), "ok");
    }
}

TEST(Atomicity, CancelMidwayLeavesTheOldIndexIdentical) {
    Fixture f;
    make_tree(f.root);
    ASSERT_TRUE(test::scan_db(f.db_path, f.root));
    Database reader = test::open_reader(f.db_path);
    const std::string old_dump = test::dump_index(reader);
    const auto old_rows = test::query_int(reader, "SELECT count(*) FROM entries");
    test::remove_tree(f.root + "/c");

    std::unique_ptr<ScanIngest> w;
    ScanIngestOptions options;
    options.threaded = true;
    options.scan.rows_per_transaction = 30;
    ASSERT_TRUE(ScanIngest::open(f.db_path, options, &w));
    ASSERT_TRUE(w->begin(f.root));
    auto results = test::walk_tree(f.root);
    results.resize(results.size() / 2);
    ASSERT_TRUE(test::feed(std::move(results), 10,
                           [&](std::span<core::WalkResult> b) { return w->consume(b); }));
    const core::Status cancelled = storage_status(StorageErrc::cancelled, "cancelled by wsctl");
    EXPECT_FALSE(w->abort(cancelled, true));
    EXPECT_EQ(test::dump_index(reader), old_dump);
    EXPECT_EQ(test::query_int(reader, "SELECT count(*) FROM entries"), old_rows);
    EXPECT_EQ(test::query_text(reader, "SELECT state FROM scans ORDER BY id DESC LIMIT 1"),
              "cancelled");
    EXPECT_EQ(test::integrity(reader), "ok");
    // The writer is usable again, and a complete scan now replaces the index.
    auto s = scan_batched(*w, f.root);
    ASSERT_TRUE(s) << s.to_string();
    EXPECT_NE(test::dump_index(reader), old_dump);
}

TEST(Atomicity, SubtreeRescanEqualsAFreshFullScan) {
    for (bool threaded : {true, false}) {
        Fixture f;
        make_tree(f.root);
        std::unique_ptr<ScanIngest> w;
        ScanIngestOptions options;
        options.threaded = threaded;
        ASSERT_TRUE(ScanIngest::open(f.db_path, options, &w));
        ASSERT_TRUE(scan_batched(*w, f.root));
        change_b(f.root);
        auto s = scan_batched(*w, f.root + "/b");
        ASSERT_TRUE(s) << s.to_string();

        TempDir other;
        ASSERT_TRUE(test::scan_db(other / "fresh.db", f.root, 99));
        Database fresh = test::open_reader(other / "fresh.db");
        Database reader = test::open_reader(f.db_path);
        EXPECT_EQ(test::dump_files(reader), test::dump_files(fresh));
        EXPECT_EQ(test::dump_totals(reader), test::dump_totals(fresh));
        EXPECT_EQ(test::query_int(reader, "SELECT count(*) FROM entries"),
                  test::query_int(fresh, "SELECT count(*) FROM entries"));
        EXPECT_EQ(test::query_int(reader, "SELECT count(*) FROM links"),
                  test::query_int(fresh, "SELECT count(*) FROM links"));
        EXPECT_EQ(test::integrity(reader), "ok");
    }
}

TEST(Atomicity, SecondWriterIsRefusedWhileTheFirstHoldsTheIndex) {
    TempDir dir;
    std::unique_ptr<ScanWriter> first;
    ASSERT_TRUE(ScanWriter::open(dir / "index.db", &first));
    std::unique_ptr<ScanWriter> second;
    auto s = ScanWriter::open(dir / "index.db", &second);
    EXPECT_FALSE(s);
    EXPECT_NE(s.message().find("another process"), std::string::npos) << s.to_string();
}

}  // namespace
}  // namespace wsindex::storage
