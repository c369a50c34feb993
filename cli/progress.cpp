// Progress lines and scan summaries for wsctl scan --wait.
#include "cli/progress.hpp"

#include "cli/format.hpp"

namespace wsindex::cli {

namespace {

// The daemon withholds a scan's counters from a caller unless the index shows they may list
// everything below its root; a root never indexed shows nothing yet (docs/security.md).
constexpr const char* kCountsHidden =
    "counts withheld: the index does not show that you may list everything below it";

bool finished(ipc::ScanState state) {
    return state == ipc::ScanState::Done || state == ipc::ScanState::Failed ||
           state == ipc::ScanState::Cancelled;
}

std::string rate(double per_second) {
    return format_count(per_second > 0 ? static_cast<std::uint64_t>(per_second + 0.5) : 0);
}

}  // namespace

std::string progress_line(const ipc::ScanInfo& scan) {
    if (scan.state == ipc::ScanState::Queued) return accepted_line(scan);
    if (scan.counts_hidden) {
        return "scanning " + printable(scan.root) + ": " + format_duration_ms(scan.elapsed_ms) +
               " (" + kCountsHidden + ")";
    }
    std::string line = "scanning " + printable(scan.root) + ": " + format_count(scan.entries) +
                       " entries, " + rate(scan.entries_per_second) + " entries/s, " +
                       format_duration_ms(scan.elapsed_ms);
    if (scan.errors > 0) line += ", " + format_count(scan.errors) + " errors";
    return line;
}

// The scan's own counts are of what the walk met: a file with several names counts once per
// name. status and du read the index's directory totals, which count it once: the summary
// says which it is, so that the two numbers do not read as two answers to one question.
constexpr const char* kAsWalked = " as walked (hard links once per name)";

std::string scan_summary(const ipc::ScanInfo& scan) {
    if (scan.counts_hidden) {
        return "scan " + std::to_string(scan.scan_id) + " " +
               std::string(ipc::scan_state_name(scan.state)) + ": " + printable(scan.root) +
               ": in " + format_duration_ms(scan.elapsed_ms) + " (" + kCountsHidden + ")";
    }
    const std::string size = scan.bytes ? format_bytes(*scan.bytes) : std::string("size unknown");
    const std::string dirs =
        scan.dirs ? format_count(*scan.dirs) + " dirs" : std::string("dirs unknown");
    std::string line = "scan " + std::to_string(scan.scan_id) + " " +
                       std::string(ipc::scan_state_name(scan.state)) + ": " + printable(scan.root) +
                       ": " + format_count(scan.entries) + " entries, " + dirs + ", " + size +
                       kAsWalked + ", " + format_count(scan.errors) + " errors in " +
                       format_duration_ms(scan.elapsed_ms) + " (" + rate(scan.entries_per_second) +
                       " entries/s)";
    if (!scan.error.empty()) line += ": " + printable(scan.error);
    return line;
}

std::string accepted_line(const ipc::ScanInfo& scan) {
    const std::string id = scan.scan_id == 0 ? std::string() : " " + std::to_string(scan.scan_id);
    return "scan" + id + " " + std::string(ipc::scan_state_name(scan.state)) + ": " +
           printable(scan.root);
}

bool all_done(const ipc::ScanReply& reply) {
    for (const auto& scan : reply.scans) {
        if (scan.state != ipc::ScanState::Done) return false;
    }
    return true;
}

ProgressPrinter::ProgressPrinter(std::FILE* out, bool terminal,
                                 std::chrono::milliseconds plain_interval)
    : out_(out), terminal_(terminal), plain_interval_(plain_interval) {}

void ProgressPrinter::clear() {
    if (live_line_) {
        std::fputs("\r\x1b[K", out_);
        std::fflush(out_);
        live_line_ = false;
    }
}

void ProgressPrinter::on_reply(const ipc::ScanReply& reply, bool final) {
    // Summaries of scans that just finished, in the order the daemon lists them.
    for (const auto& scan : reply.scans) {
        if ((finished(scan.state) || final) && summarised_.insert(scan.scan_id).second) {
            clear();
            std::fprintf(out_, "%s\n", scan_summary(scan).c_str());
        }
    }
    if (final) {
        clear();
        std::fflush(out_);
        return;
    }
    // The scan to show live: the running one, else the first queued one.
    const ipc::ScanInfo* current = nullptr;
    for (const auto& scan : reply.scans) {
        if (scan.state == ipc::ScanState::Running) {
            current = &scan;
            break;
        }
        if (current == nullptr && scan.state == ipc::ScanState::Queued) current = &scan;
    }
    if (current == nullptr) return;
    if (terminal_) {
        std::fprintf(out_, "\r%s\x1b[K", progress_line(*current).c_str());
        live_line_ = true;
    } else {
        const auto now = Clock::now();
        const bool announce =
            current->state == ipc::ScanState::Running && started_.insert(current->scan_id).second;
        if (announce || now - last_plain_ >= plain_interval_) {
            std::fprintf(out_, "%s\n", progress_line(*current).c_str());
            last_plain_ = now;
        }
    }
    std::fflush(out_);
}

}  // namespace wsindex::cli
