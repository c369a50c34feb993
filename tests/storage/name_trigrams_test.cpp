// Trigram posting lists: a search through them finds exactly the names the memmem scan finds, in
// the same order (both cases, limits, a layer of live changes over the base), and a lists file
// that cannot be trusted (truncated, damaged, of another base or format) is refused.
#include "storage/name_trigrams.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "storage/database.hpp"
#include "storage/name_index.hpp"
#include "storage/scan_writer.hpp"
#include "tests/storage/support/name_trees.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

using test::TempDir;

class NameTrigramsTest : public ::testing::Test {
  protected:
    void SetUp() override {
        db_path_ = tmp_ / "index.db";
        names_path_ = db_path_ + ".names";
        lists_path_ = db_path_ + ".names.tri";
        ASSERT_TRUE(ScanWriter::open(db_path_, &writer_));
        scan(wide_tree("/w", 60, 70));
        // Names the tree's generator never makes: bytes above 0x7f, a newline, repeated
        // trigrams, names shorter than a trigram.
        std::vector<core::WalkResult> odd = wide_tree("/w", 60, 70);
        std::uint64_t ino = 900000;
        for (const char* name :
             {"caf\xc3\xa9-\xff\xfe.bin", "line\nbreak", "aaaaaaa", "ab", "Z", "MiXeD-CaSe-aaa"}) {
            core::WalkResult r = odd[2];  // a file of the first directory
            r.path = odd[1].path + "/" + name;
            r.ino = ino++;
            odd.push_back(r);
        }
        scan(odd);
        db_ = test::open_reader(db_path_);
        bool rebuilt = false;
        core::Status write_error;
        ASSERT_TRUE(NameIndex::open_or_build(db_, names_path_, &plain_, &rebuilt, &write_error));
        ASSERT_TRUE(plain_.file_backed());
        ASSERT_TRUE(NameTrigrams::build(*plain_.base(), lists_path_));
        std::shared_ptr<const NameTrigrams> lists;
        const core::Status opened = NameTrigrams::open(lists_path_, *plain_.base(), &lists);
        ASSERT_TRUE(opened) << opened.to_string();
        with_lists_ = plain_.with_trigrams(lists);
    }
    void scan(std::vector<core::WalkResult> rs) {
        ASSERT_TRUE(writer_->begin(rs.front().path));
        ASSERT_TRUE(writer_->write(rs));
        ASSERT_TRUE(writer_->complete());
        ASSERT_TRUE(writer_->collect_garbage());
    }
    // Needles: substrings of 1-8 bytes of names in the index (so most have hits), in their
    // case and swapped, and some no name holds.
    std::vector<std::string> needles() const {
        std::vector<std::string> out = {"report", "REPORT", "txt",           "_7",   "zzz",
                                        "aaa",    "aaaa",   "\xc3\xa9-\xff", "e\nb", "Dir",
                                        "qqqqqq", "x1",     "-case-a",       "TXT_1"};
        std::mt19937 rng(19);
        std::vector<std::string> names;
        plain_.for_each_substring("", false, [&](const NameIndex::Key& k) {
            names.emplace_back(k.name);
            return true;
        });
        for (int i = 0; i < 300; ++i) {
            const std::string& name = names[rng() % names.size()];
            const std::size_t len = 1 + rng() % 8;
            if (name.size() < len) continue;
            std::string s = name.substr(rng() % (name.size() - len + 1), len);
            if (i % 3 == 0) {
                for (char& c : s) {
                    if (c >= 'a' && c <= 'z') {
                        c = static_cast<char>(c - 'a' + 'A');
                    } else if (c >= 'A' && c <= 'Z') {
                        c = static_cast<char>(c - 'A' + 'a');
                    }
                }
            }
            out.push_back(s);
        }
        return out;
    }
    std::string read_lists() const {
        std::ifstream in(lists_path_, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), {}};
    }
    void write_lists(const std::string& bytes) const {
        std::ofstream out(lists_path_, std::ios::binary | std::ios::trunc);
        out << bytes;
    }
    // The lists file, damaged by `damage`, is refused.
    void expect_refused_after(void (*damage)(std::string&), const char* why) {
        std::string bytes = read_lists();
        damage(bytes);
        write_lists(bytes);
        std::shared_ptr<const NameTrigrams> lists;
        const core::Status s = NameTrigrams::open(lists_path_, *plain_.base(), &lists);
        EXPECT_FALSE(s) << why;
        EXPECT_NE(s.to_string().find("trigram file"), std::string::npos) << s.to_string();
        ASSERT_TRUE(NameTrigrams::build(*plain_.base(), lists_path_));  // for the next case
    }

    TempDir tmp_;
    std::string db_path_;
    std::string names_path_;
    std::string lists_path_;
    std::unique_ptr<ScanWriter> writer_;
    Database db_;
    NameIndex plain_;
    NameIndex with_lists_;
};

TEST_F(NameTrigramsTest, ListsFindWhatTheScanFindsInItsOrder) {
    ASSERT_TRUE(with_lists_.has_trigrams());
    EXPECT_GT(with_lists_.trigram_bytes(), 0u);
    std::size_t with_hits = 0;
    for (const std::string& needle : needles()) {
        for (bool icase : {false, true}) {
            const auto expected = search(plain_, needle, icase);
            EXPECT_EQ(search(with_lists_, needle, icase), expected)
                << "'" << needle << "' icase " << icase;
            if (!expected.empty()) ++with_hits;
            for (std::size_t limit : {1u, 7u}) {
                auto head = expected;
                if (head.size() > limit) head.resize(limit);
                EXPECT_EQ(search(with_lists_, needle, icase, nullptr, limit), head) << needle;
            }
        }
    }
    EXPECT_GT(with_hits, 300u);  // the comparison was mostly of non-empty answers
    // The odd names were found through their lists.
    EXPECT_EQ(search(with_lists_, "\xc3\xa9-\xff\xfe", false).size(), 1u);
    EXPECT_EQ(search(with_lists_, "line\nbr", false).size(), 1u);
    EXPECT_EQ(search(with_lists_, "mixed-case", true).size(), 1u);
    EXPECT_EQ(search(with_lists_, "mixed-case", false).size(), 0u);
}

TEST_F(NameTrigramsTest, CandidatesHoldEveryTrigramOfTheNeedle) {
    std::shared_ptr<const NameTrigrams> lists;
    ASSERT_TRUE(NameTrigrams::open(lists_path_, *plain_.base(), &lists));
    const NameFile& base = *plain_.base();
    for (const std::string needle : {"rep", "report", "eadme", "txt_1", "aaaa", "qqq"}) {
        // Brute force: the names whose folded bytes hold each of the needle's trigrams.
        std::vector<std::uint64_t> expected;
        for (std::size_t i = 0; i < base.size(); ++i) {
            bool all = true;
            for (std::size_t j = 0; j + 3 <= needle.size(); ++j) {
                all = all && base.folded_name(i).find(needle.substr(j, 3)) != std::string::npos;
            }
            if (all) expected.push_back(i);
        }
        NameTrigrams::Candidates candidates(*lists, needle);
        std::vector<std::uint64_t> got;
        for (auto i = candidates.next(0); i != NameTrigrams::Candidates::kNone;
             i = candidates.next(i + 1)) {
            got.push_back(i);
        }
        EXPECT_EQ(got, expected) << needle;
    }
}

TEST_F(NameTrigramsTest, LayeredSnapshotsKeepTheListsAndTheirMasks) {
    // A rescan with more files per directory; three directories re-read into the layer (the
    // others stay as the base has them): the lists answer for the base, the layer is scanned.
    scan(wide_tree("/w", 60, 90));
    std::vector<std::int64_t> ids;
    {
        Statement q;
        ASSERT_TRUE(db_.prepare("SELECT id FROM dirs ORDER BY id", &q));
        for (bool row = true;;) {
            ASSERT_TRUE(q.step(&row));
            if (!row) break;
            ids.push_back(q.column_int64(0));
        }
    }
    ASSERT_GT(ids.size(), 40u);
    const std::vector<std::int64_t> changed = {ids[1], ids[20], ids[40]};
    NameIndex layered_plain;
    NameIndex layered_lists;
    std::int64_t generation = -1;
    ASSERT_TRUE(plain_.with_dirs(db_, changed, &layered_plain, &generation));
    ASSERT_TRUE(with_lists_.with_dirs(db_, changed, &layered_lists, &generation));
    EXPECT_TRUE(layered_lists.has_trigrams());
    EXPECT_GT(layered_lists.layer_names(), 0u);
    for (const std::string& needle : needles()) {
        for (bool icase : {false, true}) {
            EXPECT_EQ(search(layered_lists, needle, icase), search(layered_plain, needle, icase))
                << needle;
        }
    }
    // Names only the layer holds are found (the tree now has files _70 to _89).
    EXPECT_FALSE(search(layered_lists, "_85", false).empty());
}

TEST_F(NameTrigramsTest, UntrustworthyFilesAreRefused) {
    expect_refused_after([](std::string& b) { b.resize(b.size() - 8); }, "truncated");
    expect_refused_after([](std::string& b) { b.resize(60); }, "shorter than its header");
    expect_refused_after([](std::string& b) { b[0] = 'X'; }, "magic");
    expect_refused_after([](std::string& b) { b[41] ^= 1; }, "header (key count)");
    expect_refused_after([](std::string& b) { b[b.size() - 1] ^= 0x40; }, "a list's byte");
    expect_refused_after(
        [](std::string& b) {
            // A future version whose header checksum matches: refused for its version alone.
            const std::uint32_t version = NameTrigrams::kFormatVersion + 1;
            std::memcpy(b.data() + 8, &version, sizeof version);
            std::uint64_t h = 14695981039346656037ull;  // FNV-1a of the first 120 bytes
            for (std::size_t i = 0; i < 120; ++i) {
                h ^= static_cast<unsigned char>(b[i]);
                h *= 1099511628211ull;
            }
            std::memcpy(b.data() + 120, &h, sizeof h);
        },
        "version");
    // The lists of another base (the names after one more scan) are not these names' lists.
    scan(wide_tree("/w", 61, 70));
    NameIndex next;
    bool rebuilt = false;
    core::Status write_error;
    ASSERT_TRUE(NameIndex::open_or_build(db_, names_path_, &next, &rebuilt, &write_error));
    ASSERT_TRUE(rebuilt);
    std::shared_ptr<const NameTrigrams> lists;
    const core::Status s = NameTrigrams::open(lists_path_, *next.base(), &lists);
    EXPECT_FALSE(s);
    EXPECT_NE(s.to_string().find("another name file"), std::string::npos) << s.to_string();
}

TEST_F(NameTrigramsTest, ACancelledBuildLeavesNoFile) {
    ASSERT_EQ(::unlink(lists_path_.c_str()), 0);
    std::atomic<bool> cancel{true};
    const core::Status s = NameTrigrams::build(*plain_.base(), lists_path_, &cancel);
    EXPECT_EQ(s.code(), std::errc::operation_canceled);
    EXPECT_NE(::access(lists_path_.c_str(), F_OK), 0);
    EXPECT_NE(::access((lists_path_ + ".tmp").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace wsindex::storage
