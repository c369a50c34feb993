// wsbench-load: many concurrent clients running mixed queries against a running wsindexd, every
// answer checked; one JSON line with latency percentiles per kind and the error count.
//
//   wsbench-load --make-probe DIR [--probe-files N]      create a probe tree (then index it)
//   wsbench-load --socket S --probe DIR [--clients 100] [--queries 100] [--seed 1]
//
// The probe tree's file names are unique in any index (a random token in each), so a find of
// one must answer exactly its path, and a du of the probe root must answer the total walked
// here. Run the load while the daemon scans something big (bench/load/load_during_scan.sh).
// Exit code: 0 when every answer was right, 1 when any was wrong or failed, 2 on usage errors.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>

#include "bench/load/load_run.hpp"

int main(int argc, char** argv) {
    CLI::App app{"Concurrent mixed queries against wsindexd, answers checked"};
    wsindex::bench::LoadSpec spec;
    std::string probe;
    std::string make_probe;
    int probe_files = 1000;
    long timeout_s = 60;
    app.add_option("--socket", spec.socket, "the daemon's socket");
    app.add_option("--probe", probe, "an indexed probe tree made with --make-probe");
    app.add_option("--make-probe", make_probe, "create a probe tree here and exit");
    app.add_option("--probe-files", probe_files, "files in a new probe tree")
        ->check(CLI::PositiveNumber);
    app.add_option("--clients", spec.clients, "concurrent clients")->check(CLI::PositiveNumber);
    app.add_option("--queries", spec.queries, "queries per client")->check(CLI::PositiveNumber);
    app.add_option("--seed", spec.seed, "seed of the query mix");
    app.add_option("--timeout", timeout_s, "seconds to wait for one reply")
        ->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);

    if (!make_probe.empty()) {
        const std::string token =
            std::to_string(::getpid()) + "x" + std::to_string(std::time(nullptr));
        const std::string error = wsindex::bench::make_probe_tree(make_probe, probe_files, token);
        if (!error.empty()) {
            std::cerr << "wsbench-load: " << error << "\n";
            return 1;
        }
        return 0;
    }
    if (spec.socket.empty() || probe.empty()) {
        std::cerr << "wsbench-load: --socket and --probe are required (or --make-probe)\n";
        return 2;
    }
    std::string error;
    spec.truth = wsindex::bench::read_probe_tree(probe, error);
    if (!error.empty()) {
        std::cerr << "wsbench-load: " << error << "\n";
        return 2;
    }
    spec.reply_timeout = std::chrono::seconds(timeout_s);
    const auto report = wsindex::bench::run_load(spec);
    std::cout << report.to_json(spec).dump() << std::endl;
    return report.errors() == 0 ? 0 : 1;
}
