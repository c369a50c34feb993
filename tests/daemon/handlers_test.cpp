// Tests of the method handlers through a real daemon on a real socket, driven with ipc::Client:
// scan with progress, typed errors, find/du/errors/scans answers, cancel, the visibility and
// control seams, reload, and a graceful stop in the middle of a scan.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "daemon/daemon.hpp"
#include "daemon/index_queries.hpp"
#include "ipc/client.hpp"
#include "ipc/methods.hpp"
#include "storage/database.hpp"
#include "tests/daemon/support/daemon_test_support.hpp"

namespace wsindex::daemon {
namespace {

using json = nlohmann::json;
using test::Gate;
using test::TempDir;
using namespace std::chrono_literals;

class DaemonFixture : public ::testing::Test {
  protected:
    TempDir dir;
    std::string tree = dir / "tree";
    std::size_t entries = 0;  // in the tree, root included
    std::unique_ptr<Daemon> daemon;
    std::thread runner;

    void SetUp() override {
        std::filesystem::create_directories(tree);
        entries = test::make_tree(tree, 4, 20) + 1;
    }
    void TearDown() override { stop(); }

    DaemonOptions options() {
        DaemonOptions o;
        o.config.socket_path = dir / "d.sock";
        o.config.db_path = dir / "index.db";
        o.config.workers = 2;
        o.config.progress_interval = 20ms;
        // The handlers' answers over a tree no one changes: scans only (no live index, whose
        // catch-up scans and watches are tested end to end in tests/cli/e2e_live_test.cpp).
        o.config.watch = false;
        o.handle_signals = false;
        return o;
    }
    void start(DaemonOptions o) {
        daemon = std::make_unique<Daemon>(std::move(o));
        const core::Status st = daemon->start();
        ASSERT_TRUE(st) << st.to_string();
        runner = std::thread([this] { daemon->run(); });
    }
    void stop() {
        if (!daemon) return;
        daemon->request_stop();
        runner.join();
        daemon.reset();
    }
    ipc::Client client() {
        auto c = ipc::Client::connect(dir / "d.sock");
        EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().to_string());
        return std::move(c.value());
    }
    json call_ok(std::string_view method, const json& params = json::object()) {
        ipc::Client c = client();
        auto r = c.call(method, params);
        EXPECT_TRUE(r.ok()) << method << ": " << (r.ok() ? "" : r.error().to_string());
        return r.ok() ? r.value() : json();
    }
    ipc::Error call_error(std::string_view method, const json& params) {
        ipc::Client c = client();
        auto r = c.call(method, params);
        EXPECT_FALSE(r.ok()) << method << " should fail";
        return r.ok() ? ipc::Error{} : r.error();
    }
    ipc::ScanInfo scan_and_wait(const std::string& root) {
        const json reply = call_ok(ipc::method::kScan, {{"paths", {root}}, {"wait", true}});
        auto parsed = ipc::from_json<ipc::ScanReply>(reply);
        EXPECT_TRUE(parsed.ok());
        EXPECT_EQ(parsed.value().scans.size(), 1u);
        return parsed.value().scans.at(0);
    }
    // Starts a scan of `tree` that stops at `hook` (a DaemonOptions seam) until `gate` opens.
    void start_held_scan(Gate& gate, std::function<void(const ScanJob&)> DaemonOptions::*hook) {
        DaemonOptions o = options();
        o.*hook = [&gate](const ScanJob&) { gate.pass(); };
        start(std::move(o));
        auto queued =
            ipc::from_json<ipc::ScanReply>(call_ok(ipc::method::kScan, {{"paths", {tree}}}));
        ASSERT_TRUE(queued.ok());
        ASSERT_TRUE(gate.wait_arrived());
    }
    // Lets the held scan go on and expects it to end as the only scan, cancelled.
    void expect_held_scan_cancelled(Gate& gate) {
        gate.open();
        ASSERT_TRUE(daemon->scans().wait_idle(60s));
        auto scans = ipc::from_json<ipc::ScansReply>(call_ok(ipc::method::kScans));
        ASSERT_TRUE(scans.ok());
        ASSERT_EQ(scans.value().scans.size(), 1u);
        EXPECT_EQ(scans.value().scans[0].state, ipc::ScanState::Cancelled);
    }
    std::set<std::string> find_paths(const json& params) {
        auto parsed = ipc::from_json<ipc::FindReply>(call_ok(ipc::method::kFind, params));
        EXPECT_TRUE(parsed.ok());
        std::set<std::string> out;
        for (const auto& e : parsed.value().entries) out.insert(e.path);
        return out;
    }
};

TEST_F(DaemonFixture, VersionAndIdleStatus) {
    start(options());
    auto v = ipc::from_json<ipc::VersionReply>(call_ok(ipc::method::kVersion));
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v.value().server_version, WSINDEX_VERSION);
    EXPECT_EQ(v.value().pid, ::getpid());
    auto s = ipc::from_json<ipc::StatusReply>(call_ok(ipc::method::kStatus));
    ASSERT_TRUE(s.ok());
    EXPECT_FALSE(s.value().running.has_value());
    EXPECT_TRUE(s.value().queued.empty());
    EXPECT_TRUE(s.value().roots.empty());
}

TEST_F(DaemonFixture, ScanWithWaitStreamsProgressThenTheEnd) {
    Gate gate;
    DaemonOptions o = options();
    o.before_walk = [&](const ScanJob&) { gate.pass(); };
    start(std::move(o));

    ipc::Client c = client();
    int progress = 0;
    ipc::ScanReply last;
    auto error =
        c.call_more(ipc::method::kScan, {{"paths", {tree}}, {"wait", true}},
                    [&](const json& params, bool continues) {
                        auto r = ipc::from_json<ipc::ScanReply>(params);
                        EXPECT_TRUE(r.ok());
                        if (continues) {
                            ++progress;
                            EXPECT_EQ(r.value().scans.at(0).state, ipc::ScanState::Running);
                            gate.open();  // seen live: let the scan finish
                        } else {
                            last = r.value();
                        }
                        return true;
                    });
    ASSERT_FALSE(error) << error->to_string();
    EXPECT_GE(progress, 1);
    ASSERT_EQ(last.scans.size(), 1u);
    EXPECT_EQ(last.scans[0].state, ipc::ScanState::Done);
    EXPECT_EQ(last.scans[0].entries, entries);
    EXPECT_EQ(last.scans[0].root, tree);

    auto s = ipc::from_json<ipc::StatusReply>(call_ok(ipc::method::kStatus));
    ASSERT_TRUE(s.ok());
    ASSERT_EQ(s.value().roots.size(), 1u);
    EXPECT_EQ(s.value().roots[0].root, tree);
    EXPECT_EQ(s.value().roots[0].entries, entries);
}

TEST_F(DaemonFixture, BadScanPathsGetTypedErrors) {
    start(options());
    test::write_file(dir / "file", 5);
    EXPECT_EQ(call_error(ipc::method::kScan, {{"paths", {dir / "missing"}}}).kind,
              ipc::ErrorKind::NoSuchPath);
    EXPECT_EQ(call_error(ipc::method::kScan, {{"paths", {dir / "file"}}}).kind,
              ipc::ErrorKind::NotADirectory);
    EXPECT_EQ(call_error(ipc::method::kScan, {{"paths", {"relative"}}}).kind,
              ipc::ErrorKind::InvalidParameter);
    // One bad path refuses the whole request: the good one was not queued.
    EXPECT_EQ(call_error(ipc::method::kScan, {{"paths", {tree, dir / "missing"}}}).kind,
              ipc::ErrorKind::NoSuchPath);
    auto scans = ipc::from_json<ipc::ScansReply>(call_ok(ipc::method::kScans));
    ASSERT_TRUE(scans.ok());
    EXPECT_TRUE(scans.value().scans.empty());
    EXPECT_TRUE(daemon->scans().snapshot().queued.empty());
}

TEST_F(DaemonFixture, FindDuErrorsAndScansAnswerFromTheIndex) {
    start(options());
    ASSERT_EQ(scan_and_wait(tree).state, ipc::ScanState::Done);

    // Every entry, streamed.
    std::set<std::string> streamed;
    {
        ipc::Client c = client();
        auto error = c.call_more(ipc::method::kFind, json::object(), [&](const json& params, bool) {
            auto r = ipc::from_json<ipc::FindReply>(params);
            EXPECT_TRUE(r.ok());
            for (const auto& e : r.value().entries) streamed.insert(e.path);
            return true;
        });
        ASSERT_FALSE(error) << error->to_string();
    }
    std::set<std::string> expected{tree};
    for (const auto& e : std::filesystem::recursive_directory_iterator(tree)) {
        expected.insert(e.path().string());
    }
    EXPECT_EQ(streamed, expected);

    // Substring, glob, type filter, under, limit.
    EXPECT_EQ(find_paths({{"pattern", "file19"}}).size(), 4u);
    EXPECT_EQ(find_paths({{"pattern", "dir*"}, {"match", "glob"}, {"types", "d"}}).size(), 4u);
    EXPECT_EQ(find_paths({{"under", tree + "/dir2"}}).size(), 20u);
    auto limited = ipc::from_json<ipc::FindReply>(call_ok(ipc::method::kFind, {{"limit", 7}}));
    ASSERT_TRUE(limited.ok());
    EXPECT_EQ(limited.value().entries.size(), 7u);
    EXPECT_TRUE(limited.value().truncated);
    auto exact = ipc::from_json<ipc::FindReply>(
        call_ok(ipc::method::kFind, {{"pattern", "file19"}, {"limit", 4}}));
    ASSERT_TRUE(exact.ok());
    EXPECT_FALSE(exact.value().truncated);
    EXPECT_EQ(call_error(ipc::method::kFind, {{"pattern", "(unclosed"}, {"match", "regex"}}).kind,
              ipc::ErrorKind::InvalidParameter);
    // Patterns that make regcomp or regexec run away are refused before they reach either.
    for (const char* runaway : {"(a{32767}){32767}", "(a|aa)*\\1"}) {
        const ipc::Error refused =
            call_error(ipc::method::kFind, {{"pattern", runaway}, {"match", "regex"}});
        EXPECT_EQ(refused.kind, ipc::ErrorKind::InvalidParameter) << runaway;
        EXPECT_NE(refused.message.find("'pattern'"), std::string::npos) << refused.message;
    }
    EXPECT_EQ(call_error(ipc::method::kFind, {{"under", dir / "elsewhere"}}).kind,
              ipc::ErrorKind::NotIndexed);

    // Du: the root and its four directories; sizes add up.
    auto du =
        ipc::from_json<ipc::DuReply>(call_ok(ipc::method::kDu, {{"path", tree}, {"depth", 1}}));
    ASSERT_TRUE(du.ok());
    ASSERT_EQ(du.value().entries.size(), 5u);
    EXPECT_EQ(du.value().entries[0].path, tree);
    EXPECT_EQ(du.value().entries[0].depth, 0u);
    EXPECT_EQ(du.value().entries[0].files, 80u);
    EXPECT_EQ(du.value().entries[0].dirs, 4u);
    std::uint64_t children = 0;
    for (std::size_t i = 1; i < 5; ++i) {
        EXPECT_EQ(du.value().entries[i].depth, 1u);
        EXPECT_EQ(du.value().entries[i].files, 20u);
        children += du.value().entries[i].size;
    }
    EXPECT_GT(du.value().entries[0].size, children);  // the root's own size is on top
    auto top =
        ipc::from_json<ipc::DuReply>(call_ok(ipc::method::kDu, {{"path", tree}, {"top", 2}}));
    ASSERT_TRUE(top.ok());
    EXPECT_EQ(top.value().entries.size(), 3u);  // the path, then the two biggest below it
    auto everything = ipc::from_json<ipc::DuReply>(call_ok(ipc::method::kDu));
    ASSERT_TRUE(everything.ok());
    ASSERT_EQ(everything.value().entries.size(), 1u);
    EXPECT_EQ(everything.value().entries[0].path, tree);
    EXPECT_EQ(call_error(ipc::method::kDu, {{"path", dir / "elsewhere"}}).kind,
              ipc::ErrorKind::NotIndexed);

    // Errors and scans.
    auto errors = ipc::from_json<ipc::ErrorsReply>(call_ok(ipc::method::kErrors));
    ASSERT_TRUE(errors.ok());
    EXPECT_TRUE(errors.value().errors.empty());
    EXPECT_EQ(errors.value().scan_id, 1u);
    EXPECT_EQ(call_error(ipc::method::kErrors, {{"scan_id", 99}}).kind, ipc::ErrorKind::NoSuchScan);
    auto scans = ipc::from_json<ipc::ScansReply>(call_ok(ipc::method::kScans));
    ASSERT_TRUE(scans.ok());
    ASSERT_EQ(scans.value().scans.size(), 1u);
    EXPECT_EQ(scans.value().scans[0].state, ipc::ScanState::Done);
    EXPECT_EQ(scans.value().scans[0].entries, entries);
}

TEST_F(DaemonFixture, CancelStopsTheRunningScan) {
    Gate gate;
    ASSERT_NO_FATAL_FAILURE(start_held_scan(gate, &DaemonOptions::before_walk));

    auto status = ipc::from_json<ipc::StatusReply>(call_ok(ipc::method::kStatus));
    ASSERT_TRUE(status.ok());
    ASSERT_TRUE(status.value().running.has_value());
    const std::uint64_t id = status.value().running->scan_id;

    EXPECT_EQ(call_error(ipc::method::kCancel, {{"scan_id", id + 1}}).kind,
              ipc::ErrorKind::NoSuchScan);
    EXPECT_EQ(call_error(ipc::method::kCancel, {{"queued", "yes"}}).kind,
              ipc::ErrorKind::InvalidParameter);
    auto cancelled =
        ipc::from_json<ipc::CancelReply>(call_ok(ipc::method::kCancel, {{"scan_id", id}}));
    ASSERT_TRUE(cancelled.ok());
    EXPECT_EQ(cancelled.value().cancelled, std::vector<std::uint64_t>{id});
    EXPECT_EQ(cancelled.value().unnumbered, 0u);
    expect_held_scan_cancelled(gate);
}

// A scan cancelled while it starts (running, but its scan row and id not yet written) is
// counted as unnumbered rather than listed by id, and still ends cancelled.
TEST_F(DaemonFixture, CancelCountsAScanThatHadNoIdYet) {
    Gate gate;
    ASSERT_NO_FATAL_FAILURE(start_held_scan(gate, &DaemonOptions::before_begin));

    auto cancelled = ipc::from_json<ipc::CancelReply>(call_ok(ipc::method::kCancel));
    ASSERT_TRUE(cancelled.ok());
    EXPECT_TRUE(cancelled.value().cancelled.empty());
    EXPECT_EQ(cancelled.value().unnumbered, 1u);
    expect_held_scan_cancelled(gate);

    // Nothing runs now: nothing cancelled, by id or not.
    auto again = ipc::from_json<ipc::CancelReply>(call_ok(ipc::method::kCancel));
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again.value().cancelled.empty());
    EXPECT_EQ(again.value().unnumbered, 0u);
}

TEST_F(DaemonFixture, AWaitedScanThatIsCancelledEndsWithCancelled) {
    Gate gate;
    DaemonOptions o = options();
    o.before_walk = [&](const ScanJob&) { gate.pass(); };
    start(std::move(o));
    std::optional<ipc::Error> waited;
    std::vector<ipc::ScanState> states;
    std::thread waiter([&] {
        ipc::Client c = client();
        waited = c.call_more(ipc::method::kScan, {{"paths", {tree}}, {"wait", true}},
                             [&](const json& params, bool) {
                                 auto r = ipc::from_json<ipc::ScanReply>(params);
                                 if (r.ok()) states.push_back(r.value().scans.at(0).state);
                                 return true;
                             });
    });
    ASSERT_TRUE(gate.wait_arrived());
    call_ok(ipc::method::kCancel);
    gate.open();
    waiter.join();
    ASSERT_TRUE(waited.has_value());
    EXPECT_EQ(waited->kind, ipc::ErrorKind::Cancelled);
    ASSERT_FALSE(states.empty());
    EXPECT_EQ(states.back(), ipc::ScanState::Cancelled);  // the last progress reply
}

TEST_F(DaemonFixture, AnswersGoThroughTheSeams) {
    DaemonOptions o = options();
    o.seams.visibility = [](const ipc::PeerCredentials& peer) -> CallerView {
        EXPECT_TRUE(peer.valid);
        const PathFilter outside_dir1 = [](std::string_view path) {
            return path.find("/dir1") == std::string_view::npos;
        };
        return CallerView{outside_dir1, outside_dir1, false};
    };
    bool allow_control = true;  // read on the io thread only after the first scan finished
    o.seams.may_control = [&](const ipc::PeerCredentials&) { return allow_control; };
    start(std::move(o));
    ASSERT_EQ(scan_and_wait(tree).state, ipc::ScanState::Done);

    const auto all = find_paths(json::object());
    EXPECT_EQ(all.size(), entries - 21);  // dir1 and its 20 files hidden
    for (const auto& p : all) EXPECT_EQ(p.find("/dir1"), std::string::npos) << p;
    auto du =
        ipc::from_json<ipc::DuReply>(call_ok(ipc::method::kDu, {{"path", tree}, {"depth", 1}}));
    ASSERT_TRUE(du.ok());
    EXPECT_EQ(du.value().entries.size(), 4u);
    // A path the caller cannot see answers exactly as one the index does not hold.
    for (const std::string& hidden : {tree + "/dir1", tree + "/dir1/file0.txt"}) {
        const ipc::Error seen = call_error(ipc::method::kDu, {{"path", hidden}});
        const std::string absent_path = tree + "/absent" + hidden.substr(tree.size() + 5);
        const ipc::Error absent = call_error(ipc::method::kDu, {{"path", absent_path}});
        EXPECT_EQ(seen.kind, ipc::ErrorKind::NotIndexed) << hidden;
        EXPECT_EQ(absent.kind, ipc::ErrorKind::NotIndexed) << absent_path;
        EXPECT_EQ(seen.message.substr(0, seen.message.find(tree)),
                  absent.message.substr(0, absent.message.find(tree)));
        const ipc::Error under = call_error(ipc::method::kFind, {{"under", hidden}});
        const ipc::Error under_absent = call_error(ipc::method::kFind, {{"under", absent_path}});
        EXPECT_EQ(under.kind, ipc::ErrorKind::NotIndexed) << hidden;
        EXPECT_EQ(under_absent.kind, ipc::ErrorKind::NotIndexed) << absent_path;
        EXPECT_EQ(under.message.substr(0, under.message.find(tree)),
                  under_absent.message.substr(0, under_absent.message.find(tree)));
    }

    // A path the caller cannot see answers as a path that does not exist, whether it exists
    // or not: the same kind and message.
    const std::string missing = tree + "/missing";
    const ipc::Error absent = call_error(ipc::method::kScan, {{"paths", {missing}}});
    EXPECT_EQ(absent.kind, ipc::ErrorKind::NoSuchPath);
    for (const std::string& hidden :
         {tree + "/dir1", tree + "/dir1/missing", tree + "/dir0/../dir1/"}) {
        const ipc::Error e = call_error(ipc::method::kScan, {{"paths", {hidden}}});
        EXPECT_EQ(e.kind, ipc::ErrorKind::NoSuchPath) << hidden;
        EXPECT_EQ(e.message, "no such path: " + hidden);
    }
    EXPECT_EQ(absent.message, "no such path: " + missing);

    stop();  // the control flag is read by the io thread: change it while nothing runs
    allow_control = false;
    o = options();
    o.seams.may_control = [&](const ipc::PeerCredentials&) { return allow_control; };
    start(std::move(o));
    EXPECT_EQ(call_error(ipc::method::kScan, {{"paths", {tree}}}).kind,
              ipc::ErrorKind::PermissionDenied);
    EXPECT_EQ(call_error(ipc::method::kCancel, json::object()).kind,
              ipc::ErrorKind::PermissionDenied);
}

// systemd's STATUS= line is readable by every user (`systemctl status`): it must not name
// the root being scanned, which wsindex.Status withholds from callers who cannot see it.
TEST_F(DaemonFixture, ServiceManagerStatusNamesNoPath) {
    DaemonOptions o = options();
    std::mutex mutex;
    std::vector<std::string> lines;
    o.seams.service_manager.notify_status = [&](std::string_view line) {
        const std::lock_guard lock(mutex);
        lines.emplace_back(line);
    };
    start(std::move(o));
    const auto done = scan_and_wait(tree);
    ASSERT_EQ(done.state, ipc::ScanState::Done);
    stop();
    const std::lock_guard lock(mutex);
    ASSERT_FALSE(lines.empty());
    for (const auto& line : lines) {
        EXPECT_EQ(line.find(tree), std::string::npos) << line;
        EXPECT_EQ(line.find('/'), std::string::npos) << line;
    }
    EXPECT_EQ(lines.back(), "scan " + std::to_string(done.scan_id) + " done") << lines.back();
}

// The writer closes last, so SQLite checkpoints the WAL into the database and deletes it:
// the next opener then reads the database file, not a log it must first index and read
// through (a read-only connection closing last cannot do either).
TEST_F(DaemonFixture, StopLeavesNoWriteAheadLog) {
    start(options());
    ASSERT_EQ(scan_and_wait(tree).state, ipc::ScanState::Done);
    (void)call_ok("wsindex.Find", json{{"pattern", "file"}});  // the query threads read too
    stop();
    EXPECT_TRUE(std::filesystem::exists(dir / "index.db"));
    EXPECT_FALSE(std::filesystem::exists(dir / "index.db-wal"));
}

bool outside_dir0_to_dir2(std::string_view path) {
    return path.find("/dir0") == std::string_view::npos &&
           path.find("/dir1") == std::string_view::npos &&
           path.find("/dir2") == std::string_view::npos;
}

// --limit counts what the caller may see: the index is asked for rows until that many visible
// ones passed the filter, not for `limit` rows of which the filter then drops some.
TEST_F(DaemonFixture, FindLimitCountsVisibleEntriesOnly) {
    DaemonOptions o = options();
    // Only dir3 and its files (and the tree itself) are visible: the walk meets dir0..dir2 first,
    // so most of the index's first rows are hidden ones.
    o.seams.visibility = [](const ipc::PeerCredentials&) -> CallerView {
        return CallerView{outside_dir0_to_dir2, outside_dir0_to_dir2, false};
    };
    start(std::move(o));
    ASSERT_EQ(scan_and_wait(tree).state, ipc::ScanState::Done);
    const json under{{"under", tree}, {"pattern", "file"}};
    const std::size_t visible = find_paths(under).size();
    ASSERT_EQ(visible, 20u);  // dir3's files
    json paths_only = under;
    paths_only["metadata"] = false;  // answered from the name index: filtered all the same
    EXPECT_EQ(find_paths(paths_only).size(), visible);
    for (const std::uint64_t limit : {1u, 5u, 19u, 20u, 21u}) {
        for (const bool metadata : {true, false}) {
            json params = under;
            params["limit"] = limit;
            params["metadata"] = metadata;
            for (const bool streamed : {false, true}) {
                ipc::Client c = client();
                ipc::FindReply all;
                if (streamed) {
                    auto error =
                        c.call_more(ipc::method::kFind, params, [&](const json& part, bool) {
                            auto r = ipc::from_json<ipc::FindReply>(part);
                            EXPECT_TRUE(r.ok());
                            for (auto& e : r.value().entries) all.entries.push_back(std::move(e));
                            all.truncated = r.value().truncated;
                            return true;
                        });
                    EXPECT_FALSE(error.has_value());
                } else {
                    auto r = c.call(ipc::method::kFind, params);
                    ASSERT_TRUE(r.ok());
                    all = ipc::from_json<ipc::FindReply>(r.value()).value();
                }
                EXPECT_EQ(all.entries.size(), std::min<std::size_t>(limit, visible))
                    << "limit " << limit << (streamed ? " streamed" : "");
                EXPECT_EQ(all.truncated, limit < visible) << "limit " << limit;
                for (const auto& e : all.entries) EXPECT_EQ(e.has_metadata, metadata) << e.path;
            }
        }
    }
}

// A paths-only find (wsctl's plain output) gives the same paths and types as a full one, and
// no size or time: the daemon answers it from the name index.
TEST_F(DaemonFixture, PathsOnlyFindGivesTheSamePathsWithoutMetadata) {
    start(options());
    ASSERT_EQ(scan_and_wait(tree).state, ipc::ScanState::Done);
    for (json params :
         {json{{"pattern", "file1"}}, json{{"pattern", "DIR"}, {"case_insensitive", true}},
          json{{"types", "d"}}, json{{"under", tree + "/dir2"}, {"pattern", "e"}}, json::object(),
          json{{"pattern", "file"}, {"min_size", 1}}}) {
        auto full = ipc::from_json<ipc::FindReply>(call_ok(ipc::method::kFind, params));
        params["metadata"] = false;
        auto paths = ipc::from_json<ipc::FindReply>(call_ok(ipc::method::kFind, params));
        ASSERT_TRUE(full.ok() && paths.ok());
        std::set<std::pair<std::string, char>> a;
        std::set<std::pair<std::string, char>> b;
        for (const auto& e : full.value().entries) {
            EXPECT_TRUE(e.has_metadata);
            a.emplace(e.path, e.type);
        }
        for (const auto& e : paths.value().entries) {
            EXPECT_FALSE(e.has_metadata) << e.path;
            b.emplace(e.path, e.type);
        }
        EXPECT_FALSE(a.empty()) << params.dump();
        EXPECT_EQ(a, b) << params.dump();
    }
}

// Status and Scans: a root the caller cannot see is named to nobody but root; counts and
// failure texts only to a caller who may list everything below the root
// (daemon/scan_visibility.hpp).
TEST_F(DaemonFixture, StatusAndScansWithholdWhatTheCallerCannotSee) {
    std::atomic<bool> hide_dir1{false};
    Gate gate;
    DaemonOptions o = options();
    o.seams.visibility = [&](const ipc::PeerCredentials&) -> CallerView {
        const bool hide = hide_dir1.load();
        const PathFilter filter = [hide](std::string_view path) {
            return !hide || path.find("/dir1") == std::string_view::npos;
        };
        return CallerView{filter, filter, false};
    };
    o.before_walk = [&](const ScanJob& job) {
        if (job.root().ends_with("/dir1")) gate.pass();
    };
    start(std::move(o));
    ASSERT_EQ(scan_and_wait(tree + "/dir0").state, ipc::ScanState::Done);
    // A scan of dir1 that ends cancelled: the last failed one.
    call_ok(ipc::method::kScan, {{"paths", {tree + "/dir1"}}});
    ASSERT_TRUE(gate.wait_arrived());
    call_ok(ipc::method::kCancel);
    gate.open();
    ASSERT_TRUE(daemon->scans().wait_idle(60s));
    ASSERT_EQ(scan_and_wait(tree + "/dir1").state, ipc::ScanState::Done);

    // Everything visible: names, counts and the reason.
    auto status = ipc::from_json<ipc::StatusReply>(call_ok(ipc::method::kStatus)).value();
    ASSERT_EQ(status.roots.size(), 2u);
    for (const auto& r : status.roots) {
        EXPECT_EQ(r.entries, 21u) << r.root;
        EXPECT_FALSE(r.counts_hidden);
    }
    ASSERT_TRUE(status.last_failed.has_value());
    EXPECT_EQ(status.last_failed->state, ipc::ScanState::Cancelled);
    EXPECT_EQ(status.last_failed->root, tree + "/dir1");

    hide_dir1 = true;
    const json wire_status = call_ok(ipc::method::kStatus);
    const json wire_scans = call_ok(ipc::method::kScans);
    for (const json* wire : {&wire_status, &wire_scans}) {
        EXPECT_EQ(wire->dump().find("/dir1"), std::string::npos) << wire->dump();
    }
    status = ipc::from_json<ipc::StatusReply>(wire_status).value();
    ASSERT_EQ(status.roots.size(), 1u);  // dir1 is left out
    EXPECT_EQ(status.roots[0].root, tree + "/dir0");
    EXPECT_EQ(status.roots[0].entries, 21u);
    ASSERT_TRUE(status.last_failed.has_value());  // still there, by id and state only
    EXPECT_EQ(status.last_failed->state, ipc::ScanState::Cancelled);
    EXPECT_TRUE(status.last_failed->root_hidden);
    EXPECT_TRUE(status.last_failed->root.empty());
    EXPECT_TRUE(status.last_failed->error.empty());

    auto scans = ipc::from_json<ipc::ScansReply>(wire_scans).value();
    ASSERT_EQ(scans.scans.size(), 3u);
    for (const auto& sc : scans.scans) {
        const bool of_dir1 = sc.scan_id != scans.scans.back().scan_id;  // newest first
        EXPECT_EQ(sc.root_hidden, of_dir1) << sc.scan_id;
        EXPECT_EQ(sc.counts_hidden, of_dir1) << sc.scan_id;
        if (of_dir1) {
            EXPECT_EQ(sc.entries, 0u);
            EXPECT_FALSE(sc.bytes.has_value());
        } else {
            EXPECT_GT(sc.entries, 0u);
        }
    }

    // The parent of a hidden directory: its name is visible, its counts are not.
    ASSERT_EQ(scan_and_wait(tree).state, ipc::ScanState::Done);
    status = ipc::from_json<ipc::StatusReply>(call_ok(ipc::method::kStatus)).value();
    const ipc::RootInfo* tree_root = nullptr;
    for (const auto& root : status.roots) {
        EXPECT_EQ(root.root.find("/dir1"), std::string::npos) << root.root;
        if (root.root == tree) tree_root = &root;
    }
    ASSERT_NE(tree_root, nullptr);
    EXPECT_TRUE(tree_root->counts_hidden);
    EXPECT_EQ(tree_root->entries, 0u);
    scans = ipc::from_json<ipc::ScansReply>(call_ok(ipc::method::kScans, {{"limit", 1}})).value();
    ASSERT_EQ(scans.scans.size(), 1u);
    EXPECT_EQ(scans.scans[0].root, tree);
    EXPECT_FALSE(scans.scans[0].root_hidden);
    EXPECT_TRUE(scans.scans[0].counts_hidden);
}

// wsctl scan --wait: the progress and final replies show a scan's counters only to a caller
// who may list every directory below its root in the index, as Status does.
TEST_F(DaemonFixture, ScanWaitWithholdsCountsTheCallerMayNotSee) {
    std::atomic<bool> restricted{false};
    DaemonOptions o = options();
    o.seams.visibility = [&](const ipc::PeerCredentials&) -> CallerView {
        const bool hide = restricted.load();
        const PathFilter all = [](std::string_view) { return true; };
        const PathFilter can_list = [hide](std::string_view path) {
            return !hide || path.find("/dir1") == std::string_view::npos;
        };
        return CallerView{all, can_list, false};
    };
    start(std::move(o));
    // Every reply of a waited scan of `root`, progress and final.
    auto waited = [&](const std::string& root) {
        std::vector<ipc::ScanInfo> replies;
        ipc::Client c = client();
        auto error = c.call_more(ipc::method::kScan, {{"paths", {root}}, {"wait", true}},
                                 [&](const json& params, bool) {
                                     auto r = ipc::from_json<ipc::ScanReply>(params);
                                     EXPECT_TRUE(r.ok());
                                     replies.push_back(r.value().scans.at(0));
                                     return true;
                                 });
        EXPECT_FALSE(error) << error->to_string();
        EXPECT_FALSE(replies.empty());
        if (!replies.empty()) {
            EXPECT_EQ(replies.back().state, ipc::ScanState::Done);
        }
        return replies;
    };
    auto expect_hidden = [](const std::vector<ipc::ScanInfo>& replies, bool hidden) {
        for (const auto& scan : replies) {
            EXPECT_EQ(scan.counts_hidden, hidden);
            if (hidden) {
                EXPECT_EQ(scan.entries, 0u);
                EXPECT_FALSE(scan.bytes.has_value());
            }
        }
    };
    // Not indexed yet: nothing proves the caller may list what the counters count.
    expect_hidden(waited(tree), true);
    // Indexed now, and every directory listable: shown.
    auto shown = waited(tree);
    expect_hidden(shown, false);
    EXPECT_EQ(shown.back().entries, entries);
    // dir1 not listable: hidden for the tree, shown for dir0 below it.
    restricted = true;
    auto hidden = waited(tree);
    expect_hidden(hidden, true);
    EXPECT_EQ(hidden.back().root, tree);  // the root stays: the caller may see its name
    auto dir0 = waited(tree + "/dir0");
    expect_hidden(dir0, false);
    EXPECT_GT(dir0.back().entries, 0u);
    // The unwaited reply follows the same rule.
    auto queued = ipc::from_json<ipc::ScanReply>(call_ok(ipc::method::kScan, {{"paths", {tree}}}));
    ASSERT_TRUE(queued.ok());
    EXPECT_TRUE(queued.value().scans.at(0).counts_hidden);
    ASSERT_TRUE(daemon->scans().wait_idle(60s));
}

TEST_F(DaemonFixture, ReloadPicksUpNewRoots) {
    const std::string conf = dir / "wsindexd.toml";
    { std::ofstream(conf) << "workers = 2\n"; }
    DaemonOptions o = options();
    o.command_line.config_path = conf;
    o.command_line.socket_path = o.config.socket_path;
    o.command_line.db_path = o.config.db_path;
    start(std::move(o));
    {
        std::ofstream(conf) << "workers = 2\n[[root]]\npath = \"" + tree +
                                   "\"\ninterval = \"off\"\n";
    }
    daemon->request_reload();
    // The configured root was never indexed, so the reload queues it at once. Follow it with a
    // waited scan of the same root: it coalesces with the queued one or runs after it.
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    std::vector<ipc::RootInfo> roots;
    while (roots.empty() && std::chrono::steady_clock::now() < deadline) {
        auto s = ipc::from_json<ipc::StatusReply>(call_ok(ipc::method::kStatus));
        ASSERT_TRUE(s.ok());
        roots = s.value().roots;
    }
    ASSERT_EQ(roots.size(), 1u);
    EXPECT_EQ(roots[0].root, tree);
}

TEST_F(DaemonFixture, StopDuringAScanRecordsItCancelledAndClosesTheIndex) {
    Gate gate;
    DaemonOptions o = options();
    o.before_walk = [&](const ScanJob& job) {
        if (job.root() == tree) gate.pass();  // only the second scan is held
    };
    start(std::move(o));
    ASSERT_EQ(scan_and_wait(tree + "/dir0").state, ipc::ScanState::Done);
    call_ok(ipc::method::kScan, {{"paths", {tree}}});
    ASSERT_TRUE(gate.wait_arrived());
    daemon->request_stop();  // SIGTERM's path
    gate.open();
    runner.join();
    daemon.reset();

    storage::Database db;
    ASSERT_TRUE(storage::Database::open(dir / "index.db", storage::OpenMode::read_only, &db));
    std::vector<ipc::ScanInfo> scans;
    ASSERT_TRUE(list_scans(db, 0, &scans));
    ASSERT_EQ(scans.size(), 2u);
    EXPECT_EQ(scans[0].state, ipc::ScanState::Cancelled);
    EXPECT_EQ(scans[1].state, ipc::ScanState::Done);
}

}  // namespace
}  // namespace wsindex::daemon
