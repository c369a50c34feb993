// wsbench-primes: counts primes in [lo, hi) with one scheduler and prints a JSON line per run.
//
// File map (this one file):
//   count_unit()   the unit of work: count_primes over a range, done F times on the slow worker
//   run_seq()      sequential baseline on the calling thread (worker 0)
//   run_pool()     our WorkerPool: a PrimeRange task bisects down to --threshold, leaves emit
//                  their count, the consumer (this thread) sums the batches
//   run_tbb()      the peer: oneTBB task_group doing the same bisection (both halves via
//                  tg.run), in a task_arena of --workers threads
//   run_range()    our RangeExecutor, stealing or static: each number is one index, chunking is
//                  the executor's; per-worker partial sums
//   main()         CLI11 options, the repetitions, one JSON object per repetition on stdout
//
// Every scheduler's threads are created once, before the timed repetitions, so `seconds` is the
// run itself. --slow-worker F makes worker 0 do each unit of work F times (a stand-in for a slow
// core): the pool's worker 0, TBB's thread with this_task_arena::current_thread_index() == 0, the
// range executor's worker 0 (the calling thread), and for seq the only thread there is.
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/deque.hpp"
#include "core/primes.hpp"
#include "core/range_executor.hpp"
#include "core/status.hpp"
#include "core/worker_pool.hpp"

namespace {

using namespace wsindex::core;
using Clock = std::chrono::steady_clock;

struct Config {
    std::uint64_t lo = 0;
    std::uint64_t hi = 2'000'000;
    unsigned workers = 0;
    std::uint64_t threshold = 1000;
    std::string scheduler = "pool";
    unsigned repeat = 1;
    unsigned slow_worker = 1;
    // Pool knobs (the seed's sweep parameters).
    std::size_t deque_capacity = 256;
    std::size_t result_batch = 1024;
    std::size_t queued_batches = 0;
    std::size_t steal_batch_max = 32;
    // Range executor knob.
    std::size_t chunk_divisor = 16;
};

// What one repetition measured, plus scheduler-specific counters for the JSON line.
struct Outcome {
    std::uint64_t count = 0;
    double seconds = 0;
    std::string extra;  // ",\"key\":value..." appended to the JSON object
    std::string error;  // non-empty: the run failed
};

// Keeps the compiler from proving that repeated calls with the same arguments are redundant.
inline std::uint64_t opaque(std::uint64_t v) {
    asm volatile("" : "+r"(v));
    return v;
}

std::uint64_t count_unit(std::uint64_t lo, std::uint64_t hi, unsigned times) {
    std::uint64_t count = 0;
    for (unsigned t = 0; t < times; ++t) count = count_primes(opaque(lo), hi);
    return count;
}

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Repeats `once` cfg.repeat times and prints each outcome as a JSON line; returns false on error.
bool report(const Config& cfg, unsigned workers, const std::function<Outcome()>& once) {
    bool ok = true;
    for (unsigned rep = 0; rep < cfg.repeat; ++rep) {
        const Outcome out = once();
        std::printf(
            "{\"scheduler\":\"%s\",\"workers\":%u,\"threshold\":%llu,\"lo\":%llu,\"hi\":%llu,"
            "\"count\":%llu,\"seconds\":%.6f,\"rep\":%u,\"slow_worker\":%u%s%s%s%s}\n",
            cfg.scheduler.c_str(), workers, static_cast<unsigned long long>(cfg.threshold),
            static_cast<unsigned long long>(cfg.lo), static_cast<unsigned long long>(cfg.hi),
            static_cast<unsigned long long>(out.count), out.seconds, rep, cfg.slow_worker,
            out.extra.c_str(), out.error.empty() ? "" : ",\"error\":\"", out.error.c_str(),
            out.error.empty() ? "" : "\"");
        std::fflush(stdout);
        if (!out.error.empty()) ok = false;
    }
    return ok;
}

bool run_seq(const Config& cfg) {
    return report(cfg, 1, [&] {
        Outcome out;
        const Clock::time_point start = Clock::now();
        out.count = count_unit(cfg.lo, cfg.hi, cfg.slow_worker);
        out.seconds = seconds_since(start);
        return out;
    });
}

bool run_pool(const Config& cfg) {
    using Pool = WorkerPool<PrimeRange, std::uint64_t>;
    PoolOptions options;
    options.workers = cfg.workers;
    options.deque_capacity = cfg.deque_capacity;
    options.result_batch = cfg.result_batch;
    options.queued_batches = cfg.queued_batches;
    options.steal_batch_max = cfg.steal_batch_max;
    const std::uint64_t threshold = cfg.threshold;
    const unsigned slow = cfg.slow_worker;
    Pool pool(options, [threshold, slow](PrimeRange& range, Pool::Context& ctx) -> Status {
        if (range.is_leaf(threshold)) {
            ctx.emit(count_unit(range.lo, range.hi, ctx.worker_index() == 0 ? slow : 1));
        } else {
            const auto [left, right] = range.split();
            ctx.spawn(left);
            ctx.spawn(right);
        }
        return Status::ok();
    });
    return report(cfg, pool.size(), [&] {
        Outcome out;
        const std::vector<PoolWorkerStats> before = pool.stats();
        const Clock::time_point start = Clock::now();
        pool.submit(PrimeRange{cfg.lo, cfg.hi});
        std::uint64_t total = 0;
        std::uint64_t batches = 0;
        const Status status = pool.consume_until_done([&](std::span<std::uint64_t> batch) {
            for (std::uint64_t c : batch) total += c;
            ++batches;
            return Status::ok();
        });
        out.seconds = seconds_since(start);
        out.count = total;
        if (!status.is_ok()) out.error = status.to_string();
        // Counters are cumulative since construction: report this repetition's share.
        const std::vector<PoolWorkerStats> after = pool.stats();
        std::uint64_t tasks = 0, steals = 0, stolen = 0, parks = 0, parked_ns = 0;
        for (std::size_t w = 0; w < after.size(); ++w) {
            tasks += after[w].tasks_run - before[w].tasks_run;
            steals += after[w].steals - before[w].steals;
            stolen += after[w].items_stolen - before[w].items_stolen;
            parks += after[w].parks - before[w].parks;
            parked_ns += after[w].parked_ns - before[w].parked_ns;
        }
        out.extra =
            ",\"deque_capacity\":" + std::to_string(cfg.deque_capacity) +
            ",\"result_batch\":" + std::to_string(cfg.result_batch) +
            ",\"tasks\":" + std::to_string(tasks) + ",\"steals\":" + std::to_string(steals) +
            ",\"items_stolen\":" + std::to_string(stolen) + ",\"parks\":" + std::to_string(parks) +
            ",\"parked_ms\":" + std::to_string(static_cast<double>(parked_ns) / 1e6) +
            ",\"batches\":" + std::to_string(batches);
        return out;
    });
}

// The same bisection as run_pool, in oneTBB's idiom: a task_group per internal node.
std::uint64_t tbb_count(PrimeRange range, std::uint64_t threshold, unsigned slow) {
    if (range.is_leaf(threshold)) {
        const bool slow_here = tbb::this_task_arena::current_thread_index() == 0;
        return count_unit(range.lo, range.hi, slow_here ? slow : 1);
    }
    const auto [left, right] = range.split();
    std::uint64_t left_count = 0;
    std::uint64_t right_count = 0;
    tbb::task_group tg;
    tg.run([&, left = left] { left_count = tbb_count(left, threshold, slow); });
    tg.run([&, right = right] { right_count = tbb_count(right, threshold, slow); });
    tg.wait();
    return left_count + right_count;
}

bool run_tbb(const Config& cfg) {
    const unsigned workers = cfg.workers;
    // Without this TBB caps every arena at the machine's concurrency, and a sweep of pool sizes
    // beyond the core count would compare W of our threads with fewer of TBB's.
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, workers);
    tbb::task_arena arena(static_cast<int>(workers));
    arena.initialize();
    return report(cfg, workers, [&] {
        Outcome out;
        const Clock::time_point start = Clock::now();
        arena.execute([&] {
            out.count = tbb_count(PrimeRange{cfg.lo, cfg.hi}, cfg.threshold, cfg.slow_worker);
        });
        out.seconds = seconds_since(start);
        return out;
    });
}

bool run_range(const Config& cfg, RangeSchedule schedule) {
    RangeOptions options;
    options.workers = cfg.workers;
    options.schedule = schedule;
    options.chunk_divisor = cfg.chunk_divisor;
    RangeExecutor ex(options);
    struct alignas(kCacheLine) Partial {
        std::uint64_t count = 0;
    };
    std::vector<Partial> partial(ex.size());
    const std::uint64_t lo = cfg.lo;
    const unsigned slow = cfg.slow_worker;
    return report(cfg, ex.size(), [&] {
        Outcome out;
        for (Partial& p : partial) p.count = 0;
        const std::size_t n = cfg.hi > cfg.lo ? static_cast<std::size_t>(cfg.hi - cfg.lo) : 0;
        const Clock::time_point start = Clock::now();
        const Status status = ex.parallel_for(n, [&](std::size_t b, std::size_t e, unsigned w) {
            partial[w].count += count_unit(lo + b, lo + e, w == 0 ? slow : 1);
        });
        out.seconds = seconds_since(start);
        for (const Partial& p : partial) out.count += p.count;
        if (!status.is_ok()) out.error = status.to_string();
        std::uint64_t chunks = 0, steals = 0, stolen = 0, idle_ns = 0;
        std::string items_per_worker;
        for (const RangeWorkerStats& s : ex.stats()) {
            chunks += s.chunks;
            steals += s.steals;
            stolen += s.items_stolen;
            idle_ns += s.idle_ns;
            items_per_worker += (items_per_worker.empty() ? "" : ",") + std::to_string(s.items);
        }
        out.extra = ",\"chunks\":" + std::to_string(chunks) +
                    ",\"steals\":" + std::to_string(steals) +
                    ",\"items_stolen\":" + std::to_string(stolen) +
                    ",\"idle_ms\":" + std::to_string(static_cast<double>(idle_ns) / 1e6) +
                    ",\"items_per_worker\":[" + items_per_worker + "]";
        return out;
    });
}

}  // namespace

int main(int argc, char** argv) {
    Config cfg;
    CLI::App app{"Counts primes in [lo, hi) with one scheduler; prints one JSON line per run."};
    app.add_option("--lo", cfg.lo, "first number (inclusive)");
    app.add_option("--hi", cfg.hi, "last number (exclusive)");
    app.add_option("--workers", cfg.workers, "threads (0 = hardware concurrency)");
    app.add_option("--threshold", cfg.threshold,
                   "leaf size of the bisection (pool, tbb); unused by seq, range, static");
    app.add_option("--scheduler", cfg.scheduler, "seq | pool | tbb | range | static")
        ->check(CLI::IsMember({"seq", "pool", "tbb", "range", "static"}));
    app.add_option("--repeat", cfg.repeat, "repetitions, one JSON line each")
        ->check(CLI::PositiveNumber);
    app.add_option("--slow-worker", cfg.slow_worker,
                   "worker 0 does each unit of work this many times (1 = no slow worker)")
        ->check(CLI::PositiveNumber);
    app.add_option("--deque-capacity", cfg.deque_capacity, "pool: initial deque capacity");
    app.add_option("--result-batch", cfg.result_batch, "pool: results per batch");
    app.add_option("--queued-batches", cfg.queued_batches,
                   "pool: bound of the batch queue (0 = 4 per worker)");
    app.add_option("--steal-batch-max", cfg.steal_batch_max, "pool: most items per batch steal");
    app.add_option("--chunk-divisor", cfg.chunk_divisor,
                   "range/static: a chunk is 1/N of what the worker holds");
    CLI11_PARSE(app, argc, argv);

    if (cfg.workers == 0) cfg.workers = std::max(1u, std::thread::hardware_concurrency());
    bool ok = false;
    if (cfg.scheduler == "seq") {
        ok = run_seq(cfg);
    } else if (cfg.scheduler == "pool") {
        ok = run_pool(cfg);
    } else if (cfg.scheduler == "tbb") {
        ok = run_tbb(cfg);
    } else if (cfg.scheduler == "range") {
        ok = run_range(cfg, RangeSchedule::Stealing);
    } else {
        ok = run_range(cfg, RangeSchedule::Static);
    }
    return ok ? 0 : 1;
}
