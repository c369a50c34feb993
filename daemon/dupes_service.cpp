// Dupes service: one thread per wsindex.Dupes run (dupes_service.hpp).
#include "daemon/dupes_service.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <condition_variable>
#include <optional>
#include <stop_token>
#include <thread>

#include "core/walker.hpp"
#include "daemon/credentials.hpp"
#include "daemon/permission_check.hpp"
#include "daemon/thread_priority.hpp"
#include "ipc/dupes_reply_writer.hpp"
#include "ipc/error.hpp"

namespace wsindex::daemon {
namespace {

// Like a scan's threads: hashing yields to everything else on the disk and the CPUs.
constexpr int kDupesNice = 10;
constexpr auto kProgressInterval = std::chrono::milliseconds(500);

std::uint64_t ms_since(std::chrono::steady_clock::time_point t) {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t)
            .count());
}

unsigned worker_count(unsigned configured) {
    if (configured != 0) return configured;
    return std::max(1u, std::thread::hardware_concurrency());
}

unsigned reader_count(unsigned configured) {
    return configured != 0 ? configured : core::default_walk_workers();
}

}  // namespace

struct DupesService::RunState {
    RunState(std::uint64_t run_id, uid_t run_uid, unsigned workers)
        : id(run_id), uid(run_uid), progress(workers) {}
    std::uint64_t id;
    uid_t uid;
    std::stop_source stop;
    DupesProgress progress;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    std::thread thread;
    bool done = false;  // guarded by the service's mu_
    // Set just before the final reply: a caller who got it must not see the run in Status.
    std::atomic<bool> answered{false};
    // The run's caller sees every directory (root, the daemon's own user): only then do its
    // timings say nothing about directories hidden from it (docs/security.md).
    std::atomic<bool> timings{false};

    // With `with_timings` false, elapsed_ms and bytes_per_second stay 0.
    [[nodiscard]] ipc::DupesProgressInfo info(bool with_timings) const {
        const DupesProgress::Snapshot s = progress.snapshot();
        ipc::DupesProgressInfo out;
        out.run_id = id;
        out.uid = uid;
        out.phase = std::string(to_string(s.phase));
        out.files_done = s.files_done;
        out.files_total = s.files_total;
        out.bytes_done = s.bytes_done;
        out.bytes_total = s.bytes_total;
        out.bytes_read = s.bytes_read;
        if (with_timings && timings.load()) {
            out.elapsed_ms = ms_since(started);
            out.bytes_per_second =
                out.elapsed_ms == 0 ? 0.0
                                    : static_cast<double>(s.bytes_read) * 1000.0 / out.elapsed_ms;
        }
        for (std::size_t i = 0; i < s.workers.size(); ++i) {
            ipc::DupesWorkerInfo w;
            w.files = s.workers[i].items;
            w.bytes = s.workers[i].bytes;
            if (i < s.executor.size()) {
                const core::RangeWorkerStats& e = s.executor[i];
                w.chunks = e.chunks;
                w.steals = e.steals;
                w.items_stolen = e.items_stolen;
                w.busy_ms = e.busy_ns / 1000000;
                w.idle_ms = e.idle_ns / 1000000;
            }
            out.workers.push_back(w);
        }
        return out;
    }
};

DupesService::DupesService(DupesServiceOptions options)
    : options_(std::move(options)), candidates_(options_.db_path) {
    options_.workers = worker_count(options_.workers);
    options_.readers = reader_count(options_.readers);
}

DupesService::~DupesService() { stop(); }

void DupesService::reap_locked() {
    for (auto it = runs_.begin(); it != runs_.end();) {
        if ((*it)->done) {
            if ((*it)->thread.joinable()) (*it)->thread.join();
            it = runs_.erase(it);
        } else {
            ++it;
        }
    }
}

bool DupesService::start(const DupesRequest& request, const Seams& seams,
                         const ipc::PeerCredentials& peer, ipc::Responder responder) {
    std::lock_guard lock(mu_);
    reap_locked();
    if (stopped_ || runs_.size() >= options_.max_runs) return false;
    auto state = std::make_unique<RunState>(next_id_++, peer.uid,
                                            std::max(options_.workers, options_.readers));
    RunState& ref = *state;
    // The client going away cancels the run.
    std::stop_source stop = ref.stop;
    responder.on_close([stop]() mutable { stop.request_stop(); });
    ref.thread = std::thread([this, &ref, request, seams, peer, responder]() mutable {
        run(ref, std::move(request), std::move(seams), peer, std::move(responder));
        std::lock_guard done_lock(mu_);
        ref.done = true;
    });
    runs_.push_back(std::move(state));
    return true;
}

std::size_t DupesService::cancel(std::optional<uid_t> uid) {
    std::lock_guard lock(mu_);
    std::size_t n = 0;
    for (auto& r : runs_) {
        if (r->done || r->answered.load() || (uid && r->uid != *uid)) continue;
        if (r->stop.request_stop()) ++n;
    }
    return n;
}

std::vector<ipc::DupesProgressInfo> DupesService::progress(std::optional<uid_t> uid, uid_t viewer,
                                                           bool viewer_sees_everything) const {
    std::lock_guard lock(mu_);
    std::vector<ipc::DupesProgressInfo> out;
    for (const auto& r : runs_) {
        if (r->done || r->answered.load() || (uid && r->uid != *uid)) continue;
        out.push_back(r->info(viewer_sees_everything || r->uid == viewer));
    }
    return out;
}

void DupesService::stop() {
    std::list<std::unique_ptr<RunState>> runs;
    {
        std::lock_guard lock(mu_);
        stopped_ = true;
        for (auto& r : runs_) r->stop.request_stop();
    }
    // Join without the lock: a finishing run takes it to mark itself done.
    for (;;) {
        std::thread t;
        {
            std::lock_guard lock(mu_);
            for (auto& r : runs_) {
                if (r->thread.joinable()) {
                    t = std::move(r->thread);
                    break;
                }
            }
        }
        if (!t.joinable()) break;
        t.join();
    }
    std::lock_guard lock(mu_);
    runs_.clear();
}

bool DupesService::sees_every_directory(const DupesRequest& request, const CallerView& view) {
    if (view.sees_everything) return true;
    if (request.roots.empty()) return false;  // everywhere: "/" is not anyone's whole
    for (const std::string& root : request.roots) {
        bool all = false;
        if (!view.can_list(root)) return false;
        if (auto st = candidates_.subtree_all_listable(root, view.can_list, &all); !st || !all) {
            return false;
        }
    }
    return true;
}

void DupesService::run(RunState& state, DupesRequest request, Seams seams,
                       ipc::PeerCredentials peer, ipc::Responder responder) {
    if (auto st = set_thread_priority(kDupesNice, IoClass::Idle); !st) {
        spdlog::debug("dupes: lowering the priority: {}", st.to_string());
    }
    // Visibility and read permission, resolved here (they read /proc and the file system).
    // The directories of the files read are judged again on the descriptors the files are
    // opened from (may_list), as can_see judged their paths.
    CallerView view = make_caller_view(seams, peer);
    state.timings = view.sees_everything;
    ReadPermission may_read;
    DirJudge may_list;
    if (!view.sees_everything) {
        std::optional<Caller> caller = resolve_caller(peer);
        if (!caller) {
            may_read = [](int) { return false; };
            may_list = [](const DirPerm&) { return false; };
        } else {
            may_read = [caller = *caller](int fd) {
                const std::optional<DirPerm> perm = live_fd_perm(fd);
                return perm && permits(caller, *perm, kRead);
            };
            may_list = [caller = *caller](const DirPerm& perm) {
                return permits(caller, perm, kRead | kSearch);
            };
        }
    }
    core::RangeOptions ro;
    ro.workers = options_.workers;
    ro.on_worker_start = [](unsigned) { (void)set_thread_priority(kDupesNice, IoClass::Idle); };
    core::RangeExecutor executor(ro);
    std::optional<core::RangeExecutor> readers;
    const auto make_readers = [&]() -> core::RangeExecutor& {
        if (!readers) {
            core::RangeOptions rr = ro;
            rr.workers = options_.readers;
            readers.emplace(rr);
        }
        return *readers;
    };

    // Progress replies while it runs, for a caller that streams.
    std::mutex tick_mu;
    std::condition_variable tick_cv;
    bool finished = false;
    std::thread ticker;
    if (responder.streaming()) {
        ticker = std::thread([&] {
            std::unique_lock lock(tick_mu);
            while (!tick_cv.wait_for(lock, kProgressInterval, [&] { return finished; })) {
                ipc::DupesReply p;
                p.progress = state.info(true);
                (void)responder.try_more(ipc::to_json(p));
            }
        });
    }
    // The index is read and written through candidates_ (its own connection, kept open).
    DupesEnvironment env{
        nullptr,      executor,       view.sees_everything ? NameFilter{} : view.can_see,
        may_read,     state.progress, make_readers,
        &candidates_, may_list};
    DupesResult result;
    const std::uint64_t setup_ms = ms_since(state.started);
    const core::Status st = find_dupes(env, request, state.stop.get_token(), &result);
    if (ticker.joinable()) {
        {
            std::lock_guard lock(tick_mu);
            finished = true;
        }
        tick_cv.notify_all();
        ticker.join();
    }
    if (!st) {
        state.answered = true;
        if (st.code() == std::errc::operation_canceled) {
            responder.fail(ipc::make_error(ipc::ErrorKind::Cancelled, "dupes cancelled"));
        } else {
            spdlog::error("dupes: {}", st.to_string());
            responder.fail(ipc::make_error(ipc::ErrorKind::Internal, "dupes: " + st.to_string()));
        }
        return;
    }
    const auto& us = result.phase_us;
    spdlog::info(
        "dupes: {} candidates, {} groups, {} hashed, {} cached; setup {} ms, listing {} ms{}, "
        "partial "
        "{} ms, full {} ms, checking {} ms, compare {} ms, grouping {} ms",
        result.candidates, result.groups.size(), result.hashed, result.cached, setup_ms,
        us[static_cast<std::size_t>(DupesPhase::Listing)] / 1000,
        result.listing_kept ? " (kept)" : "",
        us[static_cast<std::size_t>(DupesPhase::Partial)] / 1000,
        us[static_cast<std::size_t>(DupesPhase::Full)] / 1000,
        us[static_cast<std::size_t>(DupesPhase::Checking)] / 1000,
        us[static_cast<std::size_t>(DupesPhase::Compare)] / 1000,
        us[static_cast<std::size_t>(DupesPhase::Done)] / 1000);
    const auto reply_started = std::chrono::steady_clock::now();
    ipc::DupesReply reply;
    std::size_t batch_files = 0;
    for (DupesGroup& g : result.groups) {
        ipc::DupesGroupInfo info;
        info.size = static_cast<std::uint64_t>(g.size);
        info.wasted = g.wasted();
        reply.wasted += info.wasted;
        for (DupesFile& f : g.files) {
            info.files.push_back(ipc::DupesFileInfo{std::move(f.names)});
            ++batch_files;
        }
        reply.groups.push_back(std::move(info));
        if (responder.streaming() && batch_files >= options_.group_batch) {
            const std::uint64_t wasted = reply.wasted;
            reply.wasted = 0;
            if (responder.more_text(ipc::dupes_reply_text(reply)) != ipc::SendResult::Sent) return;
            reply = {};
            reply.wasted = wasted;
            batch_files = 0;
        }
    }
    reply.candidates = result.candidates;
    reply.unreadable = result.unreadable;
    reply.cached = result.cached;
    reply.hashed = result.hashed;
    reply.files_read = result.read.files;
    reply.bytes_read = result.read.bytes;
    reply.changed = std::move(result.changed);
    const std::uint64_t elapsed_ms = ms_since(state.started);
    // The time grows with the files of a size under directories the caller may not see: only
    // for a caller who may list every directory below every path asked for (docs/security.md;
    // a path that is not indexed, or hidden, answers alike: 0).
    reply.elapsed_ms = sees_every_directory(request, view) ? elapsed_ms : 0;
    state.answered = true;
    responder.reply_text(ipc::dupes_reply_text(reply));
    spdlog::info("dupes: reply sent in {} ms", ms_since(reply_started));
}

}  // namespace wsindex::daemon
