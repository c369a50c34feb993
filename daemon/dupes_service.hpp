// Dupes service: runs wsindex.Dupes calls, each on a thread of its own with its own range
// executors (so the daemon keeps serving), cancellable, with live progress for wsindex.Status.
// The runs read and write the index through one connection, the candidate cache's
// (daemon/dupes_candidate_cache.hpp), which keeps the last listing while the index is unchanged.
//
// Threads: start(), cancel() and progress() from any thread. Each run's thread resolves the
// caller's visibility (daemon/seams.hpp) and read permission, runs find_dupes at idle I/O
// priority (its executor's helpers too: RangeOptions::on_worker_start), streams progress
// replies from a ticker thread with try_more (never blocking on a slow client), and answers.
// A client that goes away cancels its run.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "daemon/dupes_candidate_cache.hpp"
#include "daemon/dupes_finder.hpp"
#include "daemon/seams.hpp"
#include "ipc/methods.hpp"
#include "ipc/responder.hpp"

namespace wsindex::daemon {

struct DupesServiceOptions {
    std::string db_path;
    unsigned workers = 0;  // threads of the steps that read no content; 0: one per CPU
    // Threads of the steps that read content, made only when a run has something to read; 0:
    // as many as the walker's default (one per CPU, at least 16: on a cold cache each waits for
    // the disk, and more requests in flight keep it busy).
    unsigned readers = 0;
    std::size_t max_runs = 2;        // runs at once; more are refused with Busy
    std::size_t group_batch = 1000;  // files per streamed reply of groups
};

class DupesService {
  public:
    explicit DupesService(DupesServiceOptions options);
    ~DupesService();  // stop()
    DupesService(const DupesService&) = delete;
    DupesService& operator=(const DupesService&) = delete;

    // Starts a run for `peer` as `seams` lets it see. False (and nothing started) when
    // max_runs are running or the service stopped: the caller answers Busy.
    bool start(const DupesRequest& request, const Seams& seams, const ipc::PeerCredentials& peer,
               ipc::Responder responder);
    // Cancels the runs of `uid` (nullopt: every run); returns how many.
    std::size_t cancel(std::optional<uid_t> uid);
    // Progress of the runs of `uid` (nullopt: every run), as `viewer` may see it: a run's
    // timings (elapsed_ms, bytes_per_second) are 0 unless its own caller saw every directory
    // (DupesService::run) and the viewer is that caller or sees everything.
    std::vector<ipc::DupesProgressInfo> progress(std::optional<uid_t> uid, uid_t viewer,
                                                 bool viewer_sees_everything) const;
    // Cancels every run and joins their threads. Idempotent.
    void stop();

  private:
    struct RunState;
    void run(RunState& state, DupesRequest request, Seams seams, ipc::PeerCredentials peer,
             ipc::Responder responder);
    void reap_locked();
    // May `view` list every directory below every path `request` asks for?
    bool sees_every_directory(const DupesRequest& request, const CallerView& view);

    DupesServiceOptions options_;
    // The last listing of candidates, shared by the runs (a second run over an unchanged index
    // reads no rows).
    DupesCandidateCache candidates_;
    mutable std::mutex mu_;
    std::list<std::unique_ptr<RunState>> runs_;  // guarded by mu_
    std::uint64_t next_id_ = 1;                  // guarded by mu_
    bool stopped_ = false;                       // guarded by mu_
};

}  // namespace wsindex::daemon
