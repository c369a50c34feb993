// Real failures: a database on a full tmpfs, and a writer process killed with SIGKILL at
// several points of a scan. The previous index must survive both, byte for byte.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/database.hpp"
#include "storage/scan_ingest.hpp"
#include "storage/scan_writer.hpp"
#include "storage/sqlite_error.hpp"
#include "tests/storage/support/killed_child.hpp"
#include "tests/storage/support/synth.hpp"
#include "tests/storage/support/tree_walk.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::storage {
namespace {

using test::TempDir;

// A tmpfs of `size` mounted on a fresh directory, unmounted at destruction.
class SmallTmpfs {
  public:
    explicit SmallTmpfs(const std::string& size) {
        path_ = dir_ / "mnt";
        ::mkdir(path_.c_str(), 0700);
        const std::string options = "size=" + size + ",mode=0700";
        mounted_ = ::mount("tmpfs", path_.c_str(), "tmpfs", 0, options.c_str()) == 0;
    }
    SmallTmpfs(const SmallTmpfs&) = delete;
    SmallTmpfs& operator=(const SmallTmpfs&) = delete;
    ~SmallTmpfs() {
        if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
    }
    [[nodiscard]] bool mounted() const { return mounted_; }
    [[nodiscard]] const std::string& path() const { return path_; }

  private:
    TempDir dir_;
    std::string path_;
    bool mounted_ = false;
};

// A large synthetic scan: `files` entries with 200-byte names under /big.
std::vector<core::WalkResult> big_scan(std::size_t files) {
    test::Synth t("/big");
    std::uint64_t dir = 1;
    for (std::size_t i = 0; i < files; ++i) {
        if (i % 1000 == 0) dir = t.dir(1, "d" + std::to_string(i));
        t.file(dir, std::string(190, 'n') + std::to_string(i), i, 1, 0, 1);
    }
    return t.results();
}

void make_small_tree(const std::string& root) {
    ASSERT_EQ(mkdir(root.c_str(), 0755), 0);
    ASSERT_EQ(mkdir((root + "/sub").c_str(), 0755), 0);
    for (int i = 0; i < 50; ++i) test::write_file(root + "/sub/f" + std::to_string(i), i * 10);
}

TEST(DiskFull, ScanFailsClearlyAndThePreviousIndexSurvives) {
    SmallTmpfs fs("2m");
    if (!fs.mounted()) {
        WSINDEX_SKIP_OR_FAIL_IN_CI()
            << "cannot mount a tmpfs here (needs root): " << strerror(errno);
    }
    TempDir src;
    const std::string root = src / "tree";
    make_small_tree(root);
    const std::string db_path = fs.path() + "/index.db";
    ASSERT_TRUE(test::scan_db(db_path, root));
    // Ballast the operator will delete to make room again after the failure.
    test::write_file(fs.path() + "/ballast", 1024 * 1024);
    std::string old_dump;
    {
        Database reader = test::open_reader(db_path);
        old_dump = test::dump_index(reader);
    }

    std::unique_ptr<ScanIngest> w;
    ScanIngestOptions options;
    options.threaded = true;  // the failure travels back through the queue
    options.scan.rows_per_transaction = 2000;
    options.queue_rows = 4000;
    ASSERT_TRUE(ScanIngest::open(db_path, options, &w));
    ASSERT_TRUE(w->begin("/big"));
    core::Status walked = test::feed(big_scan(40000), 500,
                                     [&](std::span<core::WalkResult> b) { return w->consume(b); });
    core::Status ended = walked ? w->finish() : w->abort(walked, false);
    ASSERT_FALSE(ended);
    EXPECT_EQ(ended.code(), make_sqlite_error_code(SQLITE_FULL)) << ended.to_string();
    EXPECT_NE(ended.to_string().find("full"), std::string::npos) << ended.to_string();
    EXPECT_NE(ended.to_string().find("/big"), std::string::npos) << ended.to_string();
    w.reset();

    // Still on the full file system: the old index reads back identical and intact.
    Database reader = test::open_reader(db_path);
    EXPECT_EQ(test::dump_index(reader), old_dump);
    EXPECT_EQ(test::integrity(reader), "ok");
    const std::string state =
        test::query_text(reader, "SELECT state FROM scans WHERE root = CAST('/big' AS BLOB)");
    EXPECT_TRUE(state == "failed" || state == "running") << state;
    // Once space is freed (as much as the scan's committed batches hold in the WAL, which a
    // checkpoint must copy into the database file), the next writer removes the scan's rows.
    ASSERT_EQ(unlink((fs.path() + "/ballast").c_str()), 0);
    std::unique_ptr<ScanWriter> again;
    auto s = ScanWriter::open(db_path, &again);
    ASSERT_TRUE(s) << s.to_string();
    EXPECT_EQ(test::dump_index(reader), old_dump);
    EXPECT_EQ(test::query_int(reader, "SELECT count(*) FROM entries"),
              test::query_int(reader, "SELECT count(*) FROM files"));
    EXPECT_EQ(test::integrity(reader), "ok");
}

// Where the child is when the parent kills it.
enum class KillPoint { after_begin, after_commits, while_writing, during_complete };

// Child: scans `root` (changed since the index was made) and tells the parent through `fd`
// when it reaches `point`; it never exits on its own before being killed (except by finishing
// during_complete).
[[noreturn]] void child_scan(const std::string& db_path, const std::string& root, KillPoint point,
                             int fd) {
    std::unique_ptr<ScanWriter> w;
    if (!ScanWriter::open(db_path, &w)) _exit(2);
    ScanOptions options;
    options.rows_per_transaction = 50;
    if (!w->begin(root, options)) _exit(3);
    auto signal_parent = [&] {
        const char c = 'k';
        if (::write(fd, &c, 1) != 1) _exit(4);
    };
    if (point == KillPoint::after_begin) {
        signal_parent();
        for (;;) pause();
    }
    auto results = test::walk_tree(root);
    std::size_t fed = 0;
    for (std::size_t i = 0; i < results.size(); i += 20) {
        const std::size_t n = std::min<std::size_t>(20, results.size() - i);
        if (!w->write(std::span<core::WalkResult>(results.data() + i, n))) _exit(5);
        fed += n;
        if (point == KillPoint::after_commits && fed >= results.size() / 2) {
            signal_parent();
            for (;;) pause();
        }
        // The parent kills as soon as it reads the byte while this goes on writing: the kill
        // lands somewhere in the second half of the writes, or after them (below).
        if (point == KillPoint::while_writing && i == results.size() / 2 / 20 * 20) {
            signal_parent();
        }
    }
    // Never past the writes: however the kill and this process are scheduled, it lands before
    // the swap, so the outcome is known (the swap's own kill point is during_complete).
    if (point == KillPoint::while_writing) {
        for (;;) pause();
    }
    if (point == KillPoint::during_complete) signal_parent();
    if (!w->complete()) _exit(6);
    if (!w->collect_garbage()) _exit(7);
    for (;;) pause();
}

TEST(Crash, KilledWriterLeavesThePreviousIndexAndAnInterruptedScan) {
    for (KillPoint point : {KillPoint::after_begin, KillPoint::after_commits,
                            KillPoint::while_writing, KillPoint::during_complete}) {
        SCOPED_TRACE(static_cast<int>(point));
        TempDir dir;
        const std::string root = dir / "tree";
        make_small_tree(root);
        for (int i = 0; i < 300; ++i) test::write_file(root + "/g" + std::to_string(i), 1);
        const std::string db_path = dir / "index.db";
        ASSERT_TRUE(test::scan_db(db_path, root));
        std::string old_dump;
        {
            Database reader = test::open_reader(db_path);
            old_dump = test::dump_index(reader);
        }
        test::remove_tree(root + "/sub");
        for (int i = 0; i < 300; ++i) test::write_file(root + "/h" + std::to_string(i), 2);
        std::string new_dump;
        {
            TempDir other;
            ASSERT_TRUE(test::scan_db(other / "fresh.db", root));
            Database fresh = test::open_reader(other / "fresh.db");
            new_dump = test::dump_index(fresh);
        }

        test::KilledChild child([&](int ready_fd) { child_scan(db_path, root, point, ready_fd); });
        ASSERT_TRUE(child.forked());
        ASSERT_TRUE(child.wait_ready()) << "child died before the kill point";
        ASSERT_TRUE(child.kill()) << "the child ended before it was killed";

        // Recovery happens when the next writer opens the index.
        std::unique_ptr<ScanWriter> w;
        auto s = ScanWriter::open(db_path, &w);
        ASSERT_TRUE(s) << s.to_string();
        Database reader = test::open_reader(db_path);
        EXPECT_EQ(test::integrity(reader), "ok");
        const std::string state = test::query_text(reader, "SELECT state FROM scans WHERE id = 2");
        const std::string dump = test::dump_index(reader);
        if (point == KillPoint::during_complete && state == "complete") {
            EXPECT_EQ(dump, new_dump);  // the swap committed before the kill
        } else {
            EXPECT_EQ(state, "interrupted");
            EXPECT_EQ(dump, old_dump);
        }
        EXPECT_EQ(test::query_int(reader, "SELECT count(*) FROM entries"),
                  test::query_int(reader, "SELECT count(*) FROM files"));
        EXPECT_EQ(test::query_int(reader, "SELECT count(*) FROM garbage"), 0);
    }
}

}  // namespace
}  // namespace wsindex::storage
