// Walker permission errors for real: the walk runs in a child that dropped to uid/gid nobody.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/walker.hpp"
#include "tests/core/support/walk_support.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::test {
namespace {

using core::EntryType;

// Runs the walk (and find, for comparison) as nobody; returns the walk's results and find's paths.
struct AsNobody {
    Decoded walk;
    std::vector<std::string> find;
};

std::optional<AsNobody> walk_as_nobody(const std::string& root) {
    auto bytes = run_in_child([&] {
        if (!drop_privileges()) ::_exit(2);
        const Walked w = walk(root);
        std::string out = encode(w.results, w.status);
        // find's view from the same unprivileged child, after a separator record.
        std::string found;
        for (const auto& p : find_paths(root)) {
            found += p;
            found.push_back('\0');
        }
        return std::to_string(out.size()) + '\n' + out + found;
    });
    if (!bytes) return std::nullopt;
    const std::size_t nl = bytes->find('\n');
    const std::size_t len = std::stoull(bytes->substr(0, nl));
    AsNobody r;
    r.walk = decode(bytes->substr(nl + 1, len));
    std::string rest = bytes->substr(nl + 1 + len);
    std::size_t pos = 0;
    while (pos < rest.size()) {
        const std::size_t end = rest.find('\0', pos);
        r.find.push_back(rest.substr(pos, end - pos));
        pos = end + 1;
    }
    return r;
}

TEST(WalkerPermissions, UnreadableUntraversableAndLockedDirectories) {
    if (::geteuid() != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root to drop to nobody";
    TempDir tmp;
    const std::string root = tmp / "perm";
    make_dir(root);
    make_dir(root + "/open");
    make_file(root + "/open/a", "aa");
    make_dir(root + "/open/deeper");
    make_file(root + "/open/deeper/b");
    make_dir(root + "/locked");
    make_file(root + "/locked/secret");
    make_dir(root + "/noread");  // search but no read: can't list, can reach known names
    make_file(root + "/noread/known");
    make_dir(root + "/nosearch");  // read but no search: names listed, nothing stat'able
    make_file(root + "/nosearch/x");
    make_dir(root + "/nosearch/sub");
    make_file(root + "/nosearch/sub/y");
    ::chmod((root + "/locked").c_str(), 0000);
    ::chmod((root + "/noread").c_str(), 0311);
    ::chmod((root + "/nosearch").c_str(), 0644);

    const auto got = walk_as_nobody(root);
    ASSERT_TRUE(got.has_value());
    const auto& rs = got->walk.results;
    EXPECT_EQ(got->walk.status_errno, 0) << "permission errors must not stop the walk";
    EXPECT_EQ(paths_of(rs), got->find) << "the same paths as find, run as nobody";

    for (const char* ok : {"", "/open", "/open/a", "/open/deeper", "/open/deeper/b"}) {
        const auto* r = find_result(rs, root + ok);
        ASSERT_NE(r, nullptr) << ok;
        EXPECT_EQ(r->error, 0) << ok;
        EXPECT_TRUE(r->has_stat) << ok;
    }
    EXPECT_EQ(find_result(rs, root + "/open/a")->size, 2u);
    for (const char* denied : {"/locked", "/noread"}) {
        const auto* r = find_result(rs, root + denied);
        ASSERT_NE(r, nullptr) << denied;
        EXPECT_EQ(r->error, EACCES) << denied;
        EXPECT_TRUE(r->has_stat) << "stat'ed by its parent: " << denied;
        EXPECT_EQ(r->type, EntryType::Directory);
    }
    EXPECT_EQ(find_result(rs, root + "/locked/secret"), nullptr);
    EXPECT_EQ(find_result(rs, root + "/noread/known"), nullptr);

    const auto* ns = find_result(rs, root + "/nosearch");
    ASSERT_NE(ns, nullptr);
    EXPECT_EQ(ns->error, 0) << "listing works without search permission";
    for (auto [name, type] : {std::pair{"/nosearch/x", EntryType::File},
                              std::pair{"/nosearch/sub", EntryType::Directory}}) {
        const auto* r = find_result(rs, root + name);
        ASSERT_NE(r, nullptr) << name;
        EXPECT_EQ(r->error, EACCES) << name;
        EXPECT_FALSE(r->has_stat) << name;
        EXPECT_EQ(r->type, type) << "type from d_type: " << name;
    }
    EXPECT_EQ(find_result(rs, root + "/nosearch/sub/y"), nullptr);
    EXPECT_EQ(rs.size(), 10u);
}

TEST(WalkerPermissions, MktreeLockedDirectoriesAsNobody) {
    if (::geteuid() != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root to drop to nobody";
    TempDir tmp;
    const std::string root = tmp / "tree";
    if (!make_tree(root, 3000, "balanced", "--unreadable 5"))
        WSINDEX_SKIP_OR_FAIL_IN_CI() << "no mktree.py";
    const auto got = walk_as_nobody(root);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->walk.status_errno, 0);
    EXPECT_EQ(paths_of(got->walk.results), got->find);
    int errors = 0;
    for (const auto& r : got->walk.results) {
        if (r.error == 0) continue;
        ++errors;
        EXPECT_EQ(r.error, EACCES);
        EXPECT_NE(r.path.find("locked_"), std::string::npos) << r.path;
    }
    EXPECT_EQ(errors, 5);
    // Each locked directory hides its 16 entries: 3000 + root - 5 * 16.
    EXPECT_EQ(got->walk.results.size(), 3001u - 5 * 16);
}

}  // namespace
}  // namespace wsindex::test
