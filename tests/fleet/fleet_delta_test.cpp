// Delta publishes (fleet/publish_delta.hpp): after the first publish, a host's changes reach
// the fleet as deletes and COPYs of the directories that changed, within the host's existing
// partitions, and the copy they leave is row for row what a full publish writes.
#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "fleet/pg_connection.hpp"
#include "fleet/schema.hpp"
#include "tests/fleet/support/fleet_fixture.hpp"

namespace wsindex::fleet::test {
namespace {

class FleetDeltaTest : public FleetTest {
  protected:
    // Every column of the host's central rows, in a stable order, one line per row.
    std::string central_rows(const std::string& host) {
        PgConnection conn;
        EXPECT_TRUE(PgConnection::connect(server_->url(), "", &conn));
        std::string out;
        for (const char* sql : {
                 "SELECT dir_id, encode(path, 'hex'), encode(name, 'hex'), type, size, blocks,"
                 " mtime_ns, ctime_ns, mode, uid, gid, dev, ino, nlink, errno FROM entries"
                 " WHERE host = $1 ORDER BY dir_id, name",
                 "SELECT encode(prefix, 'hex'), encode(root, 'hex'), rel_depth, size, blocks,"
                 " files, dirs, depth, dir_id, digest FROM dirs WHERE host = $1 ORDER BY prefix",
                 "SELECT entries, bytes, roots FROM hosts WHERE host = $1",
             }) {
            PgResult r{nullptr, &PQclear};
            EXPECT_TRUE(conn.query(sql, {host.c_str()}, &r)) << sql;
            for (int row = 0; row < PQntuples(r.get()); ++row) {
                for (int c = 0; c < PQnfields(r.get()); ++c) {
                    out += PQgetisnull(r.get(), row, c) ? "NULL" : PQgetvalue(r.get(), row, c);
                    out += c + 1 < PQnfields(r.get()) ? "|" : "\n";
                }
            }
            out += "--\n";
        }
        return out;
    }

    // The oid of the host's entries partition: a full publish replaces it, a delta keeps it.
    std::string entries_partition(const std::string& host) {
        PgConnection conn;
        EXPECT_TRUE(PgConnection::connect(server_->url(), "", &conn));
        PgResult r{nullptr, &PQclear};
        const std::string part = partition_name("entries", host);
        EXPECT_TRUE(conn.query("SELECT to_regclass($1)::oid", {part.c_str()}, &r));
        return first_value(r);
    }

    // Rescans the host's tree and waits until the fleet prints what the host prints: every
    // entry with its type, size and time, and the totals.
    void rescan_and_converge(Host& h) {
        ASSERT_EQ(local(h, {"scan", h.tree, "--wait"}).code, 0);
        expect_converges(h, {"find", "-l"}, {"find", "-l", "--host", h.name});
        expect_converges(h, {"du", "-b", "--depth", "4"},
                         {"du", "-b", "--depth", "4", "--host", h.name});
    }
};

TEST_F(FleetDeltaTest, ChangesArePublishedAsDeltasThatEqualAFullPublish) {
    Host& h = add_host("omicron");
    for (const char* d : {"/a", "/a/deep", "/b", "/c", "/c/sub"}) make_dir(h.tree + d);
    for (int i = 0; i < 20; ++i) {
        write_file(h.tree + "/a/file" + std::to_string(i), std::string(i, 'a'));
        write_file(h.tree + "/c/sub/part" + std::to_string(i), "c");
    }
    write_file(h.tree + "/a/deep/keep", "k");
    write_file(h.tree + "/b/grow", "1");
    write_file(h.tree + "/b/new\nline", "n");
    ASSERT_NO_FATAL_FAILURE(start_and_scan(h));
    expect_converges(h, {"find", "-l"}, {"find", "-l", "--host", "omicron"});
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_TRUE(await_log(h, "in full, the fleet database holds no copy of this host"));
    const std::string partition = entries_partition("omicron");
    ASSERT_NE(partition, "");

    // One change of each kind, each published on its own.
    write_file(h.tree + "/a/added", "new");  // a name added
    ASSERT_NO_FATAL_FAILURE(rescan_and_converge(h));
    write_file(h.tree + "/b/grow", std::string(7000, 'g'));  // metadata only: no key changes
    ASSERT_NO_FATAL_FAILURE(rescan_and_converge(h));
    ASSERT_EQ(::unlink((h.tree + "/c/sub/part3").c_str()), 0);  // a name removed
    ASSERT_NO_FATAL_FAILURE(rescan_and_converge(h));
    ASSERT_EQ(::rename((h.tree + "/c/sub").c_str(), (h.tree + "/b/moved").c_str()), 0);
    ASSERT_NO_FATAL_FAILURE(rescan_and_converge(h));  // a subtree moved
    make_dir(h.tree + "/d");
    make_dir(h.tree + "/d/e");
    write_file(h.tree + "/d/e/leaf", "leaf");  // a new subtree
    ASSERT_NO_FATAL_FAILURE(rescan_and_converge(h));
    for (int i = 0; i < 20; ++i) {
        ASSERT_EQ(::unlink((h.tree + "/a/file" + std::to_string(i)).c_str()), 0);
    }
    ASSERT_EQ(::unlink((h.tree + "/a/deep/keep").c_str()), 0);
    ASSERT_EQ(::rmdir((h.tree + "/a/deep").c_str()), 0);  // a directory removed
    ASSERT_NO_FATAL_FAILURE(rescan_and_converge(h));

    // Every publish after the first was a delta in the same partition.
    EXPECT_TRUE(await_log(h, "of omicron as a delta", 6));
    const std::string log = h.daemon->log();
    EXPECT_EQ(occurrences(log, "of omicron ("), 1u) << log;  // the one full publish
    EXPECT_EQ(entries_partition("omicron"), partition);

    // What the deltas left equals, in every column, what a full publish of the same index
    // writes: release the copy (the next publish is full) and publish again.
    const std::string after_deltas = central_rows("omicron");
    EXPECT_NE(after_deltas.find("|"), std::string::npos);
    const Exit release = fleet({"release", "omicron"});
    ASSERT_EQ(release.code, 0) << release.err;
    ASSERT_NO_FATAL_FAILURE(rescan_and_converge(h));
    EXPECT_TRUE(await_log(h, "of omicron (", 2));
    EXPECT_EQ(central_rows("omicron"), after_deltas);
}

// A change too big for a delta (more rows than the threshold and than a quarter of the
// host's) is published in full.
TEST_F(FleetDeltaTest, ABigChangeIsPublishedInFull) {
    Host& h = published_host("pi", "small", 4);
    ASSERT_FALSE(HasFatalFailure());
    make_dir(h.tree + "/many");
    for (int i = 0; i < 10500; ++i) write_file(h.tree + "/many/f" + std::to_string(i), "");
    ASSERT_NO_FATAL_FAILURE(rescan_and_converge(h));
    // "... (10506 entries, 2 dirs) in T s: in full, 10506 rows to write and N to delete of M"
    // (N, M: what the live index had published while the files appeared).
    ASSERT_TRUE(await_log(h, "of pi (10506 entries, 2 dirs)"));
    const std::string log = h.daemon->log();
    const std::size_t full = log.find("of pi (10506 entries, 2 dirs)");
    ASSERT_NE(full, std::string::npos) << log;
    EXPECT_NE(log.find("in full, 10506 rows to write and ", full), std::string::npos) << log;
}

}  // namespace
}  // namespace wsindex::fleet::test
