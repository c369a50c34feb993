// wsbench-deque: micro-benchmarks of ChaseLevDeque (its owner and thief handles) — push, pop,
// push+pop, steal, batch steal, growth, and steals contended by 1..16 thief threads while the owner
// pushes and pops.
//
// Targets (issue 2): push+pop under 10 ns, uncontended steal under 20 ns. The seed's Go table for
// comparison: 46 ns push, 31 ns pop, 25 ns steal.
//
// Items are 64-bit integers (the pool stores node pointers: the same size, the same atomics).
// Benchmarks that would grow the deque without bound drain or refill it every 64k iterations with
// the timer paused, so push and pop are measured on a buffer that never grows; growth has its own
// benchmark. Run on a quiet machine; on a shared one the contended numbers mostly measure the
// scheduler of the operating system (16 spinning thieves on 2 cores).
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "core/deque.hpp"

namespace {

using wsindex::core::DequeOwner;
using wsindex::core::kCacheLine;
using wsindex::core::StealStatus;
using Item = std::uint64_t;

constexpr std::size_t kBlock = 1 << 16;  // items between drains/refills (the timer is paused)

void BM_Push(benchmark::State& state) {
    DequeOwner<Item> dq(kBlock);
    Item next = 0;
    for (auto _ : state) {
        dq.push(next++);
        if (next % kBlock == 0) {
            state.PauseTiming();
            while (dq.pop()) {
            }
            state.ResumeTiming();
        }
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Push);

void BM_Pop(benchmark::State& state) {
    DequeOwner<Item> dq(kBlock);
    const auto thief = dq.stealer();
    std::size_t left = 0;
    for (auto _ : state) {
        if (left == 0) {
            state.PauseTiming();
            for (Item i = 0; i < kBlock; ++i) dq.push(i);
            left = kBlock;
            state.ResumeTiming();
        }
        benchmark::DoNotOptimize(dq.pop());
        --left;
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Pop);

// The owner's common case: push a child, pop it back (the pop takes the CAS path: last item).
void BM_PushPop(benchmark::State& state) {
    DequeOwner<Item> dq(256);
    Item next = 0;
    for (auto _ : state) {
        dq.push(next++);
        benchmark::DoNotOptimize(dq.pop());
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PushPop);

// Push+pop with other items below, so the pop takes the CAS-free path (more than one item left).
void BM_PushPopDeep(benchmark::State& state) {
    DequeOwner<Item> dq(256);
    for (Item i = 0; i < 16; ++i) dq.push(i);
    Item next = 0;
    for (auto _ : state) {
        dq.push(next++);
        benchmark::DoNotOptimize(dq.pop());
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PushPopDeep);

// Pushes range(0) items into a deque of initial capacity 2: every doubling and retired buffer.
void BM_PushWithGrowth(benchmark::State& state) {
    const auto n = static_cast<Item>(state.range(0));
    for (auto _ : state) {
        DequeOwner<Item> dq(2);
        for (Item i = 0; i < n; ++i) dq.push(i);
        benchmark::DoNotOptimize(dq.size_estimate());
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_PushWithGrowth)->Arg(1 << 10)->Arg(1 << 16);

// One thread stealing with no owner activity: the cost of the protocol itself (two fences' worth
// of ordering and one CAS).
void BM_StealUncontended(benchmark::State& state) {
    DequeOwner<Item> dq(kBlock);
    const auto thief = dq.stealer();
    std::size_t left = 0;
    for (auto _ : state) {
        if (left == 0) {
            state.PauseTiming();
            for (Item i = 0; i < kBlock; ++i) dq.push(i);
            left = kBlock;
            state.ResumeTiming();
        }
        benchmark::DoNotOptimize(thief.steal());
        --left;
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StealUncontended);

void BM_StealEmpty(benchmark::State& state) {
    DequeOwner<Item> dq(256);
    const auto thief = dq.stealer();
    for (auto _ : state) benchmark::DoNotOptimize(thief.steal());
}
BENCHMARK(BM_StealEmpty);

// steal_batch(into, range(0)) from a well-stocked victim: items/s is the number to read (one CAS
// per item by design, plus a push into the thief's deque).
void BM_StealBatch(benchmark::State& state) {
    const auto max_items = static_cast<std::size_t>(state.range(0));
    DequeOwner<Item> victim(kBlock);
    DequeOwner<Item> into(kBlock);
    const auto thief = victim.stealer();
    std::int64_t items = 0;
    for (auto _ : state) {
        if (victim.size_estimate() < 2 * max_items) {
            state.PauseTiming();
            while (into.pop()) {
            }
            while (victim.pop()) {
            }
            for (Item i = 0; i < kBlock; ++i) victim.push(i);
            state.ResumeTiming();
        }
        const auto stolen = thief.steal_batch(into, max_items);
        items += static_cast<std::int64_t>(stolen.count);
    }
    state.SetItemsProcessed(items);
    state.counters["items_per_batch"] =
        benchmark::Counter(static_cast<double>(items) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_StealBatch)->Arg(8)->Arg(32)->Arg(128);

// Per-thief counters on their own cache lines.
struct alignas(kCacheLine) ThiefCounters {
    std::atomic<std::uint64_t> items{0};
    std::atomic<std::uint64_t> retries{0};
    std::atomic<std::uint64_t> empties{0};
};

// The owner (the benchmark thread) pushes one item per iteration and pops one whenever more than
// kBacklog are queued, so thieves always find something near the top while the owner works the
// bottom; range(0) thieves steal (Batch: steal_batch of up to 32) until told to stop. Reported:
// owner time per iteration, and steals, retries and empty results per second over all thieves.
template <bool Batch>
void BM_ContendedSteal(benchmark::State& state) {
    constexpr std::size_t kBacklog = 64;
    const auto thieves = static_cast<unsigned>(state.range(0));
    DequeOwner<Item> dq(256);
    const auto thief = dq.stealer();
    std::atomic<bool> stop{false};
    std::unique_ptr<ThiefCounters[]> counters(new ThiefCounters[thieves]);
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < thieves; ++t) {
        threads.emplace_back([&, t] {
            DequeOwner<Item> mine(256);
            std::uint64_t items = 0;
            std::uint64_t retries = 0;
            std::uint64_t empties = 0;
            while (!stop.load(std::memory_order_relaxed)) {
                const auto stolen = Batch ? thief.steal_batch(mine, 32) : thief.steal();
                switch (stolen.status) {
                    case StealStatus::Success:
                        items += stolen.count;
                        break;
                    case StealStatus::Retry:
                        ++retries;
                        break;
                    case StealStatus::Empty:
                        ++empties;
                        break;
                }
                while (mine.pop()) {
                }
            }
            counters[t].items.store(items, std::memory_order_relaxed);
            counters[t].retries.store(retries, std::memory_order_relaxed);
            counters[t].empties.store(empties, std::memory_order_relaxed);
        });
    }

    Item pushed = 0;
    std::uint64_t popped = 0;
    for (auto _ : state) {
        dq.push(pushed++);
        if (dq.size_estimate() > kBacklog && dq.pop()) ++popped;
    }
    stop.store(true, std::memory_order_relaxed);
    for (std::thread& t : threads) t.join();
    while (dq.pop()) ++popped;

    std::uint64_t stolen = 0;
    std::uint64_t retries = 0;
    std::uint64_t empties = 0;
    for (unsigned t = 0; t < thieves; ++t) {
        stolen += counters[t].items.load(std::memory_order_relaxed);
        retries += counters[t].retries.load(std::memory_order_relaxed);
        empties += counters[t].empties.load(std::memory_order_relaxed);
    }
    // Every item pushed was either popped by the owner or stolen, exactly once in total.
    if (stolen + popped != pushed) state.SkipWithError("items lost or duplicated");
    state.counters["stolen"] =
        benchmark::Counter(static_cast<double>(stolen), benchmark::Counter::kIsRate);
    state.counters["retries"] =
        benchmark::Counter(static_cast<double>(retries), benchmark::Counter::kIsRate);
    state.counters["empties"] =
        benchmark::Counter(static_cast<double>(empties), benchmark::Counter::kIsRate);
    state.counters["stolen_share"] =
        benchmark::Counter(static_cast<double>(stolen) / static_cast<double>(pushed ? pushed : 1));
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ContendedSteal<false>)
    ->Name("BM_ContendedSteal")
    ->ArgName("thieves")
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->Arg(16)
    ->UseRealTime();
BENCHMARK(BM_ContendedSteal<true>)
    ->Name("BM_ContendedStealBatch")
    ->ArgName("thieves")
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->Arg(16)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
