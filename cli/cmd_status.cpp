// wsctl status: the daemon, the running scan live, the queue, the workers and the indexed roots.
#include <cstdio>
#include <string>

#include "cli/commands.hpp"
#include "cli/format.hpp"
#include "cli/progress.hpp"
#include "ipc/methods.hpp"

namespace wsindex::cli {

namespace {

// The KEPT CURRENT column: how the live index follows the root (docs/live-index.md).
std::string kept_current(const ipc::RootInfo& root, bool live_on) {
    if (root.live.empty()) return live_on ? "rescans only (watch = false)" : "rescans only";
    std::string out = root.live == "periodic" ? "periodic rescans" : "live (" + root.live;
    if (root.live == "inotify") out += ", " + format_count(root.live_watches) + " watches";
    if (root.live != "periodic") out += ")";
    if (root.live_overflows > 0) {
        out += ", " + format_count(root.live_overflows) + " overflows";
    }
    if (root.live_changes_per_second >= 0.05) {
        char rate[32];
        std::snprintf(rate, sizeof rate, "%.1f", root.live_changes_per_second);
        out += ", " + std::string(rate) + " dirs/s";
    }
    return out;
}

// "of /path", or what stands for a root the daemon would not name to this caller.
std::string scan_root(const ipc::ScanInfo& scan) {
    return scan.root_hidden ? std::string("a directory you cannot see") : printable(scan.root);
}

// Counts withheld by the daemon (docs/security.md): they would describe directories this
// caller may not list.
constexpr const char* kCountsHidden = "counts hidden (you may not list everything below it)";

std::string render_last_failed(const ipc::ScanInfo& f) {
    std::string out = "last failed: scan " + std::to_string(f.scan_id) + " of " + scan_root(f) +
                      ", " + std::string(ipc::scan_state_name(f.state));
    if (f.finished_ns != 0) out += " at " + format_time_ns(f.finished_ns);
    if (!f.error.empty()) {
        out += ": " + printable(f.error);
    } else if (f.counts_hidden) {
        out += " (reason hidden: you may not list everything below its root)";
    }
    return out + "\n";
}

std::string render_status(const ipc::StatusReply& s) {
    std::string out = "wsindexd " + s.server_version + ", pid " + std::to_string(s.pid) + ", up " +
                      format_duration_ms(s.uptime_ms) + "\n";
    if (s.running) {
        const auto& r = *s.running;
        out += "running: scan " + std::to_string(r.scan_id) + " of " + scan_root(r) + "\n";
        if (r.counts_hidden) {
            out += "  " + format_duration_ms(r.elapsed_ms) + ", " + kCountsHidden + "\n";
        } else {
            out += "  " + format_duration_ms(r.elapsed_ms) + ", " + format_count(r.entries) +
                   " entries (" +
                   format_count(static_cast<std::uint64_t>(r.entries_per_second + 0.5)) + "/s), " +
                   format_count(r.dirs.value_or(0)) + " dirs, " + format_count(r.errors) +
                   " errors, " + format_bytes(r.bytes.value_or(0)) + "\n";
        }
        out +=
            "  results waiting for the index writer: " + format_count(s.queue_depth) + " batches\n";
    } else {
        out += "idle: no scan running\n";
    }
    for (const auto& q : s.queued) {
        out += "queued: scan " + std::to_string(q.scan_id) + " of " + scan_root(q) + "\n";
    }
    if (s.last_failed) out += render_last_failed(*s.last_failed);
    if (s.index_rebuild) {
        const auto& b = *s.index_rebuild;
        out += "index rebuilt: damage found at " + format_time_ns(b.at_ns) + " (" +
               printable(b.detail) + ")";
        if (!b.set_aside_as.empty()) out += "; damaged file kept as " + printable(b.set_aside_as);
        out += b.pending > 0 ? "; " + format_count(b.pending) + " rescans to go\n"
                             : "; rescans done\n";
    }
    if (!s.workers.empty()) {
        Table table({{"WORKER", Table::Align::Right},
                     {"TASKS", Table::Align::Right},
                     {"STEAL TRIES", Table::Align::Right},
                     {"STEALS", Table::Align::Right},
                     {"STOLEN", Table::Align::Right},
                     {"PARKED", Table::Align::Right}});
        for (std::size_t i = 0; i < s.workers.size(); ++i) {
            const auto& w = s.workers[i];
            table.add_row({std::to_string(i), format_count(w.tasks), format_count(w.steal_attempts),
                           format_count(w.steals), format_count(w.items_stolen),
                           format_duration_ms(w.parked_ms)});
        }
        out += "\n" + table.render();
    }
    out += "\n";
    if (s.roots.empty()) {
        out += "no indexed roots yet (wsctl scan PATH)\n";
    } else {
        // The root goes last so that long paths do not push the other columns around.
        Table ordered({{"SCAN", Table::Align::Right},
                       {"FINISHED", Table::Align::Left},
                       {"ENTRIES", Table::Align::Right},
                       {"SIZE", Table::Align::Right},
                       {"KEPT CURRENT", Table::Align::Left},
                       {"ROOT", Table::Align::Left}});
        bool any_hidden = false;
        for (const auto& root : s.roots) {
            any_hidden = any_hidden || root.counts_hidden;
            ordered.add_row({std::to_string(root.last_scan_id),
                             format_time_ns(root.last_finished_ns),
                             root.counts_hidden ? "-" : format_count(root.entries),
                             root.counts_hidden ? "-" : format_bytes(root.bytes),
                             kept_current(root, s.live.has_value()), root.root});
        }
        out += ordered.render();
        if (s.live && s.live->last_applied_ns != 0) {
            out += "live index: last change applied " + format_time_ns(s.live->last_applied_ns) +
                   ", " + format_duration_ms(s.live->lag_ms) + " after it was seen";
            if (s.live->pending_dirs > 0) {
                out += "; " + format_count(s.live->pending_dirs) + " directories pending";
            }
            if (s.live->failures > 0) {
                out += "; " + format_count(s.live->failures) + " batches failed (rescanned)";
            }
            out += "\n";
        }
        if (s.names) {
            const ipc::NameIndexInfo& n = *s.names;
            if (!n.loaded || n.generation < 0) {
                out += "name index: not current (finds read the database)\n";
            } else if (n.index_generation >= 0 && n.generation != n.index_generation) {
                // A scan or a live batch moved the index; the new snapshot is being built or
                // layered (protocol.md: names.index_generation).
                out += "name index: catching up with the index (generation " +
                       std::to_string(n.generation) + " of " + std::to_string(n.index_generation) +
                       "; until then finds read the database)\n";
            } else {
                out += "name index: " + format_count(n.names) + " names, " +
                       format_bytes(n.base_bytes) +
                       (n.file_backed ? " mapped from its file" : " in memory");
                if (n.layer_dirs > 0) {
                    out += ", " + format_count(n.layer_dirs) + " directories changed since";
                }
                out += n.trigrams ? "; trigram lists (" + format_bytes(n.trigram_bytes) +
                                        ") for fragments of 3 bytes or more, else"
                                  : std::string(";");
                out += " searched by " + std::to_string(n.search_workers) + " workers\n";
            }
        }
        if (s.fleet) {
            out += "fleet (" + s.fleet->host + "): ";
            out += s.fleet->published_generation < 0
                       ? std::string("nothing published yet")
                       : "generation " + std::to_string(s.fleet->published_generation) +
                             " published " + format_time_ns(s.fleet->published_at_ns) + ", " +
                             std::to_string(s.fleet->lag) + " behind";
            if (!s.fleet->last_error.empty()) out += "; last error: " + s.fleet->last_error;
            out += "\n";
        }
        // The same rule as `wsctl du`; a scan's own counts (`wsctl scans`, `scan --wait`) count
        // names as walked, so a tree with hard links shows two numbers: say which is which.
        out +=
            "entries and size of the index as it is now: a file with several names counts once\n";
        if (any_hidden) {
            out +=
                "-: hidden, you may not list everything below that root (wsctl du ROOT shows "
                "what you may see)\n";
        }
    }
    return out;
}

}  // namespace

int run_status(const Context& ctx) {
    auto client = connect(ctx);
    if (!client) return report(ctx, client.error());
    auto reply = client->call(ipc::method::kStatus, nlohmann::json::object());
    if (!reply) return report(ctx, reply.error());
    auto status = ipc::from_json<ipc::StatusReply>(reply.value());
    if (!status) return bad_reply(ctx, status.error());
    if (ctx.json) {
        print_json(ctx, reply.value());
    } else {
        write_out(ctx, render_status(status.value()));
    }
    return finish(ctx, 0);
}

}  // namespace wsindex::cli
