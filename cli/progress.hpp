// Following a scan with --wait: the live progress line on a terminal, plain lines otherwise,
// and the one-line summary of a finished scan.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>

#include "ipc/methods.hpp"

namespace wsindex::cli {

// "scanning /home: 123,456 entries, 10,234 entries/s, 12.3 s, 3 errors" (errors only if any).
std::string progress_line(const ipc::ScanInfo& scan);

// "scan 3 done: /home: 123,456 entries, 2,345 dirs, 1.2 GiB, 0 errors in 12.3 s (10,000/s)";
// failed scans end with their error.
std::string scan_summary(const ipc::ScanInfo& scan);

// What `wsctl scan PATH` (without --wait) says about an accepted scan: "scan 3 running: /home",
// or "scan queued: /home" for a scan still in the queue, which has no id yet (the daemon
// numbers a scan when it starts; docs/protocol.md, ScanInfo).
std::string accepted_line(const ipc::ScanInfo& scan);

// Prints the progress of a waited-for scan request, reply by reply. On a terminal one line is
// rewritten in place (\r and erase-to-end-of-line); elsewhere a plain line is printed at most
// every plain_interval per scan and when a scan starts, so logs stay short. A scan's summary is
// printed once, when it first shows up finished. Not thread-safe (one caller).
class ProgressPrinter {
  public:
    ProgressPrinter(std::FILE* out, bool terminal,
                    std::chrono::milliseconds plain_interval = std::chrono::seconds(1));

    // One reply of the wsindex.Scan stream; `final` for the last one.
    void on_reply(const ipc::ScanReply& reply, bool final);
    // Erases a live line left on the terminal (before an error message).
    void clear();

  private:
    using Clock = std::chrono::steady_clock;

    std::FILE* out_;
    bool terminal_;
    std::chrono::milliseconds plain_interval_;
    bool live_line_ = false;              // a \r line is on the terminal
    std::set<std::uint64_t> summarised_;  // scan ids whose summary is printed
    std::set<std::uint64_t> started_;     // scan ids announced as running (plain mode)
    Clock::time_point last_plain_{};      // when the last plain progress line was printed
};

// True when every scan in `reply` finished with state done.
bool all_done(const ipc::ScanReply& reply);

}  // namespace wsindex::cli
