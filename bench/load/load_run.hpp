// The load generator's engine: N client threads, each on its own connection, each running M
// mixed queries (find, du, status) and checking every answer against what is known to be true.
// Shared by wsbench-load (bench/load/main.cpp) and the small CI test in tests/reliability.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace wsindex::bench {

// A name that occurs exactly once in the whole index, and the one path find must answer.
struct Probe {
    std::string name;
    std::string path;
};

// What the checks compare with: the probes, and a completed root with its `du -sb` total.
struct Truth {
    std::vector<Probe> probes;
    std::string du_root;
    std::uint64_t du_size = 0;
};

struct LoadSpec {
    std::string socket;
    int clients = 100;
    int queries = 100;       // per client
    std::uint64_t seed = 1;  // which query each step runs
    std::chrono::milliseconds reply_timeout{std::chrono::seconds(60)};
    Truth truth;
};

struct KindStats {
    std::size_t count = 0;
    std::size_t errors = 0;
    std::vector<double> latencies_ms;  // successful or not, one per query
};

struct LoadReport {
    KindStats find;
    KindStats du;
    KindStats status;
    std::size_t connect_errors = 0;
    std::vector<std::string> error_samples;  // the first few, for the report
    double wall_seconds = 0;

    [[nodiscard]] std::size_t errors() const {
        return find.errors + du.errors + status.errors + connect_errors;
    }
    // {"clients":..,"queries":..,"errors":..,"find":{"n":..,"errors":..,"p50_ms":..,...},...}
    [[nodiscard]] nlohmann::json to_json(const LoadSpec& spec) const;
};

// Creates DIR (must not exist) holding `files` files in `files / 100 + 1` subdirectories, each
// named "wsload-TOKEN-NNNNNN.probe" (fixed width: no name is a substring of another), sizes
// 0..999 bytes. TOKEN makes the names unique in any index. Returns an error text, "" on success.
std::string make_probe_tree(const std::string& dir, int files, const std::string& token);

// Walks an indexed probe tree (made by make_probe_tree) and returns its probes and its total
// (apparent bytes of every entry, the root included, hard links once: what du -sb prints).
// Error text in `error` on failure.
Truth read_probe_tree(const std::string& dir, std::string& error);

LoadReport run_load(const LoadSpec& spec);

}  // namespace wsindex::bench
