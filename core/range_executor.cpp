// RangeExecutor: the range-stealing and static parallel_for (design note in range_executor.hpp).
#include "core/range_executor.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <new>
#include <string>
#include <system_error>

#include "core/deque.hpp"  // kCacheLine

namespace wsindex::core {

namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t elapsed_ns(Clock::time_point from, Clock::time_point to) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count();
    return ns > 0 ? static_cast<std::uint64_t>(ns) : 0;
}

// The executor whose body this thread is running, to turn a re-entrant call into an error
// instead of a deadlock (the call mutex is held and the caller waits for this very worker).
thread_local const RangeExecutor* t_running_executor = nullptr;

}  // namespace

std::string_view to_string(RangeSchedule schedule) {
    switch (schedule) {
        case RangeSchedule::Stealing:
            return "stealing";
        case RangeSchedule::Static:
            return "static";
    }
    return "unknown";
}

// One worker's range. begin_/end_ are guarded by mu_; the owner takes from the front, a thief
// from the back (see "Locking" in the design note).
struct alignas(kCacheLine) RangeExecutor::Share {
    std::mutex mu_;
    std::size_t begin_ = 0;  // guarded by mu_
    std::size_t end_ = 0;    // guarded by mu_
    // end_ - begin_, stored (relaxed) under mu_ after every change; read by thieves without mu_
    // as an estimate to choose a victim.
    std::atomic<std::size_t> remaining_{0};
    // The CPU the owner last took a chunk on (sched_getcpu), -1 when unknown. Relaxed: a victim
    // tie-break only. Written only when the topology distinguishes CPUs.
    std::atomic<int> last_cpu_{-1};

    // Caller of parallel_for only, while no worker runs.
    void reset(std::size_t begin, std::size_t end) {
        std::lock_guard lock(mu_);
        begin_ = begin;
        end_ = end;
        remaining_.store(end - begin, std::memory_order_relaxed);
        last_cpu_.store(-1, std::memory_order_relaxed);
    }
};

// Owner-only per-worker state, on its own cache lines so counters do not false-share.
struct alignas(kCacheLine) RangeExecutor::Worker {
    RangeWorkerStats stats;
};

RangeExecutor::RangeExecutor(RangeOptions options) : options_(std::move(options)) {
    worker_count_ = options_.workers != 0 ? options_.workers : std::thread::hardware_concurrency();
    worker_count_ = std::max(worker_count_, 1u);
    options_.workers = worker_count_;
    options_.chunk_divisor = std::max<std::size_t>(options_.chunk_divisor, 1);
    options_.min_chunk = std::max<std::size_t>(options_.min_chunk, 1);
    if (options_.use_topology) {
        topology_ = options_.topology ? *options_.topology : CpuTopology::read();
        tiebreak_by_class_ = topology_.heterogeneous();
    }
    shares_ = std::make_unique<Share[]>(worker_count_);
    workers_ = std::make_unique<Worker[]>(worker_count_);

    // Helpers run on_worker_start and then report in; the constructor waits for all of them so
    // that a hook's exception surfaces here, on the constructing thread, not later in a worker.
    // (A member counter under park_mu_ rather than a local std::latch: the last helper may still
    // be inside count_down() when the constructor returns and the latch dies.)
    hook_errors_.resize(worker_count_);
    try {
        helpers_.reserve(worker_count_ - 1);
        for (unsigned i = 1; i < worker_count_; ++i) {
            helpers_.emplace_back([this, i] {
                if (options_.on_worker_start) {
                    try {
                        options_.on_worker_start(i);
                    } catch (...) {
                        hook_errors_[i] = std::current_exception();  // each helper its own slot
                    }
                }
                {
                    std::lock_guard lock(park_mu_);
                    ++started_;
                }
                done_cv_.notify_all();
                helper_main(i);
            });
        }
    } catch (...) {
        // Thread creation failed: stop the helpers that did start, then report it.
        stop_helpers();
        throw;
    }
    {
        std::unique_lock lock(park_mu_);
        done_cv_.wait(lock, [&] { return started_ == helpers_.size(); });
    }
    for (const std::exception_ptr& error : hook_errors_) {
        if (error) {
            stop_helpers();
            std::rethrow_exception(error);
        }
    }
    hook_errors_.clear();
}

RangeExecutor::~RangeExecutor() { stop_helpers(); }

void RangeExecutor::stop_helpers() {
    {
        std::lock_guard lock(park_mu_);
        shutdown_ = true;
    }
    wake_cv_.notify_all();
    for (std::thread& t : helpers_) {
        if (t.joinable()) t.join();
    }
    helpers_.clear();
}

void RangeExecutor::helper_main(unsigned index) {
    t_running_executor = this;  // a helper only ever runs this executor's bodies
    std::uint64_t seen = 0;
    for (;;) {
        {
            std::unique_lock lock(park_mu_);
            wake_cv_.wait(lock, [&] { return shutdown_ || generation_ != seen; });
            if (shutdown_) return;
            seen = generation_;
        }
        run_worker(index);
        {
            std::lock_guard lock(park_mu_);
            if (--running_ == 0) done_cv_.notify_one();
        }
    }
}

Status RangeExecutor::parallel_for(std::size_t n, const Body& body, std::stop_token stop) {
    if (t_running_executor == this) {
        return {std::make_error_code(std::errc::resource_deadlock_would_occur),
                "RangeExecutor::parallel_for called from inside its own body"};
    }
    std::lock_guard call_lock(call_mu_);

    // Set up the call while every helper is parked (the previous call waited for all of them).
    body_ = &body;
    stop_ = std::move(stop);
    cancel_.store(false, std::memory_order_relaxed);
    {
        std::lock_guard lock(error_mu_);
        error_ = nullptr;
    }
    const std::size_t w = worker_count_;
    const std::size_t base = n / w;
    const std::size_t extra = n % w;  // the first `extra` workers get one index more
    for (std::size_t i = 0; i < w; ++i) {
        const std::size_t begin = i * base + std::min(i, extra);
        shares_[i].reset(begin, begin + base + (i < extra ? 1 : 0));
        workers_[i].stats = RangeWorkerStats{};
    }

    const Clock::time_point start = Clock::now();
    if (w > 1) {
        {
            std::lock_guard lock(park_mu_);
            running_ = worker_count_ - 1;
            ++generation_;
        }
        wake_cv_.notify_all();
    }

    // Save and restore: the caller may itself be a worker of another executor.
    const RangeExecutor* const outer = t_running_executor;
    t_running_executor = this;
    run_worker(0);
    t_running_executor = outer;

    if (w > 1) {
        // The helpers' writes (stats, error_) happen before their decrement under park_mu_.
        std::unique_lock lock(park_mu_);
        done_cv_.wait(lock, [&] { return running_ == 0; });
    }
    const std::uint64_t wall_ns = elapsed_ns(start, Clock::now());

    std::uint64_t items = 0;
    for (std::size_t i = 0; i < w; ++i) {
        RangeWorkerStats& s = workers_[i].stats;
        s.idle_ns = wall_ns > s.busy_ns ? wall_ns - s.busy_ns : 0;
        items += s.items;
    }
    body_ = nullptr;
    stop_ = {};

    std::exception_ptr error;
    {
        std::lock_guard lock(error_mu_);
        error = error_;
    }
    if (error) {
        try {
            std::rethrow_exception(error);
        } catch (const std::bad_alloc&) {
            return {std::make_error_code(std::errc::not_enough_memory),
                    "parallel_for body threw std::bad_alloc"};
        } catch (const std::exception& e) {
            return {std::make_error_code(std::errc::state_not_recoverable),
                    std::string("parallel_for body threw: ") + e.what()};
        } catch (...) {
            return {std::make_error_code(std::errc::state_not_recoverable),
                    "parallel_for body threw a non-standard exception"};
        }
    }
    // A stop that came after the last chunk cancelled nothing: count, don't guess.
    if (items != n) {
        return {std::make_error_code(std::errc::operation_canceled), "parallel_for cancelled"};
    }
    return Status::ok();
}

void RangeExecutor::run_worker(unsigned index) {
    for (;;) {
        if (cancelled()) return;
        std::size_t begin = 0;
        std::size_t end = 0;
        if (take_front(index, begin, end)) {
            run_chunk(index, begin, end);
            continue;
        }
        if (options_.schedule == RangeSchedule::Static) return;
        // Our range is empty: refill it from a victim, or return when every range looked empty
        // (see "Termination" in the design note).
        if (!steal_into(index)) return;
    }
}

bool RangeExecutor::take_front(unsigned index, std::size_t& begin, std::size_t& end) {
    Share& mine = shares_[index];
    {
        std::lock_guard lock(mine.mu_);
        const std::size_t remaining = mine.end_ - mine.begin_;
        if (remaining == 0) return false;
        std::size_t take = (remaining + options_.chunk_divisor - 1) / options_.chunk_divisor;
        take = std::min(std::max(take, options_.min_chunk), remaining);
        begin = mine.begin_;
        end = begin + take;
        mine.begin_ = end;
        mine.remaining_.store(remaining - take, std::memory_order_relaxed);
    }
    if (tiebreak_by_class_) mine.last_cpu_.store(::sched_getcpu(), std::memory_order_relaxed);
    return true;
}

bool RangeExecutor::steal_into(unsigned index) {
    RangeWorkerStats& stats = workers_[index].stats;
    const unsigned w = worker_count_;
    for (;;) {
        if (cancelled()) return false;
        // Pick the victim with the largest remainder; ties go to the slower CPU class. Start the
        // scan after ourselves so that equal victims are spread over the thieves.
        unsigned victim = index;
        std::size_t best_remaining = 0;
        unsigned best_class = 0;
        for (unsigned k = 1; k < w; ++k) {
            const unsigned v = (index + k) % w;
            const std::size_t remaining = shares_[v].remaining_.load(std::memory_order_relaxed);
            if (remaining == 0) continue;
            const unsigned cls =
                tiebreak_by_class_
                    ? topology_.speed_class(shares_[v].last_cpu_.load(std::memory_order_relaxed))
                    : 0;
            if (remaining > best_remaining || (remaining == best_remaining && cls < best_class)) {
                victim = v;
                best_remaining = remaining;
                best_class = cls;
            }
        }
        if (victim == index) return false;  // every range looked empty: nothing is ever added

        ++stats.steal_attempts;
        std::size_t begin = 0;
        std::size_t end = 0;
        {
            Share& theirs = shares_[victim];
            std::lock_guard lock(theirs.mu_);
            const std::size_t remaining = theirs.end_ - theirs.begin_;
            if (remaining == 0) continue;  // stale estimate; our lock made the 0 visible: rescan
            // The back half, rounded up, so that a single remaining index can be stolen from a
            // victim busy with a long chunk.
            const std::size_t take = (remaining + 1) / 2;
            end = theirs.end_;
            begin = end - take;
            theirs.end_ = begin;
            theirs.remaining_.store(remaining - take, std::memory_order_relaxed);
        }
        {
            // Our range is empty and thieves leave empty ranges alone, so nobody raced us here.
            Share& mine = shares_[index];
            std::lock_guard lock(mine.mu_);
            mine.begin_ = begin;
            mine.end_ = end;
            mine.remaining_.store(end - begin, std::memory_order_relaxed);
        }
        ++stats.steals;
        stats.items_stolen += end - begin;
        return true;
    }
}

void RangeExecutor::run_chunk(unsigned index, std::size_t begin, std::size_t end) {
    RangeWorkerStats& stats = workers_[index].stats;
    const Clock::time_point t0 = Clock::now();
    try {
        (*body_)(begin, end, index);
        ++stats.chunks;
        stats.items += end - begin;
    } catch (...) {
        record_exception(std::current_exception());
    }
    stats.busy_ns += elapsed_ns(t0, Clock::now());
}

void RangeExecutor::record_exception(std::exception_ptr error) {
    {
        std::lock_guard lock(error_mu_);
        if (!error_) error_ = std::move(error);  // first error wins
    }
    cancel_.store(true, std::memory_order_relaxed);
}

bool RangeExecutor::cancelled() const {
    return cancel_.load(std::memory_order_relaxed) || stop_.stop_requested();
}

void RangeExecutor::request_stop() { cancel_.store(true, std::memory_order_relaxed); }

bool RangeExecutor::stop_requested() const { return cancelled(); }

std::vector<RangeWorkerStats> RangeExecutor::stats() const {
    std::lock_guard lock(call_mu_);
    std::vector<RangeWorkerStats> out;
    out.reserve(worker_count_);
    for (unsigned i = 0; i < worker_count_; ++i) out.push_back(workers_[i].stats);
    return out;
}

std::exception_ptr RangeExecutor::last_exception() const {
    std::lock_guard lock(call_mu_);
    std::lock_guard error_lock(error_mu_);
    return error_;
}

}  // namespace wsindex::core
