// Tests of the scan service driven directly: queueing, coalescing, cancel, live progress,
// periodic roots, path checks, and the priority of the scan threads.
#include "daemon/scan_service.hpp"

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "core/fs_ops.hpp"
#include "daemon/index_queries.hpp"
#include "daemon/scan_root.hpp"
#include "daemon/thread_priority.hpp"
#include "ipc/path_text.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "tests/daemon/support/daemon_test_support.hpp"

namespace wsindex::daemon {
namespace {

using test::Gate;
using test::TempDir;
using namespace std::chrono_literals;

struct Fixture {
    TempDir dir;
    std::string tree = dir / "tree";
    std::string db = dir / "index.db";
    std::size_t entries = 0;  // in the tree, root included

    Fixture() {
        std::filesystem::create_directories(tree);
        entries = test::make_tree(tree, 4, 20) + 1;
    }

    std::unique_ptr<ScanService> open(ScanServiceOptions options = {}) {
        options.db_path = db;
        options.settings.workers = 2;
        std::unique_ptr<ScanService> service;
        const core::Status st = ScanService::open(std::move(options), &service);
        EXPECT_TRUE(st) << st.to_string();
        return service;
    }

    std::vector<ipc::ScanInfo> scans_in_db() {
        storage::Database reader;
        EXPECT_TRUE(storage::Database::open(db, storage::OpenMode::read_only, &reader));
        std::vector<ipc::ScanInfo> out;
        EXPECT_TRUE(list_scans(reader, 0, &out));
        return out;
    }

    std::size_t files_in_index() {
        storage::Database reader;
        EXPECT_TRUE(storage::Database::open(db, storage::OpenMode::read_only, &reader));
        storage::Queries q(reader);
        storage::FindQuery all;
        all.limit = 0;
        std::vector<storage::FileRow> rows;
        EXPECT_TRUE(q.find(all, &rows));
        return rows.size();
    }
};

std::shared_ptr<const ScanJob> enqueue_ok(ScanService& s, const std::string& root) {
    auto job = s.enqueue(root);
    EXPECT_TRUE(job.ok()) << (job.ok() ? "" : job.error().to_string());
    return job.ok() ? job.value() : nullptr;
}

// From the wal-index (the -shm file; https://www.sqlite.org/walformat.html, native byte
// order): mxFrame, the frames in the log, at byte 16 of the header; nBackfill, the frames
// already copied into the database file, at byte 96.
struct WalProgress {
    std::uint32_t frames = 0;
    std::uint32_t backfilled = 0;
};

WalProgress wal_progress(const std::string& db) {
    std::ifstream shm(db + "-shm", std::ios::binary);
    char header[100] = {};
    EXPECT_TRUE(shm.read(header, sizeof header)) << "no wal-index for " << db;
    WalProgress p;
    std::memcpy(&p.frames, header + 16, sizeof p.frames);
    std::memcpy(&p.backfilled, header + 96, sizeof p.backfilled);
    return p;
}

TEST(ScanService, CheckpointsTheLogIntoTheDatabaseOnceAScanEnded) {
    Fixture f;
    test::Gate settled;
    settled.open();  // counts arrivals, never holds the scan thread
    ScanServiceOptions options;
    options.on_settled = [&] { settled.pass(); };
    auto service = f.open(std::move(options));
    ASSERT_TRUE(settled.wait_arrived(1));  // once at start-up
    ASSERT_TRUE(enqueue_ok(*service, f.tree));
    ASSERT_TRUE(settled.wait_arrived(2));
    // Readers now find no page in the log and read the database file through their map.
    const WalProgress p = wal_progress(f.db);
    EXPECT_GT(p.frames, 0u);
    EXPECT_EQ(p.backfilled, p.frames);
    EXPECT_EQ(f.files_in_index(), f.entries);
}

TEST(ScanRoot, TypedErrorsBeforeQueueing) {
    TempDir dir;
    test::write_file(dir / "file", 3);
    std::filesystem::create_directories(dir / "sub");
    std::filesystem::create_symlink(dir / "sub", dir / "link");

    auto missing = resolve_scan_root(dir / "missing");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().kind, ipc::ErrorKind::NoSuchPath);

    auto file = resolve_scan_root(dir / "file");
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.error().kind, ipc::ErrorKind::NotADirectory);

    auto below_file = resolve_scan_root(dir / "file/x");
    ASSERT_FALSE(below_file.ok());
    EXPECT_EQ(below_file.error().kind, ipc::ErrorKind::NotADirectory);

    auto relative = resolve_scan_root("tmp");
    ASSERT_FALSE(relative.ok());
    EXPECT_EQ(relative.error().kind, ipc::ErrorKind::InvalidParameter);

    const std::string canonical = std::filesystem::canonical(dir / "sub").string();
    auto via_link = resolve_scan_root(dir / "link");
    ASSERT_TRUE(via_link.ok());
    EXPECT_EQ(via_link.value(), canonical);
    auto messy = resolve_scan_root(dir.path() + "//sub/./");
    ASSERT_TRUE(messy.ok());
    EXPECT_EQ(messy.value(), canonical);
}

// A control-group member's paths: no symlink followed in any component, ".." lexical, and a
// missing path answers as no_such_scan_root (which a hidden one answers too).
TEST(ScanRoot, RefuseFollowsNoSymlink) {
    TempDir dir;
    test::write_file(dir / "file", 3);
    std::filesystem::create_directories(dir / "sub/deeper");
    std::filesystem::create_symlink(dir / "sub", dir / "link");
    const std::string base = std::filesystem::canonical(dir.path()).string();
    ASSERT_EQ(base, ipc::lexically_normal(dir.path())) << "the temporary directory has a symlink";

    for (const std::string& path : {dir / "link", dir / "link/", dir / "link/deeper",
                                    dir / "link/.", dir / "link/deeper/.."}) {
        SCOPED_TRACE(path);
        auto r = resolve_scan_root(path, RootSymlinks::Refuse);
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().kind, ipc::ErrorKind::NotADirectory);
        EXPECT_NE(r.error().message.find("symbolic link"), std::string::npos) << r.error().message;
    }
    auto sub = resolve_scan_root(dir.path() + "//sub/./deeper/../", RootSymlinks::Refuse);
    ASSERT_TRUE(sub.ok()) << sub.error().message;
    EXPECT_EQ(sub.value(), base + "/sub");

    auto file = resolve_scan_root(dir / "file", RootSymlinks::Refuse);
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.error().kind, ipc::ErrorKind::NotADirectory);
    const std::string missing_path = dir / "missing/x";
    auto missing = resolve_scan_root(missing_path, RootSymlinks::Refuse);
    ASSERT_FALSE(missing.ok());
    const ipc::Error expected = no_such_scan_root(missing_path);
    EXPECT_EQ(missing.error().kind, expected.kind);
    EXPECT_EQ(missing.error().message, expected.message);
    EXPECT_EQ(missing.error().details, expected.details);

    // Root's resolution still follows it, to the directory's own path.
    auto followed = resolve_scan_root(dir / "link/deeper", RootSymlinks::Follow);
    ASSERT_TRUE(followed.ok());
    EXPECT_EQ(followed.value(), base + "/sub/deeper");
}

TEST(ScanService, ScanCompletesWithCountsInTheIndex) {
    Fixture f;
    auto service = f.open();
    auto job = enqueue_ok(*service, f.tree);
    ASSERT_TRUE(service->wait_idle(60s));
    const ipc::ScanInfo info = job->info();
    EXPECT_EQ(info.state, ipc::ScanState::Done) << info.error;
    EXPECT_EQ(info.entries, f.entries);
    EXPECT_EQ(info.dirs, 5u);
    EXPECT_EQ(info.errors, 0u);
    ASSERT_TRUE(info.bytes.has_value());
    EXPECT_EQ(*info.bytes % 10, 0u);
    EXPECT_GT(info.scan_id, 0u);
    EXPECT_GT(info.finished_ns, info.started_ns - 1);
    service->stop();
    const auto scans = f.scans_in_db();
    ASSERT_EQ(scans.size(), 1u);
    EXPECT_EQ(scans[0].state, ipc::ScanState::Done);
    EXPECT_EQ(scans[0].scan_id, info.scan_id);
    EXPECT_EQ(f.files_in_index(), f.entries);
}

TEST(ScanService, RequestsQueueAndDuplicatesCoalesce) {
    Fixture f;
    const std::string other = f.dir / "other";
    std::filesystem::create_directories(other);
    Gate gate;
    ScanServiceOptions options;
    options.before_walk = [&](const ScanJob& job) {
        if (job.root() == f.tree) gate.pass();
    };
    auto service = f.open(options);

    auto first = enqueue_ok(*service, f.tree);
    ASSERT_TRUE(gate.wait_arrived());  // the first scan is running and held
    auto second = enqueue_ok(*service, other);
    auto again = enqueue_ok(*service, other);
    EXPECT_EQ(second, again) << "a queued root must be coalesced";
    auto rerun = enqueue_ok(*service, f.tree);  // running root: queued again
    EXPECT_NE(rerun, first);

    const ScanSnapshot snap = service->snapshot();
    EXPECT_EQ(snap.running, first);
    ASSERT_EQ(snap.queued.size(), 2u);
    EXPECT_EQ(snap.queued[0], second);
    EXPECT_EQ(snap.queued[1], rerun);
    EXPECT_EQ(second->info().state, ipc::ScanState::Queued);
    EXPECT_EQ(second->info().scan_id, 0u);
    EXPECT_EQ(first->info().state, ipc::ScanState::Running);

    gate.open();
    ASSERT_TRUE(service->wait_idle(60s));
    EXPECT_EQ(first->state(), ipc::ScanState::Done);
    EXPECT_EQ(second->state(), ipc::ScanState::Done);
    EXPECT_EQ(rerun->state(), ipc::ScanState::Done);
    // In order: scan ids follow the queue.
    EXPECT_LT(first->scan_id(), second->scan_id());
    EXPECT_LT(second->scan_id(), rerun->scan_id());
}

TEST(ScanService, FullQueueIsBusy) {
    Fixture f;
    Gate gate;
    ScanServiceOptions options;
    options.max_queued = 1;
    options.before_walk = [&](const ScanJob&) { gate.pass(); };
    auto service = f.open(options);
    enqueue_ok(*service, f.tree);
    ASSERT_TRUE(gate.wait_arrived());
    enqueue_ok(*service, f.tree + "/dir0");
    auto refused = service->enqueue(f.tree + "/dir1");
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().kind, ipc::ErrorKind::Busy);
    gate.open();
    ASSERT_TRUE(service->wait_idle(60s));
}

TEST(ScanService, CancelLeavesThePreviousIndexAndIsRecorded) {
    Fixture f;
    Gate gate;
    bool hold = false;  // written before the second enqueue, read on the scan thread after it
    ScanServiceOptions options;
    options.before_walk = [&](const ScanJob&) {
        if (hold) gate.pass();
    };
    auto service = f.open(options);
    auto done = enqueue_ok(*service, f.tree);
    ASSERT_TRUE(service->wait_idle(60s));
    ASSERT_EQ(done->state(), ipc::ScanState::Done);

    // The tree changes, then a rescan is cancelled: the index must still show the old tree.
    test::make_tree(f.tree + "/dir0", 1, 5);
    hold = true;
    auto cancelled = enqueue_ok(*service, f.tree);
    ASSERT_TRUE(gate.wait_arrived());
    const std::uint64_t running_id = cancelled->info().scan_id;
    auto wrong = service->cancel(running_id + 100, false);
    ASSERT_FALSE(wrong.ok());
    EXPECT_EQ(wrong.error().kind, ipc::ErrorKind::NoSuchScan);
    auto result = service->cancel(running_id, false);
    ASSERT_TRUE(result.ok());
    ASSERT_EQ(result.value().size(), 1u);
    gate.open();
    ASSERT_TRUE(service->wait_idle(60s));
    EXPECT_EQ(cancelled->state(), ipc::ScanState::Cancelled);
    service->stop();

    const auto scans = f.scans_in_db();
    ASSERT_EQ(scans.size(), 2u);
    EXPECT_EQ(scans[0].state, ipc::ScanState::Cancelled);  // newest first
    EXPECT_EQ(scans[1].state, ipc::ScanState::Done);
    EXPECT_EQ(f.files_in_index(), f.entries);
}

TEST(ScanService, CancelCanDropTheQueue) {
    Fixture f;
    Gate gate;
    ScanServiceOptions options;
    options.before_walk = [&](const ScanJob&) { gate.pass(); };
    auto service = f.open(options);
    auto running = enqueue_ok(*service, f.tree);
    ASSERT_TRUE(gate.wait_arrived());
    auto queued = enqueue_ok(*service, f.tree + "/dir1");
    auto cancelled = service->cancel(std::nullopt, true);
    ASSERT_TRUE(cancelled.ok());
    EXPECT_EQ(cancelled.value().size(), 2u);
    EXPECT_EQ(queued->state(), ipc::ScanState::Cancelled);
    EXPECT_TRUE(service->snapshot().queued.empty());
    gate.open();
    ASSERT_TRUE(service->wait_idle(60s));
    EXPECT_EQ(running->state(), ipc::ScanState::Cancelled);
}

TEST(ScanService, CancelMidWalkStopsTheWalk) {
    Fixture f;
    test::make_tree(f.tree + "/big", 20, 50);
    std::atomic<int> batches{0};
    ScanServiceOptions options;
    options.result_batch = 16;
    Gate gate;
    options.after_batch = [&](const ScanJob&) {
        if (batches.fetch_add(1, std::memory_order_relaxed) == 0) gate.pass();
    };
    auto service = f.open(options);
    auto job = enqueue_ok(*service, f.tree);
    ASSERT_TRUE(gate.wait_arrived());  // one batch written, the walk is mid-way
    ASSERT_TRUE(service->cancel(std::nullopt, false).ok());
    gate.open();
    ASSERT_TRUE(service->wait_idle(60s));
    EXPECT_EQ(job->state(), ipc::ScanState::Cancelled);
    EXPECT_LT(job->info().entries, f.entries + 20 * 51 + 1);
}

// Fails the stat of one name with EIO and calls `on_fault` first (on the walker's thread).
class FailingStatFs : public core::FsOps {
  public:
    FailingStatFs(std::string name, std::function<void()> on_fault)
        : name_(std::move(name)), on_fault_(std::move(on_fault)) {}
    int stat_at(int dirfd, const char* name, core::FileStat& out,
                bool probably_dir) const noexcept override {
        if (name_ != name) return core::FsOps::stat_at(dirfd, name, out, probably_dir);
        on_fault_();
        return -EIO;
    }

  private:
    std::string name_;
    std::function<void()> on_fault_;
};

// A user's cancel that comes after a fatal walk error does not turn the scan into "cancelled":
// the first fatal error wins, in the job and in the database.
TEST(ScanService, ACancelAfterAFatalErrorRecordsTheError) {
    Fixture f;
    test::write_file(f.tree + "/dir0/victim", 10);
    ScanService* service_ptr = nullptr;  // set before the scan starts, read on its thread
    FailingStatFs fs("victim", [&] { (void)service_ptr->cancel(std::nullopt, false); });
    ScanServiceOptions options;
    options.db_path = f.db;
    options.settings.workers = 1;  // nothing else can see the cancel before the error returns
    options.fs = &fs;
    std::unique_ptr<ScanService> service;
    ASSERT_TRUE(ScanService::open(std::move(options), &service));
    service_ptr = service.get();
    auto job = enqueue_ok(*service, f.tree);
    ASSERT_TRUE(service->wait_idle(60s));
    EXPECT_EQ(job->state(), ipc::ScanState::Failed);
    EXPECT_NE(job->info().error.find("victim"), std::string::npos) << job->info().error;
    service->stop();
    const auto scans = f.scans_in_db();
    ASSERT_EQ(scans.size(), 1u);
    EXPECT_EQ(scans[0].state, ipc::ScanState::Failed);
}

TEST(ScanService, StatusShowsLiveProgress) {
    Fixture f;
    Gate gate;
    std::atomic<int> batches{0};
    ScanServiceOptions options;
    options.result_batch = 8;
    options.after_batch = [&](const ScanJob&) {
        if (batches.fetch_add(1, std::memory_order_relaxed) == 2) gate.pass();
    };
    auto service = f.open(options);
    auto job = enqueue_ok(*service, f.tree);
    ASSERT_TRUE(gate.wait_arrived());
    const ScanSnapshot snap = service->snapshot();
    ASSERT_TRUE(snap.running);
    const ipc::ScanInfo live = snap.running->info();
    EXPECT_EQ(live.state, ipc::ScanState::Running);
    EXPECT_EQ(live.root, f.tree);
    EXPECT_GT(live.scan_id, 0u);
    EXPECT_GE(live.entries, 3u);  // three batches counted, however full
    EXPECT_LT(live.entries, f.entries);
    EXPECT_GT(live.started_ns, 0);
    EXPECT_EQ(live.finished_ns, 0);
    gate.open();
    ASSERT_TRUE(service->wait_idle(60s));
    const ipc::ScanInfo end = job->info();
    EXPECT_EQ(end.entries, f.entries);
    EXPECT_GE(end.elapsed_ms, live.elapsed_ms);
}

TEST(ScanService, StopCancelsTheRunningScanAndRecordsIt) {
    Fixture f;
    Gate gate;
    ScanServiceOptions options;
    options.before_walk = [&](const ScanJob&) { gate.pass(); };
    auto service = f.open(options);
    auto job = enqueue_ok(*service, f.tree);
    ASSERT_TRUE(gate.wait_arrived());
    auto queued = enqueue_ok(*service, f.tree + "/dir2");
    service->request_stop();  // what SIGTERM does first
    auto late = service->enqueue(f.tree + "/dir3");
    ASSERT_FALSE(late.ok());
    EXPECT_EQ(late.error().kind, ipc::ErrorKind::ShuttingDown);
    gate.open();
    service->stop();
    EXPECT_EQ(job->state(), ipc::ScanState::Cancelled);
    EXPECT_EQ(queued->state(), ipc::ScanState::Cancelled);
    service.reset();
    const auto scans = f.scans_in_db();
    ASSERT_EQ(scans.size(), 1u);
    EXPECT_EQ(scans[0].state, ipc::ScanState::Cancelled);
}

// Counts this process's threads whose nice value is `nice` (field 19 of /proc/.../stat).
int threads_with_nice(int nice) {
    int count = 0;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
        std::ifstream in(task.path() / "stat");
        std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const auto close = stat.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream fields(stat.substr(close + 2));
        std::string field;
        for (int i = 3; i <= 19 && fields >> field; ++i) {
            if (i == 19 && std::stoi(field) == nice) ++count;
        }
    }
    return count;
}

TEST(ScanService, ScanThreadsRunAtLowPriority) {
    Fixture f;
    int nice_on_scan_thread = -100;
    IoClass io_on_scan_thread = IoClass::None;
    int low_threads = 0;
    bool sampled = false;
    ScanServiceOptions options;
    options.before_walk = [&](const ScanJob&) {
        nice_on_scan_thread = thread_nice();
        io_on_scan_thread = thread_io_class();
    };
    options.after_batch = [&](const ScanJob&) {
        if (!sampled) low_threads = threads_with_nice(10);
        sampled = true;
    };
    auto service = f.open(options);
    enqueue_ok(*service, f.tree);
    ASSERT_TRUE(service->wait_idle(60s));
    service->stop();
    EXPECT_EQ(nice_on_scan_thread, 10);
    EXPECT_EQ(io_on_scan_thread, IoClass::Idle);
    // The scan thread and both walker workers (and the writer thread, when the ScanIngest is
    // threaded; it writes inline on the scan thread by default) run at nice 10.
    EXPECT_GE(low_threads, 3);
}

TEST(ThreadPriority, ChildThreadsInheritBoth) {
    int child_nice = -100;
    IoClass child_io = IoClass::None;
    std::thread parent([&] {
        ASSERT_TRUE(set_thread_priority(10, IoClass::Idle));
        std::thread child([&] {
            child_nice = thread_nice();
            child_io = thread_io_class();
        });
        child.join();
    });
    parent.join();
    EXPECT_EQ(child_nice, 10);
    EXPECT_EQ(child_io, IoClass::Idle);
    EXPECT_NE(thread_nice(), 10) << "only the thread that asked is lowered";
}

TEST(ScanService, ConfiguredRootsAreIndexedAndRescanned) {
    Fixture f;
    std::mutex m;
    std::condition_variable cv;
    int done = 0;
    ScanServiceOptions options;
    options.settings.roots.push_back(ScheduledRoot{f.tree, 1s, false});
    options.on_change = [&](const ScanJob& job) {
        if (job.state() != ipc::ScanState::Done) return;
        std::lock_guard lock(m);
        ++done;
        cv.notify_all();
    };
    auto service = f.open(options);
    {
        std::unique_lock lock(m);
        // The first scan starts at once (never indexed), the second one interval later.
        ASSERT_TRUE(cv.wait_for(lock, 30s, [&] { return done >= 2; }));
    }
    service->stop();
    const auto scans = f.scans_in_db();
    ASSERT_GE(scans.size(), 2u);
    EXPECT_GE(scans[0].started_ns - scans[1].finished_ns, 900'000'000);
}

TEST(ScanService, AnIndexedRootWithoutIntervalIsNotRescanned) {
    Fixture f;
    {
        auto service = f.open();
        enqueue_ok(*service, f.tree);
        ASSERT_TRUE(service->wait_idle(60s));
    }
    ScanServiceOptions options;
    options.settings.roots.push_back(ScheduledRoot{f.tree, 0s, false});
    std::atomic<int> queued{0};
    options.on_change = [&](const ScanJob&) { queued.fetch_add(1); };
    auto service = f.open(options);
    // Reconfigure wakes the scan thread, which looks at the schedule again: still nothing due.
    service->reconfigure(ScanSettings{2, {}, false, {ScheduledRoot{f.tree, 0s, false}}});
    ASSERT_TRUE(service->wait_idle(10s));
    service->stop();
    EXPECT_EQ(queued.load(), 0);
    EXPECT_EQ(f.scans_in_db().size(), 1u);
}

}  // namespace
}  // namespace wsindex::daemon
