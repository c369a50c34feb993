// Tests of ScanService::forget driven directly: its scans cancelled and dropped, the job run on
// the scan thread between scans, refusals, and a forget still pending when the service stops.
#include <gtest/gtest.h>

#include <filesystem>
#include <future>

#include "daemon/index_queries.hpp"
#include "daemon/scan_service.hpp"
#include "storage/database.hpp"
#include "tests/daemon/support/daemon_test_support.hpp"

namespace wsindex::daemon {
namespace {

using test::Gate;
using test::TempDir;
using namespace std::chrono_literals;

struct Fixture {
    TempDir dir;
    std::string tree = dir / "tree";
    std::string other = dir / "other";
    std::string db = dir / "index.db";
    std::size_t entries = 0;  // in the tree, root included

    Fixture() {
        std::filesystem::create_directories(tree);
        std::filesystem::create_directories(other);
        entries = test::make_tree(tree, 4, 20) + 1;
        test::make_tree(other, 2, 3);
    }

    std::unique_ptr<ScanService> open(ScanServiceOptions options = {}) {
        options.db_path = db;
        options.settings.workers = 2;
        std::unique_ptr<ScanService> service;
        const core::Status st = ScanService::open(std::move(options), &service);
        EXPECT_TRUE(st) << st.to_string();
        return service;
    }

    std::vector<std::string> roots_in_db() {
        storage::Database reader;
        EXPECT_TRUE(storage::Database::open(db, storage::OpenMode::read_only, &reader));
        std::vector<ipc::RootInfo> roots;
        EXPECT_TRUE(list_roots(reader, &roots));
        std::vector<std::string> out;
        for (const auto& r : roots) out.push_back(r.root);
        return out;
    }
};

std::shared_ptr<const ScanJob> enqueue_ok(ScanService& s, const std::string& root) {
    auto job = s.enqueue(root);
    EXPECT_TRUE(job.ok()) << (job.ok() ? "" : job.error().to_string());
    return job.ok() ? job.value() : nullptr;
}

// The outcome handed to a forget's callback, waited for with a deadline.
struct Answer {
    std::promise<ipc::Result<ForgetOutcome>> promise;
    std::future<ipc::Result<ForgetOutcome>> future = promise.get_future();
    ForgetDone callback() {
        return [this](ipc::Result<ForgetOutcome> r) { promise.set_value(std::move(r)); };
    }
    std::optional<ipc::Result<ForgetOutcome>> get() {
        if (future.wait_for(60s) != std::future_status::ready) return std::nullopt;
        return future.get();
    }
};

TEST(ScanServiceForget, CancelsItsScansAndRunsBetweenScans) {
    Fixture f;
    Gate gate;
    std::atomic<bool> hold{false};
    ScanServiceOptions options;
    options.before_walk = [&](const ScanJob& job) {
        if (hold && job.root() == f.tree) gate.pass();
    };
    auto service = f.open(options);
    enqueue_ok(*service, f.tree);
    enqueue_ok(*service, f.other);
    ASSERT_TRUE(service->wait_idle(60s));
    ASSERT_EQ(f.roots_in_db(), (std::vector<std::string>{f.other, f.tree}));

    hold = true;
    auto rescan = enqueue_ok(*service, f.tree);
    ASSERT_TRUE(gate.wait_arrived());  // running, held before its walk
    auto subtree = enqueue_ok(*service, f.tree + "/dir0");
    auto unrelated = enqueue_ok(*service, f.other);
    Answer answer;
    service->forget(f.tree, ForgetOrigin::Vanished, answer.callback());
    // At once: the queued scan below it is dropped, the other root's stays queued.
    EXPECT_EQ(subtree->state(), ipc::ScanState::Cancelled);
    EXPECT_EQ(unrelated->state(), ipc::ScanState::Queued);
    gate.open();

    auto result = answer.get();
    ASSERT_TRUE(result.has_value()) << "no answer";
    ASSERT_TRUE(result->ok()) << result->error().to_string();
    EXPECT_EQ(result->value().root, f.tree);
    EXPECT_EQ(result->value().cancelled, 2u);
    EXPECT_EQ(result->value().report.entries, f.entries);
    ASSERT_TRUE(service->wait_idle(60s));
    EXPECT_EQ(rescan->state(), ipc::ScanState::Cancelled);
    EXPECT_EQ(unrelated->state(), ipc::ScanState::Done);
    EXPECT_EQ(f.roots_in_db(), (std::vector<std::string>{f.other}));
}

TEST(ScanServiceForget, RefusesConfiguredRootsAndPathsInsideARoot) {
    Fixture f;
    ScanServiceOptions options;
    options.settings.roots = {ScheduledRoot{f.tree, {}, false}};
    auto service = f.open(options);
    ASSERT_TRUE(service->wait_idle(60s));  // the configured root's first scan
    enqueue_ok(*service, f.other);
    ASSERT_TRUE(service->wait_idle(60s));
    EXPECT_TRUE(service->is_configured_root(f.tree));
    EXPECT_FALSE(service->is_configured_root(f.other));

    Answer configured;
    service->forget(f.tree, ForgetOrigin::Vanished, configured.callback());
    auto result = configured.get();
    ASSERT_TRUE(result.has_value());
    ASSERT_FALSE(result->ok());
    EXPECT_EQ(result->error().kind, ipc::ErrorKind::InvalidParameter);
    EXPECT_NE(result->error().message.find("configured root"), std::string::npos);

    Answer inside;
    service->forget(f.other + "/dir0", ForgetOrigin::Client, inside.callback());
    result = inside.get();
    ASSERT_TRUE(result.has_value());
    ASSERT_FALSE(result->ok());
    EXPECT_EQ(result->error().kind, ipc::ErrorKind::NotIndexed);
    EXPECT_NE(result->error().message.find("is inside indexed root " + f.other), std::string::npos)
        << result->error().message;

    EXPECT_EQ(f.roots_in_db(), (std::vector<std::string>{f.other, f.tree}));
}

TEST(ScanServiceForget, APendingForgetIsAnsweredWhenTheServiceStops) {
    Fixture f;
    Gate gate;
    std::atomic<bool> hold{false};
    ScanServiceOptions options;
    options.before_walk = [&](const ScanJob&) {
        if (hold) gate.pass();
    };
    auto service = f.open(options);
    enqueue_ok(*service, f.tree);
    ASSERT_TRUE(service->wait_idle(60s));
    hold = true;
    enqueue_ok(*service, f.other);  // another root: the forget waits for it
    ASSERT_TRUE(gate.wait_arrived());
    Answer answer;
    service->forget(f.tree, ForgetOrigin::Client, answer.callback());
    service->request_stop();
    auto result = answer.get();
    ASSERT_TRUE(result.has_value());
    ASSERT_FALSE(result->ok());
    EXPECT_EQ(result->error().kind, ipc::ErrorKind::ShuttingDown);
    gate.open();
    service->stop();
    EXPECT_EQ(f.roots_in_db(), (std::vector<std::string>{f.tree}));
}

}  // namespace
}  // namespace wsindex::daemon
