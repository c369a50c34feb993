// The name index file (validated on open, rebuilt when it cannot be trusted) and the parallel
// search (the same matches in the same order as the serial one, limits included).
#include "storage/name_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <tuple>

#include "core/range_executor.hpp"
#include "storage/database.hpp"
#include "storage/name_index.hpp"
#include "storage/scan_writer.hpp"
#include "tests/storage/support/name_trees.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

using test::TempDir;

class NameFileTest : public ::testing::Test {
  protected:
    void SetUp() override {
        db_path_ = tmp_ / "index.db";
        names_path_ = db_path_ + ".names";
        ASSERT_TRUE(ScanWriter::open(db_path_, &writer_));
        scan(wide_tree("/w", 40, 50));
        db_ = test::open_reader(db_path_);
    }
    void scan(std::vector<core::WalkResult> rs) {
        ASSERT_TRUE(writer_->begin(rs.front().path));
        ASSERT_TRUE(writer_->write(rs));
        ASSERT_TRUE(writer_->complete());
        ASSERT_TRUE(writer_->collect_garbage());
    }
    // Opens or builds the index file; whether it was rebuilt.
    bool open(NameIndex* out) {
        bool rebuilt = false;
        core::Status write_error;
        const core::Status s =
            NameIndex::open_or_build(db_, names_path_, out, &rebuilt, &write_error);
        EXPECT_TRUE(s) << s.to_string();
        EXPECT_TRUE(write_error) << write_error.to_string();
        return rebuilt;
    }
    std::string read_file() const {
        std::ifstream in(names_path_, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), {}};
    }
    void write_file(const std::string& bytes) const {
        std::ofstream out(names_path_, std::ios::binary | std::ios::trunc);
        out << bytes;
    }
    // The file, damaged by `damage`, is refused and rebuilt, and the rebuilt index answers as
    // a load from the database does.
    void expect_rebuilt_after(const std::function<void(std::string&)>& damage) {
        NameIndex first;
        (void)open(&first);
        std::string bytes = read_file();
        damage(bytes);
        write_file(bytes);
        NameIndex again;
        EXPECT_TRUE(open(&again));
        EXPECT_TRUE(again.file_backed());
        NameIndex loaded;
        ASSERT_TRUE(NameIndex::load(db_, &loaded));
        EXPECT_EQ(search(again, "", false), search(loaded, "", false));
        NameIndex third;  // and the rebuilt file is trusted
        EXPECT_FALSE(open(&third));
    }

    TempDir tmp_;
    std::string db_path_;
    std::string names_path_;
    std::unique_ptr<ScanWriter> writer_;
    Database db_;
};

TEST_F(NameFileTest, RoundTripThroughTheFile) {
    NameIndex built;
    EXPECT_TRUE(open(&built));  // no file yet
    NameIndex mapped;
    EXPECT_FALSE(open(&mapped));  // the file is valid and current: mapped as it is
    EXPECT_TRUE(mapped.file_backed());
    NameIndex loaded;
    ASSERT_TRUE(NameIndex::load(db_, &loaded));
    EXPECT_EQ(mapped.size(), 40u * 51u + 1u);
    EXPECT_EQ(mapped.generation(), loaded.generation());
    // A mapped base costs no anonymous memory; an in-memory one costs its image.
    EXPECT_EQ(mapped.memory_bytes(), 0u);
    EXPECT_GT(loaded.memory_bytes(), mapped.size() * 10);
    for (const char* needle : {"", "report", "txt", "Dir", "_7", "zzz", "/"}) {
        for (bool icase : {false, true}) {
            const auto expected = search(loaded, needle, icase);
            EXPECT_EQ(search(mapped, needle, icase), expected) << needle;
            EXPECT_EQ(search(built, needle, icase), expected) << needle;
        }
    }
    EXPECT_EQ(search(mapped, "report", true).size(), search(mapped, "REPORT", true).size());
    EXPECT_LT(search(mapped, "notes", false).size(), search(mapped, "notes", true).size());
}

// The image built straight into the file (bounded memory) is byte for byte the one built in
// memory and written; a file that cannot be written leaves nothing behind, and the index is
// then served from memory.
TEST_F(NameFileTest, BuildingIntoTheFileGivesTheBytesOfTheInMemoryBuild) {
    // A second root big enough that each section spans several of the writer's 1 MiB chunks
    // (120k names: ~2 MiB of names, 1 MiB of offsets).
    scan(wide_tree("/big", 300, 400));
    DatabaseIdentity identity;
    ASSERT_TRUE(DatabaseIdentity::of(db_path_, &identity));
    std::shared_ptr<const NameFile> in_memory;
    ASSERT_TRUE(NameFile::build(db_, identity, &in_memory));
    ASSERT_TRUE(in_memory->write(names_path_));
    const std::string written = read_file();
    ASSERT_EQ(::unlink(names_path_.c_str()), 0);
    const core::Status built = NameFile::build_file(db_, identity, names_path_);
    ASSERT_TRUE(built) << built.to_string();
    const std::string streamed = read_file();
    ASSERT_EQ(streamed.size(), written.size());
    EXPECT_TRUE(streamed == written) << "the images differ";

    // Into a directory that does not exist: an error naming the path, no file, no leftovers.
    const std::string nowhere = tmp_ / "missing-dir/index.db.names";
    const core::Status failed = NameFile::build_file(db_, identity, nowhere);
    EXPECT_FALSE(failed);
    EXPECT_NE(failed.to_string().find("missing-dir"), std::string::npos) << failed.to_string();
    EXPECT_NE(::access(nowhere.c_str(), F_OK), 0);

    // open_or_build: the write error is reported, the names served from memory.
    NameIndex index;
    bool rebuilt = false;
    core::Status write_error;
    ASSERT_TRUE(NameIndex::open_or_build(db_, nowhere, &index, &rebuilt, &write_error));
    EXPECT_TRUE(rebuilt);
    EXPECT_FALSE(write_error);
    EXPECT_FALSE(index.file_backed());
    NameIndex loaded;
    ASSERT_TRUE(NameIndex::load(db_, &loaded));
    EXPECT_EQ(search(index, "report", false), search(loaded, "report", false));
}

TEST_F(NameFileTest, TruncatedFileIsRebuilt) {
    expect_rebuilt_after([](std::string& b) { b.resize(b.size() - 8); });
    expect_rebuilt_after([](std::string& b) { b.resize(100); });
    expect_rebuilt_after([](std::string& b) { b.clear(); });
}

TEST_F(NameFileTest, WrongMagicIsRebuilt) {
    expect_rebuilt_after([](std::string& b) { b[0] = 'X'; });
}

TEST_F(NameFileTest, WrongVersionIsRebuilt) {
    // A future format with a header checksum that matches: refused for its version alone.
    expect_rebuilt_after([](std::string& b) {
        const std::uint32_t version = NameFile::kFormatVersion + 1;
        std::memcpy(b.data() + 8, &version, sizeof version);
        std::uint64_t h = 14695981039346656037ull;  // FNV-1a of the first 120 bytes
        for (std::size_t i = 0; i < 120; ++i) {
            h ^= static_cast<unsigned char>(b[i]);
            h *= 1099511628211ull;
        }
        std::memcpy(b.data() + 120, &h, sizeof h);
    });
}

TEST_F(NameFileTest, DamagedHeaderOrBodyIsRebuilt) {
    expect_rebuilt_after([](std::string& b) { b[45] ^= 1; });  // the name count
    // The first name offset (after the header): the header still checks, the body does not.
    expect_rebuilt_after([](std::string& b) { b[128 + 8 + 7] = 0x7f; });
    // One letter of a name (every offset still checks): the body checksum refuses it. The
    // last "report" of the file is in the folded copy of the names (prefixes hold no names).
    expect_rebuilt_after([](std::string& b) {
        const std::size_t at = b.rfind("report");
        ASSERT_NE(at, std::string::npos);
        b[at] = 'R';
    });
}

TEST_F(NameFileTest, AnotherDatabasesFileIsRebuilt) {
    NameIndex mine;
    (void)open(&mine);
    // Another database with the same content: its file is not this database's.
    const std::string other_db = tmp_ / "other.db";
    {
        std::unique_ptr<ScanWriter> other;
        ASSERT_TRUE(ScanWriter::open(other_db, &other));
        auto rs = wide_tree("/w", 40, 50);
        ASSERT_TRUE(other->begin("/w"));
        ASSERT_TRUE(other->write(rs));
        ASSERT_TRUE(other->complete());
    }
    Database other = test::open_reader(other_db);
    NameIndex theirs;
    bool rebuilt = false;
    core::Status write_error;
    ASSERT_TRUE(
        NameIndex::open_or_build(other, other_db + ".names", &theirs, &rebuilt, &write_error));
    ASSERT_EQ(::rename((other_db + ".names").c_str(), names_path_.c_str()), 0);
    NameIndex again;
    EXPECT_TRUE(open(&again));
}

TEST_F(NameFileTest, StaleGenerationIsRebuilt) {
    NameIndex before;
    (void)open(&before);
    scan(wide_tree("/w", 41, 50));  // one more directory: the generation moves
    NameIndex after;
    EXPECT_TRUE(open(&after));
    EXPECT_GT(after.generation(), before.generation());
    EXPECT_EQ(after.size(), 41u * 51u + 1u);
}

TEST_F(NameFileTest, ParallelSearchEqualsSerialInOrderWithLimits) {
    // Enough names for several blocks and windows.
    scan(wide_tree("/w", 200, 450));
    NameIndex index;
    (void)open(&index);
    ASSERT_GT(index.size(), 80000u);  // two windows, six blocks
    for (unsigned workers : {1u, 3u}) {
        core::RangeOptions options;
        options.workers = workers;
        core::RangeExecutor executor(options);
        for (const char* needle : {"", "report", "Report", "TXT", "_39", "x1", "99_", "nothing"}) {
            for (bool icase : {false, true}) {
                const auto serial = search(index, needle, icase);
                EXPECT_EQ(search(index, needle, icase, &executor), serial) << needle;
                for (std::size_t limit : {1u, 20000u, 70000u}) {
                    auto head = serial;
                    if (head.size() > limit) head.resize(limit);
                    EXPECT_EQ(search(index, needle, icase, &executor, limit), head)
                        << needle << " limit " << limit;
                }
            }
        }
        if (workers > 1) {
            std::uint64_t items = 0;
            for (const auto& w : executor.stats()) items += w.items;
            EXPECT_GT(items, 0u);
        }
    }
}

}  // namespace
}  // namespace wsindex::storage
