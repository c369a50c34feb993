// Queries against hand-computed expectations, through the name index and through SQL alike.
#include "storage/queries.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "storage/database.hpp"
#include "storage/name_index.hpp"
#include "storage/scan_writer.hpp"
#include "tests/storage/support/synth.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

using test::Synth;
using test::TempDir;

std::vector<core::WalkResult> query_tree(bool with_extra = false) {
    Synth t("/q");
    auto file = [&](std::uint64_t dir, const std::string& name, std::uint64_t size,
                    std::int64_t mtime, std::uint32_t uid) {
        t.file(dir, name, size, (size + 511) / 512);
        t.last().mtime_ns = mtime;
        t.last().uid = uid;
    };
    const auto docs = t.dir(1, "docs");
    file(docs, "report.txt", 100, 1000, 1);
    file(docs, "Report-final.TXT", 2000, 2000, 2);
    file(docs, "notes.md", 50, 3000, 1);
    const auto src = t.dir(1, "src");
    file(src, "main.cpp", 500, 1500, 1);
    file(src, "util.cpp", 700, 2500, 2);
    file(src, "util.hpp", 30, 500, 1);
    const auto deep = t.dir(src, "deep");
    file(deep, "report.cpp", 10, 100, 3);
    file(deep, "link", 8, 100, 1);
    t.last().type = core::EntryType::Symlink;
    t.last().mode = 0120777;
    file(1, "ab", 1, 100, 1);
    if (with_extra) file(docs, "report.new", 5, 100, 1);
    return t.results();
}

class QueriesTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(ScanWriter::open(dir_ / "index.db", &writer_));
        scan(query_tree());
        db_ = test::open_reader(dir_ / "index.db");
        ASSERT_TRUE(NameIndex::load(db_, &index_));
    }
    void scan(std::vector<core::WalkResult> rs) {
        ASSERT_TRUE(writer_->begin("/q"));
        ASSERT_TRUE(writer_->write(rs));
        ASSERT_TRUE(writer_->complete());
        ASSERT_TRUE(writer_->collect_garbage());
    }
    // The sorted paths `q` finds, checked equal through the index and through SQL.
    std::vector<std::string> find(const FindQuery& q) {
        Queries with(db_, &index_);
        Queries without(db_);
        std::vector<FileRow> a;
        std::vector<FileRow> b;
        auto s = with.find(q, &a);
        EXPECT_TRUE(s) << s.to_string();
        s = without.find(q, &b);
        EXPECT_TRUE(s) << s.to_string();
        EXPECT_FALSE(without.last_used_index());
        std::vector<std::string> pa;
        std::vector<std::string> pb;
        for (const auto& r : a) pa.push_back(r.path);
        for (const auto& r : b) pb.push_back(r.path);
        if (q.order == Order::none) {
            std::sort(pa.begin(), pa.end());
            std::sort(pb.begin(), pb.end());
        }
        EXPECT_EQ(pa, pb) << "index and SQL disagree for '" << q.pattern << "'";
        return pa;
    }
    std::vector<std::string> find(const std::string& pattern,
                                  NameMatch match = NameMatch::substring, bool icase = false) {
        FindQuery q;
        q.pattern = pattern;
        q.match = match;
        q.ignore_case = icase;
        return find(q);
    }

    TempDir dir_;
    std::unique_ptr<ScanWriter> writer_;
    Database db_;
    NameIndex index_;
};

using Paths = std::vector<std::string>;

TEST_F(QueriesTest, SubstringIsTheDefaultAndUsesTheIndex) {
    EXPECT_EQ(find("report"), (Paths{"/q/docs/report.txt", "/q/src/deep/report.cpp"}));
    EXPECT_EQ(find("report", NameMatch::substring, true),
              (Paths{"/q/docs/Report-final.TXT", "/q/docs/report.txt", "/q/src/deep/report.cpp"}));
    EXPECT_EQ(find("ab"), (Paths{"/q/ab"}));  // shorter than a trigram
    EXPECT_EQ(find("x"), (Paths{"/q/docs/report.txt"}));
    EXPECT_EQ(find("nothing-like-it"), Paths{});
    Queries q(db_, &index_);
    std::vector<FileRow> rows;
    FindQuery fq;
    fq.pattern = "util";
    ASSERT_TRUE(q.find(fq, &rows));
    EXPECT_TRUE(q.last_used_index());
    EXPECT_EQ(rows.size(), 2u);
}

// The index locates each hit by galloping from the previous one: hits next to each other,
// a power of two apart (the gallop's boundaries) or far apart, the first and the last name.
TEST_F(QueriesTest, IndexFindsHitsAtEveryDistanceApart) {
    Synth t("/q");
    const auto dir = t.dir(1, "many");
    std::set<int> hits = {0,  1,  2,   4,   5,   8,   9,    16,   17,   31,   33,
                          64, 65, 127, 129, 255, 256, 1000, 1023, 1024, 2047, 2999};
    Paths expected;
    for (int k = 0; k < 3000; ++k) {
        char name[32];
        std::snprintf(name, sizeof name, "%s%04d", hits.count(k) != 0 ? "hit" : "name", k);
        t.file(dir, name, 1, 1);
        if (hits.count(k) != 0) expected.push_back("/q/many/" + std::string(name));
    }
    scan(t.results());
    ASSERT_TRUE(NameIndex::load(db_, &index_));
    EXPECT_EQ(find("hit"), expected);                   // (sorted; "hit" sorts before "name")
    EXPECT_EQ(find("2999"), Paths{"/q/many/hit2999"});  // the last name of the index
    EXPECT_EQ(find("name0003"), Paths{"/q/many/name0003"});
    // The root's key is (dir 0, its whole path), under the empty prefix of dir 0.
    EXPECT_EQ(find("/q"), Paths{"/q"});
    FindQuery every_miss;  // "e": in each "name" once or twice, reported once per name
    every_miss.pattern = "e";
    every_miss.limit = 0;
    EXPECT_EQ(find(every_miss).size(), 3000u - hits.size());
}

// An index answer without an order goes to the sink row by row (the daemon sends batches while
// the lookups go on); a sink that stops ends the lookups, and `limit` rows at most arrive.
TEST_F(QueriesTest, IndexAnswerStreamsToTheSinkAndStops) {
    Queries q(db_, &index_);
    FindQuery fq;
    fq.pattern = "o";  // most names of the tree
    fq.limit = 0;
    std::vector<std::string> seen;
    ASSERT_TRUE(q.find(fq, [&](FileRow& row) {
        seen.push_back(row.path);
        return seen.size() < 2;
    }));
    EXPECT_TRUE(q.last_used_index());
    EXPECT_EQ(seen.size(), 2u);
    fq.limit = 3;
    seen.clear();
    ASSERT_TRUE(q.find(fq, [&](FileRow& row) {
        seen.push_back(row.path);
        return true;
    }));
    EXPECT_TRUE(q.last_used_index());
    EXPECT_EQ(seen.size(), 3u);
}

// A paths-only find (wsctl's plain output) is answered by the name index alone when no filter
// needs the entry's columns: the same paths and types as a full find through SQL, no metadata.
TEST_F(QueriesTest, PathsOnlyFindAnswersFromTheIndexAlone) {
    Queries with(db_, &index_);
    Queries without(db_);
    auto check = [&](FindQuery q, bool index_alone) {
        SCOPED_TRACE("pattern '" + q.pattern + "' types '" + q.types + "' under '" + q.under + "'");
        std::vector<FileRow> full;
        ASSERT_TRUE(without.find(q, &full));
        q.metadata = false;
        std::vector<FileRow> paths;
        ASSERT_TRUE(with.find(q, &paths));
        EXPECT_TRUE(with.last_used_index());
        auto listing = [&](const std::vector<FileRow>& rows) {
            std::vector<std::string> out;
            for (const auto& r : rows) out.push_back(r.path + '\t' + r.type + '\t' + r.name);
            if (q.order == Order::none) std::sort(out.begin(), out.end());
            return out;
        };
        EXPECT_EQ(listing(paths), listing(full));
        for (const auto& r : paths) {
            EXPECT_EQ(r.has_stat, !index_alone) << r.path;  // no row read: no metadata
        }
        EXPECT_FALSE(full.empty());  // each case below matches something
    };
    FindQuery q;
    q.limit = 0;
    q.pattern = "report";
    check(q, true);
    q.ignore_case = true;
    check(q, true);
    q.types = "f";
    check(q, true);
    q.pattern = "";  // every entry, the root and the directories included
    q.types = "";
    check(q, true);
    q.types = "dl";
    check(q, true);
    q.types = "";
    q.pattern = "p";
    q.under = "/q/src";
    check(q, true);
    q.order = Order::path;
    check(q, true);
    q.limit = 2;
    check(q, true);
    // A filter on the entry's columns needs its row: the index finds, SQLite filters.
    q.limit = 0;
    q.order = Order::none;
    q.min_size = 20;
    check(q, false);
}

// Path order from the index compares whole paths as bytes, as SQL's BLOB order does: a
// directory "x-y" ('-' < '/') sorts before the entries inside "x".
TEST_F(QueriesTest, PathsOnlyFindInPathOrderMatchesSqlByteOrder) {
    Synth t("/q");
    for (const char* d : {"x", "x-y", "x.", "x0"}) {
        const auto dir = t.dir(1, d);
        t.file(dir, "f", 1, 1);
        t.file(dir, "f-", 1, 1);
        t.file(dir, "f0", 1, 1);  // after "f.d/ff" in byte order ('.' < '0'), before by dir
        const auto sub = t.dir(dir, "f.d");
        t.file(sub, "ff", 1, 1);
    }
    scan(t.results());
    ASSERT_TRUE(NameIndex::load(db_, &index_));
    FindQuery q;
    q.pattern = "f";
    q.order = Order::path;
    q.limit = 0;
    Queries without(db_);
    std::vector<FileRow> full;
    ASSERT_TRUE(without.find(q, &full));
    q.metadata = false;
    const Paths from_index = find(q);  // compared with SQL in order, row by row
    Queries with(db_, &index_);
    std::vector<FileRow> rows;
    ASSERT_TRUE(with.find(q, &rows));
    EXPECT_TRUE(with.last_used_index());
    ASSERT_EQ(from_index.size(), full.size());
    EXPECT_EQ(from_index.size(), 20u);          // in each of 4 dirs: f, f-, f0, f.d, f.d/ff
    EXPECT_EQ(from_index.front(), "/q/x-y/f");  // '-' < '/': before everything in "/q/x/"
    const auto at = [&](const std::string& p) {
        return std::find(from_index.begin(), from_index.end(), p) - from_index.begin();
    };
    EXPECT_LT(at("/q/x/f.d/ff"), at("/q/x/f0"));
}

TEST_F(QueriesTest, GlobAndRegex) {
    EXPECT_EQ(find("*.cpp", NameMatch::glob),
              (Paths{"/q/src/deep/report.cpp", "/q/src/main.cpp", "/q/src/util.cpp"}));
    EXPECT_EQ(find("*.txt", NameMatch::glob, true),
              (Paths{"/q/docs/Report-final.TXT", "/q/docs/report.txt"}));
    // A regex is about the whole path (like locate and find -regex): anchor a name after '/'.
    EXPECT_EQ(find("/util\\.(c|h)pp$", NameMatch::regex),
              (Paths{"/q/src/util.cpp", "/q/src/util.hpp"}));
    EXPECT_EQ(find("/REPORT[^/]*$", NameMatch::regex, true),
              (Paths{"/q/docs/Report-final.TXT", "/q/docs/report.txt", "/q/src/deep/report.cpp"}));
    EXPECT_EQ(find("^util", NameMatch::regex), Paths{});  // a path starts with '/'
    EXPECT_EQ(find("^/q/src/deep/", NameMatch::regex),
              (Paths{"/q/src/deep/link", "/q/src/deep/report.cpp"}));
    EXPECT_EQ(find("^/q$", NameMatch::regex), (Paths{"/q"}));  // the root's entry too
    // A glob with a '/' is about the whole path too ('*' crosses '/', as in locate).
    EXPECT_EQ(find("/q/src/*.cpp", NameMatch::glob),
              (Paths{"/q/src/deep/report.cpp", "/q/src/main.cpp", "/q/src/util.cpp"}));
    EXPECT_EQ(find("*/DOCS/*.txt", NameMatch::glob, true),
              (Paths{"/q/docs/Report-final.TXT", "/q/docs/report.txt"}));
    EXPECT_EQ(find("src/*.cpp", NameMatch::glob), Paths{});  // whole path: it starts with '/'

    Queries q(db_);
    std::vector<FileRow> rows;
    FindQuery bad;
    bad.pattern = "(unclosed";
    bad.match = NameMatch::regex;
    auto s = q.find(bad, &rows);
    EXPECT_FALSE(s);
    EXPECT_NE(s.message().find("regular expression"), std::string::npos) << s.to_string();
    // A pattern regcomp would expand to a billion states fails at once instead of eating memory.
    bad.pattern = "(a{32767}){32767}";
    s = q.find(bad, &rows);
    EXPECT_FALSE(s);
    EXPECT_NE(s.message().find("refused"), std::string::npos) << s.to_string();
}

TEST_F(QueriesTest, MetadataFilters) {
    FindQuery q;
    q.types = "l";
    EXPECT_EQ(find(q), (Paths{"/q/src/deep/link"}));
    q.types = "d";
    EXPECT_EQ(find(q), (Paths{"/q", "/q/docs", "/q/src", "/q/src/deep"}));
    q = {};
    q.types = "f";
    q.min_size = 100;
    q.max_size = 700;
    EXPECT_EQ(find(q), (Paths{"/q/docs/report.txt", "/q/src/main.cpp", "/q/src/util.cpp"}));
    q = {};
    q.min_mtime_ns = 1000;
    q.max_mtime_ns = 2000;
    EXPECT_EQ(find(q),
              (Paths{"/q/docs/Report-final.TXT", "/q/docs/report.txt", "/q/src/main.cpp"}));
    q = {};
    q.uid = 2;
    EXPECT_EQ(find(q), (Paths{"/q/docs/Report-final.TXT", "/q/src/util.cpp"}));
    q = {};
    q.under = "/q/src";
    EXPECT_EQ(find(q), (Paths{"/q/src/deep", "/q/src/deep/link", "/q/src/deep/report.cpp",
                              "/q/src/main.cpp", "/q/src/util.cpp", "/q/src/util.hpp"}));
    q.pattern = "report";
    EXPECT_EQ(find(q), (Paths{"/q/src/deep/report.cpp"}));
    q = {};
    q.pattern = "p";
    q.uid = 1;
    q.types = "f";
    q.under = "/q/src";
    EXPECT_EQ(find(q), (Paths{"/q/src/main.cpp", "/q/src/util.hpp"}));  // report.cpp: uid 3
}

TEST_F(QueriesTest, OrderAndLimit) {
    FindQuery q;
    q.types = "f";
    q.order = Order::size_desc;
    q.limit = 2;
    EXPECT_EQ(find(q), (Paths{"/q/docs/Report-final.TXT", "/q/src/util.cpp"}));
    q.pattern = "t";
    q.order = Order::mtime_desc;
    q.limit = 3;
    // "Report-final.TXT" has a 't' too.
    EXPECT_EQ(find(q), (Paths{"/q/docs/notes.md", "/q/src/util.cpp", "/q/docs/Report-final.TXT"}));
    q.order = Order::path;
    q.limit = 0;
    EXPECT_EQ(find(q), (Paths{"/q/docs/Report-final.TXT", "/q/docs/notes.md", "/q/docs/report.txt",
                              "/q/src/deep/report.cpp", "/q/src/util.cpp", "/q/src/util.hpp"}));
}

TEST_F(QueriesTest, BiggestFilesAndDirectoryTotals) {
    Queries q(db_, &index_);
    std::vector<FileRow> files;
    ASSERT_TRUE(q.biggest_files("/q/src", 2, &files));
    ASSERT_EQ(files.size(), 2u);
    EXPECT_EQ(files[0].path, "/q/src/util.cpp");
    EXPECT_EQ(files[0].size, 700);
    EXPECT_EQ(files[1].path, "/q/src/main.cpp");

    std::vector<DirTotalsRow> dirs;
    ASSERT_TRUE(q.dir_totals("/q", 1, &dirs));
    ASSERT_EQ(dirs.size(), 3u);
    EXPECT_EQ(dirs[0].path, "/q");
    // 4 directories of 10 bytes + every file.
    EXPECT_EQ(dirs[0].size, 40 + 100 + 2000 + 50 + 500 + 700 + 30 + 10 + 8 + 1);
    EXPECT_EQ(dirs[0].files, 9);
    EXPECT_EQ(dirs[0].dirs, 3);
    EXPECT_EQ(dirs[1].path, "/q/docs");
    EXPECT_EQ(dirs[1].size, 10 + 100 + 2000 + 50);
    EXPECT_EQ(dirs[2].path, "/q/src");
    EXPECT_EQ(dirs[2].dirs, 1);
    EXPECT_EQ(dirs[2].files, 5);

    ASSERT_TRUE(q.biggest_dirs("/q", 1, &dirs));
    ASSERT_EQ(dirs.size(), 1u);
    EXPECT_EQ(dirs[0].path, "/q/docs");
    // At most one level below /q: /q/src/deep is left out (du --top N --depth 1).
    ASSERT_TRUE(q.biggest_dirs("/q", 3, &dirs, 1));
    ASSERT_EQ(dirs.size(), 2u);
    EXPECT_EQ(dirs[0].path, "/q/docs");
    EXPECT_EQ(dirs[1].path, "/q/src");
    ASSERT_TRUE(q.biggest_dirs("/q", 3, &dirs, 0));  // any depth
    ASSERT_EQ(dirs.size(), 3u);
    EXPECT_EQ(dirs[2].path, "/q/src/deep");
    ASSERT_TRUE(q.biggest_dirs("/q/src", 3, &dirs, 1));
    ASSERT_EQ(dirs.size(), 1u);
    EXPECT_EQ(dirs[0].path, "/q/src/deep");
}

TEST_F(QueriesTest, EntryByPathFindsFilesDirectoriesAndRoots) {
    Queries q(db_, &index_);
    FileRow row;
    bool found = false;
    ASSERT_TRUE(q.entry("/q/src/util.cpp", &row, &found));
    ASSERT_TRUE(found);
    EXPECT_EQ(row.path, "/q/src/util.cpp");
    EXPECT_EQ(row.type, 'f');
    EXPECT_EQ(row.size, 700);
    ASSERT_TRUE(q.entry("/q/src/deep", &row, &found));
    ASSERT_TRUE(found);
    EXPECT_EQ(row.type, 'd');
    ASSERT_TRUE(q.entry("/q", &row, &found));  // a root: (dir 0, "/q")
    ASSERT_TRUE(found);
    EXPECT_EQ(row.path, "/q");
    ASSERT_TRUE(q.entry("/q/src/nothing", &row, &found));
    EXPECT_FALSE(found);
    ASSERT_TRUE(q.entry("/elsewhere/util.cpp", &row, &found));
    EXPECT_FALSE(found);
}

TEST_F(QueriesTest, FindStreamsRowsAndStopsWhenAsked) {
    for (const bool with_index : {true, false}) {
        Queries q(db_, with_index ? &index_ : nullptr);
        FindQuery fq;
        fq.pattern = "report";
        fq.limit = 0;
        std::vector<std::string> seen;
        ASSERT_TRUE(q.find(fq, [&](FileRow& row) {
            seen.push_back(row.path);
            return false;  // one is enough
        }));
        EXPECT_EQ(seen.size(), 1u) << with_index;
        EXPECT_EQ(q.last_used_index(), with_index);
    }
}

TEST_F(QueriesTest, ScansKnowTheRootSizeOfTheNewestCompletedScanOnly) {
    scan(query_tree(true));  // a second completed scan of /q
    Queries q(db_);
    std::vector<ScanRow> scans;
    ASSERT_TRUE(q.scans(0, &scans));
    ASSERT_EQ(scans.size(), 2u);
    EXPECT_EQ(scans[0].state, "complete");
    EXPECT_EQ(scans[0].root, "/q");
    std::vector<DirTotalsRow> totals;
    ASSERT_TRUE(q.dir_totals("/q", 0, &totals));
    ASSERT_EQ(totals.size(), 1u);
    ASSERT_TRUE(scans[0].root_size.has_value());
    EXPECT_EQ(*scans[0].root_size, totals[0].size);
    EXPECT_FALSE(scans[1].root_size.has_value());  // replaced by the newer scan
    ScanRow one;
    bool found = false;
    ASSERT_TRUE(q.scan(scans[1].id, &one, &found));
    ASSERT_TRUE(found);
    EXPECT_EQ(one.id, scans[1].id);
    ASSERT_TRUE(q.scan(999, &one, &found));
    EXPECT_FALSE(found);
    std::uint64_t latest = 0;
    ASSERT_TRUE(q.latest_complete_scan(&latest));
    EXPECT_EQ(latest, scans[0].id);
    std::vector<RootRow> roots;
    ASSERT_TRUE(q.roots(&roots));
    ASSERT_EQ(roots.size(), 1u);
    EXPECT_EQ(roots[0].path, "/q");
    EXPECT_EQ(roots[0].size, totals[0].size);
    EXPECT_EQ(roots[0].scan_id, scans[0].id);
}

TEST_F(QueriesTest, StaleIndexFallsBackToSql) {
    scan(query_tree(true));  // a completed scan moves the generation
    Queries q(db_, &index_);
    std::vector<FileRow> rows;
    FindQuery fq;
    fq.pattern = "report.";
    ASSERT_TRUE(q.find(fq, &rows));
    EXPECT_FALSE(q.last_used_index());
    EXPECT_EQ(rows.size(), 3u);
    NameIndex fresh;
    ASSERT_TRUE(NameIndex::load(db_, &fresh));
    Queries q2(db_, &fresh);
    ASSERT_TRUE(q2.find(fq, &rows));
    EXPECT_TRUE(q2.last_used_index());
    EXPECT_EQ(rows.size(), 3u);
}

}  // namespace
}  // namespace wsindex::storage
