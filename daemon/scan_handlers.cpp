// Scan handlers: wsindex.Version, Scan, Cancel and Status.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/handlers.hpp"
#include "daemon/index_queries.hpp"
#include "daemon/scan_root.hpp"
#include "daemon/scan_visibility.hpp"
#include "ipc/bytes_codec.hpp"
#include "ipc/path_text.hpp"

namespace wsindex::daemon {
namespace {

ipc::Error not_allowed(std::string_view what) {
    return ipc::make_error(ipc::ErrorKind::PermissionDenied,
                           std::string(what) + " needs root or the wsindexd group");
}

void version(const HandlerContext& ctx, ipc::Responder r) {
    ipc::VersionReply v;
    v.server_version = WSINDEX_VERSION;
    v.interfaces = {std::string(ipc::kInterface)};
    v.max_message_bytes = ctx.limits.max_message_bytes;
    v.pid = ::getpid();
    r.reply(ipc::to_json(v));
}

ipc::NameIndexInfo name_index_info(const NameIndexStats& n) {
    ipc::NameIndexInfo out;
    out.loaded = n.loaded;
    out.file_backed = n.file_backed;
    out.generation = n.generation;
    out.names = n.names;
    out.layer_names = n.layer_names;
    out.layer_dirs = n.layer_dirs;
    out.base_bytes = n.base_bytes;
    out.memory_bytes = n.memory_bytes;
    out.base_builds = n.base_builds;
    out.layer_updates = n.layer_updates;
    out.trigrams = n.trigrams;
    out.trigram_bytes = n.trigram_bytes;
    out.trigram_builds = n.trigram_builds;
    out.search_workers = n.search_workers;
    for (const core::RangeWorkerStats& w : n.last_search) {
        out.last_search.push_back(
            {w.chunks, w.items, w.steals, w.items_stolen, w.busy_ns / 1000, w.idle_ns / 1000});
    }
    return out;
}

// Query thread: resolve every path first (nothing is queued if one is bad), then queue them.
// Each path is checked against the caller's visibility before the daemon resolves it with its
// own rights, and again after: otherwise NoSuchPath/NotADirectory and the canonical root in the
// reply would tell a caller what exists below directories they cannot search
// (docs/security.md). A hidden path answers exactly as a path that does not exist (NoSuchPath,
// the same message), without the hint about roots still in the index, which would say that a
// hidden root is indexed. A caller who does not see everything (a control-group member) gets
// her paths resolved without following symlinks (RootSymlinks::Refuse): a symlink of hers, or
// one she swaps in while the path is resolved, cannot make the daemon index another directory
// under a name she chose; the walk opens the root by descriptor again, also without symlinks.
void scan(HandlerContext& ctx, QueryContext& q, const ipc::PeerCredentials& peer, ipc::ScanParams p,
          ipc::Responder r) {
    const CallerView view = make_caller_view(ctx.seams, peer);
    const PathFilter& visible = view.can_see;
    const RootSymlinks symlinks =
        view.sees_everything ? RootSymlinks::Follow : RootSymlinks::Refuse;
    std::vector<std::string> roots;
    for (const std::string& path : p.paths) {
        if (!path.empty() && path.front() == '/' && !visible(ipc::lexically_normal(path))) {
            r.fail(no_such_scan_root(path));
            return;
        }
        auto root = resolve_scan_root(path, symlinks);
        if (root && !visible(root.value())) {
            r.fail(no_such_scan_root(path));
            return;
        }
        if (!root) root = explain_vanished_root(ctx, q, path, root.error());
        if (!root) {
            spdlog::debug("scan refused for uid {}: {}", peer.uid, root.error().message);
            r.fail(root.error());
            return;
        }
        roots.push_back(std::move(root.value()));
    }
    // The replies show each scan's counters only to a caller who may list everything below its
    // root, as Status does (daemon/scan_visibility.hpp), judged on the index as it is now: the
    // progress replies come from the io thread, which must not run that check.
    std::vector<bool> counts_visible;
    ScanRedactor redactor(q.db, view);
    for (const std::string& root : roots) {
        bool shown = false;
        if (auto st = redactor.counts_visible(root, &shown); !st) {
            r.fail(storage_failure(ctx, "scan", st));
            return;
        }
        counts_visible.push_back(shown);
    }
    std::vector<std::shared_ptr<const ScanJob>> jobs;
    for (std::string& root : roots) {
        auto job = ctx.scans.enqueue(std::move(root));
        if (!job) {
            r.fail(job.error());  // the roots queued before this one stay queued
            return;
        }
        jobs.push_back(std::move(job.value()));
    }
    if (!p.wait) {
        ipc::ScanReply reply;
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            reply.scans.push_back(jobs[i]->info());
            if (!counts_visible[i]) hide_counts(&reply.scans.back());
        }
        r.reply(ipc::to_json(reply));
        return;
    }
    boost::asio::post(ctx.io, [&ctx, jobs = std::move(jobs),
                               counts_visible = std::move(counts_visible), r]() mutable {
        ctx.waiters.add(std::move(jobs), std::move(counts_visible), std::move(r));
    });
}

void cancel(HandlerContext& ctx, const ipc::Call& call, const ipc::CancelParams& p,
            ipc::Responder r) {
    // "queued": true also drops the queued scans (an extension over CancelParams; see
    // docs/daemon.md). Read from the raw parameters: unknown fields are allowed by the protocol.
    bool queued_too = false;
    if (const auto it = call.parameters.find("queued"); it != call.parameters.end()) {
        if (!it->is_boolean()) {
            r.fail(ipc::invalid_parameter("queued", "must be a boolean"));
            return;
        }
        queued_too = it->get<bool>();
    }
    ipc::CancelReply reply;
    // Without an id, the wsindex.Dupes runs go too: every run for those who may control scans.
    if (!p.scan_id && ctx.dupes != nullptr) reply.dupes = ctx.dupes->cancel(std::nullopt);
    auto cancelled = ctx.scans.cancel(p.scan_id, queued_too);
    if (!cancelled) {
        r.fail(cancelled.error());
        return;
    }
    for (const auto& job : cancelled.value()) {
        if (const std::int64_t id = job->scan_id(); id != 0) {
            reply.cancelled.push_back(static_cast<std::uint64_t>(id));
        } else {
            ++reply.unnumbered;
        }
    }
    r.reply(ipc::to_json(reply));
}

// The newest scan that ended failed or cancelled: the database's, or one this process ended
// whose row could not say so (a full disk leaves it `running`; a scan that failed before its
// row was written has id 0) if it is newer.
core::Status last_failed_scan(storage::Database& db, const ScanSnapshot& snap,
                              std::optional<ipc::ScanInfo>* out) {
    ipc::ScanInfo stored;
    bool found = false;
    if (auto st = latest_unsuccessful_scan(db, &stored, &found); !st) return st;
    if (found) *out = std::move(stored);
    for (auto it = snap.ended.rbegin(); it != snap.ended.rend(); ++it) {
        ipc::ScanInfo info = (*it)->info();
        if (info.state != ipc::ScanState::Failed && info.state != ipc::ScanState::Cancelled)
            continue;
        // The database's row wins for the same scan; a job without an id never had a row.
        const bool newer = !*out || (info.scan_id == 0 ? info.finished_ns > (*out)->finished_ns
                                                       : info.scan_id > (*out)->scan_id);
        if (newer) *out = std::move(info);
        break;  // ended is oldest first: the first failure from the back is the newest
    }
    return {};
}

// Query thread: the live part from the service, the indexed roots from the database; roots,
// counts and failure texts as this caller may see them (daemon/scan_visibility.hpp).
void status(HandlerContext& ctx, QueryContext& q, const ipc::PeerCredentials& peer,
            ipc::Responder r) {
    ipc::StatusReply s;
    s.server_version = WSINDEX_VERSION;
    s.pid = ::getpid();
    s.uptime_ms = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                 std::chrono::steady_clock::now() - ctx.started)
                                                 .count());
    const ScanSnapshot snap = ctx.scans.snapshot();
    if (snap.running) {
        s.running = snap.running->info();
        // No names in them: shown to everyone.
        ScanJob::PoolStats pool = snap.running->pool_stats();
        s.workers = std::move(pool.workers);
        s.queue_depth = pool.ready_batches;
    }
    for (const auto& job : snap.queued) s.queued.push_back(job->info());
    if (ctx.dupes != nullptr) {
        // Counts only, no names; a caller sees their own runs unless they may control scans.
        s.dupes = ctx.dupes->progress(
            may_control(ctx.seams, peer) ? std::nullopt : std::optional<uid_t>(peer.uid), peer.uid,
            make_caller_view(ctx.seams, peer).sees_everything);
    }
    if (ctx.fleet_status) s.fleet = ctx.fleet_status();
    if (std::optional<IndexRebuild> rebuild = ctx.scans.last_rebuild()) {
        ipc::IndexRebuildInfo info;
        info.at_ns = rebuild->at_ns;
        info.detail = rebuild->detail;
        info.pending = rebuild->pending;
        // The index's location is the operators' business, like the scans they control.
        if (may_control(ctx.seams, peer)) info.set_aside_as = rebuild->set_aside_as;
        s.index_rebuild = std::move(info);
    }
    std::vector<ipc::RootInfo> roots;
    core::Status st = list_roots(q.db, &roots);
    if (st) st = last_failed_scan(q.db, snap, &s.last_failed);
    if (ctx.live_roots) {
        // Each indexed root: how it is kept current (the deepest followed root holding it).
        const std::vector<LiveRootStatus> live = ctx.live_roots();
        for (ipc::RootInfo& root : roots) {
            const LiveRootStatus* best = nullptr;
            for (const LiveRootStatus& l : live) {
                const bool holds = l.root == "/" || root.root == l.root ||
                                   (root.root.size() > l.root.size() &&
                                    root.root.compare(0, l.root.size(), l.root) == 0 &&
                                    root.root[l.root.size()] == '/');
                if (holds && (best == nullptr || l.root.size() > best->root.size())) best = &l;
            }
            if (best == nullptr) continue;
            root.live = best->mode;
            root.live_watches = best->watches;
            root.live_changes = best->changes;
            root.live_overflows = best->overflows;
            root.live_changes_per_second = best->changes_per_second;
        }
        // Counts over every root: for those who may control scans; others see the lag.
        LiveApplyStats applied = ctx.scans.live_stats();
        if (!may_control(ctx.seams, peer)) {
            const std::uint64_t lag = applied.last_lag_ms;
            const std::int64_t at = applied.last_applied_ns;
            applied = {};
            applied.last_lag_ms = lag;
            applied.last_applied_ns = at;
        }
        s.live = ipc::LiveInfo{
            applied.batches,         applied.dirs,        applied.rows_changed, applied.failures,
            applied.last_applied_ns, applied.last_lag_ms, applied.pending_dirs, applied.busy_ms};
    }
    if (may_control(ctx.seams, peer)) {
        s.names = name_index_info(ctx.queries.name_stats());
        // Beside the snapshot's generation, so that a caller can tell whether finds are answered
        // from it (equal) or from the database while it catches up. Read after the snapshot:
        // equal values mean the snapshot was current when status answered.
        // Not read: -1, and the rest of status still answers.
        std::int64_t index_generation = -1;
        if (q.db.query_int64("SELECT value FROM meta WHERE key = 'generation'",
                             &index_generation)) {
            s.names->index_generation = index_generation;
        }
    }
    if (!st) {
        r.fail(storage_failure(ctx, "status: reading the index", st));
        return;
    }

    const CallerView view = make_caller_view(ctx.seams, peer);
    ScanRedactor redactor(q.db, view);
    if (s.running && st) st = redactor.redact(&*s.running);
    for (ipc::ScanInfo& queued : s.queued) {
        if (st) st = redactor.redact(&queued);
    }
    if (s.last_failed && st) st = redactor.redact(&*s.last_failed);
    bool sees_every_root = true;
    for (ipc::RootInfo& root : roots) {
        bool keep = false;
        if (st) st = redactor.redact(&root, &keep);
        if (root.counts_hidden) {
            // How often things change below, how many directories inotify watches there and
            // how often it overflowed say something about what this caller cannot see.
            root.live_changes = 0;
            root.live_changes_per_second = 0;
            root.live_watches = 0;
            root.live_overflows = 0;
        }
        if (!keep || root.counts_hidden) sees_every_root = false;
        if (keep) s.roots.push_back(std::move(root));
    }
    if (!st) {
        r.fail(storage_failure(ctx, "status: visibility of the scanned roots", st));
        return;
    }
    // The live index's counters and times move when anything changes below any root, in
    // directories this caller may not list too: only for a caller who may list every root
    // whole (docs/security.md).
    if (!view.sees_everything && !sees_every_root) s.live.reset();
    r.reply(ipc::to_json(s));
}

}  // namespace

void register_scan_handlers(ipc::Server& server, HandlerContext& ctx) {
    server.add_method(std::string(ipc::method::kVersion),
                      [&ctx](const ipc::Call&, ipc::Responder r) { version(ctx, std::move(r)); });

    server.add_typed_method<ipc::ScanParams>(
        std::string(ipc::method::kScan),
        [&ctx](const ipc::Call& call, ipc::ScanParams p, ipc::Responder r) {
            if (!may_control(ctx.seams, call.peer)) {
                r.fail(not_allowed("scanning"));
                return;
            }
            const ipc::PeerCredentials peer = call.peer;
            submit_query(ctx, peer, r, [&ctx, peer, p = std::move(p), r](QueryContext& q) mutable {
                scan(ctx, q, peer, std::move(p), std::move(r));
            });
        });

    server.add_typed_method<ipc::CancelParams>(
        std::string(ipc::method::kCancel),
        [&ctx](const ipc::Call& call, ipc::CancelParams p, ipc::Responder r) {
            if (!may_control(ctx.seams, call.peer)) {
                // Anyone may cancel their own wsindex.Dupes runs (a Cancel without scan_id).
                if (!p.scan_id && ctx.dupes != nullptr && call.peer.valid) {
                    ipc::CancelReply own;
                    own.dupes = ctx.dupes->cancel(call.peer.uid);
                    if (own.dupes != 0) {
                        r.reply(ipc::to_json(own));
                        return;
                    }
                }
                r.fail(not_allowed("cancelling"));
                return;
            }
            cancel(ctx, call, p, std::move(r));
        });

    server.add_method(std::string(ipc::method::kStatus),
                      [&ctx](const ipc::Call& call, ipc::Responder r) {
                          const ipc::PeerCredentials peer = call.peer;
                          submit_query(ctx, peer, r, [&ctx, peer, r](QueryContext& q) mutable {
                              status(ctx, q, peer, std::move(r));
                          });
                      });
}

}  // namespace wsindex::daemon
