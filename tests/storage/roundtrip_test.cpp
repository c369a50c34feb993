// Byte-exact names: what `find -print0` prints comes back from the `files` view unchanged.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <set>

#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "tests/storage/support/tree_walk.hpp"

namespace wsindex::storage {
namespace {

using test::TempDir;

std::set<std::string> find_print0(const std::string& root) {
    std::set<std::string> paths;
    FILE* p = popen(("find '" + root + "' -print0").c_str(), "r");
    EXPECT_NE(p, nullptr);
    std::string cur;
    for (int c; (c = fgetc(p)) != EOF;) {
        if (c == 0) {
            paths.insert(cur);
            cur.clear();
        } else {
            cur.push_back(static_cast<char>(c));
        }
    }
    pclose(p);
    return paths;
}

// Names that break naive tools: newline, invalid UTF-8, 255 bytes, quotes, and a chain of
// directories whose path is longer than PATH_MAX (made with mkdirat, relative to fds).
void make_odd_tree(const std::string& root) {
    const std::vector<std::string> names = {"new\nline",
                                            std::string("bad\xff\xfeutf8"),
                                            std::string(255, 'n'),
                                            "quote'\"",
                                            "space name",
                                            "-dash",
                                            "back\\slash",
                                            "tab\there",
                                            std::string("\x01\x7f", 2),
                                            "é"};
    for (const auto& n : names) test::write_file(root + "/" + n, 3);
    ASSERT_EQ(mkdir((root + "/d\nir").c_str(), 0755), 0);
    test::write_file(root + "/d\nir/" + std::string("\xc3\x28", 2), 1);
    int fd = open(root.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(fd, 0);
    const std::string part(200, 'p');
    for (int i = 0; i < 25; ++i) {  // 25 * 201 bytes > PATH_MAX (4096)
        ASSERT_EQ(mkdirat(fd, part.c_str(), 0755), 0);
        const int next = openat(fd, part.c_str(), O_RDONLY | O_DIRECTORY);
        ::close(fd);
        ASSERT_GE(next, 0);
        fd = next;
    }
    const int leaf = openat(fd, "leaf\xff", O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(leaf, 0);
    ::close(leaf);
    ::close(fd);
}

TEST(RoundTrip, FilesViewEqualsFindPrint0ByteForByte) {
    TempDir dir;
    const std::string root = dir / "tree";
    ASSERT_EQ(mkdir(root.c_str(), 0755), 0);
    make_odd_tree(root);
    const std::string db_path = dir / "index.db";
    auto s = test::scan_db(db_path, root);
    ASSERT_TRUE(s) << s.to_string();

    Database db = test::open_reader(db_path);
    std::set<std::string> indexed;
    Statement q;
    ASSERT_TRUE(db.prepare("SELECT CAST(path AS BLOB) FROM files", &q));
    for (bool row = true;;) {
        ASSERT_TRUE(q.step(&row));
        if (!row) break;
        indexed.insert(std::string(q.column_bytes(0)));
    }
    const auto expected = find_print0(root);
    EXPECT_EQ(indexed.size(), expected.size());
    EXPECT_EQ(indexed, expected);
    // The longest path really is past PATH_MAX.
    std::size_t longest = 0;
    for (const auto& p : indexed) longest = std::max(longest, p.size());
    EXPECT_GT(longest, static_cast<std::size_t>(PATH_MAX));
    // hex() reads the bytes losslessly from SQL, too.
    EXPECT_EQ(test::query_text(db, "SELECT hex(name) FROM files WHERE hex(name) LIKE '626164%'"),
              "626164FFFE75746638");
    // And the query API returns the same bytes.
    Queries queries(db);
    std::vector<FileRow> rows;
    FindQuery fq;
    fq.pattern = "\xff\xfe";
    ASSERT_TRUE(queries.find(fq, &rows));
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].path, root + "/bad\xff\xfeutf8");
    EXPECT_EQ(rows[0].type, 'f');
}

}  // namespace
}  // namespace wsindex::storage
