// The fleet index end to end: a real PostgreSQL 15, three wsindexd daemons as three hosts with
// different trees publishing to it, and wsctl fleet answering like each host's own wsctl.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "fleet/pg_connection.hpp"
#include "fleet/schema.hpp"
#include "tests/fleet/support/fleet_fixture.hpp"

namespace wsindex::fleet::test {
namespace {

TEST_F(FleetTest, HostsPublishAndFleetAnswersLikeEachHost) {
    hosts_.reserve(3);
    Host& alpha = add_host("alpha");
    make_dir(alpha.tree + "/docs");
    write_file(alpha.tree + "/docs/report.txt", "quarterly");
    write_file(alpha.tree + "/docs/new\nline.txt", "nl");         // a newline in a name
    write_file(alpha.tree + "/docs/bad\xff\xfe.bin", "latin-1");  // not UTF-8
    write_file(alpha.tree + "/top.txt", std::string(5000, 'a'));
    Host& beta = add_host("beta");
    make_dir(beta.tree + "/src");
    make_dir(beta.tree + "/src/deep");
    write_file(beta.tree + "/src/deep/report.txt", "other");
    write_file(beta.tree + "/src/main.cpp", "int main() {}");
    Host& gamma = add_host("gamma");
    for (int i = 0; i < 50; ++i) {
        write_file(gamma.tree + "/file" + std::to_string(i), std::string(i, 'x'));
    }

    for (Host& h : hosts_) start_and_scan(h);
    for (Host& h : hosts_) {
        SCOPED_TRACE(h.name);
        expect_converges(h, {"find", "-0"}, {"find", "-0", "--host", h.name});
        expect_converges(h, {"find", "-0", "report"}, {"find", "-0", "--host", h.name, "report"});
        expect_converges(h, {"du", "-b", "--depth", "3"},
                         {"du", "-b", "--depth", "3", "--host", h.name});
    }

    // Without --host, every record is "host:" and the host's own record, hosts in name order.
    expect_fleet_equals_union({"find", "-0", "report"});

    // A change on one host, rescanned, reaches the fleet answer; the others stay as they were.
    write_file(beta.tree + "/src/deep/fresh-report.txt", "new");
    ASSERT_EQ(::unlink((beta.tree + "/src/main.cpp").c_str()), 0);
    ASSERT_EQ(local(beta, {"scan", beta.tree, "--wait"}).code, 0);
    expect_converges(beta, {"find", "-0"}, {"find", "-0", "--host", "beta"});
    expect_converges(beta, {"du", "-b", "--depth", "3"},
                     {"du", "-b", "--depth", "3", "--host", "beta"});
    expect_converges(alpha, {"find", "-0"}, {"find", "-0", "--host", "alpha"});

    const Exit hosts = fleet({"hosts", "--json"});
    ASSERT_EQ(hosts.code, 0) << hosts.err;
    for (const char* name : {"\"alpha\"", "\"beta\"", "\"gamma\""}) {
        EXPECT_NE(hosts.out.find(name), std::string::npos) << hosts.out;
    }
    const Exit status = local(beta, {"status", "--json"});
    ASSERT_EQ(status.code, 0);
    EXPECT_NE(status.out.find("\"fleet\""), std::string::npos) << status.out;
    EXPECT_NE(status.out.find("\"last_error\":\"\""), std::string::npos) << status.out;
}

// PostgreSQL stops while a host changes: the host keeps indexing, says why in status, and the
// fleet converges once PostgreSQL is back (the publisher retries).
TEST_F(FleetTest, OutageIsReportedAndTheFleetConvergesAfterIt) {
    Host& delta = add_host("delta");
    write_file(delta.tree + "/before.txt", "1");
    start_and_scan(delta);
    expect_converges(delta, {"find", "-0"}, {"find", "-0", "--host", "delta"});

    server_->pause();
    write_file(delta.tree + "/during-outage.txt", "2");
    ASSERT_EQ(local(delta, {"scan", delta.tree, "--wait"}).code, 0);
    const Exit found = local(delta, {"find", "-0", "during-outage"});
    EXPECT_EQ(found.code, 0);
    EXPECT_EQ(found.out, delta.tree + "/during-outage.txt" + std::string(1, '\0'));
    // The failed publish shows in status (polled: it runs after the scan settles).
    std::string last_error;
    const auto deadline = std::chrono::steady_clock::now() + kConvergeDeadline;
    while (last_error.empty() && std::chrono::steady_clock::now() < deadline) {
        const Exit st = local(delta, {"status", "--json"});
        ASSERT_EQ(st.code, 0) << st.err;
        const auto doc = nlohmann::json::parse(st.out, nullptr, false);
        ASSERT_TRUE(doc.contains("fleet")) << st.out;
        last_error = doc["fleet"].value("last_error", "");
        if (last_error.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_NE(last_error.find("PostgreSQL"), std::string::npos) << last_error;

    std::string error;
    ASSERT_TRUE(server_->resume(error)) << error;
    expect_converges(delta, {"find", "-0"}, {"find", "-0", "--host", "delta"});
    expect_no_fleet_error(delta);
}

// Readers never see a host half published: in one statement, the host's rows always number
// what its hosts row says, while the host publishes generation after generation.
TEST_F(FleetTest, ReadersSeeOneWholeGenerationPerHost) {
    Host& h = published_host("epsilon", "f", 2000);
    ASSERT_FALSE(HasFatalFailure());

    std::atomic<bool> stop{false};
    std::atomic<int> reads{0};
    std::atomic<int> torn{0};
    std::string reader_error;
    std::thread reader([&] {
        PgConnection conn;
        if (auto st = PgConnection::connect(server_->url(), "", &conn); !st) {
            reader_error = st.message();
            return;
        }
        while (!stop.load()) {
            // One statement, READ COMMITTED, as wsctl fleet reads (docs/fleet.md: a snapshot
            // taken before a swap, in a REPEATABLE READ transaction, sees the host empty).
            PgResult r{nullptr, &PQclear};
            const auto st = conn.query(
                "SELECT (SELECT count(*) FROM entries WHERE host = 'epsilon') ="
                " (SELECT entries FROM hosts WHERE host = 'epsilon')",
                {}, &r);
            if (!st) {
                reader_error = st.message();
                return;
            }
            if (first_value(r) != "t") ++torn;
            ++reads;
        }
    });
    for (int round = 1; round <= 3; ++round) {
        for (int i = 0; i < 500; ++i) {
            write_file(h.tree + "/r" + std::to_string(round) + "-" + std::to_string(i), "y");
        }
        ASSERT_EQ(local(h, {"scan", h.tree, "--wait"}).code, 0);
        expect_converges(h, {"find", "-0"}, {"find", "-0", "--host", "epsilon"});
    }
    stop = true;
    reader.join();
    EXPECT_EQ(reader_error, "");
    EXPECT_GT(reads.load(), 0);
    EXPECT_EQ(torn.load(), 0) << "of " << reads.load() << " reads";
}

// A full publish stores a host's rows in name order (fleet/publisher.cpp: a search then reads
// a page per name it finds, not one per row), while `fleet find` still lists them in the
// host's own order.
TEST_F(FleetTest, AFullPublishStoresTheRowsInNameOrder) {
    Host& h = add_host("omicron");
    // Names that interleave across directories: directory order is not name order.
    for (const char* dir : {"m", "a", "z"}) {
        make_dir(h.tree + "/" + dir);
        for (const char* name : {"zeta", "alpha", "mid", "beta"}) {
            write_file(h.tree + "/" + dir + "/" + name + dir, "x");
        }
    }
    ASSERT_NO_FATAL_FAILURE(start_and_scan(h));
    expect_converges(h, {"find", "-0"}, {"find", "-0", "--host", "omicron"});
    // That copy came by a delta (a small host's publishes after its first, empty one are):
    // released, the next publish is full.
    ASSERT_EQ(fleet({"release", "omicron"}).code, 0);
    write_file(h.tree + "/m/omega", "x");
    ASSERT_EQ(local(h, {"scan", h.tree, "--wait"}).code, 0);
    expect_converges(h, {"find", "-0"}, {"find", "-0", "--host", "omicron"});
    ASSERT_TRUE(await_log(h, "in full, the fleet database holds no copy", 2));

    PgConnection conn;
    ASSERT_TRUE(PgConnection::connect(server_->url(), "", &conn));
    PgResult r{nullptr, &PQclear};
    // The rows that full publish wrote: one transaction, the oldest xmin (a later delta, e.g.
    // of the live index catching up on m/, deletes a directory's rows and appends new ones).
    // bytea's text form is hex, whose order is the bytes' order.
    const std::string part = conn.identifier(partition_name("entries", "omicron"));
    ASSERT_TRUE(conn.query("SELECT name::text FROM " + part +
                               " WHERE xmin::text::bigint = (SELECT min(xmin::text::bigint) FROM " +
                               part + ") ORDER BY ctid",
                           {}, &r));
    std::vector<std::string> stored;
    for (int i = 0; i < PQntuples(r.get()); ++i) stored.emplace_back(PQgetvalue(r.get(), i, 0));
    ASSERT_GE(stored.size(), 10U);  // of 17: 13 files, 3 directories, the root
    EXPECT_TRUE(std::is_sorted(stored.begin(), stored.end()))
        << "first rows: " << stored[0] << " " << stored[1] << " " << stored[2];

    // And analyzed before it served: the planner has statistics for the partition's columns.
    // (Autovacuum would not analyze it: 17 rows are below its threshold of 50.)
    ASSERT_TRUE(conn.query("SELECT count(*) FROM pg_stats WHERE tablename = $1",
                           {partition_name("entries", "omicron").c_str()}, &r));
    EXPECT_NE(first_value(r), "0");
}

TEST_F(FleetTest, NewerSchemaIsRefusedWithAClearError) {
    PgConnection conn;
    ASSERT_TRUE(PgConnection::connect(server_->url(), "", &conn));
    ASSERT_TRUE(conn.exec("UPDATE fleet_schema SET version = 99"));
    const Exit hosts = fleet({"hosts"});
    const Exit init = fleet({"init"});
    ASSERT_TRUE(
        conn.exec("UPDATE fleet_schema SET version = " + std::to_string(kFleetSchemaVersion)));
    EXPECT_EQ(hosts.code, 1);
    EXPECT_NE(hosts.err.find("schema version 99, newer"), std::string::npos) << hosts.err;
    EXPECT_EQ(init.code, 1);
    EXPECT_NE(init.err.find("schema version 99, newer"), std::string::npos) << init.err;
}

// Two daemons configured with one host name (say a system and a user daemon, both defaulting
// to the machine's name): the second is told, in its log and status, and the first one's copy
// stays whole and current. Once the first is retired and the name released, the second
// claims it and the fleet converges on its index.
TEST_F(FleetTest, TwoDaemonsWithOneHostNameAreToldAndTheFirstCopyStays) {
    hosts_.reserve(2);
    Host& first = published_host("twin", "first", 3);
    ASSERT_FALSE(HasFatalFailure());
    Host& second = add_host("twin", "", "twin-2");
    write_file(second.tree + "/second0", "y");
    ASSERT_NO_FATAL_FAILURE(start_and_scan(second));
    const std::string error = await_fleet_error(second);
    EXPECT_NE(error.find("the host name 'twin' is published by another wsindexd"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("wsctl fleet release twin"), std::string::npos) << error;
    EXPECT_NE(second.daemon->log().find("is published by another wsindexd"), std::string::npos)
        << second.daemon->log();

    // The first one's copy: whole, and still following its changes.
    write_file(first.tree + "/later", "z");
    ASSERT_EQ(local(first, {"scan", first.tree, "--wait"}).code, 0);
    expect_converges(first, {"find", "-0"}, {"find", "-0", "--host", "twin"});
    expect_no_fleet_error(first);
    const Exit mixed = fleet({"find", "-0", "--host", "twin", "second"});
    EXPECT_EQ(mixed.out, "") << "nothing of the second daemon's tree in the first one's copy";

    // Retired and released: the second claims the name.
    ASSERT_TRUE(first.daemon->stop().has_value());
    const Exit release = fleet({"release", "twin"});
    EXPECT_EQ(release.code, 0) << release.err;
    EXPECT_NE(release.out.find("released twin"), std::string::npos) << release.out;
    ASSERT_EQ(local(second, {"scan", second.tree, "--wait"}).code, 0);
    expect_converges(second, {"find", "-0"}, {"find", "-0", "--host", "twin"});
    expect_no_fleet_error(second);
    const Exit again = fleet({"release", "nosuchhost"});
    EXPECT_EQ(again.code, 0) << again.err;
    EXPECT_NE(again.out.find("no host nosuchhost"), std::string::npos) << again.out;
}

// A database of schema version 1 (before host names were claimed and before delta publishes)
// is migrated by `wsctl fleet init` (and by a publishing daemon): the claim column and the
// directory ids appear, the host's partition gets its own indexes (version 4), the version is
// the current one. A host's copy published before directory ids is published in full once (its
// rows cannot be compared), then in deltas.
TEST_F(FleetTest, AVersionOneDatabaseIsMigratedAndItsCopiesRepublishedInFull) {
    Host& h = published_host("nu", "old", 3);
    ASSERT_FALSE(HasFatalFailure());
    PgConnection conn;
    ASSERT_TRUE(PgConnection::connect(server_->url(), "", &conn));
    // Version 1's shape, the host's rows kept.
    ASSERT_TRUE(
        conn.exec("ALTER TABLE hosts DROP COLUMN instance; ALTER TABLE entries DROP COLUMN dir_id;"
                  " ALTER TABLE dirs DROP COLUMN dir_id, DROP COLUMN digest;"
                  " DROP INDEX dirs_depth; DROP INDEX dirs_prefix;"
                  " CREATE INDEX dirs_prefix ON dirs(host, root, prefix);"
                  // The partition's own indexes of version 4 go; entries_path of version 1
                  // comes back (entries_dir went with the dir_id column).
                  " DO $$ DECLARE i text; BEGIN FOR i IN SELECT indexname FROM pg_indexes"
                  "  WHERE tablename = '" +
                  partition_name("entries", "nu") +
                  "'"
                  "  AND indexdef NOT LIKE '%gin%' LOOP EXECUTE 'DROP INDEX ' || i; END LOOP;"
                  " END $$;"
                  " CREATE INDEX entries_path ON entries(host, path);"
                  " ALTER TABLE entries ADD COLUMN seq bigint NOT NULL DEFAULT 0;"
                  " UPDATE fleet_schema SET version = 1"));
    const Exit init = fleet({"init"});
    EXPECT_EQ(init.code, 0) << init.err;
    PgResult r{nullptr, &PQclear};
    ASSERT_TRUE(conn.query("SELECT max(version) FROM fleet_schema", {}, &r));
    EXPECT_EQ(first_value(r), std::to_string(kFleetSchemaVersion));
    ASSERT_TRUE(
        conn.query("SELECT count(*) FROM information_schema.columns WHERE (table_name, column_name)"
                   " IN (('hosts', 'instance'), ('entries', 'dir_id'), ('dirs', 'dir_id'),"
                   " ('dirs', 'digest'))",
                   {}, &r));
    EXPECT_EQ(first_value(r), "4");
    // Version 4: (path) and (dir_id, name) in the partition itself, no host in their keys, no seq.
    ASSERT_TRUE(
        conn.query("SELECT string_agg(indexdef, ' | ' ORDER BY indexdef) FROM pg_indexes"
                   " WHERE tablename = $1 AND indexdef NOT LIKE '%gin%'",
                   {partition_name("entries", "nu").c_str()}, &r));
    EXPECT_EQ(first_value(r).find("host"), std::string::npos) << first_value(r);
    EXPECT_NE(first_value(r).find("(path)"), std::string::npos) << first_value(r);
    EXPECT_NE(first_value(r).find("(dir_id, name)"), std::string::npos) << first_value(r);
    ASSERT_TRUE(
        conn.query("SELECT count(*) FROM information_schema.columns"
                   " WHERE table_name = 'entries' AND column_name = 'seq'",
                   {}, &r));
    EXPECT_EQ(first_value(r), "0");

    write_file(h.tree + "/after-migration", "1");
    ASSERT_EQ(local(h, {"scan", h.tree, "--wait"}).code, 0);
    expect_converges(h, {"find", "-0"}, {"find", "-0", "--host", "nu"});
    EXPECT_TRUE(await_log(h, "in full, the fleet copy has no directory ids"));
    write_file(h.tree + "/later", "2");
    ASSERT_EQ(local(h, {"scan", h.tree, "--wait"}).code, 0);
    expect_converges(h, {"find", "-0"}, {"find", "-0", "--host", "nu"});
    EXPECT_TRUE(await_log(h, "of nu as a delta"));
}

// One host's partitions on a second PostgreSQL server (a shard, where that host publishes),
// attached to the first as postgres_fdw foreign tables: `wsctl fleet find` and `du`, unchanged,
// answer from both servers, and a publish on the shard (which replaces its partition whole)
// shows through (docs/fleet.md, "Beyond one server").
TEST_F(FleetTest, AHostOnASecondServerAnswersThroughPostgresFdw) {
    PostgresServer shard;
    std::string error;
    ASSERT_TRUE(shard.start(error)) << error;
    hosts_.reserve(2);
    published_host("lambda", "near", 3);
    ASSERT_FALSE(HasFatalFailure());
    Host& remote = add_host("mu", "url = \"" + shard.url() + "\"\n");
    make_dir(remote.tree + "/sub");
    write_file(remote.tree + "/far0", "far");
    write_file(remote.tree + "/sub/far1", "farther");
    ASSERT_NO_FATAL_FAILURE(start_and_scan(remote));
    expect_converges(remote, {"find", "-0"}, {"find", "-0", "--host", "mu"}, shard.url());
    ASSERT_FALSE(HasFatalFailure());

    PgConnection conn;
    ASSERT_TRUE(PgConnection::connect(server_->url(), "", &conn));
    const std::string entries = partition_name("entries", "mu");
    const std::string dirs = partition_name("dirs", "mu");
    ASSERT_TRUE(conn.exec("CREATE EXTENSION IF NOT EXISTS postgres_fdw"));
    ASSERT_TRUE(conn.exec("CREATE SERVER shard1 FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host " +
                          conn.literal(shard.socket_dir()) + ", dbname 'wsfleet')"));
    ASSERT_TRUE(
        conn.exec("CREATE USER MAPPING FOR CURRENT_USER SERVER shard1 OPTIONS (user 'wsfleet')"));
    for (const std::string& table : {entries, dirs}) {
        const std::string parent = table == entries ? "entries" : "dirs";
        ASSERT_TRUE(conn.exec("CREATE FOREIGN TABLE " + table + " PARTITION OF " + parent +
                              " FOR VALUES IN ('mu') SERVER shard1 OPTIONS (table_name " +
                              conn.literal(table) + ")"));
    }

    expect_converges(remote, {"find", "-0"}, {"find", "-0", "--host", "mu"});
    expect_converges(remote, {"find", "-0", "far"}, {"find", "-0", "--host", "mu", "far"});
    expect_converges(remote, {"du", "-b", "--depth", "3"},
                     {"du", "-b", "--depth", "3", "--host", "mu"});
    EXPECT_NE(expect_fleet_equals_union({"find", "-0"}), "");  // lambda's rows, then mu's

    // A change on the shard's host reaches the first server's answer.
    write_file(remote.tree + "/sub/far2", "farthest");
    ASSERT_EQ(local(remote, {"scan", remote.tree, "--wait"}).code, 0);
    expect_converges(remote, {"find", "-0"}, {"find", "-0", "--host", "mu"});

    // Detached before the shard stops (the server outlives this test when tests share it).
    EXPECT_TRUE(
        conn.exec("DROP FOREIGN TABLE " + entries + ", " + dirs + "; DROP SERVER shard1 CASCADE"));
}

// A role the server does not know: the host indexes and answers as ever, status and the log
// say why the fleet lags (and never show the password), and once the role exists the retries
// (1 s, 2 s, 4 s, ...) publish.
TEST_F(FleetTest, WrongCredentialsAreReportedAndRetried) {
    std::string url = server_->url();
    const std::size_t user = url.find("user=wsfleet");
    ASSERT_NE(user, std::string::npos) << url;
    url.replace(user, std::string("user=wsfleet").size(), "user=fleet_latecomer");
    const std::string secret = "pw-never-shown-7b1e";
    const std::string pw_file = scratch_ / "fleet.pw";
    write_file(pw_file, secret + "\n");
    Host& h = add_host("zeta", "url = \"" + url + "\"\npassword_file = \"" + pw_file + "\"\n");
    write_file(h.tree + "/kept.txt", "1");
    start_and_scan(h);

    const std::string error = await_fleet_error(h);
    EXPECT_NE(error.find("role \"fleet_latecomer\" does not exist"), std::string::npos) << error;
    EXPECT_NE(h.daemon->log().find("role \"fleet_latecomer\" does not exist"), std::string::npos)
        << h.daemon->log();
    const Exit found = local(h, {"find", "-0", "kept"});
    EXPECT_EQ(found.code, 0) << found.err;
    EXPECT_EQ(found.out, h.tree + "/kept.txt" + std::string(1, '\0'));
    const Exit status = local(h, {"status"});
    EXPECT_NE(status.out.find("fleet_latecomer"), std::string::npos) << status.out;
    EXPECT_EQ(status.out.find(secret), std::string::npos) << status.out;
    EXPECT_EQ(h.daemon->log().find(secret), std::string::npos) << h.daemon->log();
    EXPECT_EQ(published_generation("zeta"), "");

    PgConnection admin;
    ASSERT_TRUE(PgConnection::connect(server_->url(), "", &admin));
    ASSERT_TRUE(admin.exec("CREATE ROLE fleet_latecomer LOGIN SUPERUSER"));
    expect_converges(h, {"find", "-0"}, {"find", "-0", "--host", "zeta"});
    expect_no_fleet_error(h);
}

// A publish killed halfway (its backend terminated after the host's entries were rewritten
// inside the transaction) leaves the previous generation whole for readers, and the retry
// publishes the new one. The publish is a delta (200 rows added to a host of 200): the test
// holds a SHARE lock on `dirs` so that the publish waits at its first write to dirs (a delete;
// a full publish would wait at its swap), and holds the host's advisory lock so that the
// retry waits until the previous generation has been checked.
TEST_F(FleetTest, KilledPublishLeavesThePreviousGeneration) {
    Host& h = published_host("eta", "old", 200);
    ASSERT_FALSE(HasFatalFailure());
    const Exit old_find = fleet({"find", "-0", "--host", "eta"});
    const Exit old_du = fleet({"du", "-b", "--host", "eta"});
    ASSERT_EQ(old_find.code, 0);
    ASSERT_EQ(old_du.code, 0);
    const std::string old_generation = published_generation("eta");
    ASSERT_NE(old_generation, "");

    PgConnection holder;
    ASSERT_TRUE(PgConnection::connect(server_->url(), "", &holder));
    ASSERT_TRUE(holder.exec("BEGIN; LOCK TABLE dirs IN SHARE MODE"));
    for (int i = 0; i < 200; ++i) write_file(h.tree + "/new" + std::to_string(i), "y");
    ASSERT_EQ(local(h, {"scan", h.tree, "--wait"}).code, 0);

    // The publisher's backend, waiting for `dirs` (so past the entries' delete and COPY).
    PgConnection admin;
    ASSERT_TRUE(PgConnection::connect(server_->url(), "", &admin));
    const std::string waiting_on_dirs =
        "SELECT pid FROM pg_locks WHERE NOT granted AND relation = 'dirs'::regclass";
    std::string pid;
    const auto deadline = std::chrono::steady_clock::now() + kConvergeDeadline;
    while (pid.empty() && std::chrono::steady_clock::now() < deadline) {
        PgResult r{nullptr, &PQclear};
        ASSERT_TRUE(admin.query(waiting_on_dirs, {}, &r));
        pid = first_value(r);
        if (pid.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_NE(pid, "") << h.daemon->log();

    // Queue for the host's advisory lock behind the publish (then ahead of its retry).
    std::atomic<bool> locked{false};
    std::string locker_error;
    PgConnection locker;
    ASSERT_TRUE(PgConnection::connect(server_->url(), "", &locker));
    std::thread lock_thread([&] {
        if (auto st = locker.exec("SELECT pg_advisory_lock(hashtext('wsindex host eta'))"); !st) {
            locker_error = st.message();
        }
        locked = true;
    });
    std::string queued;
    while (queued != "1" && std::chrono::steady_clock::now() < deadline) {
        PgResult r{nullptr, &PQclear};
        ASSERT_TRUE(admin.query(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted", {}, &r));
        queued = first_value(r);
        if (queued != "1") std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(admin.exec("SELECT pg_terminate_backend(" + pid + ")"));
    lock_thread.join();
    ASSERT_TRUE(locked.load());
    ASSERT_EQ(locker_error, "");

    EXPECT_EQ(published_generation("eta"), old_generation);
    const Exit mid_find = fleet({"find", "-0", "--host", "eta"});
    const Exit mid_du = fleet({"du", "-b", "--host", "eta"});
    EXPECT_EQ(mid_find.out, old_find.out);
    EXPECT_EQ(mid_du.out, old_du.out);
    EXPECT_NE(await_fleet_error(h), "");

    ASSERT_TRUE(holder.exec("COMMIT"));
    ASSERT_TRUE(locker.exec("SELECT pg_advisory_unlock(hashtext('wsindex host eta'))"));
    expect_converges(h, {"find", "-0"}, {"find", "-0", "--host", "eta"});
    expect_converges(h, {"du", "-b"}, {"du", "-b", "--host", "eta"});
    EXPECT_NE(published_generation("eta"), old_generation);
    EXPECT_TRUE(await_log(h, "of eta as a delta"));
}

// `wsctl fleet find` takes find's filters and outputs: each filter's answer is, record for
// record, what each host's own `wsctl find` prints with it (with "host:" before each path).
TEST_F(FleetTest, FindFiltersAnswerLikeEachHostsFind) {
    hosts_.reserve(2);
    constexpr std::int64_t kOld = 978307200;  // 2001-01-01
    for (const char* name : {"iota", "kappa"}) {
        Host& h = add_host(name);
        const std::string& t = h.tree;
        make_dir(t + "/sub");
        make_dir(t + "/Sub2");
        make_dir(t + "/sub/Logs");
        write_file(t + "/Report.TXT", std::string(150, 'r'));
        write_file(t + "/sub/report.txt", "r");
        write_file(t + "/sub/REPORT.md", std::string(5000, 'm'));
        write_file(t + "/sub/Logs/app.log", std::string(20, 'l'));
        write_file(t + "/sub/Logs/App.LOG", "");
        write_file(t + "/caf\xc3\xa9.txt", "utf-8 name");  // "café": '?' is one character
        write_file(t + "/bad\xff\x41.log", "x");           // not UTF-8, and an 'A' after it
        write_file(t + "/back\\slash[1]%_.txt", "odd bytes for LIKE and GLOB");
        write_file(t + "/" + name + "-only.dat", std::string(100, 'd'));
        set_mtime(t + "/sub/report.txt", kOld);
        set_mtime(t + "/Sub2", kOld);
    }
    for (Host& h : hosts_) start_and_scan(h);
    for (Host& h : hosts_) expect_converges(h, {"find", "-0"}, {"find", "-0", "--host", h.name});

    const std::vector<std::vector<std::string>> filters = {
        {"-i", "report"},
        {"-i", "CAF\xc3\xa9"},  // ASCII letters folded, the other bytes kept
        {"-i",
         "\xff"
         "a"},
        {"slash[1]%_"},
        {"--glob", "*.txt"},
        {"--glob", "-i", "r?port.*"},
        {"--glob", "caf?.txt"},
        {"--glob", "bad?A.log"},
        {"--glob", "[a-c]*"},
        {"--glob", "-i", "[^a]*.log"},
        {"--glob", "*/sub/*/*.log"},
        {"--glob", "*\\slash[[]1]*"},
        {"--glob", "unterminated["},
        {"--regex", "/sub/[^/]*\\.(txt|md)$"},
        {"--regex", "-i", "/logs/app\\.log$"},
        {"--regex", "caf\xc3\xa9|\xff"},
        {"--regex", "\\\\slash\\["},
        {"-t", "d"},
        {"-t", "f,d", "sub"},
        {"--size", "+100"},
        {"--size", "-1"},
        {"--size", "+10", "--size", "-150"},
        {"--size", "150"},
        {"--newer", "2010-01-01"},
        {"-i", "--type", "f", "--size", "-200", "--glob", "*.t?t"},
    };
    for (const auto& filter : filters) {
        std::vector<std::string> args = {"find", "-0"};
        args.insert(args.end(), filter.begin(), filter.end());
        SCOPED_TRACE(testing::PrintToString(args));
        const std::string want = expect_fleet_equals_union(args);
        if (filter.back() != "unterminated[") {
            EXPECT_NE(want, "");
        }
    }
    // A directory above every host's root: each host's whole index (`wsctl find --under` on a
    // host refuses a directory its index does not hold).
    std::string everything;
    for (Host& h : hosts_) everything += with_host(h.name, local(h, {"find", "-0"}).out);
    const Exit under_all = fleet({"find", "-0", "--under", scratch_.path()});
    EXPECT_EQ(under_all.out, everything);

    Host& h = hosts_.front();
    // --under, --limit and -l with --host: exactly the host's own output.
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"find", "-0", "--under", h.tree + "/sub"},
          // A fragment the trigram index answers, under a directory (a filter on its rows,
          // not the (path) index): Report.TXT beside sub is left out.
          std::vector<std::string>{"find", "-0", "-i", "--under", h.tree + "/sub", "report"},
          std::vector<std::string>{"find", "-0", "--limit", "3"},
          std::vector<std::string>{"find", "-l", "-i", "report"},
          std::vector<std::string>{"find", "-l", "--type", "d"}}) {
        SCOPED_TRACE(testing::PrintToString(args));
        const Exit want = local(h, args);
        ASSERT_EQ(want.code, 0) << want.err;
        std::vector<std::string> fleet_args = args;
        fleet_args.insert(fleet_args.end(), {"--host", h.name});
        const Exit got = fleet(fleet_args);
        ASSERT_EQ(got.code, 0) << got.err;
        EXPECT_EQ(got.out, want.out);
        EXPECT_FALSE(want.out.empty());
    }

    // --json: the host's entries, member for member, and the host.
    const Exit want = local(h, {"find", "--json", "--glob", "*.log"});
    const Exit got = fleet({"find", "--json", "--glob", "*.log"});
    ASSERT_EQ(want.code, 0) << want.err;
    ASSERT_EQ(got.code, 0) << got.err;
    auto want_doc = nlohmann::json::parse(want.out);
    auto got_doc = nlohmann::json::parse(got.out);
    nlohmann::json mine = nlohmann::json::array();
    for (auto entry : got_doc["entries"]) {
        if (entry["host"] != h.name) continue;
        entry.erase("host");
        mine.push_back(entry);
    }
    EXPECT_EQ(mine, want_doc["entries"]);
    EXPECT_EQ(mine.size(), 2U) << got.out;

    // Bad patterns and options are usage errors, before any query.
    EXPECT_EQ(fleet({"find", "--regex", "a("}).code, 2);
    EXPECT_EQ(fleet({"find", "--size", "+x"}).code, 2);
    EXPECT_EQ(fleet({"find", "-0", "-l"}).code, 2);
}

// The publisher reads password_file before each connection: after the role's password and the
// file change, the next publish (or its retry) logs in with the new one, without a restart.
TEST_F(FleetTest, RotatedPasswordIsUsedWithoutARestart) {
    PgConnection admin;
    ASSERT_TRUE(PgConnection::connect(server_->url(), "", &admin));
    ASSERT_TRUE(admin.exec("CREATE ROLE fleet_rotating LOGIN SUPERUSER PASSWORD 'first-pw'"));
    std::string error;
    ASSERT_TRUE(server_->require_password("fleet_rotating", error)) << error;
    std::string url = server_->url();
    const std::size_t user = url.find("user=wsfleet");
    ASSERT_NE(user, std::string::npos) << url;
    url.replace(user, std::string("user=wsfleet").size(), "user=fleet_rotating");
    // The reload is asynchronous: wait until a login without the password is refused.
    const auto deadline = std::chrono::steady_clock::now() + kConvergeDeadline;
    for (;;) {
        PgConnection probe;
        if (!PgConnection::connect(url, "", &probe)) break;
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "pg_hba.conf never reloaded";
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling a condition
    }
    const std::string pw_file = scratch_ / "rotating.pw";
    // Replaced whole (rename), as a rotation tool would, so no reader sees it half written.
    const auto set_password_file = [&](const std::string& password) {
        write_file(pw_file + ".new", password + "\n");
        ASSERT_EQ(::rename((pw_file + ".new").c_str(), pw_file.c_str()), 0);
    };
    set_password_file("first-pw");
    Host& h = add_host("theta", "url = \"" + url + "\"\npassword_file = \"" + pw_file + "\"\n");
    write_file(h.tree + "/one.txt", "1");
    start_and_scan(h);
    expect_converges(h, {"find", "-0"}, {"find", "-0", "--host", "theta"});

    // The password changes on the server: the next publish is refused (so the password is
    // really checked), then the file changes and a retry publishes.
    ASSERT_TRUE(admin.exec("ALTER ROLE fleet_rotating PASSWORD 'second-pw'"));
    write_file(h.tree + "/two.txt", "2");
    ASSERT_EQ(local(h, {"scan", h.tree, "--wait"}).code, 0);
    const std::string refused = await_fleet_error(h);
    EXPECT_NE(refused.find("password authentication failed"), std::string::npos) << refused;
    set_password_file("second-pw");
    expect_converges(h, {"find", "-0"}, {"find", "-0", "--host", "theta"});
    expect_no_fleet_error(h);
    EXPECT_EQ(h.daemon->log().find("second-pw"), std::string::npos) << h.daemon->log();
}

}  // namespace
}  // namespace wsindex::fleet::test
