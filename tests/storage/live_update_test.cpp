// Live updates in place: after changes on a real tree, re-listing the changed directories (one
// level) and walking the new subdirectories must leave the index equal to a fresh scan, row for
// row and total for total.
#include "storage/live_update.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <map>
#include <memory>

#include "core/named_stat.hpp"
#include "core/walker.hpp"
#include "storage/name_index.hpp"
#include "storage/scan_writer.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

using test::TempDir;

std::vector<core::WalkResult> walk(const std::string& root, std::uint32_t max_depth) {
    core::WalkOptions options;
    options.workers = 2;
    options.max_depth = max_depth;
    core::Walker walker(options);
    std::vector<core::WalkResult> out;
    const core::Status s = walker.run(root, [&](std::span<core::WalkResult> batch) {
        for (auto& r : batch) out.push_back(std::move(r));
        return core::Status{};
    });
    EXPECT_TRUE(s) << s.to_string();
    return out;
}

// Re-lists `dir` one level, as a whole re-listing (`rewalk`: RelistedDir::rewalk).
RelistedDir list_whole(const std::string& dir, const std::vector<std::string>& rewalk) {
    std::vector<core::WalkResult> records = walk(dir, 1);
    RelistedDir rd;
    for (auto& r : records) {
        if (r.parent_id == 0) {
            rd.self = std::move(r);
        } else {
            rd.entries.push_back(std::move(r));
        }
    }
    rd.rewalk = rewalk;
    return rd;
}

// What the daemon does for one batch: re-list each of `whole` (`rewalk`: RelistedDir::rewalk
// of each, by path), stat each name of `named` (the directories whose changed names the monitor
// reported: partial re-listings), walk what is new, apply it all in one transaction.
core::Status relist_batch(
    Database& db, const std::vector<std::string>& whole,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& named, LiveReport* report,
    const std::map<std::string, std::vector<std::string>>& rewalk = {}) {
    LiveBatch batch;
    std::vector<RelistedDir> listed;
    for (const auto& [dir, names] : named) {
        core::NamedStat stat;
        if (auto s = core::stat_named(dir, names, core::real_fs_ops(), &stat); !s) return s;
        RelistedDir rd;
        rd.self = std::move(stat.self);
        rd.entries = std::move(stat.found);
        rd.gone = std::move(stat.gone);
        rd.partial = true;
        listed.push_back(std::move(rd));
    }
    for (const std::string& d : whole) {
        const auto it = rewalk.find(d);
        listed.push_back(
            list_whole(d, it == rewalk.end() ? std::vector<std::string>{} : it->second));
    }
    for (RelistedDir& rd : listed) {
        std::vector<std::string> fresh;
        if (auto s = unindexed_subdirs(db, rd, &fresh); !s) return s;
        for (const std::string& sub : fresh) batch.subtrees.push_back({walk(sub, 0)});
        batch.dirs.push_back(std::move(rd));
    }
    return apply_live_batch(db, batch, report);
}

core::Status relist(Database& db, const std::vector<std::string>& dirs, LiveReport* report,
                    const std::map<std::string, std::vector<std::string>>& rewalk = {}) {
    return relist_batch(db, dirs, {}, report, rewalk);
}

core::Status relist_named(Database& db,
                          const std::vector<std::pair<std::string, std::vector<std::string>>>& dirs,
                          LiveReport* report) {
    return relist_batch(db, {}, dirs, report);
}

// Each directory's digest by path: what lets a later rescan keep its rows.
std::string dump_digests(Database& db) {
    Statement s;
    EXPECT_TRUE(
        db.prepare("SELECT prefix, digest FROM dirs WHERE prefix != '' ORDER BY prefix", &s));
    std::string out;
    for (bool row = true;;) {
        EXPECT_TRUE(s.step(&row));
        if (!row) break;
        out += std::string(s.column_bytes(0)) + " " + std::to_string(s.column_int64(1)) + "\n";
    }
    return out;
}

class LiveUpdate : public ::testing::Test {
  protected:
    void SetUp() override {
        root_ = tmp_ / "r";
        ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
        for (const char* d : {"a", "a/x", "a/x/deep", "b", "c"}) mk(d);
        for (const char* f : {"a/f1", "a/x/f2", "a/x/deep/f3", "b/g", "c/h", "top"}) {
            test::write_file(p(f), 100);
        }
        ASSERT_TRUE(ScanWriter::open(tmp_ / "live.db", &writer_));
        ASSERT_TRUE(test::scan_with(*writer_, root_));
        ASSERT_TRUE(NameIndex::load(writer_->database(), &names_));
    }
    std::string p(const std::string& rel) const { return root_ + "/" + rel; }
    void mk(const std::string& rel) const { ASSERT_EQ(::mkdir(p(rel).c_str(), 0755), 0); }

    // Applies the dirty directories, then compares with a fresh scan of the tree.
    void expect_converges(const std::vector<std::string>& dirty_rel,
                          const std::map<std::string, std::vector<std::string>>& rewalk = {}) {
        std::vector<std::string> dirty;
        for (const auto& d : dirty_rel) dirty.push_back(d.empty() ? root_ : p(d));
        LiveReport report;
        const core::Status s = relist(writer_->database(), dirty, &report, rewalk);
        ASSERT_TRUE(s) << s.to_string();
        ASSERT_TRUE(writer_->collect_garbage());
        const std::string fresh_db = tmp_ / ("fresh" + std::to_string(++fresh_) + ".db");
        ASSERT_TRUE(test::scan_db(fresh_db, root_));
        std::unique_ptr<ScanWriter> fresh;
        ASSERT_TRUE(ScanWriter::open(fresh_db, &fresh));
        EXPECT_EQ(test::dump_index(writer_->database()), test::dump_index(fresh->database()));
        EXPECT_EQ(dump_digests(writer_->database()), dump_digests(fresh->database()));
        EXPECT_EQ(test::integrity(writer_->database()), "ok");
        last_ = report;
    }

    // The same for named changes (partial re-listings); digests must equal a fresh scan's too.
    // `whole_rel`: directories re-listed whole in the same batch.
    void expect_named_converges(
        const std::vector<std::pair<std::string, std::vector<std::string>>>& named_rel,
        const std::vector<std::string>& whole_rel = {}) {
        std::vector<std::pair<std::string, std::vector<std::string>>> named;
        for (const auto& [d, names] : named_rel)
            named.emplace_back(d.empty() ? root_ : p(d), names);
        std::vector<std::string> whole;
        for (const auto& d : whole_rel) whole.push_back(d.empty() ? root_ : p(d));
        LiveReport report;
        const core::Status s = relist_batch(writer_->database(), whole, named, &report);
        ASSERT_TRUE(s) << s.to_string();
        ASSERT_TRUE(writer_->collect_garbage());
        const std::string fresh_db = tmp_ / ("fresh" + std::to_string(++fresh_) + ".db");
        ASSERT_TRUE(test::scan_db(fresh_db, root_));
        std::unique_ptr<ScanWriter> fresh;
        ASSERT_TRUE(ScanWriter::open(fresh_db, &fresh));
        EXPECT_EQ(test::dump_index(writer_->database()), test::dump_index(fresh->database()));
        EXPECT_EQ(dump_digests(writer_->database()), dump_digests(fresh->database()));
        EXPECT_EQ(test::integrity(writer_->database()), "ok");
        last_ = report;
        expect_names_layered(report);
    }

    // The name index with the batch's directories layered over it searches exactly as a fresh
    // load of the names does (the same keys in the same order), batch after batch.
    void expect_names_layered(const LiveReport& report) {
        NameIndex layered;
        std::int64_t generation = -1;
        ASSERT_TRUE(names_.with_dirs(writer_->database(), report.name_dirs, &layered, &generation));
        NameIndex fresh;
        ASSERT_TRUE(NameIndex::load(writer_->database(), &fresh));
        EXPECT_EQ(generation, fresh.generation());
        EXPECT_EQ(report.generation, fresh.generation());
        EXPECT_EQ(layered.size(), fresh.size());
        auto rows = [](const NameIndex& index, const char* needle, bool icase) {
            std::vector<std::string> out;
            index.for_each_substring(needle, icase, [&](const NameIndex::Key& k) {
                out.push_back(std::to_string(k.dir) + ' ' + std::string(k.prefix) +
                              std::string(k.name) + ' ' + k.type);
                return true;
            });
            return out;
        };
        for (const char* needle : {"", "f", "F", "deep", "x", "new", "moved"}) {
            for (bool icase : {false, true}) {
                EXPECT_EQ(rows(layered, needle, icase), rows(fresh, needle, icase)) << needle;
            }
        }
        names_ = layered;
    }

    TempDir tmp_;
    std::string root_;
    std::unique_ptr<ScanWriter> writer_;
    LiveReport last_;
    NameIndex names_;  // loaded after the first scan, then layered with each batch
    int fresh_ = 0;
};

TEST_F(LiveUpdate, CreatedWrittenAndDeletedFiles) {
    test::write_file(p("a/new"), 4000);
    test::write_file(p("b/g"), 12345);
    ASSERT_EQ(::unlink(p("c/h").c_str()), 0);
    ASSERT_EQ(::chmod(p("top").c_str(), 0600), 0);
    expect_converges({"a", "b", "c", ""});
    EXPECT_EQ(last_.dirs_applied, 4u);
    EXPECT_TRUE(last_.keys_changed);
}

TEST_F(LiveUpdate, UnchangedDirectoryWritesNothing) {
    expect_converges({"a", "b"});
    EXPECT_EQ(last_.rows_inserted + last_.rows_updated + last_.rows_deleted, 0u);
    EXPECT_FALSE(last_.keys_changed);
}

TEST_F(LiveUpdate, NewSubtreeIsWalkedInFull) {
    mk("b/n");
    mk("b/n/m");
    test::write_file(p("b/n/m/deep"), 777);
    test::write_file(p("b/n/one"), 1);
    expect_converges({"b"});
}

TEST_F(LiveUpdate, RemovedSubtreeLeavesNoRowAndNoTotal) {
    test::remove_tree(p("a/x"));
    expect_converges({"a"});
    EXPECT_EQ(last_.subtrees_removed, 1u);
}

TEST_F(LiveUpdate, RenamedDirectoriesWithinAndAcrossParents) {
    ASSERT_EQ(::rename(p("a/x").c_str(), p("b/moved").c_str()), 0);
    ASSERT_EQ(::rename(p("c").c_str(), p("c2").c_str()), 0);
    expect_converges({"a", "b", ""});
}

TEST_F(LiveUpdate, DirectoryReplacedByAFileAndBack) {
    test::remove_tree(p("a/x"));
    test::write_file(p("a/x"), 10);
    ASSERT_EQ(::unlink(p("b/g").c_str()), 0);
    mk("b/g");
    test::write_file(p("b/g/inside"), 5);
    expect_converges({"a", "b"});
}

TEST_F(LiveUpdate, ChangesBelowAReplacedSubtreeAreSkipped) {
    // a/x is replaced by another directory that has a deep/ too: the walk of the new a/x
    // covers a/x/deep, which is dirty as well and must not be applied on top.
    mk("a/x2");
    mk("a/x2/deep");
    test::write_file(p("a/x2/deep/other"), 9);
    test::remove_tree(p("a/x"));
    ASSERT_EQ(::rename(p("a/x2").c_str(), p("a/x").c_str()), 0);
    expect_converges({"a", "a/x/deep"});
    EXPECT_EQ(last_.dirs_skipped, 1u);
}

TEST_F(LiveUpdate, ARecreatedDirectoryConvergesWhenEveryChangedDirectoryIsReported) {
    // The file system may give the new a/x the old one's inode number; what tells the new
    // directory apart is that every directory whose listing changed is re-listed (a monitor
    // reports each one: the deletions in the old ones, the creations in the new ones).
    test::remove_tree(p("a/x"));
    mk("a/x");
    mk("a/x/deep");
    test::write_file(p("a/x/deep/other"), 9);
    expect_converges({"a", "a/x", "a/x/deep"});
}

TEST_F(LiveUpdate, HardLinksInOneAndAcrossDirectories) {
    ASSERT_EQ(::link(p("a/f1").c_str(), p("a/f1-again").c_str()), 0);
    ASSERT_EQ(::link(p("b/g").c_str(), p("c/g-link").c_str()), 0);
    expect_converges({"a", "b", "c"});
    ASSERT_EQ(::unlink(p("c/g-link").c_str()), 0);
    expect_converges({"b", "c"});
}

TEST_F(LiveUpdate, AHardLinkMadeInOneDirectorySyncsTheNameElsewhere) {
    // Only c is re-listed (its new name); b/g's row still says nlink 1 and would be counted
    // twice in the root's total without the sync of the other names.
    ASSERT_EQ(::link(p("b/g").c_str(), p("c/g-link").c_str()), 0);
    expect_converges({"c"});
    test::write_file(p("c/g-link"), 5000);  // written through the new name
    expect_converges({"c"});
    ASSERT_EQ(::unlink(p("c/g-link").c_str()), 0);
    expect_converges({"c"});
}

TEST_F(LiveUpdate, ARemovedSubtreeWithAHardLinkSyncsTheNameOutside) {
    ASSERT_EQ(::link(p("b/g").c_str(), p("a/x/deep/g-link").c_str()), 0);
    expect_converges({"a/x/deep", "b"});
    test::remove_tree(p("a/x"));
    expect_converges({"a"});
}

TEST_F(LiveUpdate, OddNamesRoundTrip) {
    test::write_file(p("b/new\nline"), 3);
    test::write_file(p("b/bad\xff\xfe"), 4);
    test::write_file(p("b/" + std::string(255, 'n')), 5);
    expect_converges({"b"});
}

TEST_F(LiveUpdate, AFailedBatchLeavesTheIndexAsItWas) {
    const std::string before = test::dump_index(writer_->database());
    test::write_file(p("a/new"), 4000);
    LiveBatch batch;
    batch.dirs.push_back(list_whole(p("a"), {}));
    // Another connection holds the write lock: the batch cannot start, nothing changes.
    Database other;
    ASSERT_TRUE(Database::open(tmp_ / "live.db", OpenMode::read_write, &other));
    ASSERT_TRUE(other.exec("PRAGMA busy_timeout=0"));
    ASSERT_TRUE(other.exec("BEGIN IMMEDIATE"));
    ASSERT_TRUE(writer_->database().exec("PRAGMA busy_timeout=0"));
    LiveReport report;
    EXPECT_FALSE(apply_live_batch(writer_->database(), batch, &report));
    ASSERT_TRUE(other.exec("ROLLBACK"));
    EXPECT_EQ(test::dump_index(writer_->database()), before);
}

TEST_F(LiveUpdate, NamedChangesStatOnlyTheirNames) {
    test::write_file(p("a/new"), 4000);
    test::write_file(p("b/g"), 12345);
    ASSERT_EQ(::unlink(p("c/h").c_str()), 0);
    ASSERT_EQ(::chmod(p("top").c_str(), 0600), 0);
    test::write_file(p("b/odd\nname\xff"), 7);
    expect_named_converges({{"a", {"new"}},
                            {"b", {"g", "odd\nname\xff", "never-existed"}},
                            {"c", {"h"}},
                            {"", {"top"}}});
    EXPECT_EQ(last_.dirs_applied, 4u);
    EXPECT_EQ(last_.rows_inserted, 2u);
    EXPECT_EQ(last_.rows_deleted, 1u);
    EXPECT_TRUE(last_.relist_whole.empty());
}

TEST_F(LiveUpdate, NamedSubdirectoriesComeAndGoWithTheirSubtrees) {
    mk("b/n");
    mk("b/n/m");
    test::write_file(p("b/n/m/deep"), 777);
    test::remove_tree(p("a/x"));
    test::write_file(p("a/x"), 10);  // a directory replaced by a file of the same name
    ASSERT_EQ(::rename(p("c").c_str(), p("c2").c_str()), 0);
    expect_named_converges({{"a", {"x"}}, {"b", {"n"}}, {"", {"c", "c2"}}});
    EXPECT_EQ(last_.subtrees_removed, 2u);  // a/x, and c (now c2, walked anew)
}

TEST_F(LiveUpdate, ADirectoryMovedOutAndBackIsWalkedAgain) {
    // a/x leaves the root, changes while it is away (its events then resolve outside every
    // root and are dropped), and comes back under its old name with its old inode. The only
    // changes reported are the two moves, named in a.
    const std::string away = tmp_ / "away";
    ASSERT_EQ(::rename(p("a/x").c_str(), away.c_str()), 0);
    ASSERT_EQ(::unlink((away + "/f2").c_str()), 0);
    test::write_file(away + "/deep/new", 321);
    ASSERT_EQ(::rename(away.c_str(), p("a/x").c_str()), 0);
    expect_named_converges({{"a", {"x"}}});
    EXPECT_EQ(last_.subtrees_removed, 1u);
}

// The monitor keeps a bounded number of names per directory: past it, the whole re-listing
// says names were dropped (rewalk_changed), and a directory that moved out and back (its name
// among those dropped) is found by its change time, which the moves changed.
TEST_F(LiveUpdate, ADirectoryMovedOutAndBackPastTheNameBoundIsWalkedAgain) {
    const std::string away = tmp_ / "away";
    ASSERT_EQ(::rename(p("a/x").c_str(), away.c_str()), 0);
    ASSERT_EQ(::unlink((away + "/f2").c_str()), 0);
    test::write_file(away + "/deep/new", 321);
    ASSERT_EQ(::rename(away.c_str(), p("a/x").c_str()), 0);
    // Control: the names alone (none kept) do not find it; the listing shows the same
    // directory, so the old subtree would stay.
    RelistedDir plain = list_whole(p("a"), {});
    std::vector<std::string> walked;
    ASSERT_TRUE(unindexed_subdirs(writer_->database(), plain, &walked));
    EXPECT_TRUE(walked.empty()) << walked.front();
    RelistedDir dropped = list_whole(p("a"), {});
    dropped.rewalk_changed = true;
    ASSERT_TRUE(unindexed_subdirs(writer_->database(), dropped, &walked));
    EXPECT_EQ(walked, std::vector<std::string>{p("a/x")});
    LiveBatch batch;
    for (const std::string& sub : walked) batch.subtrees.push_back({walk(sub, 0)});
    batch.dirs.push_back(std::move(dropped));
    LiveReport report;
    ASSERT_TRUE(apply_live_batch(writer_->database(), batch, &report));
    EXPECT_EQ(report.subtrees_removed, 1u) << "the old subtree of a/x is replaced";
    expect_converges({});
}

// Past the bound, an unchanged subdirectory is not walked again: only those whose row differs.
TEST_F(LiveUpdate, PastTheNameBoundOnlyChangedSubdirectoriesAreWalkedAgain) {
    test::write_file(p("new-file"), 5);  // the root's listing changed, its subdirectories not
    RelistedDir dropped = list_whole(root_, {});
    dropped.rewalk_changed = true;
    std::vector<std::string> walked;
    ASSERT_TRUE(unindexed_subdirs(writer_->database(), dropped, &walked));
    EXPECT_TRUE(walked.empty()) << walked.front();
    test::write_file(p("b/g2"), 5);  // b's ctime moves: walked again, and still converges
    dropped = list_whole(root_, {});
    dropped.rewalk_changed = true;
    ASSERT_TRUE(unindexed_subdirs(writer_->database(), dropped, &walked));
    EXPECT_EQ(walked, std::vector<std::string>{p("b")});
}

TEST_F(LiveUpdate, AWholeListingThatReplacesANamedOneWalksItsSubdirectoriesAgain) {
    // As above, and a hard link named in the same directory: the named re-listing is not
    // applied but asks for a whole one, which must still walk a/x again.
    const std::string away = tmp_ / "away";
    ASSERT_EQ(::rename(p("a/x").c_str(), away.c_str()), 0);
    ASSERT_EQ(::unlink((away + "/f2").c_str()), 0);
    ASSERT_EQ(::rename(away.c_str(), p("a/x").c_str()), 0);
    ASSERT_EQ(::link(p("b/g").c_str(), p("a/g-link").c_str()), 0);
    LiveReport report;
    ASSERT_TRUE(relist_named(writer_->database(), {{p("a"), {"x", "g-link"}}}, &report));
    ASSERT_EQ(report.relist_whole.size(), 1u);
    EXPECT_EQ(report.relist_whole[0].path, p("a"));
    EXPECT_EQ(report.relist_whole[0].rewalk, std::vector<std::string>{"x"});
    expect_converges({"a"}, {{p("a"), {"x"}}});
}

TEST_F(LiveUpdate, NamedChangeToAHardLinkedInodeAsksForTheWholeDirectory) {
    ASSERT_EQ(::link(p("b/g").c_str(), p("c/g-link").c_str()), 0);
    LiveReport report;
    const std::string before = test::dump_index(writer_->database());
    ASSERT_TRUE(relist_named(writer_->database(), {{p("c"), {"g-link"}}}, &report));
    ASSERT_EQ(report.relist_whole.size(), 1u);
    EXPECT_EQ(report.relist_whole[0].path, p("c"));
    EXPECT_TRUE(report.relist_whole[0].rewalk.empty());
    EXPECT_EQ(report.dirs_applied, 0u);
    EXPECT_EQ(test::dump_index(writer_->database()), before) << "nothing of c applied";
    // The whole listing then syncs the other name too (inode_sync).
    expect_converges({"c"});
}

TEST_F(LiveUpdate, ANamedChangeInTheDirectoryOfAnotherNameStillSyncsThatName) {
    // A link to b/g made in c (c re-listed whole: a new multi-link name), and in the same batch
    // a named change in b of another entry. b's partial re-listing writes only b/new; b/g
    // still says nlink 1 and must be synced like any name outside the batch's directories.
    // (Found by the fanotify convergence test: the sync skipped every directory of the batch.)
    ASSERT_EQ(::link(p("b/g").c_str(), p("c/g-link").c_str()), 0);
    test::write_file(p("b/new"), 10);
    expect_named_converges({{"b", {"new"}}}, {"c"});
    EXPECT_EQ(last_.dirs_applied, 2u);
}

// A directory's own size enters its totals once per change, whichever plans of a batch see it:
// here both its parent's listing (its entry row) and its own re-listing (its self record) do.
// On ext4 150 long names grow a directory from one block to several.
TEST_F(LiveUpdate, ADirectorysOwnSizeChangeCountsOnceWhenItsParentIsInTheBatch) {
    struct stat before {};
    ASSERT_EQ(::lstat(p("a/x").c_str(), &before), 0);
    for (int i = 0; i < 150; ++i) {
        test::write_file(p("a/x/" + std::string(200, 'n') + std::to_string(i)), 0);
    }
    struct stat after {};
    ASSERT_EQ(::lstat(p("a/x").c_str(), &after), 0);
    ASSERT_NE(after.st_size, before.st_size) << "the directory's own size must change";
    ASSERT_EQ(::chmod(p("a").c_str(), 0750), 0);
    expect_converges({"a", "a/x"});
    // The same with the directory listed before its parent in the batch.
    for (int i = 150; i < 300; ++i) {
        test::write_file(p("a/x/" + std::string(200, 'm') + std::to_string(i)), 0);
    }
    expect_converges({"a/x", "a"});
}

}  // namespace
}  // namespace wsindex::storage
