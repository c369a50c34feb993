// The wsindex interface: method names and the typed parameters and replies of each method.
//
// This is the C++ form of the contract in docs/protocol.md; the daemon implements it, wsctl
// calls it. Each type has `nlohmann::json to_json(const T&)` and `Result<T> from_json<T>(json)`.
// from_json validates (types, ranges, absolute paths) and names the offending field in its
// InvalidParameter error; it ignores unknown fields. Byte strings (paths, patterns) use the
// lossless encoding of ipc/bytes_codec.hpp. Times are nanoseconds since the Unix epoch (int64),
// sizes are bytes (uint64), durations are milliseconds.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/result.hpp"

namespace wsindex::ipc {

namespace method {
inline constexpr std::string_view kVersion = "wsindex.Version";  // also the ping
inline constexpr std::string_view kScan = "wsindex.Scan";
inline constexpr std::string_view kStatus = "wsindex.Status";
inline constexpr std::string_view kCancel = "wsindex.Cancel";
inline constexpr std::string_view kFind = "wsindex.Find";
inline constexpr std::string_view kDu = "wsindex.Du";
inline constexpr std::string_view kErrors = "wsindex.Errors";
inline constexpr std::string_view kScans = "wsindex.Scans";
inline constexpr std::string_view kForget = "wsindex.Forget";
inline constexpr std::string_view kDupes = "wsindex.Dupes";
}  // namespace method

// Bumped only together with a new interface name (see kInterface in ipc/error.hpp).
inline constexpr int kProtocolVersion = 1;

// Generic decoder; specialised for every type below.
template <class T>
Result<T> from_json(const nlohmann::json& parameters);

// ---- wsindex.Version ------------------------------------------------------------------
struct VersionReply {
    std::string server_version;  // "0.1.0"
    int protocol_version = kProtocolVersion;
    std::vector<std::string> interfaces;  // {"wsindex"}
    std::uint64_t max_message_bytes = 0;
    std::int64_t pid = 0;
};

// ---- scans: shared shapes --------------------------------------------------------------
enum class ScanState { Queued, Running, Done, Failed, Cancelled };
std::string_view scan_state_name(ScanState state);  // "queued", "running", ...
std::optional<ScanState> scan_state_from_name(std::string_view name);

// One scan, live (progress) or finished (summary).
struct ScanInfo {
    std::uint64_t scan_id = 0;
    std::string root;  // bytes
    ScanState state = ScanState::Queued;
    std::int64_t started_ns = 0;   // 0 while queued
    std::int64_t finished_ns = 0;  // 0 until done/failed/cancelled
    std::uint64_t elapsed_ms = 0;
    std::uint64_t entries = 0;
    // Directories seen so far, the root included (running scans); for ended scans the
    // directories of the root's tree in the current index, known like `bytes`.
    std::optional<std::uint64_t> dirs;
    std::uint64_t errors = 0;  // recoverable per-entry errors (see wsindex.Errors)
    // Apparent size of the entries seen so far (running scans); for ended scans the root's size
    // in the current index, known only for the newest completed scan of each root.
    std::optional<std::uint64_t> bytes;
    double entries_per_second = 0;
    std::string error;  // failed scans: why (text for people); else empty
    // Withheld from this caller (docs/security.md, "Scans and status"): root_hidden — the root
    // is not visible to them, so `root` is empty; counts_hidden — the counts, `bytes` and
    // `error` would describe directories they may not list, so they are zero/absent/empty.
    // root_hidden implies counts_hidden. Sent only when true.
    bool root_hidden = false;
    bool counts_hidden = false;
};

// ---- wsindex.Scan ------------------------------------------------------------------------
struct ScanParams {
    std::vector<std::string> paths;  // absolute, at least one, bytes
    bool wait = false;               // follow the scans until they finish (use with more)
};
// Without wait: one reply, the scans as queued/started. With wait and more: a reply with
// continues every progress interval, then a final one when all scans ended.
struct ScanReply {
    std::vector<ScanInfo> scans;
};

// ---- wsindex.Status ----------------------------------------------------------------------
// One scan worker's counters as the Status reply carries them (the "workers" array).
struct PoolWorkerStatus {
    std::uint64_t tasks = 0;
    std::uint64_t steal_attempts = 0;
    std::uint64_t steals = 0;
    std::uint64_t items_stolen = 0;
    std::uint64_t parked_ms = 0;
};
struct RootInfo {
    std::string root;  // bytes
    std::uint64_t last_scan_id = 0;
    std::int64_t last_finished_ns = 0;
    std::uint64_t entries = 0;
    std::uint64_t bytes = 0;
    // `entries` and `bytes` withheld (zero): the caller may not list everything below the root.
    // Roots the caller cannot see at all are left out of the reply.
    bool counts_hidden = false;
    // How the live index keeps it current: "fanotify", "inotify", "periodic" (changes are
    // followed only by rescans), or empty (not followed: watch = false).
    std::string live;
    std::uint64_t live_watches = 0;    // inotify watches (of the daemon's inotify group)
    std::uint64_t live_changes = 0;    // changed directories reported since start
    std::uint64_t live_overflows = 0;  // times changes were lost and the root was rescanned
    double live_changes_per_second = 0;
};
// What the live index applied (StatusReply).
struct LiveInfo {
    std::uint64_t batches = 0;
    std::uint64_t dirs = 0;
    std::uint64_t rows_changed = 0;
    std::uint64_t failures = 0;
    std::int64_t last_applied_ns = 0;  // wall clock; 0: nothing applied yet
    std::uint64_t lag_ms = 0;          // of the last applied batch: first change to visible
    std::uint64_t pending_dirs = 0;
    std::uint64_t busy_ms = 0;  // scan-thread time spent on live batches
};
// One worker of the name search's range executor, over the last parallel search (StatusReply).
struct SearchWorkerInfo {
    std::uint64_t chunks = 0;
    std::uint64_t items = 0;  // names searched
    std::uint64_t steals = 0;
    std::uint64_t items_stolen = 0;
    std::uint64_t busy_us = 0;
    std::uint64_t idle_us = 0;
};
// The name index that answers finds (StatusReply; for callers who may control scans).
struct NameIndexInfo {
    bool loaded = false;                 // false: finds use SQL
    bool file_backed = false;            // the base is the mapped file next to the database
    std::int64_t generation = -1;        // of the snapshot; -1: not current (finds use SQL)
    std::int64_t index_generation = -1;  // the index's own (meta.generation) when status read it
    std::uint64_t names = 0;             // base names not masked plus the layer's
    std::uint64_t layer_names = 0;       // names of directories re-read by live batches
    std::uint64_t layer_dirs = 0;        // since the base was built
    std::uint64_t base_bytes = 0;        // the base image (page cache when file-backed)
    std::uint64_t memory_bytes = 0;      // the daemon's anonymous memory for it
    std::uint64_t base_builds = 0;       // bases built from the database by this process
    std::uint64_t layer_updates = 0;     // live batches layered
    bool trigrams = false;               // trigram lists answer fragments of >= 3 bytes
    std::uint64_t trigram_bytes = 0;     // their file next to the database (page cache)
    std::uint64_t trigram_builds = 0;    // trigram files built by this process
    std::uint64_t search_workers = 0;
    std::vector<SearchWorkerInfo> last_search;  // per worker
};
// Publishing to the fleet index on PostgreSQL (StatusReply; docs/fleet.md).
struct FleetInfo {
    std::string host;
    std::int64_t local_generation = 0;
    std::int64_t published_generation = -1;  // -1: nothing published by this process yet
    std::int64_t published_at_ns = 0;        // wall clock of the last successful publish
    std::uint64_t lag = 0;                   // generations not yet published
    std::string last_error;                  // of the last attempt; empty when it succeeded
};
// A damaged index file that the daemon set aside and rebuilds by rescanning (StatusReply).
struct IndexRebuildInfo {
    std::int64_t at_ns = 0;     // when the damage was found (wall clock)
    std::string detail;         // what SQLite reported (display text)
    std::string set_aside_as;   // the damaged file's new name (bytes); empty for callers who
                                // may not control scans
    std::uint64_t pending = 0;  // rebuild scans not ended yet (0: the new index is complete)
};

// wsindex.Dupes progress, shown by Status too.
// One worker of the range executor while a run reads (StatusReply and progress replies).
struct DupesWorkerInfo {
    std::uint64_t files = 0;  // files done in the current phase
    std::uint64_t bytes = 0;  // content read in the current phase
    // The executor's statistics of the last finished reading phase.
    std::uint64_t chunks = 0;
    std::uint64_t steals = 0;
    std::uint64_t items_stolen = 0;
    std::uint64_t busy_ms = 0;
    std::uint64_t idle_ms = 0;
};
struct DupesProgressInfo {
    std::uint64_t run_id = 0;
    std::uint64_t uid = 0;
    std::string phase;  // listing, checking, partial, full, compare, done
    std::uint64_t files_done = 0;
    std::uint64_t files_total = 0;
    std::uint64_t bytes_done = 0;   // sizes of the files done (this phase)
    std::uint64_t bytes_total = 0;  // sizes of the files of this phase
    std::uint64_t bytes_read = 0;   // content read so far
    double bytes_per_second = 0;    // bytes_read over the run's time
    std::uint64_t elapsed_ms = 0;
    std::vector<DupesWorkerInfo> workers;
};
struct StatusReply {
    std::string server_version;
    std::int64_t pid = 0;
    std::uint64_t uptime_ms = 0;
    std::optional<ScanInfo> running;  // null when idle
    std::vector<ScanInfo> queued;
    std::uint64_t queue_depth =
        0;  // the walker pool's hand-off queue: result batches not yet taken by the scan thread
    std::vector<PoolWorkerStatus> workers;
    std::vector<RootInfo> roots;
    // The newest scan that ended failed or cancelled (interrupted counts as failed), with its
    // reason in `error`; absent when there is none. Redacted like every ScanInfo.
    std::optional<ScanInfo> last_failed;
    // The last rebuild of a damaged index by this daemon process; absent when there was none.
    std::optional<IndexRebuildInfo> index_rebuild;
    // The live index; absent when it is off (watch = false).
    std::optional<LiveInfo> live;
    // wsindex.Dupes runs in progress (the caller's own; every run for those who may control
    // scans).
    std::vector<DupesProgressInfo> dupes;
    // The name index; absent when it is off (name_index = false) or the caller may not
    // control scans.
    std::optional<NameIndexInfo> names;
    // The fleet publisher; absent when [fleet] is not configured.
    std::optional<FleetInfo> fleet;
};

// ---- wsindex.Cancel ----------------------------------------------------------------------
struct CancelParams {
    std::optional<std::uint64_t> scan_id;  // absent: the running scan
};
struct CancelReply {
    std::vector<std::uint64_t> cancelled;  // ids of the cancelled scans that had one
    // Cancelled scans that had no id yet: one that was starting (its scan row not yet
    // written) and queued ones dropped with "queued": true.
    std::uint64_t unnumbered = 0;
    // wsindex.Dupes runs cancelled (a Cancel without scan_id also cancels the caller's runs;
    // every run for those who may control scans).
    std::uint64_t dupes = 0;
};

// ---- wsindex.Find ------------------------------------------------------------------------
enum class MatchMode { Substring, Glob, Regex };
std::string_view match_mode_name(MatchMode mode);  // "substring", "glob", "regex"

struct FindParams {
    std::optional<std::string> pattern;  // bytes; absent: every entry
    MatchMode match = MatchMode::Substring;
    bool case_insensitive = false;
    std::string types;  // find's %y letters ("fdlpscb"), any of them; empty: all types
    std::optional<std::uint64_t> min_size;  // bytes, inclusive
    std::optional<std::uint64_t> max_size;  // bytes, inclusive
    std::optional<std::int64_t> newer_ns;   // mtime strictly after this
    std::optional<std::string> under;       // absolute path, bytes
    std::uint64_t limit = 0;                // 0: no limit
    // false: the entries need only path and type (wsctl's plain and -0 output); the daemon
    // may then answer from its in-memory name index without reading the database.
    bool metadata = true;
};
struct FindEntry {
    std::string path;  // bytes
    char type = '?';   // find's %y letter
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    // false: size and mtime_ns were not asked for (FindParams::metadata) and are absent from
    // the JSON; they read 0.
    bool has_metadata = true;
};
// Streamed (more): replies with continues carry batches; the final one the rest (may be empty).
struct FindReply {
    std::vector<FindEntry> entries;
    bool truncated = false;  // the limit cut the result (final reply only)
};

// ---- wsindex.Du --------------------------------------------------------------------------
struct DuParams {
    std::optional<std::string> path;  // absolute, bytes; absent: every indexed root
    std::uint32_t depth = 0;          // 0: the path itself; 1: and its children ...
    std::uint64_t top = 0;            // >0: only the N largest below the path, by size
    // true (with a path, without top): the reply also lists the path's non-directory entries
    // (depth 1), and every entry up to depth 1 carries its own index columns (DuEntryStat).
    // For browsers (wsctl ui): one call per directory shown.
    bool children = false;
};
// An entry's own columns as the index holds them (docs/schema.md, `files`); only in replies to
// DuParams::children. has_stat false: the entry's lstat failed, only type and error are known.
struct DuEntryStat {
    char type = '?';  // find's %y letter
    bool has_stat = false;
    std::uint64_t size = 0;    // st_size of the entry itself
    std::uint64_t blocks = 0;  // st_blocks (512-byte units) of the entry itself
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;
    std::uint32_t mode = 0;
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint64_t nlink = 0;
    int error = 0;  // errno met reading the entry (e.g. a directory that could not be listed)
};
struct DuEntry {
    std::string path;  // bytes
    std::uint32_t depth = 0;
    std::uint64_t size = 0;   // apparent bytes, directories included, hard links once
    std::uint64_t disk = 0;   // allocated bytes (st_blocks * 512), hard links once
    std::uint64_t files = 0;  // non-directory entries below
    std::uint64_t dirs = 0;   // directories below, itself excluded
    // The caller may not list this directory or one below it: the totals count only what the
    // caller may see (docs/security.md).
    bool partial = false;
    std::optional<DuEntryStat> stat;  // only with DuParams::children, up to depth 1
};
struct DuReply {
    std::vector<DuEntry> entries;
};

// ---- wsindex.Errors ----------------------------------------------------------------------
struct ErrorsParams {
    std::optional<std::uint64_t> scan_id;  // absent: the latest scan
    std::uint64_t limit = 0;               // 0: all
};
struct ErrorEntry {
    std::string path;        // bytes
    int error = 0;           // errno
    std::string error_name;  // "EACCES"
    std::string message;     // strerror text
};
struct ErrorsReply {
    std::uint64_t scan_id = 0;
    std::vector<ErrorEntry> errors;
};

// ---- wsindex.Scans -----------------------------------------------------------------------
struct ScansParams {
    std::uint64_t limit = 0;  // 0: all, newest first
};
struct ScansReply {
    std::vector<ScanInfo> scans;
};

// ---- wsindex.Forget ----------------------------------------------------------------------
struct ForgetParams {
    std::string root;  // absolute, bytes: an indexed top-level root (as wsindex.Status lists it)
};
// What left the index: the root's totals as they were, and what else went with it.
struct ForgetReply {
    std::string root;             // bytes
    std::uint64_t entries = 0;    // the root and every entry below it
    std::uint64_t dirs = 0;       // its directories, the root included
    std::uint64_t bytes = 0;      // its apparent size
    std::uint64_t scans = 0;      // rows of the scan history (wsindex.Scans) removed with it
    std::uint64_t cancelled = 0;  // scans of it (running or queued) cancelled first
};

// ---- wsindex.Dupes ----------------------------------------------------------------------
struct DupesParams {
    std::vector<std::string> paths;  // absolute directories, bytes; empty: everything indexed
    std::uint64_t min_size = 1;      // bytes, inclusive; 0 lets empty files take part
    bool paranoid = false;           // byte comparison within each group after hashing
};
// A file of a group: one inode and every name of it the caller may see.
struct DupesFileInfo {
    std::vector<std::string> names;  // bytes, sorted
};
struct DupesGroupInfo {
    std::uint64_t size = 0;    // of each file
    std::uint64_t wasted = 0;  // size * (files - 1)
    std::vector<DupesFileInfo> files;
};
// Streamed (more): replies with continues carry `progress` (about twice a second) or a batch
// of groups; the final one the rest of the groups and the totals.
struct DupesReply {
    std::optional<DupesProgressInfo> progress;
    std::vector<DupesGroupInfo> groups;  // largest wasted first (across batches too)
    std::uint64_t wasted = 0;            // all groups (final reply)
    std::uint64_t candidates = 0;        // inodes sharing a size with another
    std::uint64_t unreadable = 0;        // left out: not readable by the caller, or failed
    std::uint64_t cached = 0;            // hashes taken from the index
    std::uint64_t hashed = 0;            // hashes computed
    std::uint64_t files_read = 0;        // content read by this run
    std::uint64_t bytes_read = 0;
    std::vector<std::string> changed;  // bytes: files that changed since they were indexed
    std::uint64_t elapsed_ms = 0;
};

nlohmann::json to_json(const DupesParams& v);
nlohmann::json to_json(const DupesWorkerInfo& v);
nlohmann::json to_json(const DupesProgressInfo& v);
nlohmann::json to_json(const DupesFileInfo& v);
nlohmann::json to_json(const DupesGroupInfo& v);
nlohmann::json to_json(const DupesReply& v);
template <>
Result<DupesParams> from_json<DupesParams>(const nlohmann::json& j);
template <>
Result<DupesProgressInfo> from_json<DupesProgressInfo>(const nlohmann::json& j);
template <>
Result<DupesReply> from_json<DupesReply>(const nlohmann::json& j);

// Encoders (never throw: byte strings go through encode_bytes).
nlohmann::json to_json(const VersionReply& v);
nlohmann::json to_json(const ScanInfo& v);
nlohmann::json to_json(const ScanParams& v);
nlohmann::json to_json(const ScanReply& v);
nlohmann::json to_json(const PoolWorkerStatus& v);
nlohmann::json to_json(const RootInfo& v);
nlohmann::json to_json(const IndexRebuildInfo& v);
nlohmann::json to_json(const StatusReply& v);
nlohmann::json to_json(const CancelParams& v);
nlohmann::json to_json(const CancelReply& v);
nlohmann::json to_json(const FindParams& v);
nlohmann::json to_json(const FindEntry& v);
nlohmann::json to_json(const FindReply& v);
nlohmann::json to_json(const DuParams& v);
nlohmann::json to_json(const DuEntry& v);
nlohmann::json to_json(const DuReply& v);
nlohmann::json to_json(const ErrorsParams& v);
nlohmann::json to_json(const ErrorEntry& v);
nlohmann::json to_json(const ErrorsReply& v);
nlohmann::json to_json(const ScansParams& v);
nlohmann::json to_json(const ScansReply& v);
nlohmann::json to_json(const ForgetParams& v);
nlohmann::json to_json(const ForgetReply& v);

template <>
Result<VersionReply> from_json<VersionReply>(const nlohmann::json& j);
template <>
Result<ScanInfo> from_json<ScanInfo>(const nlohmann::json& j);
template <>
Result<ScanParams> from_json<ScanParams>(const nlohmann::json& j);
template <>
Result<ScanReply> from_json<ScanReply>(const nlohmann::json& j);
template <>
Result<PoolWorkerStatus> from_json<PoolWorkerStatus>(const nlohmann::json& j);
template <>
Result<RootInfo> from_json<RootInfo>(const nlohmann::json& j);
template <>
Result<StatusReply> from_json<StatusReply>(const nlohmann::json& j);
template <>
Result<CancelParams> from_json<CancelParams>(const nlohmann::json& j);
template <>
Result<CancelReply> from_json<CancelReply>(const nlohmann::json& j);
template <>
Result<FindParams> from_json<FindParams>(const nlohmann::json& j);
template <>
Result<FindEntry> from_json<FindEntry>(const nlohmann::json& j);
template <>
Result<FindReply> from_json<FindReply>(const nlohmann::json& j);
template <>
Result<DuParams> from_json<DuParams>(const nlohmann::json& j);
template <>
Result<DuEntry> from_json<DuEntry>(const nlohmann::json& j);
template <>
Result<DuReply> from_json<DuReply>(const nlohmann::json& j);
template <>
Result<ErrorsParams> from_json<ErrorsParams>(const nlohmann::json& j);
template <>
Result<ErrorEntry> from_json<ErrorEntry>(const nlohmann::json& j);
template <>
Result<ErrorsReply> from_json<ErrorsReply>(const nlohmann::json& j);
template <>
Result<ScansParams> from_json<ScansParams>(const nlohmann::json& j);
template <>
Result<ScansReply> from_json<ScansReply>(const nlohmann::json& j);
template <>
Result<ForgetParams> from_json<ForgetParams>(const nlohmann::json& j);
template <>
Result<ForgetReply> from_json<ForgetReply>(const nlohmann::json& j);

}  // namespace wsindex::ipc
