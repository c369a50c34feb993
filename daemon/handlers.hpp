// Handlers: the wsindex.* methods — what each does, on which thread, through which filter.
//
// Threads: Version and Cancel answer on the io thread (no I/O, only a mutex). Everything that
// touches the file system or the database (Scan's path checks, Find, Du, Errors, Scans, Status)
// runs as a job on the QueryPool, which answers through the Responder. Scan with wait hands its
// call to ScanWaiters (io thread). Forget checks the root on the QueryPool, then the scan thread
// removes it between scans and answers. Answers about files (Find, Du, Errors) go through the
// caller's PathFilter (seams.hpp); starting and cancelling scans through may_control.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <string_view>

#include "daemon/dupes_service.hpp"
#include "daemon/live_monitor.hpp"
#include "daemon/query_pool.hpp"
#include "daemon/scan_service.hpp"
#include "daemon/scan_waiter.hpp"
#include "daemon/seams.hpp"
#include "ipc/server.hpp"

namespace wsindex::daemon {

struct HandlerLimits {
    std::size_t max_find_results = 0;  // 0: no cap (streamed answers only)
    std::size_t max_unstreamed_find_results = 5000;
    std::size_t find_batch = 1000;  // entries per streamed reply (~100 KiB)
    std::uint64_t max_message_bytes = 0;
};

// Everything the handlers use. Owned by the Daemon; outlives the server's io thread work.
struct HandlerContext {
    boost::asio::io_context& io;
    ScanService& scans;
    QueryPool& queries;
    ScanWaiters& waiters;  // io thread only
    Seams seams;
    HandlerLimits limits;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    // The live index's roots (any thread); empty when the live index is off.
    std::function<std::vector<LiveRootStatus>()> live_roots;
    // Stops following a root that was forgotten (any thread); empty when the live index is off.
    std::function<void(const std::string&)> live_unwatch;
    // wsindex.Dupes runs (any thread); null: the method answers Internal.
    DupesService* dupes = nullptr;
    // The fleet publisher's state (any thread); empty without [fleet].
    std::function<ipc::FleetInfo()> fleet_status;
};

// Registers every method on `server` (before server.start()).
void register_handlers(ipc::Server& server, HandlerContext& context);

// Pieces registered by register_handlers, one file per group.
void register_query_handlers(ipc::Server& server, HandlerContext& context);  // query_handlers.cpp
void register_scan_handlers(ipc::Server& server, HandlerContext& context);   // scan_handlers.cpp
void register_forget_handler(ipc::Server& server, HandlerContext& context);  // forget_handler.cpp
void register_dupes_handler(ipc::Server& server, HandlerContext& context);   // dupes_handler.cpp

// Query thread: a Scan refused with NoSuchPath for an indexed top-level root that is not
// configured (a root that vanished) says how to take it out of the index (forget_handler.cpp).
ipc::Error explain_vanished_root(HandlerContext& context, QueryContext& q, std::string_view path,
                                 ipc::Error error);

// Runs `job` on the query pool as `peer`'s (each uid has its share, QueryPool), or answers Busy
// when the queue or the caller's share of it is full. Any thread.
void submit_query(HandlerContext& context, const ipc::PeerCredentials& peer,
                  ipc::Responder responder, QueryPool::Job job);

// An internal error for a failed storage call (logged; the caller sees Internal).
// A failure that says the file is damaged is reported to the scan service (report_damage).
ipc::Error storage_failure(HandlerContext& context, std::string_view what,
                           const core::Status& status);

}  // namespace wsindex::daemon
