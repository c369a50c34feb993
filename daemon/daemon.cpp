// Daemon: start-up order, the signal loop, reload and shutdown.
#include "daemon/daemon.hpp"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <thread>

#include "core/resolve.hpp"
#include "core/unique_fd.hpp"
#include "daemon/index_queries.hpp"
#include "daemon/logging.hpp"
#include "daemon/scan_root.hpp"
#include "ipc/bytes_codec.hpp"
#include "storage/clean_close.hpp"

namespace wsindex::daemon {
namespace {

core::Status group_id(const std::string& name, gid_t* out) {
    std::vector<char> buf(16384);
    group g{};
    group* found = nullptr;
    const int rc = ::getgrnam_r(name.c_str(), &g, buf.data(), buf.size(), &found);
    if (rc != 0) return core::Status::from_errno(rc, "socket_group " + name);
    if (found == nullptr) {
        return core::Status(std::make_error_code(std::errc::invalid_argument),
                            "socket_group " + name + ": no such group");
    }
    *out = found->gr_gid;
    return {};
}

void log_from_server(ipc::LogLevel level, std::string_view line) {
    switch (level) {
        case ipc::LogLevel::Debug:
            spdlog::debug("ipc: {}", line);
            break;
        case ipc::LogLevel::Info:
            spdlog::info("ipc: {}", line);
            break;
        case ipc::LogLevel::Warning:
            spdlog::warn("ipc: {}", line);
            break;
        case ipc::LogLevel::Error:
            spdlog::error("ipc: {}", line);
            break;
    }
}

}  // namespace

Daemon::Daemon(DaemonOptions options) : options_(std::move(options)) {}

Daemon::~Daemon() {
    // run() normally did all this; start() without run() (a failed start, a test) did not.
    // Readers first: see run().
    if (live_) live_->stop();
    if (queries_) queries_->stop();
    if (scans_) scans_->stop();
}

ScanSettings Daemon::scan_settings(const Config& config) const {
    ScanSettings s;
    s.workers = config.workers;
    s.prune = config.prune;
    s.one_file_system = config.one_file_system;
    for (const RootConfig& root : config.roots) {
        s.roots.push_back(ScheduledRoot{root.path, effective_interval(config, root),
                                        effective_one_file_system(config, root)});
    }
    return s;
}

core::Status Daemon::start() {
    const Config& c = options_.config;
    // The writer first: it creates or migrates the schema the readers then expect.
    ScanServiceOptions so;
    so.db_path = c.db_path;
    so.settings = scan_settings(c);
    so.max_queued = c.max_queued_scans;
    so.low_priority = options_.low_priority_scans;
    so.result_batch = options_.result_batch;
    so.before_begin = options_.before_begin;
    so.before_walk = options_.before_walk;
    so.after_batch = options_.after_batch;
    so.on_change = [this](const ScanJob& job) { on_job_change(job); };
    if (c.fleet) fleet_ = std::make_unique<FleetPublisher>(*c.fleet, c.db_path);
    so.on_settled = [this, names = c.name_index] {
        // A completed scan or an applied live batch: the fleet copy may be behind.
        if (fleet_) fleet_->notify();
        // Null until the query pool exists (the service settles once while opening).
        if (QueryPool* pool = names_owner_.load(std::memory_order_acquire)) {
            // After live batches too: a no-op when their directories were layered
            // (on_names_changed), a rebuild if the generation moved some other way.
            if (names) pool->refresh_names();
            pool->warm();
        }
    };
    so.on_names_changed = [this, names = c.name_index](std::vector<std::int64_t> dirs,
                                                       std::int64_t generation) {
        // Only these directories are re-read into the name index's layer (not the whole
        // index): a find sees the change as soon as the maintenance thread has read them.
        QueryPool* pool = names_owner_.load(std::memory_order_acquire);
        if (names && pool != nullptr) pool->names_changed(std::move(dirs), generation);
    };
    so.on_index_replaced = [this] {
        // A damaged index was set aside and its rebuild's scans ended: readers move over.
        if (QueryPool* pool = names_owner_.load(std::memory_order_acquire)) {
            pool->reopen();
            if (options_.config.name_index) pool->refresh_names();
            pool->warm();
        }
    };
    if (auto st = ScanService::open(std::move(so), &scans_); !st) {
        return core::Status(st.code(), "opening the index " + c.db_path + ": " + st.message());
    }
    if (fleet_) fleet_->start();
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    unsigned search_workers = c.search_workers == 0 ? cores : c.search_workers;
    if (c.search_reserve_core) search_workers = std::min(search_workers, std::max(1u, cores - 1));
    if (auto st = QueryPool::open(c.db_path, c.query_threads, c.max_pending_queries, &queries_,
                                  search_workers, static_cast<std::size_t>(c.trigram_min_names),
                                  c.max_queries_per_uid);
        !st) {
        return core::Status(st.code(), "opening readers of " + c.db_path + ": " + st.message());
    }
    if (c.name_index) {
        queries_->refresh_names();
    } else {
        queries_->disable_names();
    }
    queries_->warm();
    names_owner_.store(queries_.get(), std::memory_order_release);

    ipc::ServerOptions server_options;
    server_options.log = log_from_server;
    server_options.max_connections = c.max_connections;
    server_options.max_connections_per_uid = c.max_connections_per_uid;
    server_options.reserved_connections = c.reserved_connections;
    // The reserved connection slots are for those who may control scans: root, the daemon's
    // own user and the control group (docs/daemon.md, "Connection limits").
    server_options.privileged = [this](const ipc::PeerCredentials& peer) {
        return may_control(options_.seams, peer);
    };
    waiters_.emplace(io_, c.progress_interval);
    HandlerLimits limits;
    limits.max_find_results = c.max_find_results;
    limits.max_unstreamed_find_results = c.max_unstreamed_find_results;
    limits.max_message_bytes = server_options.limits.max_message_bytes;
    start_live();
    HandlerContext context{io_, *scans_, *queries_, *waiters_, options_.seams, limits};
    DupesServiceOptions dupes_options;
    dupes_options.db_path = c.db_path;
    dupes_options.readers = c.workers;  // like the walker's: threads that wait for the disk
    dupes_ = std::make_unique<DupesService>(std::move(dupes_options));
    context.dupes = dupes_.get();
    if (live_) {
        context.live_roots = [m = live_.get()] { return m->status(); };
    }
    if (fleet_) {
        context.fleet_status = [f = fleet_.get()] { return f->info(); };
        context.live_unwatch = [m = live_.get()](const std::string& root) { m->unwatch(root); };
    }
    handlers_.emplace(std::move(context));
    server_.emplace(io_, server_options);
    register_handlers(*server_, *handlers_);

    const int inherited =
        options_.seams.service_manager.listen_fd ? options_.seams.service_manager.listen_fd() : -1;
    if (inherited >= 0) {
        if (auto st = server_->from_fd(inherited); !st) return st;
    } else {
        ipc::BindOptions bind;
        bind.mode = c.socket_mode;
        if (!c.socket_group.empty()) {
            gid_t gid = 0;
            if (auto st = group_id(c.socket_group, &gid); !st) return st;
            bind.group = gid;
        }
        if (auto st = server_->listen(c.socket_path, bind); !st) {
            return core::Status(st.code(), "socket " + c.socket_path + ": " + st.message());
        }
    }
    server_->start();

    if (options_.watchdog) {
        watchdog_.emplace(io_);
        if (watchdog_->start()) spdlog::info("systemd watchdog enabled");
    }
    if (options_.handle_signals) {
        signals_.emplace(io_, SIGTERM, SIGINT, SIGHUP);
        wait_for_signal();
    }
    spdlog::info("ready: listening on {} (index {}, {} roots configured)",
                 inherited >= 0 ? std::string("an inherited socket") : c.socket_path, c.db_path,
                 c.roots.size());
    if (options_.seams.service_manager.notify_ready) options_.seams.service_manager.notify_ready();
    return {};
}

void Daemon::run() {
    io_.run();  // until shutdown() stops it
    // Off the io thread now: joining is allowed. The read connections close first: the last
    // connection to close checkpoints the WAL and deletes it, which a read-only one cannot
    // do. Left behind, the next opener rebuilt the WAL index from an 80 MB log and read every
    // page through it until a checkpoint (a standalone reader: 90 ms for a find that takes 29).
    if (live_) live_->stop();  // it feeds the scan service
    if (dupes_) dupes_->stop();
    queries_->stop();
    scans_->stop();
    if (fleet_) fleet_->stop();
    // Every connection is closed: the next start may skip its check of the file.
    if (auto st = storage::mark_closed_cleanly(options_.config.db_path); !st) {
        spdlog::warn("clean close not recorded (the next start checks the index): {}",
                     st.to_string());
    }
    // Let the sessions finish closing (their handlers are ready; nothing blocks).
    io_.restart();
    io_.poll();
    spdlog::info("stopped");
}

void Daemon::request_stop() {
    boost::asio::post(io_, [this] { shutdown(); });
}

void Daemon::request_reload() {
    boost::asio::post(io_, [this] { reload(); });
}

void Daemon::wait_for_signal() {
    signals_->async_wait([this](const boost::system::error_code& ec, int signo) {
        if (ec) return;  // cancelled at shutdown
        if (signo == SIGHUP) {
            reload();
            wait_for_signal();
        } else {
            spdlog::info("{} received: stopping", signo == SIGTERM ? "SIGTERM" : "SIGINT");
            shutdown();
        }
    });
}

void Daemon::reload() {
    if (stopping_) return;
    if (!options_.command_line.config_path) {
        spdlog::info("reload: no configuration file (started without --config); nothing to do");
        return;
    }
    if (options_.seams.service_manager.notify_reloading) {
        options_.seams.service_manager.notify_reloading();
    }
    ConfigResult result = resolve_config(options_.command_line);
    if (auto* error = std::get_if<ConfigError>(&result)) {
        spdlog::error("reload failed, keeping the running configuration: {}", error->message);
    } else {
        Config next = std::get<Config>(std::move(result));
        const Config& now = options_.config;
        if (next.socket_path != now.socket_path || next.db_path != now.db_path ||
            next.socket_mode != now.socket_mode || next.socket_group != now.socket_group ||
            next.query_threads != now.query_threads ||
            next.max_queries_per_uid != now.max_queries_per_uid ||
            next.max_connections != now.max_connections ||
            next.max_connections_per_uid != now.max_connections_per_uid ||
            next.reserved_connections != now.reserved_connections) {
            spdlog::warn(
                "reload: socket, database, thread and connection settings change only at restart");
        }
        set_log_level(next.log_level);
        scans_->reconfigure(scan_settings(next));
        // What changes now; the rest stays as started.
        options_.config.roots = next.roots;
        options_.config.rescan_interval = next.rescan_interval;
        options_.config.prune = next.prune;
        options_.config.workers = next.workers;
        options_.config.one_file_system = next.one_file_system;
        options_.config.log_level = next.log_level;
        spdlog::info("configuration reloaded: {} roots, {} prune rules, {} workers",
                     next.roots.size(),
                     next.prune.paths.size() + next.prune.names.size() + next.prune.fs_types.size(),
                     next.workers);
    }
    if (options_.seams.service_manager.notify_ready) options_.seams.service_manager.notify_ready();
}

void Daemon::shutdown() {
    if (stopping_) return;
    stopping_ = true;
    if (options_.seams.service_manager.notify_stopping) {
        options_.seams.service_manager.notify_stopping();
    }
    if (signals_) signals_->cancel();
    if (watchdog_) watchdog_->stop();
    scans_->request_stop();  // the cancel starts now; run() joins
    waiters_->stop();
    server_->stop();
    io_.stop();
}

void Daemon::on_job_change(const ScanJob& job) {
    // Any thread (scan thread, io thread, query thread): hand the news to the io thread.
    boost::asio::post(io_, [this] {
        if (!stopping_) waiters_->poke();
    });
    if (job.state() == ipc::ScanState::Done && live_ && may_watch(job.root())) {
        live_->watch(job.root());  // a root scanned by a client is kept current from now on
    }
    if (job.state() == ipc::ScanState::Done) {
        if (QueryPool* pool = names_owner_.load(std::memory_order_acquire);
            pool != nullptr && options_.config.name_index) {
            pool->refresh_names();
        }
    }
    if (options_.seams.service_manager.notify_status) {
        // Every user can read this line (`systemctl status`), and wsindex.Status shows a root
        // only to callers who may see it: the line names the scan, not its root.
        const ipc::ScanInfo info = job.info();
        const std::string line = "scan " + std::to_string(info.scan_id) + " " +
                                 std::string(ipc::scan_state_name(info.state));
        options_.seams.service_manager.notify_status(line);
    }
}

bool Daemon::may_watch(const std::string& root) const {
    // A configured root with watch = false, or anything below it, is not followed; nor is
    // anything when the live index is off.
    const Config& c = options_.config;
    if (!c.watch) return false;
    for (const RootConfig& r : c.roots) {
        const bool holds =
            root == r.path || r.path == "/" ||
            (root.size() > r.path.size() && root.compare(0, r.path.size(), r.path) == 0 &&
             root[r.path.size()] == '/');
        if (holds && !effective_watch(c, r)) return false;
    }
    return true;
}

void Daemon::start_live() {
    const Config& c = options_.config;
    if (!c.watch) {
        spdlog::info("live index off (watch = false): roots are current as of their last scan");
        return;
    }
    LiveMonitor::Options lo;
    lo.backend = c.watch_backend;
    lo.settle = c.watch_settle;
    lo.max_delay = c.watch_max_delay;
    lo.prune = c.prune;
    // A copy: the monitor thread must not read the configuration a reload rewrites.
    std::vector<std::pair<std::string, bool>> ofs;
    for (const RootConfig& r : c.roots) ofs.emplace_back(r.path, effective_one_file_system(c, r));
    lo.one_file_system = [ofs = std::move(ofs),
                          fallback = c.one_file_system](const std::string& root) {
        for (const auto& [path, value] : ofs) {
            if (path == root) return value;
        }
        return fallback;
    };
    lo.on_changes = [this](LiveChanges changes) {
        scans_->submit_live(std::move(changes.dirs), std::move(changes.inodes), changes.oldest);
    };
    lo.on_root_event = [this](const monitor::RootEvent& e) { on_root_event(e); };
    if (auto st = LiveMonitor::start(std::move(lo), &live_); !st) {
        spdlog::error("live index unavailable: {}; roots are current as of their last scan",
                      st.to_string());
        live_.reset();
        return;
    }
    // Every root the index holds, and every configured root: followed from now on. What
    // changed while no daemon was watching is unknown, so each indexed root is rescanned once
    // (incrementally: unchanged directories are not rewritten). The monitor starts first so
    // that changes during that rescan are applied after it.
    std::vector<std::string> roots;
    {
        storage::Database db;
        if (auto st = storage::Database::open(c.db_path, storage::OpenMode::read_only, &db); st) {
            std::vector<ipc::RootInfo> indexed;
            if (auto lst = list_roots(db, &indexed); lst) {
                for (ipc::RootInfo& r : indexed) roots.push_back(std::move(r.root));
            }
        }
    }
    const std::size_t indexed = roots.size();
    for (const RootConfig& r : c.roots) {
        if (auto resolved = resolve_scan_root(r.path)) roots.push_back(resolved.value());
    }
    for (std::size_t i = 0; i < roots.size(); ++i) {
        if (!may_watch(roots[i])) continue;
        live_->watch(roots[i]);
        if (i >= indexed) continue;  // never indexed: its first scan is queued by the schedule
        struct stat st {};
        if (::lstat(roots[i].c_str(), &st) != 0) continue;  // not there (yet): nothing to catch up
        if (auto job = scans_->enqueue(roots[i], ScanOrigin::Live); job) {
            spdlog::info(
                "live index: catching up on {} (changes while wsindexd was not running"
                " are unknown: an incremental rescan)",
                ipc::log_bytes(roots[i]));
        }
    }
}

void Daemon::on_root_event(const monitor::RootEvent& e) {
    const std::string root = ipc::log_bytes(e.root);  // for the log lines below: escaped
    switch (e.kind) {
        case monitor::RootEventKind::overflow:
        case monitor::RootEventKind::unresolvable:
        case monitor::RootEventKind::mark_lost: {
            // Never keep a wrong index silently: rescan what may have been missed (the
            // smallest subtree that covers it, when the monitor knows one).
            const std::string& target = e.subtree.empty() ? e.root : e.subtree;
            spdlog::warn("live index: {} ({}): rescanning {}", monitor::to_string(e.kind), e.detail,
                         ipc::log_bytes(target));
            if (const core::UniqueFd there(core::open_dir_absolute(target, O_PATH));
                there.valid()) {
                (void)scans_->enqueue(target, ScanOrigin::Live);
            }
            if (e.kind == monitor::RootEventKind::mark_lost) {
                live_->unwatch(e.root);
                live_->watch(e.root);  // mark the file system that is there now
            }
            break;
        }
        case monitor::RootEventKind::root_deleted:
        case monitor::RootEventKind::root_moved: {
            live_->unwatch(e.root);
            // A root that is gone must not live on in the index: a root a client scanned is
            // forgotten; a configured one stays (it may come back, e.g. a remount) until the
            // configuration drops it.
            const bool configured = scans_->is_configured_root(e.root);
            const char* what =
                e.kind == monitor::RootEventKind::root_deleted ? "deleted" : "moved away";
            if (configured) {
                spdlog::warn(
                    "live index: the configured root {} was {} ({}); its rows stay until"
                    " it comes back and is rescanned, or leaves the configuration",
                    root, what, e.detail);
            } else {
                spdlog::warn("live index: the root {} was {} ({}); forgetting it", root, what,
                             e.detail);
                scans_->forget(e.root, ForgetOrigin::Vanished, {});
            }
            break;
        }
        case monitor::RootEventKind::needs_periodic:
            spdlog::warn(
                "live index: {} is too large for the inotify watch budget ({}); changes"
                " beyond it are found by its periodic rescans",
                root, e.detail);
            break;
    }
}

}  // namespace wsindex::daemon
