// Query handlers: wsindex.Find, Du, Errors and Scans — on query threads, filtered per caller.
#include <regex.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "daemon/handlers.hpp"
#include "daemon/index_queries.hpp"
#include "daemon/scan_visibility.hpp"
#include "daemon/visible_du.hpp"
#include "ipc/bytes_codec.hpp"
#include "ipc/find_reply_writer.hpp"
#include "storage/path_range.hpp"
#include "storage/queries.hpp"
#include "storage/regex_guard.hpp"

namespace wsindex::daemon {
namespace {

// How long a find waits for the name index's layer of a live batch (QueryPool::names_at_least).
constexpr std::chrono::milliseconds kNamesWait{200};

std::int64_t clamp_to_int64(std::uint64_t v) {
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    return static_cast<std::int64_t>(std::min(v, kMax));
}

// "/a/b/" -> "/a/b"; "/" stays.
std::string without_trailing_slash(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
}

// A bad regex is the caller's mistake: say so before SQLite reports it as a query failure.
// Patterns that would make regcomp or regexec run away are refused before regcomp sees them.
std::optional<ipc::Error> check_regex(const std::string& pattern, bool icase) {
    if (auto why = storage::regex_refusal(pattern)) return ipc::invalid_parameter("pattern", *why);
    regex_t re;
    const int rc =
        ::regcomp(&re, pattern.c_str(), REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
    if (rc == 0) {
        ::regfree(&re);
        return std::nullopt;
    }
    char buf[256];
    ::regerror(rc, &re, buf, sizeof buf);
    return ipc::invalid_parameter("pattern", std::string("is not a valid extended regex: ") + buf);
}

storage::FindQuery to_query(const ipc::FindParams& p) {
    storage::FindQuery q;
    q.pattern = p.pattern.value_or("");
    switch (p.match) {
        case ipc::MatchMode::Substring:
            q.match = storage::NameMatch::substring;
            break;
        case ipc::MatchMode::Glob:
            q.match = storage::NameMatch::glob;
            break;
        case ipc::MatchMode::Regex:
            q.match = storage::NameMatch::regex;
            break;
    }
    q.ignore_case = p.case_insensitive;
    q.types = p.types;
    if (p.min_size) q.min_size = clamp_to_int64(*p.min_size);
    if (p.max_size) q.max_size = clamp_to_int64(*p.max_size);
    if (p.newer_ns && *p.newer_ns < std::numeric_limits<std::int64_t>::max()) {
        q.min_mtime_ns = *p.newer_ns + 1;  // strictly newer
    }
    if (p.under) q.under = without_trailing_slash(*p.under);
    q.metadata = p.metadata;
    return q;
}

// The answer about a path that is not an indexed directory, or one the caller may not see.
ipc::Error not_indexed_directory(const std::string& path) {
    return ipc::make_error(ipc::ErrorKind::NotIndexed,
                           "not an indexed directory: " + ipc::display_bytes(path),
                           nlohmann::json{{"path", ipc::encode_bytes(path)}});
}

// The answer about a path the index does not hold, or one the caller may not see.
ipc::Error not_in_index(const std::string& path) {
    return ipc::make_error(ipc::ErrorKind::NotIndexed,
                           "not in the index: " + ipc::display_bytes(path),
                           nlohmann::json{{"path", ipc::encode_bytes(path)}});
}

void find(HandlerContext& ctx, QueryContext& q, const ipc::PeerCredentials& peer,
          const ipc::FindParams& p, ipc::Responder r) {
    if (p.match == ipc::MatchMode::Regex) {
        if (auto bad = check_regex(p.pattern.value_or(""), p.case_insensitive)) {
            r.fail(*bad);
            return;
        }
    }
    if (p.newer_ns && *p.newer_ns == std::numeric_limits<std::int64_t>::max()) {
        r.reply(ipc::to_json(ipc::FindReply{}));  // nothing is newer than the end of time
        return;
    }
    const bool streaming = r.streaming();
    // The daemon's cap, whatever the caller asked (0: none; streamed answers are produced and
    // sent a batch at a time, so no limit is safe); unstreamed answers must fit one message.
    constexpr std::size_t kNoLimit = std::numeric_limits<std::size_t>::max();
    std::size_t cap = ctx.limits.max_find_results == 0 ? kNoLimit : ctx.limits.max_find_results;
    if (!streaming) cap = std::min(cap, ctx.limits.max_unstreamed_find_results);
    const std::size_t want =
        p.limit == 0 ? cap : static_cast<std::size_t>(std::min<std::uint64_t>(p.limit, cap));

    storage::FindQuery query = to_query(p);
    std::shared_ptr<const storage::NameIndex> names = q.names;
    if (names && q.pool != nullptr && query.match == storage::NameMatch::substring) {
        // Right after a live batch the name index is a few milliseconds behind the database
        // (its layer is being read) and the find would scan every name in SQL: wait for it.
        std::int64_t generation = -1;
        if (q.db.query_int64("SELECT value FROM meta WHERE key = 'generation'", &generation) &&
            names->generation() != generation) {
            names = q.pool->names_at_least(generation, kNamesWait);
        }
    }
    storage::Queries queries(q.db, names.get(), q.search);
    const CallerView view = make_caller_view(ctx.seams, peer);
    const PathFilter& visible = view.can_see;
    if (!query.under.empty()) {
        // docs/protocol.md: a directory the index does not hold is NotIndexed, not "no matches".
        // One the caller may not see answers the same (docs/security.md, "Paths asked for"):
        // visibility is judged first, and the index is asked either way.
        const bool hidden = !visible(query.under);
        std::vector<storage::DirTotalsRow> dir;
        if (auto st = queries.dir_totals(query.under, 0, &dir); !st) {
            r.fail(storage_failure(ctx, "find", st));
            return;
        }
        if (hidden || dir.empty()) {
            r.fail(not_indexed_directory(query.under));
            return;
        }
    }
    // One more than wanted tells whether the result was cut. Only for a caller who sees every
    // row may the index stop there: anyone else's limit counts visible rows, so the query runs
    // until the sink below has `want` of them (rows stream through it; nothing accumulates).
    query.limit = want == kNoLimit || !view.sees_everything ? 0 : want + 1;
    // Entries are written as JSON text as they are read (no FindReply, no DOM: those were a
    // third of a find's CPU), a batch per reply: memory stays bounded by the batch.
    ipc::FindReplyWriter batch;
    bool truncated = false;
    std::size_t sent = 0;
    bool closed = false;
    const core::Status st = queries.find(query, [&](storage::FileRow& row) {
        if (!visible(row.path)) return true;
        if (sent == want) {
            truncated = true;
            return false;
        }
        if (p.metadata) {
            batch.add(row.path, row.type,
                      row.has_stat && row.size > 0 ? static_cast<std::uint64_t>(row.size) : 0,
                      row.has_stat ? row.mtime_ns : 0);
        } else {
            batch.add_path(row.path, row.type);  // whatever answered: the caller asked for less
        }
        ++sent;
        if (streaming && batch.entries() >= ctx.limits.find_batch) {
            // Blocks while the client is behind (backpressure); Closed: it went away.
            if (r.more_text(batch.take()) != ipc::SendResult::Sent) {
                closed = true;
                return false;
            }
        }
        return true;
    });
    if (closed) return;
    if (!st) {
        r.fail(storage_failure(ctx, "find", st));
        return;
    }
    if (p.limit == 0 && truncated) {
        spdlog::debug("find cut at the daemon's cap of {} results", want);
    }
    r.reply_text(batch.take(truncated));
}

ipc::DuEntry du_entry(const storage::DirTotalsRow& row, std::uint32_t base_depth) {
    ipc::DuEntry e;
    e.path = row.path;
    e.depth = row.depth >= base_depth ? row.depth - base_depth : 0;
    e.size = static_cast<std::uint64_t>(std::max<std::int64_t>(0, row.size));
    e.disk = static_cast<std::uint64_t>(std::max<std::int64_t>(0, row.blocks)) * 512;
    e.files = static_cast<std::uint64_t>(std::max<std::int64_t>(0, row.files));
    e.dirs = static_cast<std::uint64_t>(std::max<std::int64_t>(0, row.dirs));
    return e;
}

// The entry at `path` as one du row when the index holds it as a non-directory (none if not).
core::Status file_totals(storage::Queries& queries, const std::string& path,
                         std::vector<storage::DirTotalsRow>* rows) {
    storage::FileRow entry;
    bool found = false;
    if (auto st = queries.entry(path, &entry, &found); !st || !found) return st;
    if (entry.type == 'd') return {};  // a directory without totals: not indexed below it
    storage::DirTotalsRow row;
    row.path = path;
    row.depth = storage::path_depth(path);
    row.size = entry.has_stat ? entry.size : 0;
    row.blocks = entry.has_stat ? entry.blocks : 0;
    row.files = 1;
    rows->push_back(std::move(row));
    return {};
}

ipc::DuEntryStat entry_stat(const storage::FileRow& row) {
    ipc::DuEntryStat st;
    st.type = row.type;
    st.has_stat = row.has_stat;
    st.size = static_cast<std::uint64_t>(std::max<std::int64_t>(0, row.size));
    st.blocks = static_cast<std::uint64_t>(std::max<std::int64_t>(0, row.blocks));
    st.mtime_ns = row.mtime_ns;
    st.ctime_ns = row.ctime_ns;
    st.mode = row.mode;
    st.uid = row.uid;
    st.gid = row.gid;
    st.dev = row.dev;
    st.ino = row.ino;
    st.nlink = row.nlink;
    st.error = row.error;
    return st;
}

// DuParams::children: the path's own columns, its visible non-directory entries as rows of
// their own, and the columns of each visible subdirectory on the row the totals gave it (or a
// row of zero totals when it has none, e.g. a directory that could not be listed).
core::Status add_children(storage::Queries& queries, const std::string& path,
                          const PathFilter& visible, std::vector<ipc::DuEntry>* entries,
                          std::size_t first) {
    storage::FileRow self;
    bool found = false;
    if (auto st = queries.entry(path, &self, &found); !st) return st;
    if (found && first < entries->size()) (*entries)[first].stat = entry_stat(self);
    std::vector<storage::FileRow> rows;
    if (auto st = queries.entries_in(path, &rows); !st) return st;
    std::unordered_map<std::string_view, std::size_t> dirs;  // path -> index in entries
    for (std::size_t i = first; i < entries->size(); ++i) {
        if ((*entries)[i].depth == 1) dirs.emplace((*entries)[i].path, i);
    }
    std::vector<ipc::DuEntry> extra;
    for (const storage::FileRow& row : rows) {
        if (!visible(row.path)) continue;
        if (row.type == 'd') {
            if (auto it = dirs.find(row.path); it != dirs.end()) {
                (*entries)[it->second].stat = entry_stat(row);
                continue;
            }
        }
        ipc::DuEntry e;
        e.path = row.path;
        e.depth = 1;
        if (row.type != 'd') {
            e.size = static_cast<std::uint64_t>(std::max<std::int64_t>(0, row.size));
            e.disk = static_cast<std::uint64_t>(std::max<std::int64_t>(0, row.blocks)) * 512;
            e.files = 1;
        }
        e.stat = entry_stat(row);
        extra.push_back(std::move(e));
    }
    for (auto& e : extra) entries->push_back(std::move(e));
    return {};
}

// The reply in one message, or, when the caller asked for "more", in batches well under the
// message cap (a directory of many thousands of entries does not fit in one).
void send_du(ipc::Responder& r, ipc::DuReply&& reply) {
    constexpr std::size_t kBatchBytes = 256 * 1024;
    // Per entry: the numbers and field names, plus the path (at most twice as long encoded).
    constexpr std::size_t kEntryOverhead = 320;
    if (r.streaming()) {
        ipc::DuReply batch;
        std::size_t bytes = 0;
        for (ipc::DuEntry& e : reply.entries) {
            const std::size_t size = kEntryOverhead + 2 * e.path.size();
            if (!batch.entries.empty() && bytes + size > kBatchBytes) {
                if (r.more(ipc::to_json(batch)) != ipc::SendResult::Sent) return;
                batch.entries.clear();
                bytes = 0;
            }
            bytes += size;
            batch.entries.push_back(std::move(e));
        }
        r.reply(ipc::to_json(batch));
        return;
    }
    r.reply(ipc::to_json(reply));
}

void du(HandlerContext& ctx, QueryContext& q, const ipc::PeerCredentials& peer,
        const ipc::DuParams& p, ipc::Responder r) {
    const CallerView view = make_caller_view(ctx.seams, peer);
    const PathFilter& visible = view.can_see;
    storage::Queries queries(q.db, q.names.get());
    std::vector<std::string> paths;
    if (p.path) {
        std::string path = without_trailing_slash(*p.path);
        if (!visible(path)) {
            // Answered exactly as a path the index does not hold, after the same lookups
            // (docs/security.md, "Paths asked for"): a directory's totals row, then its entry.
            std::vector<storage::DirTotalsRow> ignored;
            core::Status st = queries.dir_totals(path, 0, &ignored);
            ignored.clear();
            if (st) st = file_totals(queries, path, &ignored);
            if (!st) {
                r.fail(storage_failure(ctx, "du", st));
                return;
            }
            r.fail(not_in_index(path));
            return;
        }
        paths.push_back(std::move(path));
    } else {
        std::vector<ipc::RootInfo> roots;
        if (auto st = list_roots(q.db, &roots); !st) {
            r.fail(storage_failure(ctx, "du: reading the indexed roots", st));
            return;
        }
        for (ipc::RootInfo& root : roots) paths.push_back(std::move(root.root));
    }
    ipc::DuReply reply;
    // children lists one directory: its subdirectories' totals at least.
    const bool children = p.children && p.path && p.top == 0;
    const std::uint32_t depth = children ? std::max<std::uint32_t>(p.depth, 1) : p.depth;
    for (const std::string& path : paths) {
        const std::size_t first = reply.entries.size();
        std::vector<storage::DirTotalsRow> rows;
        core::Status st;
        if (p.top > 0) {
            st = queries.dir_totals(path, 0, &rows);
            std::vector<storage::DirTotalsRow> biggest;
            // Within --depth levels below the path; depth 0: any depth (docs/protocol.md).
            if (st) {
                st = queries.biggest_dirs(path, static_cast<std::size_t>(p.top), &biggest, p.depth);
            }
            rows.insert(rows.end(), biggest.begin(), biggest.end());
        } else {
            st = queries.dir_totals(path, depth, &rows);
        }
        if (st && rows.empty() && p.path) {
            // Not a directory of the index: a file (or a symlink, ...) has a size too, as
            // du -sb FILE says; only a path the index does not hold at all is NotIndexed.
            st = file_totals(queries, path, &rows);
        }
        if (!st) {
            r.fail(storage_failure(ctx, "du", st));
            return;
        }
        if (rows.empty() && p.path) {
            r.fail(not_in_index(path));
            return;
        }
        // The precomputed totals count everything below: only for callers who may list all
        // of it; anyone else gets totals over what they may see (docs/security.md).
        bool whole = false;
        if (auto st2 = sees_whole_subtree(q.db, path, view, &whole); !st2) {
            r.fail(storage_failure(ctx, "du", st2));
            return;
        }
        if (!whole) {
            if (auto st2 = visible_du_rows(q.db, path, view, depth, p.top, &reply.entries); !st2) {
                r.fail(storage_failure(ctx, "du", st2));
                return;
            }
        } else {
            const std::uint32_t base = storage::path_depth(path);
            for (const storage::DirTotalsRow& row : rows) {
                if (visible(row.path)) reply.entries.push_back(du_entry(row, base));
            }
        }
        if (children) {
            if (auto st2 = add_children(queries, path, visible, &reply.entries, first); !st2) {
                r.fail(storage_failure(ctx, "du", st2));
                return;
            }
        }
    }
    send_du(r, std::move(reply));
}

void errors(HandlerContext& ctx, QueryContext& q, const ipc::PeerCredentials& peer,
            const ipc::ErrorsParams& p, ipc::Responder r) {
    ipc::ErrorsReply reply;
    if (p.scan_id) {
        ipc::ScanInfo info;
        bool found = false;
        if (auto st = get_scan(q.db, *p.scan_id, &info, &found); !st) {
            r.fail(storage_failure(ctx, "errors", st));
            return;
        }
        if (!found) {
            r.fail(ipc::make_error(ipc::ErrorKind::NoSuchScan,
                                   "no scan with id " + std::to_string(*p.scan_id),
                                   nlohmann::json{{"scan_id", *p.scan_id}}));
            return;
        }
        reply.scan_id = *p.scan_id;
    } else if (auto st = latest_complete_scan(q.db, &reply.scan_id); !st) {
        r.fail(storage_failure(ctx, "errors", st));
        return;
    }
    std::vector<ErrorRow> rows;
    if (auto st = list_errors(q.db, p.scan_id, &rows); !st) {
        r.fail(storage_failure(ctx, "errors", st));
        return;
    }
    const PathFilter visible = make_path_filter(ctx.seams, peer);
    // Streams like find; unstreamed, the cap keeps the reply within the message limit.
    const bool streaming = r.streaming();
    std::size_t cap = ctx.limits.max_find_results == 0 ? std::numeric_limits<std::size_t>::max()
                                                       : ctx.limits.max_find_results;
    if (!streaming) cap = std::min(cap, ctx.limits.max_unstreamed_find_results);
    const std::size_t want = p.limit == 0 ? cap : std::min<std::size_t>(p.limit, cap);
    std::size_t sent = 0;
    for (ErrorRow& row : rows) {
        if (sent >= want) break;
        if (!visible(row.path)) continue;
        ++sent;
        ipc::ErrorEntry e;
        e.path = std::move(row.path);
        e.error = row.error;
        const char* name = ::strerrorname_np(row.error);
        e.error_name = name != nullptr ? name : "E" + std::to_string(row.error);
        e.message = row.message.empty() ? std::strerror(row.error) : row.message;
        reply.errors.push_back(std::move(e));
        if (streaming && reply.errors.size() >= ctx.limits.find_batch) {
            if (r.more(ipc::to_json(reply)) != ipc::SendResult::Sent) return;
            reply.errors.clear();
        }
    }
    r.reply(ipc::to_json(reply));
}

void scans(HandlerContext& ctx, QueryContext& q, const ipc::PeerCredentials& peer,
           const ipc::ScansParams& p, ipc::Responder r) {
    ipc::ScansReply reply;
    if (auto st = list_scans(q.db, p.limit, &reply.scans); !st) {
        r.fail(storage_failure(ctx, "scans", st));
        return;
    }
    // The running scan's row holds the counts of its last commit; the live job knows more. A
    // row still `running` of a scan this process ended could not be updated (disk full): the
    // job says how it ended.
    const ScanSnapshot snap = ctx.scans.snapshot();
    for (ipc::ScanInfo& s : reply.scans) {
        if (s.state != ipc::ScanState::Running) continue;
        if (snap.running && snap.running->info().scan_id == s.scan_id) {
            s = snap.running->info();
            continue;
        }
        for (const auto& job : snap.ended) {
            if (job->info().scan_id == s.scan_id) s = job->info();
        }
    }
    const CallerView view = make_caller_view(ctx.seams, peer);
    ScanRedactor redactor(q.db, view);
    for (ipc::ScanInfo& s : reply.scans) {
        if (auto st = redactor.redact(&s); !st) {
            r.fail(storage_failure(ctx, "scans", st));
            return;
        }
    }
    r.reply(ipc::to_json(reply));
}

template <class Params, class Fn>
void add_query(ipc::Server& server, std::string_view name, HandlerContext& ctx, Fn fn) {
    server.add_typed_method<Params>(std::string(name), [&ctx, fn](const ipc::Call& call, Params p,
                                                                  ipc::Responder r) {
        const ipc::PeerCredentials peer = call.peer;
        submit_query(ctx, peer, r, [&ctx, fn, peer, p = std::move(p), r](QueryContext& q) mutable {
            fn(ctx, q, peer, p, std::move(r));
        });
    });
}

}  // namespace

void register_query_handlers(ipc::Server& server, HandlerContext& ctx) {
    add_query<ipc::FindParams>(server, ipc::method::kFind, ctx, find);
    add_query<ipc::DuParams>(server, ipc::method::kDu, ctx, du);
    add_query<ipc::ErrorsParams>(server, ipc::method::kErrors, ctx, errors);
    add_query<ipc::ScansParams>(server, ipc::method::kScans, ctx, scans);
}

}  // namespace wsindex::daemon
