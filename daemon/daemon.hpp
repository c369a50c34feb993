// Daemon: wsindexd assembled — scan service, query pool, IPC server and signals on one io thread.
//
// Lifecycle: start() opens the index (writer, then readers), binds the socket, registers the
// methods and logs "ready"; run() serves on the calling thread (the io thread) until SIGTERM,
// SIGINT or request_stop(). Stopping: the server closes every connection, the running scan is
// cancelled (the writer records it as cancelled, the previous index stays), queued scans are
// dropped, the query threads finish, and the database is closed before run() returns.
// SIGHUP re-reads the configuration file: roots, intervals, prune rules, workers and the log
// level change; the socket, the database and the thread counts need a restart.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <memory>
#include <optional>
#include <string>

#include "core/status.hpp"
#include "daemon/command_line.hpp"
#include "daemon/config.hpp"
#include "daemon/fleet_publisher.hpp"
#include "daemon/handlers.hpp"
#include "daemon/live_monitor.hpp"
#include "daemon/query_pool.hpp"
#include "daemon/scan_service.hpp"
#include "daemon/scan_waiter.hpp"
#include "daemon/seams.hpp"
#include "daemon/systemd_glue.hpp"
#include "ipc/server.hpp"

namespace wsindex::daemon {

struct DaemonOptions {
    Config config;             // resolved: socket and db paths set
    CommandLine command_line;  // re-applied over the file on reload
    Seams seams;
    bool handle_signals = true;  // tests drive stop and reload themselves
    bool low_priority_scans = true;
    bool watchdog = false;  // ping systemd's watchdog from the io thread when it is enabled
    // Test seams passed to the scan service.
    std::function<void(const ScanJob&)> before_begin;
    std::function<void(const ScanJob&)> before_walk;
    std::function<void(const ScanJob&)> after_batch;
    std::size_t result_batch = 1024;
};

class Daemon {
  public:
    explicit Daemon(DaemonOptions options);
    ~Daemon();
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    // The thread that will call run(). Opens everything and listens; errors are for people.
    core::Status start();
    // Serves until stopped, then shuts down in order (see above). Call once, after start().
    void run();
    // Any thread.
    void request_stop();
    // Any thread: re-reads the configuration (what SIGHUP does). Errors are logged and the
    // running configuration is kept.
    void request_reload();

    [[nodiscard]] const Config& config() const { return options_.config; }
    // For tests: the scan service (valid between start() and the end of run()).
    [[nodiscard]] ScanService& scans() { return *scans_; }

  private:
    void wait_for_signal();
    void reload();                           // io thread
    void shutdown();                         // io thread
    void on_job_change(const ScanJob& job);  // any thread
    ScanSettings scan_settings(const Config& config) const;

    DaemonOptions options_;
    boost::asio::io_context io_{1};
    std::optional<boost::asio::signal_set> signals_;
    std::unique_ptr<FleetPublisher> fleet_;  // null without [fleet]; outlives scans_
    std::unique_ptr<ScanService> scans_;
    std::unique_ptr<QueryPool> queries_;
    std::unique_ptr<DupesService> dupes_;  // wsindex.Dupes runs
    std::unique_ptr<LiveMonitor> live_;    // null when the live index is off
    void start_live();                     // after the scan service and the query pool
    void on_root_event(const monitor::RootEvent& event);  // monitor thread
    [[nodiscard]] bool may_watch(const std::string& root) const;
    std::atomic<QueryPool*> names_owner_{nullptr};  // set once the pool exists (scan thread reads)
    std::optional<ScanWaiters> waiters_;
    std::optional<HandlerContext> handlers_;
    std::optional<ipc::Server> server_;
    std::optional<WatchdogPinger> watchdog_;
    bool stopping_ = false;  // io thread
};

}  // namespace wsindex::daemon
