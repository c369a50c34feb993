// End to end, one small tree per test: du --top within --depth, du of a file, the size column
// of wsctl scans, regex and glob semantics over the whole path.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "tests/cli/support/fixture.hpp"

namespace wsindex::cli::test {
namespace {

// root/{a/{big (3000 B), deep/{huge (10000 B)}}, b/{small (100 B)}, top.log (7 B)}: a/deep
// is the biggest directory, but two levels down.
class Small : public EndToEnd {
  protected:
    void SetUp() override {
        EndToEnd::SetUp();
        root_ = scratch_ / "small";
        for (const char* dir : {"", "/a", "/a/deep", "/b"}) {
            ASSERT_EQ(::mkdir((root_ + dir).c_str(), 0755), 0) << dir;
        }
        write(root_ + "/a/big", 3000);
        write(root_ + "/a/deep/huge", 10000);
        write(root_ + "/b/small", 100);
        write(root_ + "/top.log", 7);
        scan(root_);
    }
    static void write(const std::string& path, std::size_t size) {
        FILE* f = std::fopen(path.c_str(), "w");
        ASSERT_NE(f, nullptr) << path;
        const std::string bytes(size, 'x');
        ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
        std::fclose(f);
    }
    std::vector<std::string> du_paths(std::vector<std::string> args) {
        std::vector<std::string> out;
        const auto doc = json_of(std::move(args));  // named: the loop must not outlive it
        for (const auto& e : doc["entries"]) out.push_back(path_of(e["path"]));
        return out;
    }
    std::set<std::string> find0(std::vector<std::string> args) {
        args.insert(args.begin(), "find");
        args.push_back("-0");
        const auto r = ctl(args);
        EXPECT_EQ(r.code, 0) << r.err;
        return split_nul(r.out);
    }

    std::string root_;
};

TEST_F(Small, DuTopStaysWithinDepth) {
    // The path first, then the largest directories below it, largest first.
    EXPECT_EQ(du_paths({"du", root_, "--top", "5"}),
              (std::vector<std::string>{root_, root_ + "/a", root_ + "/a/deep", root_ + "/b"}));
    EXPECT_EQ(du_paths({"du", root_, "--top", "5", "--depth", "1"}),
              (std::vector<std::string>{root_, root_ + "/a", root_ + "/b"}));
    EXPECT_EQ(du_paths({"du", root_, "--top", "1", "--depth", "1"}),
              (std::vector<std::string>{root_, root_ + "/a"}));
}

TEST_F(Small, DuOfAFileIsItsSize) {
    const auto doc = json_of({"du", root_ + "/a/deep/huge"});
    ASSERT_EQ(doc["entries"].size(), 1u) << doc.dump();
    const auto& e = doc["entries"][0];
    EXPECT_EQ(path_of(e["path"]), root_ + "/a/deep/huge");
    EXPECT_EQ(e["size"].get<std::uint64_t>(), du_sb(root_ + "/a/deep/huge", scratch_.path()));
    EXPECT_EQ(e["size"].get<std::uint64_t>(), 10000u);
    EXPECT_EQ(e["files"], 1);
    EXPECT_EQ(e["dirs"], 0);
    const auto human = ctl({"du", "-b", root_ + "/top.log"});
    EXPECT_EQ(human.code, 0) << human.err;
    EXPECT_NE(human.out.find("7 "), std::string::npos) << human.out;
    // Not in the index at all: exit 5, whatever the file system says.
    const auto missing = ctl({"du", root_ + "/a/none"});
    EXPECT_EQ(missing.code, 5) << missing.out << missing.err;
    EXPECT_NE(missing.err.find("not in the index"), std::string::npos) << missing.err;
}

// Issue 18: a hard link made in one subdirectory to a file in another, then a rescan of only
// the first: the root's du counts the inode once, as GNU du and a fresh scan do.
TEST_F(Small, DuCountsAHardLinkOnceAfterASubdirectoryRescan) {
    ASSERT_EQ(::link((root_ + "/a/big").c_str(), (root_ + "/b/big2").c_str()), 0);
    scan(root_ + "/b");
    const auto size_of = [this](const std::string& path) {
        const auto doc = json_of({"du", path});
        EXPECT_EQ(doc["entries"].size(), 1u) << doc.dump();
        return doc["entries"].empty() ? 0 : doc["entries"][0]["size"].get<std::uint64_t>();
    };
    const std::uint64_t after_rescan = size_of(root_);
    EXPECT_EQ(after_rescan, du_sb(root_, scratch_.path()));
    scan(root_);
    EXPECT_EQ(size_of(root_), after_rescan);
}

TEST_F(Small, ScansShowTheSizeAndDirsOfTheNewestScanOfARoot) {
    const std::uint64_t size = du_sb(root_, scratch_.path());
    auto doc = json_of({"scans"});
    ASSERT_EQ(doc["scans"].size(), 1u);
    EXPECT_EQ(doc["scans"][0]["bytes"].get<std::uint64_t>(), size) << doc.dump();
    // The directories of the tree, root included, as the scan's summary counted them.
    EXPECT_EQ(doc["scans"][0]["dirs"], 4) << doc.dump();
    auto human = ctl({"scans"});
    EXPECT_NE(human.out.find(format_bytes(size)), std::string::npos) << human.out;
    EXPECT_EQ(human.out.find(" 0 B "), std::string::npos) << human.out;
    // DIRS is right-aligned: the count ends where the heading does.
    const std::size_t heading_end = human.out.find("DIRS") + 4;
    const std::size_t row = human.out.find('\n') + 1;
    ASSERT_NE(heading_end, std::string::npos + 4) << human.out;
    ASSERT_GT(human.out.size(), row + heading_end) << human.out;
    EXPECT_EQ(human.out.substr(row + heading_end - 2, 2), " 4") << human.out;

    scan(root_);  // the first scan's rows are replaced: its size is no longer known
    doc = json_of({"scans"});
    ASSERT_EQ(doc["scans"].size(), 2u);
    EXPECT_EQ(doc["scans"][0]["bytes"].get<std::uint64_t>(), size) << doc.dump();
    EXPECT_FALSE(doc["scans"][1].contains("bytes")) << doc.dump();
    EXPECT_EQ(doc["scans"][0]["dirs"], 4) << doc.dump();
    EXPECT_FALSE(doc["scans"][1].contains("dirs")) << doc.dump();
    human = ctl({"scans"});
    EXPECT_NE(human.out.find(" - "), std::string::npos) << human.out;
}

TEST_F(Small, RegexAndSlashedGlobMatchTheWholePath) {
    // docs/wsctl.md: --regex is over the whole path, unanchored (like locate --regex).
    EXPECT_EQ(find0({"--regex", "/a/deep/"}), std::set<std::string>{root_ + "/a/deep/huge"});
    EXPECT_EQ(find0({"--regex", "^big$"}), std::set<std::string>{});
    EXPECT_EQ(find0({"--regex", "/big$"}), std::set<std::string>{root_ + "/a/big"});
    EXPECT_EQ(find0({"--regex", "/B/[^/]*$", "-i"}), std::set<std::string>{root_ + "/b/small"});
    // A glob is over the name, unless it holds a '/'.
    EXPECT_EQ(find0({"--glob", "*.log"}), std::set<std::string>{root_ + "/top.log"});
    EXPECT_EQ(find0({"--glob", root_ + "/a/*"}),
              (std::set<std::string>{root_ + "/a/big", root_ + "/a/deep", root_ + "/a/deep/huge"}));
    const auto bad = ctl({"find", "--regex", "(unclosed"});
    EXPECT_EQ(bad.code, 2) << bad.err;
}

}  // namespace
}  // namespace wsindex::cli::test
