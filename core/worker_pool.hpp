// WorkerPool: N worker threads, each owning a Chase-Lev deque, running tasks that spawn tasks.
//
// ## How it works
//
// Tasks. A task receives its item and a Context. It may `spawn` children (pushed onto the calling
// worker's own deque, run LIFO by that worker, stolen FIFO by others), `emit` results, and returns
// a Status. A non-ok Status is fatal: the first one wins, every worker stops starting tasks
// (remaining items are discarded, not run), and consume_until_done() returns it. Recoverable
// per-item failures are results, not errors. A task emits any number of results (a directory
// task emits one per entry), so the result type is one row, not one per task.
//
// Results. Each worker appends to a private batch (owner-only, no lock, no allocation: buffers are
// recycled). A full batch is handed to the consumer through a bounded queue under one mutex — one
// lock per batch, not per result. When the queue is full the worker blocks: a slow consumer slows
// the pool down instead of growing memory (backpressure).
//
// Idle workers. A worker whose deque is empty *searches*: it tries every other worker's deque
// (steal_batch: about half, capped) and the injector (work submitted from outside), spinning for a
// bounded number of rounds; a round that lost a race (Retry) does not count as empty. Then it
// *parks* on an EventCount: prepare_wait, re-check every deque and the injector, then commit or
// cancel. No sleep-polling. A spawn wakes a parked worker only when nobody is searching (a searcher
// will find the item), and a searcher that finds work while being the last searcher wakes another,
// so that idle capacity ramps up quickly without a thundering herd.
//
// Termination. `active_` counts workers that may hold a task. Invariants:
//   T1. A worker increments active_ *before* it can obtain a task (before stealing or taking from
//       the injector), and decrements it only after its own pop found the deque empty and its
//       search failed, and after it flushed its result batch.
//   T2. Only the owner pushes onto a deque, and only while active. So an idle worker's deque stays
//       empty, and items in transit (a batch steal) belong to an active thief.
// Hence when a decrement brings active_ to zero, no deque holds an item and no task runs; the only
// place work may remain is the injector. The decrementer then checks, under the hub mutex (which
// also guards the injector), that active_ is still zero and the injector empty, and declares the
// run done. Either order of a racing injector take is safe: the taker increments active_ before
// locking, so a check after its lock sees active_ > 0, and a check before it sees the item.
//
// Threads. Workers are created by the constructor and live until destruction; between runs they
// park. Per-worker statistics are OwnerCounters, written only by their worker (no RMW).
#pragma once

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "core/deque.hpp"
#include "core/event_count.hpp"
#include "core/node_cache.hpp"
#include "core/owner_counter.hpp"
#include "core/status.hpp"

namespace wsindex::core {

// Points in a worker's idle/active cycle, reported to PoolOptions::on_transition.
enum class PoolEvent { StartSearch, GoingIdle, WentIdle, Reactivated };

struct PoolOptions {
    unsigned workers = 0;              // 0: std::thread::hardware_concurrency()
    std::size_t deque_capacity = 256;  // initial slots per worker deque (it grows)
    std::size_t result_batch = 1024;   // results per batch handed to the consumer
    std::size_t queued_batches = 0;    // bound of the hand-off queue; 0: 4 per worker
    std::size_t steal_batch_max = 32;  // at most this many items per batch steal
    // Runs first on each worker thread (e.g. lower its CPU and I/O priority). Must not throw.
    std::function<void(unsigned worker)> on_worker_start;
    // Test seam: called at the idle/active transitions (never per task), so tests can inject
    // delays exactly where termination detection could go wrong. Empty in production.
    std::function<void(unsigned worker, PoolEvent)> on_transition;
};

// A snapshot of one worker's counters.
struct PoolWorkerStats {
    std::uint64_t tasks_run = 0;
    std::uint64_t steal_attempts = 0;  // victims tried
    std::uint64_t steals = 0;          // successful steal_batch calls
    std::uint64_t items_stolen = 0;    // items those took in all
    std::uint64_t parks = 0;           // times the worker slept
    std::uint64_t parked_ns = 0;       // time spent asleep
    std::uint64_t discarded = 0;       // items dropped unrun after a stop
};

template <class Item, class Result>
class WorkerPool {
    struct Worker;
    using Cache = NodeCache<Item>;
    using Node = typename Cache::Node;

  public:
    // What a task sees of the pool. Valid only during the task call, on its worker's thread.
    class Context {
      public:
        // Pushes a child onto this worker's deque. Synchronous use only (checked in debug).
        void spawn(Item item) {
            check_owner();
            worker_->deque.push(pool_->cache_.make(worker_->nodes, std::move(item)));
            pool_->wake_for_new_work();
        }
        // Appends a result to this worker's batch; may block when the consumer is behind.
        void emit(Result result) {
            check_owner();
            worker_->results.push_back(std::move(result));
            if (worker_->results.size() >= pool_->batch_size_) pool_->hand_off(*worker_);
        }
        // True once the run failed or was cancelled: long tasks should return early.
        [[nodiscard]] bool stop_requested() const {
            return pool_->stopping_.load(std::memory_order_relaxed);
        }
        [[nodiscard]] unsigned worker_index() const { return worker_->index; }

      private:
        friend class WorkerPool;
        Context(WorkerPool* pool, Worker* worker) : pool_(pool), worker_(worker) {}
        void check_owner() const {
#ifndef NDEBUG
            assert(in_task_ && "Context used outside its task");
            assert(std::this_thread::get_id() == owner_ && "Context used from another thread");
#endif
        }
        WorkerPool* pool_;
        Worker* worker_;
        bool in_task_ = false;
        std::thread::id owner_;
    };

    using Task = std::function<Status(Item&, Context&)>;
    using Consumer = std::function<Status(std::span<Result>)>;

    WorkerPool(PoolOptions options, Task task)
        : options_(std::move(options)),
          task_(std::move(task)),
          batch_size_(std::max<std::size_t>(1, options_.result_batch)) {
        unsigned n = options_.workers;
        if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
        max_queued_ = options_.queued_batches ? options_.queued_batches : std::size_t{4} * n;
        workers_.reserve(n);
        for (unsigned i = 0; i < n; ++i) {
            workers_.push_back(std::make_unique<Worker>(i, options_.deque_capacity, batch_size_));
        }
        // Workers start active (T1 holds trivially: there is no work yet) and go idle at once.
        active_.store(n, std::memory_order_relaxed);
        for (unsigned i = 0; i < n; ++i) {
            workers_[i]->thread = std::thread([this, i] { worker_main(i); });
        }
    }

    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    ~WorkerPool() {
        {
            std::lock_guard lock(hub_);
            shutdown_.store(true, std::memory_order_release);
            stopping_.store(true, std::memory_order_release);
        }
        producer_cv_.notify_all();
        parker_.notify_all();
        for (auto& w : workers_) w->thread.join();
        // Joined: this thread may now act as every deque's owner. Destroy unrun items.
        for (auto& w : workers_) {
            while (std::optional<Node*> node = w->deque.pop()) cache_.take(w->nodes, *node);
        }
    }

    // Any thread except a worker. Adds a seed item; starts a new run if the pool was idle.
    void submit(Item item) {
        {
            std::lock_guard lock(hub_);
            if (run_done_) {  // a new run: forget the previous run's outcome
                run_done_ = false;
                first_error_.reset();
                cancel_requested_ = false;
                stopping_.store(false, std::memory_order_relaxed);
            }
            injector_.push_back(std::move(item));
            injected_.fetch_add(1, std::memory_order_relaxed);
        }
        parker_.notify_one();
    }

    // The thread that submitted. Feeds every result batch to `consume` (on this thread) until the
    // run is done: no work is left anywhere and no task runs. After a stop (an error, a consumer
    // failure or request_stop()) batches still queued are dropped, not consumed: stop means
    // stop. Returns the first task or consumer error, else Status(operation_canceled) after
    // request_stop(), else ok. Reusable afterwards.
    Status consume_until_done(const Consumer& consume) {
        std::unique_lock lock(hub_);
        for (;;) {
            consumer_cv_.wait(lock, [&] { return !ready_.empty() || run_done_; });
            if (ready_.empty()) break;  // done and drained
            std::vector<Result> batch = std::move(ready_.front());
            ready_.pop_front();
            // stopping_ is set under hub_, which we hold: a batch taken after a stop is dropped.
            // Producers never wait for room after a stop, so dropping needs no notify.
            if (stopping_.load(std::memory_order_relaxed)) {
                batch.clear();
                spare_.push_back(std::move(batch));
                continue;
            }
            lock.unlock();
            producer_cv_.notify_one();
            Status status = call_guarded([&] { return consume(std::span<Result>(batch)); });
            if (!status) fail(std::move(status));  // stops the run: later batches are dropped
            batch.clear();
            lock.lock();
            spare_.push_back(std::move(batch));
        }
        if (first_error_) return *first_error_;
        if (cancel_requested_) {
            return Status(std::make_error_code(std::errc::operation_canceled), "cancelled");
        }
        return Status::ok();
    }

    // Any thread. Stops the current run: no new task starts; consume_until_done() returns
    // operation_canceled (unless an error came first).
    void request_stop() {
        {
            std::lock_guard lock(hub_);
            cancel_requested_ = true;
            stopping_.store(true, std::memory_order_release);
        }
        producer_cv_.notify_all();
    }

    [[nodiscard]] unsigned size() const { return static_cast<unsigned>(workers_.size()); }

    // Any thread. Counters since construction (relaxed snapshots).
    [[nodiscard]] std::vector<PoolWorkerStats> stats() const {
        std::vector<PoolWorkerStats> out;
        for (const auto& w : workers_) {
            const auto& c = w->counters;
            out.push_back({c.tasks_run.get(), c.steal_attempts.get(), c.steals.get(),
                           c.items_stolen.get(), c.parks.get(), c.parked_ns.get(),
                           c.discarded.get()});
        }
        return out;
    }

    // Any thread. Result batches handed off and not yet taken by the consumer.
    [[nodiscard]] std::size_t ready_batches() {
        std::lock_guard lock(hub_);
        return ready_.size();
    }

  private:
    // Written by their worker only (no atomic RMW per task), read by stats() on any thread.
    struct Counters {
        OwnerCounter tasks_run, steal_attempts, steals, items_stolen, parks, parked_ns, discarded;
    };

    struct alignas(kCacheLine) Worker {
        Worker(unsigned i, std::size_t capacity, std::size_t batch)
            : index(i),
              deque(capacity),
              stealer(deque.stealer()),
              rng(0x9E3779B97F4A7C15ull * (i + 1)) {
            results.reserve(batch);
        }
        const unsigned index;
        DequeOwner<Node*> deque;            // owner only: this worker (T2)
        const DequeStealer<Node*> stealer;  // any thread: the other workers steal through it
        typename Cache::Local nodes;        // owner only
        std::vector<Result> results;        // owner only: the batch being filled
        std::uint64_t rng;                  // owner only: victim selection
        Counters counters;
        std::thread thread;
    };

    // What a search found: a stolen node, an injected item, or nothing.
    struct Found {
        Node* node = nullptr;
        std::optional<Item> item;
        bool retry = false;  // some steal lost a race: there may be work, do not park yet
        [[nodiscard]] bool any() const { return node != nullptr || item.has_value(); }
    };

    // Spinning budget before parking: rounds with a CPU pause, then rounds with a yield.
    static constexpr int kPauseRounds = 32;
    static constexpr int kYieldRounds = 4;

    void worker_main(unsigned index) {
        Worker& me = *workers_[index];
        if (options_.on_worker_start) options_.on_worker_start(index);
        Context ctx(this, &me);
        ctx.owner_ = std::this_thread::get_id();
        for (;;) {
            if (std::optional<Node*> node = me.deque.pop()) {
                run(me, ctx, cache_.take(me.nodes, *node));
                continue;
            }
            Found found = find_work(me);  // T1: returns holding active_, or at shutdown
            if (found.node != nullptr) {
                run(me, ctx, cache_.take(me.nodes, found.node));
            } else if (found.item) {
                run(me, ctx, std::move(*found.item));
            } else {
                return;  // shutdown
            }
        }
    }

    void run(Worker& me, Context& ctx, Item item) {
        if (stopping_.load(std::memory_order_acquire)) {
            me.counters.discarded.add();
            return;
        }
        me.counters.tasks_run.add();
        ctx.in_task_ = true;
        Status status = call_guarded([&] { return task_(item, ctx); });
        ctx.in_task_ = false;
        if (!status) fail(std::move(status));
    }

    // Entered active with an empty own deque. Returns active with work, or with nothing at
    // shutdown (then active_ no longer matters).
    Found find_work(Worker& me) {
        if (!me.results.empty()) hand_off(me);  // T1: flush before we may go idle
        transition(me, PoolEvent::StartSearch);
        searching_.fetch_add(1, std::memory_order_seq_cst);
        for (;;) {
            for (int round = 0; round < kPauseRounds + kYieldRounds; ++round) {
                Found found = search_once(me);
                if (found.any()) {
                    // Last searcher found work: wake another so someone keeps looking.
                    if (searching_.fetch_sub(1, std::memory_order_seq_cst) == 1) {
                        wake_for_new_work();
                    }
                    return found;
                }
                if (shutdown_.load(std::memory_order_acquire)) return {};
                if (found.retry) continue;  // lost a race: look again at once
                if (round < kPauseRounds) {
                    cpu_relax();
                } else {
                    std::this_thread::yield();
                }
            }
            // Give up: go idle (T1), maybe end the run, and park.
            searching_.fetch_sub(1, std::memory_order_seq_cst);
            transition(me, PoolEvent::GoingIdle);
            if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) check_run_done();
            transition(me, PoolEvent::WentIdle);
            park(me);
            if (shutdown_.load(std::memory_order_acquire)) return {};
            active_.fetch_add(1, std::memory_order_seq_cst);  // T1: before we can hold a task
            transition(me, PoolEvent::Reactivated);
            searching_.fetch_add(1, std::memory_order_seq_cst);
        }
    }

    void transition(Worker& me, PoolEvent event) {
        if (options_.on_transition) options_.on_transition(me.index, event);
    }

    // One pass over every other worker (random start) and the injector.
    Found search_once(Worker& me) {
        Found found;
        const std::size_t n = workers_.size();
        me.rng ^= me.rng << 13;
        me.rng ^= me.rng >> 7;
        me.rng ^= me.rng << 17;
        const std::size_t start = static_cast<std::size_t>(me.rng % n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t victim = (start + i) % n;
            if (victim == me.index) continue;
            me.counters.steal_attempts.add();
            Stolen<Node*> s =
                workers_[victim]->stealer.steal_batch(me.deque, options_.steal_batch_max);
            if (s.success()) {
                me.counters.steals.add();
                me.counters.items_stolen.add(s.count);
                if (s.count > 1) wake_for_new_work();  // we now hold stealable items
                found.node = s.value;
                return found;
            }
            if (s.status == StealStatus::Retry) found.retry = true;
        }
        if (injected_.load(std::memory_order_relaxed) > 0) {
            std::lock_guard lock(hub_);
            if (!injector_.empty()) {
                found.item.emplace(std::move(injector_.front()));
                injector_.pop_front();
                injected_.fetch_sub(1, std::memory_order_relaxed);
            }
        }
        return found;
    }

    // Sleeps until new work may exist (EventCount protocol, see event_count.hpp).
    void park(Worker& me) {
        const EventCount::Key key = parker_.prepare_wait();
        if (shutdown_.load(std::memory_order_acquire) || work_visible()) {
            parker_.cancel_wait();
            return;
        }
        me.counters.parks.add();  // counted on the way in: a sleeper is a park
        const auto t0 = std::chrono::steady_clock::now();
        parker_.commit_wait(key);
        const auto slept = std::chrono::steady_clock::now() - t0;
        me.counters.parked_ns.add(static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(slept).count()));
    }

    [[nodiscard]] bool work_visible() const {
        if (injected_.load(std::memory_order_relaxed) > 0) return true;
        for (const auto& w : workers_) {
            if (!w->stealer.empty_estimate()) return true;
        }
        return false;
    }

    // After a push: wake a parked worker, but only if nobody is searching (a searcher will find
    // the item; the argument, W1-W3, is beside searching_). The fence pairs with the fence in
    // EventCount::prepare_wait: either the parking worker's re-check sees our push, or we see it
    // registered (store-buffering argument).
    void wake_for_new_work() {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (parker_.waiters() == 0) return;
        if (searching_.load(std::memory_order_relaxed) > 0) return;
        parker_.notify_one();
    }

    // Called by the worker whose decrement brought active_ to zero (see "Termination").
    void check_run_done() {
        {
            std::lock_guard lock(hub_);
            if (run_done_ || !injector_.empty()) return;
            if (active_.load(std::memory_order_seq_cst) != 0) return;
            run_done_ = true;
        }
        consumer_cv_.notify_all();
    }

    // Owner of `me`. Hands the full (or final) batch to the consumer; blocks while the queue is
    // full (backpressure). After a stop the batch is dropped.
    void hand_off(Worker& me) {
        std::unique_lock lock(hub_);
        producer_cv_.wait(lock, [&] {
            return ready_.size() < max_queued_ || stopping_.load(std::memory_order_relaxed);
        });
        if (stopping_.load(std::memory_order_relaxed)) {
            me.results.clear();
            return;
        }
        ready_.push_back(std::move(me.results));
        if (!spare_.empty()) {
            me.results = std::move(spare_.back());
            spare_.pop_back();
        } else {
            me.results = std::vector<Result>();  // grows the buffer set; bounded by the queue
            me.results.reserve(batch_size_);
        }
        lock.unlock();
        consumer_cv_.notify_one();
    }

    // Records the first error and stops the run.
    void fail(Status status) {
        {
            std::lock_guard lock(hub_);
            if (!first_error_) first_error_ = std::move(status);
            stopping_.store(true, std::memory_order_release);
        }
        producer_cv_.notify_all();
    }

    // Nothing throws across a worker thread: exceptions become a Status here.
    template <class F>
    static Status call_guarded(F&& f) {
        try {
            return f();
        } catch (const std::bad_alloc&) {
            return Status(std::make_error_code(std::errc::not_enough_memory), "out of memory");
        } catch (const std::exception& e) {
            return Status(std::make_error_code(std::errc::state_not_recoverable),
                          std::string("task threw: ") + e.what());
        } catch (...) {
            return Status(std::make_error_code(std::errc::state_not_recoverable),
                          "task threw a non-exception");
        }
    }

    static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        asm volatile("yield");
#endif
    }

    const PoolOptions options_;
    const Task task_;
    const std::size_t batch_size_;
    std::size_t max_queued_ = 0;
    std::vector<std::unique_ptr<Worker>> workers_;
    Cache cache_;

    alignas(kCacheLine) std::atomic<unsigned> active_{0};  // see "Termination"
    // Workers looking for work. wake_for_new_work() skips its notify while this is non-zero;
    // why that loses no wake-up (the pusher P pushed item X, then skipped because it read
    // searching_ > 0 after its seq_cst fence):
    //   W1. No item is ever stranded by a skipped notify: X sits in P's own deque, and P is
    //       active (T2), so P pops X itself before it can go idle (T1). The filter can only cost
    //       parallelism, never progress.
    //   W2. Nor is parallelism lost to a sleeper: P's read of searching_ saw a value from before
    //       the searcher S's decrement (a seq_cst RMW), so P's fence precedes that decrement in
    //       the single total order, and hence precedes the fence in S's later prepare_wait().
    //       Two seq_cst fences so ordered make S's re-check (work_visible(), after its fence)
    //       see P's push (before P's fence): S cancels its wait and searches again instead of
    //       sleeping beside X. If S instead found other work and was the last searcher, it
    //       wakes a sleeper on its way out (find_work), which searches in turn.
    //   W3. A searcher that stays in its spin loop finds X in its next round (search_once
    //       tries every deque), unless someone took X first, and then X is not waiting.
    alignas(kCacheLine) std::atomic<unsigned> searching_{0};
    alignas(kCacheLine) std::atomic<bool> stopping_{false};  // run failed or cancelled
    std::atomic<bool> shutdown_{false};                      // destructor running
    std::atomic<std::size_t> injected_{0};                   // injector_.size(), for peeking
    EventCount parker_;

    // The hub: injector, result queue, run state. Taken per batch or per submit, never per item.
    std::mutex hub_;
    std::condition_variable consumer_cv_;  // a batch is ready, or the run is done
    std::condition_variable producer_cv_;  // queue has room, or stopping
    std::deque<Item> injector_;
    std::deque<std::vector<Result>> ready_;
    std::vector<std::vector<Result>> spare_;
    bool run_done_ = true;
    bool cancel_requested_ = false;
    std::optional<Status> first_error_;
};

}  // namespace wsindex::core
