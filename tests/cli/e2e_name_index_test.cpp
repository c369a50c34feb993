// The name index end to end: its base is a file next to the database, mapped by the daemon;
// live changes reach finds through a layer over it without rebuilding the base; a damaged or
// foreign file is rebuilt from the database, never trusted; trigram lists, when configured, are
// built next to it, answer finds, survive live changes and restarts, and are rebuilt when they
// cannot be trusted. Waits poll wsctl with a generous
// deadline (sanitizer builds, a loaded machine), never sleep.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>

#include "tests/cli/support/fixture.hpp"

namespace wsindex::cli::test {
namespace {

using namespace std::chrono_literals;
constexpr auto kDeadline = 60s;

void write(const std::string& path, std::size_t bytes) {
    std::ofstream(path, std::ios::binary) << std::string(bytes, 'x');
}

class NameIndexFile : public EndToEnd {
  protected:
    void SetUp() override {
        start_daemon();
        make_tree();
    }
    void make_tree() {
        root_ = scratch_ / "tree";
        std::filesystem::create_directories(root_ + "/a/deep");
        std::filesystem::create_directories(root_ + "/b");
        for (int i = 0; i < 50; ++i) write(root_ + "/a/file-" + std::to_string(i), 10);
        write(root_ + "/a/deep/needle-one", 20);
        write(root_ + "/b/needle-two", 30);
        scan(root_);
    }

    bool eventually(const std::function<bool()>& condition) {
        const auto deadline = std::chrono::steady_clock::now() + kDeadline;
        while (std::chrono::steady_clock::now() < deadline) {
            if (condition()) return true;
        }
        return false;
    }
    nlohmann::json names() { return json_of({"status"}).value("names", nlohmann::json()); }
    // The name index holds the index's current generation: finds are answered from it. (Not
    // just any generation: the daemon builds one for the empty index it starts with, and the
    // scan's is built after that scan has answered.)
    bool current() {
        const auto n = names();
        return n.is_object() && n.value("loaded", false) && n.value("generation", -1) >= 0 &&
               n.value("generation", -1) == n.value("index_generation", -2);
    }
    std::set<std::string> found(const std::string& fragment) {
        const auto r = ctl({"find", fragment, "-0"});
        EXPECT_EQ(r.code, 0) << r.err;
        return split_nul(r.out);
    }
    std::string names_file() const { return daemon_->db() + ".names"; }
    std::string lists_file() const { return daemon_->db() + ".names.tri"; }

    std::string root_;
};

TEST_F(NameIndexFile, TheBaseIsAMappedFileAndLiveChangesAreLayeredOverIt) {
    ASSERT_TRUE(eventually([&] { return current(); })) << names().dump() << log();
    const auto before = names();
    EXPECT_TRUE(before.value("file_backed", false)) << before.dump();
    EXPECT_EQ(before.value("names", 0u), found("").size()) << before.dump();
    struct stat st {};
    ASSERT_EQ(::stat(names_file().c_str(), &st), 0) << names_file();
    EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), before.value("base_bytes", 0u));
    const auto builds = before.value("base_builds", 0u);
    EXPECT_GE(builds, 1u);
    // The human status says the same: a current name index, its names counted.
    const auto human = ctl({"status"});
    EXPECT_NE(human.out.find("name index: " + std::to_string(found("").size()) + " names"),
              std::string::npos)
        << human.out;
    EXPECT_EQ(human.out.find("catching up"), std::string::npos) << human.out;
    EXPECT_GE(before.value("search_workers", 0u), 1u);

    // A new name, found through the layer while the snapshot is current: no rebuild.
    write(root_ + "/b/needle-three", 5);
    ASSERT_TRUE(eventually([&] {
        return found("needle-three").count(root_ + "/b/needle-three") == 1 && current() &&
               names().value("layer_dirs", 0u) >= 1;
    })) << names().dump()
        << log();
    const auto layered = names();
    EXPECT_EQ(layered.value("base_builds", 0u), builds) << layered.dump();
    EXPECT_GE(layered.value("layer_updates", 0u), 1u) << layered.dump();
    EXPECT_EQ(found("needle"),
              (std::set<std::string>{root_ + "/a/deep/needle-one", root_ + "/b/needle-two",
                                     root_ + "/b/needle-three"}));

    // A removed name and a removed subtree leave the answers the same way.
    ASSERT_EQ(::unlink((root_ + "/b/needle-two").c_str()), 0);
    std::filesystem::remove_all(root_ + "/a/deep");
    ASSERT_TRUE(eventually([&] {
        return found("needle") == std::set<std::string>{root_ + "/b/needle-three"} && current();
    })) << names().dump()
        << log();
    EXPECT_EQ(names().value("base_builds", 0u), builds);

    // What the layer answers equals what a base built from the database answers.
    const auto layered_all = found("");
    ASSERT_TRUE(daemon_->stop().has_value());
    ASSERT_EQ(::unlink(names_file().c_str()), 0);
    start_daemon();
    ASSERT_TRUE(eventually([&] { return current(); })) << log();
    EXPECT_EQ(found(""), layered_all);
}

TEST_F(NameIndexFile, ADamagedOrForeignFileIsRebuiltFromTheDatabase) {
    ASSERT_TRUE(eventually([&] { return current(); })) << log();
    const auto expected = found("needle");
    ASSERT_EQ(expected.size(), 2u);
    const auto all = found("");
    ASSERT_TRUE(daemon_->stop().has_value());
    struct stat st {};
    ASSERT_EQ(::stat(names_file().c_str(), &st), 0);

    // Truncated: half of it.
    ASSERT_EQ(::truncate(names_file().c_str(), st.st_size / 2), 0);
    start_daemon();
    ASSERT_TRUE(eventually([&] { return current(); })) << log();
    EXPECT_EQ(names().value("base_builds", 0u), 1u) << names().dump();
    EXPECT_TRUE(names().value("file_backed", false));
    EXPECT_EQ(found("needle"), expected);
    EXPECT_EQ(found(""), all);
    ASSERT_TRUE(daemon_->stop().has_value());

    // Same size, every byte flipped after the header's magic: a checksum or bounds check fails.
    {
        std::fstream f(names_file(), std::ios::in | std::ios::out | std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        ASSERT_EQ(bytes.size(), static_cast<std::size_t>(st.st_size));
        for (std::size_t i = 8; i < bytes.size(); ++i) bytes[i] = static_cast<char>(~bytes[i]);
        f.seekp(0);
        f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    start_daemon();
    ASSERT_TRUE(eventually([&] { return current(); })) << log();
    EXPECT_EQ(names().value("base_builds", 0u), 1u) << names().dump();
    EXPECT_EQ(found("needle"), expected);
    EXPECT_EQ(found(""), all);
    ASSERT_TRUE(daemon_->stop().has_value());

    // The rebuilt file, unchanged: a restart maps it and builds nothing.
    start_daemon();
    ASSERT_TRUE(eventually([&] { return current(); })) << log();
    EXPECT_EQ(names().value("base_builds", 0u), 0u) << names().dump();
    EXPECT_EQ(found(""), all);
}

// The same daemon with trigram lists for every base (the default is 3M names and more).
class NameIndexLists : public NameIndexFile {
  protected:
    void SetUp() override {
        const std::string config = scratch_ / "wsindexd.conf";
        std::ofstream(config) << "trigram_min_names = 1\n";
        extra_args_ = {"--config", config};
        start_daemon();
        make_tree();
    }
    // The snapshot is current and searched through its lists.
    bool listed() { return current() && names().value("trigrams", false); }
};

TEST_F(NameIndexLists, ListsAnswerFindsFollowLiveChangesAndAreRebuiltWhenUntrustworthy) {
    ASSERT_TRUE(eventually([&] { return listed(); })) << names().dump() << log();
    auto n = names();
    EXPECT_EQ(n.value("trigram_builds", 0u), 1u) << n.dump();
    struct stat st {};
    ASSERT_EQ(::stat(lists_file().c_str(), &st), 0) << lists_file();
    EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), n.value("trigram_bytes", 0u));
    const std::set<std::string> both = {root_ + "/a/deep/needle-one", root_ + "/b/needle-two"};
    EXPECT_EQ(found("needle"), both);
    EXPECT_EQ(found("eedle-tw"), std::set<std::string>{root_ + "/b/needle-two"});
    EXPECT_EQ(found("needleone"), std::set<std::string>{});  // every trigram, not in sequence
    const auto r = ctl({"find", "-i", "NEEDLE-", "-0"});
    EXPECT_EQ(split_nul(r.out), both) << r.err;
    EXPECT_EQ(found("file-4").size(), 11u);  // file-4, file-40 ... file-49

    // A restart opens the lists of the base it opens: nothing is built.
    ASSERT_TRUE(daemon_->stop().has_value());
    start_daemon();
    ASSERT_TRUE(eventually([&] { return listed(); })) << names().dump() << log();
    EXPECT_EQ(names().value("base_builds", 0u), 0u) << names().dump();
    EXPECT_EQ(names().value("trigram_builds", 0u), 0u) << names().dump();
    EXPECT_EQ(found("needle"), both);

    // A live change is layered over the base; the lists stay (no rebuild of either).
    write(root_ + "/b/needle-three", 5);
    ASSERT_TRUE(eventually([&] {
        return found("needle-three").count(root_ + "/b/needle-three") == 1 && listed() &&
               names().value("layer_dirs", 0u) >= 1;
    })) << names().dump()
        << log();
    n = names();
    EXPECT_EQ(n.value("trigram_builds", 0u), 0u) << n.dump();
    EXPECT_EQ(found("needle").size(), 3u);

    // The live change moved the generation: a restart rebuilds the base, then its lists.
    ASSERT_TRUE(daemon_->stop().has_value());
    start_daemon();
    ASSERT_TRUE(eventually([&] { return listed(); })) << names().dump() << log();
    EXPECT_EQ(names().value("base_builds", 0u), 1u) << names().dump();
    EXPECT_EQ(names().value("trigram_builds", 0u), 1u) << names().dump();

    // A truncated lists file is rebuilt, and answers as before.
    ASSERT_TRUE(daemon_->stop().has_value());
    ASSERT_EQ(::stat(lists_file().c_str(), &st), 0);
    ASSERT_EQ(::truncate(lists_file().c_str(), st.st_size - 1), 0);
    start_daemon();
    ASSERT_TRUE(eventually([&] { return listed(); })) << names().dump() << log();
    EXPECT_EQ(names().value("base_builds", 0u), 0u) << names().dump();
    EXPECT_EQ(names().value("trigram_builds", 0u), 1u) << names().dump();
    EXPECT_EQ(found("needle").size(), 3u);
    EXPECT_EQ(found("file-4").size(), 11u);
}

}  // namespace
}  // namespace wsindex::cli::test
