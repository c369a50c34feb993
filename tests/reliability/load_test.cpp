// Load: concurrent clients running mixed queries (find, du, status) during a scan, every answer
// checked — the engine of bench/load/wsbench-load at CI size (10 clients x 10 queries).
#include <unistd.h>

#include <cstdio>

#include "bench/load/load_run.hpp"
#include "tests/reliability/support/fixture.hpp"

namespace wsindex::reliability::test {
namespace {

using cli::test::ScratchDir;

class LoadDuringScan : public DaemonFixture {};

TEST_F(LoadDuringScan, EveryAnswerIsRight) {
    const std::string probe = scratch_ / "probe";
    const std::string made = bench::make_probe_tree(probe, 300, std::to_string(::getpid()));
    ASSERT_TRUE(made.empty()) << made;
    scan(probe);
    std::string error;
    bench::LoadSpec spec;
    spec.truth = bench::read_probe_tree(probe, error);
    ASSERT_TRUE(error.empty()) << error;
    ASSERT_EQ(spec.truth.probes.size(), 300u);
    // The daemon's du agrees with the walk before any load (the truth itself is right).
    const auto du = json_of({"du", probe});
    ASSERT_EQ(du["entries"][0].value("size", std::uint64_t{0}), spec.truth.du_size) << du.dump();

    ScratchDir big_dir("load", cli::test::memory_backed_base());
    const std::string big = big_dir / "tree";
    cli::test::make_big_tree(big, 20'000);
    start_scan(big);
    spec.socket = daemon_->socket();
    spec.clients = 10;
    spec.queries = 10;
    spec.seed = 7;
    const auto report = bench::run_load(spec);
    const auto status = call(ipc::method::kStatus, nlohmann::json::object());
    const bool still_scanning = status.ok() && status.value()["running"].is_object();
    const auto json = report.to_json(spec);
    std::printf("load: %s (scan still running at the end: %s)\n", json.dump().c_str(),
                still_scanning ? "yes" : "no");
    EXPECT_EQ(report.errors(), 0u) << json.dump();
    EXPECT_EQ(report.find.count + report.du.count + report.status.count, 100u);
    EXPECT_GT(report.find.count, 0u);
    EXPECT_GT(report.du.count, 0u);
    EXPECT_GT(report.status.count, 0u);
}

}  // namespace
}  // namespace wsindex::reliability::test
