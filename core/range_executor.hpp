// RangeExecutor: a flat parallel_for over [0, n) with range stealing or a static equal split.
//
// ## Design note
//
// For loops whose size is known up front (re-checking indexed entries, hashing a list of files)
// the worker pool's task tree is more machinery than needed. Here each of W workers owns one
// contiguous range; nothing is ever added, so the only question is who runs which index.
//
// Schedules (one interface, chosen by RangeOptions::schedule):
//   * Static: worker w runs [w*n/W, (w+1)*n/W) and returns. The baseline the benchmark compares
//     against; a slow core makes everyone wait for it.
//   * Stealing: each worker starts with the same equal share, takes chunks from the *front* of
//     its own range, and when its range is empty steals the back half of a victim's remainder
//     into its own range (where it can be stolen again). No speed ratio is configured anywhere:
//     a core that runs slower simply has more left when the others come looking.
//
// Chunks. A chunk is ceil(remaining / 16) of what the worker holds at that moment (never less
// than RangeOptions::min_chunk), so the first chunk is 1/16 of the share, and
// chunks shrink as the range drains. Why shrink: an index that a worker has taken can no longer
// be stolen, so the chunk a slow core holds when the loop runs dry is the tail everyone waits for;
// a geometric chunk keeps that tail short at the cost of ~16·ln(share) chunks per range (one
// uncontended mutex and two clock reads each: ~200 chunks per million indices).
//
// Locking. Every range has a mutex. The owner locks its own range once per chunk (uncontended
// except when a thief is stealing from it at that moment); a thief locks only its victim and then
// its own (empty) range, never two at once, so there is no lock order to get wrong. Thieves pick
// victims by a `remaining` estimate read without the lock (relaxed: a stale value only sends a
// thief to an empty range, where it rechecks under the lock, or makes it skip one; it is rewritten
// under the lock with every change, and after a failed steal the thief has acquired that lock,
// so it cannot read the same stale value again).
//
// Victims. The thief steals from the range with the largest remainder; among equal remainders it
// prefers a victim last seen on a slower CPU class (CpuTopology, only when the kernel says the
// CPUs differ), because that remainder will take longest. That is the only use of the topology.
//
// Termination. No index is ever created, and every index is always in exactly one place: an
// unclaimed range, or held by a running worker (a chunk it runs, or a half it is moving from a
// victim into its own range). A worker returns when its own range is empty and one scan sees
// every other range empty; whatever is still in flight belongs to a worker that has not returned
// and will run it. So the loop is done exactly when every worker has returned — returning early
// can cost parallelism, never an index. (A range seen empty does not stay empty: a thief's
// empty range is refilled by its own steal, which the argument above covers.)
//
// Threads. Persistent: W-1 helper threads started by the constructor and parked on a condition
// variable between calls; the calling thread runs as worker 0. Why not threads per call: the
// intended callers run many loops per scan, some short, and starting and joining W threads costs
// tens of microseconds per call, while a parked thread costs nothing (a futex wait, no polling).
// Running the caller as worker 0 means W=1 is a plain loop, and a short loop can be finished by
// the caller (stealing from the helpers' shares) before the helpers have even woken.
//
// Errors. Nothing throws across a worker thread: an exception from the body is caught in the
// worker, cancels the call (workers stop at their next chunk), and parallel_for returns it as an
// error Status after every worker has stopped; last_exception() keeps the original.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string_view>
#include <thread>
#include <vector>

#include "core/cpu_topology.hpp"
#include "core/status.hpp"

namespace wsindex::core {

enum class RangeSchedule : std::uint8_t { Stealing, Static };

std::string_view to_string(RangeSchedule schedule);

struct RangeOptions {
    // Number of workers including the calling thread; 0 = std::thread::hardware_concurrency().
    unsigned workers = 0;
    RangeSchedule schedule = RangeSchedule::Stealing;
    // A chunk is ceil(remaining / chunk_divisor) indices (default: 1/16 of what the worker holds).
    std::size_t chunk_divisor = 16;
    // Never take fewer indices than this per chunk (unless fewer remain): for bodies so cheap per
    // index that a mutex per chunk would show.
    std::size_t min_chunk = 1;
    // Read CpuTopology and prefer slower-class victims among equal remainders (see the note).
    bool use_topology = true;
    // The topology to use when use_topology is set; null = CpuTopology::read() at construction.
    // Lets a daemon read it once for all executors, and tests pretend to be a hybrid machine.
    std::shared_ptr<const CpuTopology> topology;
    // Runs once on each helper thread (indices 1..W-1) before the constructor returns, e.g. to
    // set a name or an I/O priority. It must not throw; if it does, the constructor throws it.
    std::function<void(unsigned worker)> on_worker_start;
};

// Statistics of one worker for the most recent parallel_for. Cheap: plain counters, owner-only.
struct RangeWorkerStats {
    std::uint64_t chunks = 0;          // body calls that returned
    std::uint64_t items = 0;           // indices in those chunks
    std::uint64_t steal_attempts = 0;  // victims locked (a stale estimate can make one fail)
    std::uint64_t steals = 0;          // attempts that took something
    std::uint64_t items_stolen = 0;    // indices moved into this worker's range by its steals
    std::uint64_t busy_ns = 0;         // wall time inside the body
    std::uint64_t idle_ns = 0;         // wall time of the call minus busy_ns: waking, searching,
                                       // and waiting for the slowest worker
};

class RangeExecutor {
  public:
    // Runs indices [begin, end) of the loop on worker `worker` (0 = the calling thread).
    using Body = std::function<void(std::size_t begin, std::size_t end, unsigned worker)>;

    // Starts options.workers - 1 helper threads and parks them. Throws std::system_error if a
    // thread cannot be started, or whatever on_worker_start threw (after stopping the others).
    explicit RangeExecutor(RangeOptions options = {});
    // Any thread but a worker, and not during parallel_for. Stops and joins the helpers.
    ~RangeExecutor();
    RangeExecutor(const RangeExecutor&) = delete;
    RangeExecutor& operator=(const RangeExecutor&) = delete;

    // Any thread except this executor's own workers (from inside a body it returns an error
    // instead of deadlocking). Calls from several threads are serialized. Runs body over every
    // index of [0, n) exactly once, in chunks, and returns when all workers have returned.
    // Returns ok when every index ran; operation_canceled when `stop` or request_stop() stopped
    // it first (some indices never ran); not_enough_memory if the body threw std::bad_alloc;
    // state_not_recoverable with the exception's what() for any other exception.
    Status parallel_for(std::size_t n, const Body& body, std::stop_token stop = {});

    // Any thread. Cancels the parallel_for in progress, if any: workers finish the chunk they are
    // running and take no other. A call that starts afterwards runs normally (use the stop_token
    // argument to cancel a call that may not have started yet).
    void request_stop();

    // A body (any worker, during parallel_for), to cut a long chunk short. True once the call
    // is cancelled by request_stop(), its stop_token, or another chunk's exception.
    [[nodiscard]] bool stop_requested() const;

    // Number of workers, including the calling thread.
    [[nodiscard]] unsigned size() const { return worker_count_; }
    [[nodiscard]] RangeSchedule schedule() const { return options_.schedule; }
    [[nodiscard]] const CpuTopology& topology() const { return topology_; }

    // Any thread (waits for a call in progress). Per-worker statistics of the last parallel_for.
    [[nodiscard]] std::vector<RangeWorkerStats> stats() const;
    // Any thread (waits for a call in progress). The exception that ended the last call, if any.
    [[nodiscard]] std::exception_ptr last_exception() const;

  private:
    struct Share;
    struct Worker;

    void helper_main(unsigned index);
    void run_worker(unsigned index);
    bool take_front(unsigned index, std::size_t& begin, std::size_t& end);
    bool steal_into(unsigned index);
    void run_chunk(unsigned index, std::size_t begin, std::size_t end);
    void record_exception(std::exception_ptr error);
    [[nodiscard]] bool cancelled() const;
    void stop_helpers();

    RangeOptions options_;
    unsigned worker_count_ = 1;
    CpuTopology topology_;
    bool tiebreak_by_class_ = false;  // topology says CPUs differ and options allow using it

    std::unique_ptr<Share[]> shares_;    // one per worker; see Share
    std::unique_ptr<Worker[]> workers_;  // one per worker; owner-only stats, padded
    std::vector<std::thread> helpers_;   // workers 1..W-1
    // on_worker_start's exception per helper; each slot written by its helper before it reports
    // in under park_mu_, read by the constructor after.
    std::vector<std::exception_ptr> hook_errors_;

    // Serializes parallel_for calls and guards stats()/last_exception() against a running call.
    mutable std::mutex call_mu_;

    // Hand-off between the caller and the parked helpers. All guarded by park_mu_.
    std::mutex park_mu_;
    std::condition_variable wake_cv_;  // helpers wait for a new generation_ or shutdown_
    std::condition_variable done_cv_;  // the caller waits for running_ == 0
    std::size_t started_ = 0;          // helpers that ran on_worker_start (constructor waits)
    std::uint64_t generation_ = 0;     // bumped once per call that has helpers to wake
    unsigned running_ = 0;             // helpers still inside the current call
    bool shutdown_ = false;

    // The current call. Written by the caller before it bumps generation_ under park_mu_ and read
    // by helpers after they see the new generation under park_mu_, so the mutex orders them.
    const Body* body_ = nullptr;
    std::stop_token stop_;
    std::atomic<bool> cancel_{false};  // relaxed: a hint to stop taking chunks, publishes nothing

    // First exception of the current call. Guarded by error_mu_.
    mutable std::mutex error_mu_;
    std::exception_ptr error_;
};

}  // namespace wsindex::core
