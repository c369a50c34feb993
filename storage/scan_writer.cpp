// ScanWriter: ingest of one scan (buffered, key-sorted, batched) and its atomic swap-in.
#include "storage/scan_writer.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <ctime>
#include <utility>

#include "storage/path_range.hpp"
#include "storage/sqlite_error.hpp"

namespace wsindex::storage {
namespace {

std::int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Rolls back unless released: every early return inside a transaction leaves none open.
class TransactionGuard {
  public:
    explicit TransactionGuard(Database& db) : db_(db) {}
    TransactionGuard(const TransactionGuard&) = delete;
    TransactionGuard& operator=(const TransactionGuard&) = delete;
    ~TransactionGuard() {
        if (active_) (void)db_.exec("ROLLBACK");
    }
    core::Status begin(const char* sql = "BEGIN") {
        core::Status status = db_.exec(sql);
        active_ = status.is_ok();
        return status;
    }
    core::Status commit() {
        core::Status status = db_.exec("COMMIT");
        // A failed COMMIT (SQLITE_FULL) may leave the transaction open; the guard rolls back.
        active_ = !status.is_ok() && !db_.autocommit();
        return status;
    }

  private:
    Database& db_;
    bool active_ = false;
};

// The type letters as static bytes: binding them SQLITE_STATIC avoids a copy per row.
constexpr std::string_view kTypeLetters = "fdlpscb?";

std::string_view type_letter(core::EntryType type) {
    const std::size_t i = kTypeLetters.find(static_cast<char>(type));
    return kTypeLetters.substr(i == std::string_view::npos ? kTypeLetters.size() - 1 : i, 1);
}

// Binds through a Statement directly (the interface BindCache has, without the cache).
struct DirectBinder {
    Statement& statement;
    void bind_int64(int index, std::int64_t value) { statement.bind_int64(index, value); }
    void bind_null(int index) { statement.bind_null(index); }
    void bind_static_text(int index, std::string_view text) {
        sqlite3_bind_text(statement.handle(), index, text.data(), static_cast<int>(text.size()),
                          SQLITE_STATIC);
    }
};

// Binds columns 3..14 (type and metadata; NULL metadata without a stat) of an entries row
// whose first parameter is base + 1, through a DirectBinder or a BindCache. Every parameter
// is bound, so the statement can run without clearing its bindings.
template <class Binder>
void bind_entry_metadata(Binder&& b, const core::WalkResult& r, int base = 0) {
    b.bind_static_text(base + 3, type_letter(r.type));
    if (r.has_stat) {
        b.bind_int64(base + 4, static_cast<std::int64_t>(r.size));
        b.bind_int64(base + 5, static_cast<std::int64_t>(r.blocks));
        b.bind_int64(base + 6, r.mtime_ns);
        // NULL when equal to mtime (a file written and never chmod'ed, renamed or linked
        // since): 8 bytes less per row, ~10% of an index; the views and queries read
        // coalesce(ctime_ns, mtime_ns) (schema version 3).
        if (r.ctime_ns == r.mtime_ns) {
            b.bind_null(base + 7);
        } else {
            b.bind_int64(base + 7, r.ctime_ns);
        }
        b.bind_int64(base + 8, r.mode);
        b.bind_int64(base + 9, r.uid);
        b.bind_int64(base + 10, r.gid);
        b.bind_int64(base + 11, static_cast<std::int64_t>(r.dev));
        b.bind_int64(base + 12, static_cast<std::int64_t>(r.ino));
        b.bind_int64(base + 13, static_cast<std::int64_t>(r.nlink));
    } else {
        for (int i = 4; i <= 13; ++i) b.bind_null(base + i);
    }
    if (r.error != 0) {
        b.bind_int64(base + 14, r.error);
    } else {
        b.bind_null(base + 14);
    }
}

constexpr int kEntryColumns = 14;

// splitmix64's finalizer: every input bit moves every output bit.
std::uint64_t mix64(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// A directory's digest is the sum of this over its entries: order-free (entries arrive in
// any order). Each step below is a bijection of the state for a fixed input word (xor with
// the word, multiply by an odd constant, xor-shift), so changing any one name byte or stored
// column always changes the entry's hash; a directory's sum then misses a change only with
// ~2^-64 odds. One multiply per word and one final mix: ~70 instructions per entry, where a
// full mix per field cost ~250 (the rescan writer's largest own cost, callgrind).
// Changing this function changes every stored digest: the first rescan after such an
// upgrade rewrites each directory once (nothing is lost, it is only slower once).
std::uint64_t entry_hash(const core::WalkResult& r) {
    constexpr std::uint64_t kOdd = 0x9e3779b97f4a7c15ULL;
    const std::string_view name = r.name();
    std::uint64_t h = 0xcbf29ce484222325ULL ^ name.size();
    for (std::size_t i = 0; i < name.size(); i += 8) {
        std::uint64_t word = 0;  // the last word zero-padded: the length is in h already
        std::memcpy(&word, name.data() + i, std::min<std::size_t>(8, name.size() - i));
        h = (h ^ word) * kOdd;
        h ^= h >> 29;
    }
    const std::uint64_t fields[] = {
        static_cast<std::uint64_t>(r.type),
        r.has_stat ? 1u : 0u,
        r.size,
        r.blocks,
        static_cast<std::uint64_t>(r.mtime_ns),
        static_cast<std::uint64_t>(r.ctime_ns),
        r.mode,
        r.uid,
        r.gid,
        r.dev,
        r.ino,
        r.nlink,
        static_cast<std::uint64_t>(r.error),
    };
    for (const std::uint64_t f : fields) {
        h = (h ^ f) * kOdd;
        h ^= h >> 29;
    }
    return mix64(h);
}

}  // namespace

core::Status ScanWriter::open(const std::string& db_path, std::unique_ptr<ScanWriter>* out) {
    std::unique_ptr<ScanWriter> writer(new ScanWriter());
    if (auto s = WriterLock::acquire(db_path, &writer->lock_); !s) return s;
    if (auto s = Database::open(db_path, OpenMode::read_write, &writer->db_); !s) return s;
    if (auto s = writer->prepare_statements(); !s) return s;
    if (auto s = writer->recover(); !s) return s;
    *out = std::move(writer);
    return {};
}

core::Status ScanWriter::prepare_statements() {
    // OR FAIL on the inserts that write many rows per statement: with the default (ABORT)
    // SQLite keeps a statement journal so that a conflict can undo just that statement,
    // copying every existing page the statement touches first (a temp file once it passes
    // 64 KiB). A conflict here is fatal to the scan anyway (the transaction is rolled back
    // and the scan's rows removed), so the journal bought nothing: without it the swap of
    // the lopsided 1M tree went 0.25 -> 0.14 s (docs/schema.md).
    core::Status s = db_.prepare(
        "INSERT OR FAIL INTO entries(dir, name, type, size, blocks, mtime_ns, ctime_ns, mode,"
        " uid, gid, dev, ino, nlink, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
        "?12, ?13,"
        " ?14)",
        &insert_entry_);
    if (s) {
        // The same insert for kRowsPerInsert rows: one statement execution (start, halt,
        // reset: ~1k instructions) per kRowsPerInsert rows instead of per row.
        std::string sql =
            "INSERT OR FAIL INTO entries(dir, name, type, size, blocks, mtime_ns, ctime_ns,"
            " mode, uid, gid, dev, ino, nlink, error) VALUES ";
        for (std::size_t row = 0; row < kRowsPerInsert; ++row) {
            sql += row == 0 ? "(" : ",(";
            for (int c = 0; c < kEntryColumns; ++c) sql += c == 0 ? "?" : ",?";
            sql += ")";
        }
        s = db_.prepare(sql, &insert_entries_);
        insert_entries_bound_.attach(&insert_entries_, insert_entries_.parameter_count());
    }
    if (s) {
        // OR IGNORE: two names of one inode in one directory count once there anyway.
        s = db_.prepare(
            "INSERT OR IGNORE INTO links(dir, dev, ino, size, blocks) VALUES (?,?,?,?,?)",
            &insert_link_);
    }
    if (s) {
        s = db_.prepare("INSERT INTO errors(scan_id, path, errno, message) VALUES (?,?,?,?)",
                        &insert_error_);
    }
    if (s) {
        s = db_.prepare("UPDATE scans SET entries = ?, errors = ?, dir_max = ? WHERE id = ?",
                        &update_progress_);
    }
    return s;
}

core::Status ScanWriter::recover() {
    // We hold the writer lock, so a `running` scan belongs to a process that died.
    if (auto s = db_.exec(
            "UPDATE scans SET state = 'interrupted', finished_ns = " + std::to_string(now_ns()) +
            ", error = 'the indexing process ended during the scan'"
            " WHERE state = 'running'");
        !s) {
        return s;
    }
    Statement leftovers;
    if (auto s = db_.prepare("SELECT id, dir_base, dir_max FROM scans"
                             " WHERE state != 'complete' AND cleared = 0",
                             &leftovers);
        !s) {
        return s;
    }
    std::vector<std::array<std::int64_t, 3>> scans;
    for (bool row = true;;) {
        if (auto s = leftovers.step(&row); !s) return s;
        if (!row) break;
        scans.push_back(
            {leftovers.column_int64(0), leftovers.column_int64(1), leftovers.column_int64(2)});
    }
    leftovers.reset();
    // After a disk-full failure the WAL holds the failed scan's batches: checkpoint first, so
    // that the deletes below append to an empty WAL.
    if (!scans.empty()) (void)db_.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    for (const auto& [id, base, max] : scans) {
        if (auto s = clear_scan_rows(id, base, max); !s) return s;
    }
    return collect_garbage();
}

// The rows of an unsuccessful scan: its own directory-id range, which nothing visible uses.
// Deleted directory by directory in transactions of ~kClearRows rows with a checkpoint after
// each, so that the WAL stays small: this runs after a disk-full failure, where a single big
// delete transaction would need as much free space as the scan wrote.
core::Status ScanWriter::clear_scan_rows(std::int64_t scan_id, std::int64_t base,
                                         std::int64_t max) {
    constexpr std::int64_t kClearRows = 5000;
    Statement del_entries;
    Statement del_links;
    core::Status s = db_.prepare("DELETE FROM entries WHERE dir = ?", &del_entries);
    if (s) s = db_.prepare("DELETE FROM links WHERE dir = ?", &del_links);
    if (!s) return s;
    std::int64_t deleted = 0;
    for (std::int64_t dir = base; dir <= max;) {
        TransactionGuard txn(db_);
        if (auto st = txn.begin(); !st) return st;
        for (deleted = 0; dir <= max && deleted < kClearRows; ++dir) {
            del_entries.bind_int64(1, dir);
            if (auto st = del_entries.run(); !st) return st;
            deleted += db_.changes() + 1;  // +1: empty ids cost a lookup too
            del_links.bind_int64(1, dir);
            if (auto st = del_links.run(); !st) return st;
        }
        if (auto st = txn.commit(); !st) return st;
        (void)db_.exec("PRAGMA wal_checkpoint(PASSIVE)");
    }
    const std::string id = std::to_string(scan_id);
    TransactionGuard txn(db_);
    if (auto st = txn.begin(); !st) return st;
    if (auto st = db_.exec("DELETE FROM errors WHERE scan_id = " + id +
                           "; UPDATE scans SET cleared = 1 WHERE id = " + id);
        !st) {
        return st;
    }
    return txn.commit();
}

core::Status ScanWriter::begin(std::string_view root, const ScanOptions& options) {
    if (scan_id_ != 0) {
        return storage_status(StorageErrc::scan_in_progress,
                              "scan " + std::to_string(scan_id_) + " of " + root_ + " is running");
    }
    if (!is_normalized_root(root)) {
        return storage_status(StorageErrc::bad_root, "scan root '" + std::string(root) +
                                                         "' is not a normalized absolute path");
    }
    // A previous scan in this process may have failed to record its end (disk full).
    if (auto s = recover(); !s) return s;

    root_.assign(root);
    root_depth_ = path_depth(root_);
    root_parent_ = 0;
    root_name_ = root_;
    if (root_ != "/") {
        // Subtree rescan when the parent directory is indexed; otherwise a top-level root,
        // unless some indexed root contains it (then the gap would break ancestor totals).
        Statement find;
        if (auto s = db_.prepare("SELECT id FROM dirs WHERE prefix = ?", &find); !s) return s;
        std::string_view parent = parent_path(root_);
        bool row = false;
        find.bind_blob(1, dir_prefix(parent));
        if (auto s = find.step(&row); !s) return s;
        if (row) {
            root_parent_ = find.column_int64(0);
            root_name_.assign(base_name(root_));
        } else {
            for (std::string_view up = parent_path(parent); !up.empty(); up = parent_path(up)) {
                find.reset();
                find.bind_blob(1, dir_prefix(up));
                if (auto s = find.step(&row); !s) return s;
                if (row) {
                    return storage_status(StorageErrc::bad_root,
                                          "cannot rescan " + root_ + ": its parent " +
                                              std::string(parent) + " is not in the index of " +
                                              std::string(up) + "; rescan a parent");
                }
            }
        }
    }

    std::int64_t next = 0;
    if (auto s = db_.query_int64("SELECT max(coalesce((SELECT max(dir_max) FROM scans), 0),"
                                 " coalesce((SELECT max(id) FROM dirs), 0)) + 1",
                                 &next);
        !s) {
        return s;
    }
    Statement insert;
    if (auto s = db_.prepare("INSERT INTO scans(root, state, started_ns, dir_base, dir_max)"
                             " VALUES (?, 'running', ?, ?, ?)",
                             &insert);
        !s) {
        return s;
    }
    insert.bind_blob(1, root_).bind_int64(2, now_ns()).bind_int64(3, next).bind_int64(4, next - 1);
    if (auto s = insert.run(); !s) return s;
    scan_id_ = db_.last_insert_rowid();
    options_ = options;
    base_ = next;
    dir_max_ = next - 1;
    entries_ = errors_ = rows_written_ = 0;
    have_root_ = false;
    keys_changed_ = false;
    root_record_ = {};
    totals_ = {};
    pending_.clear();
    pending_.reserve(options_.rows_per_transaction);
    release_scan_memory();
    reused_dirs_ = reused_rows_ = 0;
    first_write_error_ = {};
    if (auto s = load_old_dirs(); !s) return s;
    start_checkpointer();
    return {};
}

// What a scan keeps per directory, given back once the swap or the abort no longer needs it
// (the daemon lives on between scans).
void ScanWriter::release_scan_memory() {
    open_dirs_ = {};
    digests_ = {};
    new_dirs_ = {};
    paths_.clear();
    old_dirs_ = {};
}

// The indexed directories this scan replaces, with their digests (rows written before the
// digest existed have none and are never reused).
core::Status ScanWriter::load_old_dirs() {
    old_dirs_.clear();
    const PrefixRange range = subtree_range(root_);
    // A top-level root's range usually holds most of the table: one pass over the table in id
    // order is cheaper than a search of the table for each entry of the prefix index (that
    // was ~45% of a 0.19 s load of 47k directories, perf). A subtree rescan uses the index.
    const std::string sql =
        std::string(
            "SELECT prefix, id, digest, parent, depth, size, blocks, files, dirs FROM dirs") +
        (root_parent_ == 0 ? " NOT INDEXED" : "") + " WHERE prefix >= ? AND prefix < ?";
    Statement dirs;
    if (auto s = db_.prepare(sql, &dirs); !s) return s;
    dirs.bind_blob(1, range.lo).bind_blob(2, range.hi);
    // Read first, then build the map at its final size (no rehash while it grows).
    std::vector<std::pair<std::string_view, OldDir>> rows;
    for (bool row = true;;) {
        if (auto s = dirs.step(&row); !s) return s;
        if (!row) break;
        std::optional<std::int64_t> digest;
        if (!dirs.column_is_null(2)) digest = dirs.column_int64(2);
        rows.emplace_back(
            paths_.store(dirs.column_bytes(0)),
            OldDir{dirs.column_int64(1), digest, dirs.column_int64(3), dirs.column_int64(4),
                   Totals{dirs.column_int64(5), dirs.column_int64(6), dirs.column_int64(7),
                          dirs.column_int64(8)}});
    }
    old_dirs_.reserve(rows.size());
    for (auto& [prefix, old] : rows) old_dirs_.emplace(prefix, old);
    return {};
}

// During a scan, a Checkpointer thread copies the WAL instead of this connection's automatic
// checkpoints (see checkpointer.hpp). Without one (it failed to open), autocheckpoint stays.
void ScanWriter::start_checkpointer() {
    if (options_.checkpoint_period.count() <= 0) return;
    if (Checkpointer::start(db_.path(), options_.checkpoint_period, &checkpointer_) &&
        db_.exec("PRAGMA wal_autocheckpoint=0")) {
        return;
    }
    checkpointer_.reset();
}

void ScanWriter::stop_checkpointer() {
    if (checkpointer_ == nullptr) return;
    checkpointer_.reset();
    (void)db_.exec("PRAGMA wal_autocheckpoint=1000");  // SQLite's default
}

core::Status ScanWriter::write(std::span<core::WalkResult> batch) {
    if (scan_id_ == 0) return storage_status(StorageErrc::no_scan, "write without a scan");
    if (!first_write_error_) return first_write_error_;
    if (pending_.empty()) pending_since_ = std::chrono::steady_clock::now();
    for (core::WalkResult& r : batch) {
        if (auto s = accept(r); !s) return s;
        if (pending_.size() >= options_.rows_per_transaction) {
            if (auto s = flush(); !s) return s;
            pending_since_ = std::chrono::steady_clock::now();
        }
    }
    return flush_if_due();
}

// Keeps a written or dropped row's path buffer for take_row (bounded; SSO and huge ones go).
void ScanWriter::recycle_path(std::string& path) {
    const std::size_t cap = path.capacity();
    if (cap <= 15 || cap > 256 || spare_paths_.size() >= options_.rows_per_transaction) return;
    path.clear();
    spare_paths_.push_back(std::move(path));
}

// Moves r into `into`, giving r an empty path buffer back (see spare_paths_).
void ScanWriter::take_row(core::WalkResult& r, std::vector<core::WalkResult>& into) {
    into.push_back(std::move(r));
    if (!spare_paths_.empty()) {
        r.path = std::move(spare_paths_.back());
        spare_paths_.pop_back();
    }
}

// One record of the walk: totals, its directory's digest, and (unless it is the root, kept for
// the swap) a row to write now or, in an incremental scan, once its directory is complete.
core::Status ScanWriter::accept(core::WalkResult& r) {
    totals_.add(r);
    if (root_ == "/" && r.path.size() > 1 && r.path[0] == '/' && r.path[1] == '/') {
        // A walker that joins "/" + "/" + name: keep one slash so prefixes stay canonical.
        r.path.erase(0, 1);
        if (r.name_offset > 0) --r.name_offset;
    }
    ++entries_;
    const bool is_root = r.parent_id == 0;
    const std::uint64_t own_id = r.is_dir() ? r.dir_id : 0;
    if (own_id != 0) {
        dir_max_ = std::max(dir_max_, gid(own_id));
        NewDir& d = new_dir(own_id);
        d.seen = true;
        d.parent = is_root ? 0 : r.parent_id;
        d.depth = root_depth_ + r.depth;
        const bool slash = r.path.empty() || r.path.back() != '/';
        d.prefix = paths_.store(r.path, slash ? "/" : "");
        if (incremental()) {
            OpenDir& open = open_dirs_[own_id];
            open.expected = r.children;
            open.rows.reserve(r.children);  // one allocation instead of log2(children)
            open.changed = open.changed || r.error != 0;  // a partial listing is never "unchanged"
        }
    }
    if (is_root) {
        // Its key collides with the visible old root entry: it is written by the swap.
        root_record_ = std::move(r);
        have_root_ = true;
    } else {
        const std::uint64_t parent = r.parent_id;
        if (digests_.size() <= parent) digests_.resize(parent + 1 + parent / 2, 0);
        digests_[parent] += entry_hash(r);
        if (!incremental()) {
            take_row(r, pending_);
        } else {
            OpenDir& p = open_dirs_[parent];
            ++p.received;
            p.changed = p.changed || r.error != 0;
            take_row(r, p.rows);
            if (p.received == p.expected) resolve_dir(parent);
        }
    }
    if (own_id != 0 && incremental()) {
        const auto it = open_dirs_.find(own_id);
        if (it != open_dirs_.end() && it->second.received == it->second.expected) {
            resolve_dir(own_id);
        }
    }
    return {};
}

// All records of a directory arrived: keep the indexed one if nothing changed, else queue its
// rows for writing.
void ScanWriter::resolve_dir(std::uint64_t walk_id) {
    const auto it = open_dirs_.find(walk_id);
    OpenDir& d = it->second;
    bool reuse = false;
    if (!d.changed && walk_id < new_dirs_.size() && new_dirs_[walk_id].seen) {
        NewDir& dir = new_dirs_[walk_id];
        const auto old = old_dirs_.find(dir.prefix);
        const std::uint64_t digest = walk_id < digests_.size() ? digests_[walk_id] : 0;
        reuse = old != old_dirs_.end() && old->second.digest &&
                static_cast<std::uint64_t>(*old->second.digest) == digest;
        if (reuse) {
            dir.old = &old->second;
            old->second.reused = true;
            ++reused_dirs_;
            reused_rows_ += d.rows.size();
        }
    }
    if (!reuse) {
        for (core::WalkResult& row : d.rows) pending_.push_back(std::move(row));
    } else {
        for (core::WalkResult& row : d.rows) recycle_path(row.path);
    }
    open_dirs_.erase(it);
}

core::Status ScanWriter::flush_if_due() {
    if (!first_write_error_) return first_write_error_;
    if (pending_.empty()) return {};
    if (std::chrono::steady_clock::now() - pending_since_ < options_.max_transaction_age) {
        return {};
    }
    return flush();
}

core::Status ScanWriter::flush() {
    if (pending_.empty()) return {};
    keys_changed_ = true;
    // Key order inside the transaction: each batch then touches a few B-tree leaves at the
    // right edge instead of scattered pages (ANCHORS: scattered keys cost 12x).
    // Small keys, not the 100-byte records, are what the sort moves; comparing the names'
    // first 8 bytes as one integer settles almost every comparison without touching the
    // strings (the string comparator cost ~1.5k instructions per row, 12% of the writer).
    order_.resize(pending_.size());
    for (std::uint32_t i = 0; i < order_.size(); ++i) {
        const std::string_view name = pending_[i].name();
        std::uint64_t prefix = 0;
        for (std::size_t k = 0; k < 8; ++k) {
            const auto byte = k < name.size() ? static_cast<unsigned char>(name[k]) : 0u;
            prefix = (prefix << 8) | byte;
        }
        order_[i] = SortKey{pending_[i].parent_id, prefix, i};
    }
    std::sort(order_.begin(), order_.end(), [this](const SortKey& a, const SortKey& b) {
        if (a.dir != b.dir) return a.dir < b.dir;
        if (a.name_prefix != b.name_prefix) return a.name_prefix < b.name_prefix;
        // Equal first 8 bytes (or a name shorter than 8 bytes padded with zeros, which memcmp
        // order puts first too): the full names decide.
        return pending_[a.index].name() < pending_[b.index].name();
    });
    TransactionGuard txn(db_);
    core::Status s = txn.begin();
    staged_.clear();
    for (std::size_t i = 0; s && i < order_.size(); ++i) s = insert_row(pending_[order_[i].index]);
    if (s) s = insert_staged_rows();
    if (s) {
        update_progress_.bind_int64(1, static_cast<std::int64_t>(entries_))
            .bind_int64(2, static_cast<std::int64_t>(errors_))
            .bind_int64(3, dir_max_)
            .bind_int64(4, scan_id_);
        s = update_progress_.run();
    }
    if (s) s = txn.commit();
    for (core::WalkResult& r : pending_) recycle_path(r.path);
    pending_.clear();
    if (!s) {
        first_write_error_ =
            core::Status(s.code(), "index write failed for scan " + std::to_string(scan_id_) +
                                       " of " + root_ + ": " + s.message());
        return first_write_error_;
    }
    return {};
}

core::Status ScanWriter::insert_row(core::WalkResult& r) {
    if (options_.fail_after_rows != 0 && ++rows_written_ > options_.fail_after_rows) {
        return storage_status(StorageErrc::injected_failure, "injected write failure");
    }
    if (r.error != 0) {
        insert_error_.bind_int64(1, scan_id_)
            .bind_blob_static(2, r.path)
            .bind_int64(3, r.error)
            .bind_text(4, std::strerror(r.error));
        if (auto s = insert_error_.run(); !s) return s;
        ++errors_;
    }
    const std::int64_t parent = gid(r.parent_id);
    dir_max_ = std::max(dir_max_, parent);
    // Staged into the next free row of the multi-row insert; the record stays alive in
    // pending_ (its name is bound without a copy) until flush() ends.
    const int base = static_cast<int>(staged_.size()) * kEntryColumns;
    insert_entries_bound_.bind_int64(base + 1, parent);
    insert_entries_.bind_blob_static(base + 2, r.name());
    bind_entry_metadata(insert_entries_bound_, r, base);
    staged_.push_back(StagedRow{&r, parent});
    if (staged_.size() == kRowsPerInsert) {
        staged_.clear();
        if (auto s = insert_entries_.run_keep_bindings(); !s) return s;
    }
    if (!r.is_dir() && r.has_stat && r.nlink > 1) {
        insert_link_.bind_int64(1, parent)
            .bind_int64(2, static_cast<std::int64_t>(r.dev))
            .bind_int64(3, static_cast<std::int64_t>(r.ino))
            .bind_int64(4, static_cast<std::int64_t>(r.size))
            .bind_int64(5, static_cast<std::int64_t>(r.blocks));
        if (auto s = insert_link_.run(); !s) return s;
    }
    return {};
}

// Rows left in a partly filled multi-row insert, one by one.
core::Status ScanWriter::insert_staged_rows() {
    for (const StagedRow& row : staged_) {
        insert_entry_.bind_int64(1, row.parent).bind_blob_static(2, row.record->name());
        bind_entry_metadata(DirectBinder{insert_entry_}, *row.record);
        if (auto s = insert_entry_.run_keep_bindings(); !s) return s;
    }
    staged_.clear();
    return {};
}

core::Status ScanWriter::complete() {
    if (scan_id_ == 0) return storage_status(StorageErrc::no_scan, "complete without a scan");
    core::Status s = first_write_error_;
    // Every directory's records have arrived (the walk finished); a count that never matched
    // would be a walker bug: write such a directory rather than lose its rows.
    while (!open_dirs_.empty()) {
        OpenDir& d = open_dirs_.begin()->second;
        d.changed = true;
        resolve_dir(open_dirs_.begin()->first);
    }
    if (s) s = flush();
    if (s && (!have_root_ || !root_record_.is_dir() || root_record_.dir_id != 1)) {
        s = storage_status(StorageErrc::bad_root,
                           "the walk of " + root_ + " produced no root directory record");
    }
    if (s) {
        const auto t0 = std::chrono::steady_clock::now();
        totals_.finish();
        s = swap_in();
        swap_seconds_ =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    stop_checkpointer();
    if (!s) {
        (void)abort(s, false);
        return s;
    }
    last_scan_id_ = scan_id_;
    scan_id_ = 0;
    totals_ = {};
    release_scan_memory();
    return {};
}

core::Status ScanWriter::swap_in() {
    const PrefixRange range = subtree_range(root_);
    TransactionGuard txn(db_);
    // IMMEDIATE: take the write lock before reading what the swap depends on.
    if (auto s = txn.begin("BEGIN IMMEDIATE"); !s) return s;

    // Multi-link inodes counted once below a prefix range: the part of a total that is not
    // additive, so it is recomputed for each ancestor instead of adjusted.
    Statement multi;
    if (auto s =
            db_.prepare("SELECT coalesce(sum(s), 0), coalesce(sum(b), 0), count(*) FROM"
                        " (SELECT max(l.size) AS s, max(l.blocks) AS b FROM links AS l"
                        "  JOIN dirs AS d ON d.id = l.dir WHERE d.prefix >= ?1 AND d.prefix < ?2"
                        "  GROUP BY l.dev, l.ino)",
                        &multi);
        !s) {
        return s;
    }
    auto multi_of = [&](std::string_view prefix, Totals* out) -> core::Status {
        const PrefixRange r =
            subtree_range(prefix.size() > 1 ? prefix.substr(0, prefix.size() - 1) : prefix);
        multi.bind_blob(1, r.lo).bind_blob(2, r.hi);
        bool row = false;
        if (auto s = multi.step(&row); !s) return s;
        *out = Totals{multi.column_int64(0), multi.column_int64(1), multi.column_int64(2), 0};
        multi.reset();
        return {};
    };

    // 1. Subtree rescan: read the ancestors and the old root's contribution before deleting.
    struct Ancestor {
        std::int64_t id;
        Totals single;  // its total without multi-link inodes
    };
    std::vector<Ancestor> ancestors;
    Totals old_single;
    if (root_parent_ != 0) {
        Statement dir;
        if (auto s = db_.prepare("SELECT parent, prefix, size, blocks, files, dirs FROM dirs"
                                 " WHERE id = ?",
                                 &dir);
            !s) {
            return s;
        }
        for (std::int64_t id = root_parent_; id != 0;) {
            dir.bind_int64(1, id);
            bool row = false;
            if (auto s = dir.step(&row); !s) return s;
            if (!row) break;
            Totals total{dir.column_int64(2), dir.column_int64(3), dir.column_int64(4),
                         dir.column_int64(5)};
            const std::int64_t parent = dir.column_int64(0);
            const std::string prefix(dir.column_bytes(1));
            dir.reset();
            Totals m;
            if (auto s = multi_of(prefix, &m); !s) return s;
            total -= m;
            ancestors.push_back({id, total});
            id = parent;
        }
        Statement old;
        if (auto s = db_.prepare("SELECT type, size, blocks, nlink FROM entries"
                                 " WHERE dir = ? AND name = ?",
                                 &old);
            !s) {
            return s;
        }
        old.bind_int64(1, root_parent_).bind_blob(2, root_name_);
        bool row = false;
        if (auto s = old.step(&row); !s) return s;
        if (row) {
            const bool was_dir = old.column_bytes(0) == "d";
            const std::int64_t size = old.column_int64(1);
            const std::int64_t blocks = old.column_int64(2);
            const std::int64_t nlink = old.column_int64(3);
            old.reset();
            if (was_dir) {
                dir.reset();
                Statement by_prefix;
                if (auto s = db_.prepare("SELECT size, blocks, files, dirs FROM dirs"
                                         " WHERE prefix = ?",
                                         &by_prefix);
                    !s) {
                    return s;
                }
                by_prefix.bind_blob(1, range.lo);
                if (auto s = by_prefix.step(&row); !s) return s;
                if (row) {
                    old_single = Totals{by_prefix.column_int64(0), by_prefix.column_int64(1),
                                        by_prefix.column_int64(2), by_prefix.column_int64(3)};
                    Totals m;
                    if (auto s = multi_of(range.lo, &m); !s) return s;
                    old_single -= m;
                } else {
                    old_single = Totals{size, blocks, 0, 0};
                }
                old_single.dirs += 1;
            } else if (nlink <= 1) {
                old_single = Totals{size, blocks, 1, 0};
            }
            // A multi-link non-directory lives in `links` under the parent and is recounted
            // by multi_of; its row there stays (another name in the parent may share it).
        }
    }

    // 2. Delete what the scan replaces: directories at or below root (old_dirs_ holds them
    //    all; reused ones keep their id and rows, and are updated below), top-level roots
    //    below it, the old root entry, and the errors recorded there by earlier scans.
    {
        Statement to_garbage;
        Statement delete_dir;
        if (auto s = db_.prepare("INSERT OR IGNORE INTO garbage(dir) VALUES (?)", &to_garbage);
            !s) {
            return s;
        }
        if (auto s = db_.prepare("DELETE FROM dirs WHERE id = ?", &delete_dir); !s) return s;
        for (const auto& [prefix, old] : old_dirs_) {
            if (old.reused) continue;
            keys_changed_ = true;
            to_garbage.bind_int64(1, old.id);
            if (auto s = to_garbage.run(); !s) return s;
            delete_dir.bind_int64(1, old.id);
            if (auto s = delete_dir.run(); !s) return s;
        }
        Statement stmt;
        const char* deletes[] = {
            "DELETE FROM entries WHERE dir = 0 AND name >= ?1 AND name < ?2",
            "DELETE FROM entries WHERE dir = ?4 AND name = ?5",
            "DELETE FROM errors WHERE scan_id != ?6 AND (path = ?3 OR (path >= ?1 AND path < ?2))",
        };
        for (const char* sql : deletes) {
            if (auto s = db_.prepare(sql, &stmt); !s) return s;
            const int params = stmt.parameter_count();
            if (params >= 1) stmt.bind_blob(1, range.lo);
            if (params >= 2) stmt.bind_blob(2, range.hi);
            if (params >= 3) stmt.bind_blob(3, root_);
            if (params >= 4) stmt.bind_int64(4, root_parent_);
            if (params >= 5) stmt.bind_blob(5, root_name_);
            if (params >= 6) stmt.bind_int64(6, scan_id_);
            if (auto s = stmt.run(); !s) return s;
        }
    }

    // 3. The new root entry, then the new directories with their totals (ascending ids:
    //    they append to dirs).
    insert_entry_.bind_int64(1, root_parent_).bind_blob(2, root_name_);
    bind_entry_metadata(DirectBinder{insert_entry_}, root_record_);
    if (auto s = insert_entry_.run(); !s) return s;
    {
        // A reused directory's row is replaced in place (same id); a new one is inserted.
        // Plain INSERT for the new ones: OR REPLACE probed both keys before every insert. New
        // ones go kDirRowsPerInsert to a statement: starting and halting a statement cost a
        // fifth of a row's ~13k instructions (callgrind), and this loop is the serial end of
        // every scan.
        constexpr std::size_t kDirRowsPerInsert = 32;
        constexpr const char* kDirsInsert =
            " INTO dirs(id, parent, scan_id, depth, prefix, size, blocks, files, dirs, digest)"
            " VALUES ";
        constexpr const char* kDirsRow = "(?,?,?,?,?,?,?,?,?,?)";
        Statement replace;
        Statement insert;
        Statement insert_many;
        std::string many = std::string("INSERT OR FAIL") + kDirsInsert;  // prepare_statements()
        for (std::size_t i = 0; i < kDirRowsPerInsert; ++i)
            many += (i == 0 ? "" : ",") + std::string(kDirsRow);
        if (auto s =
                db_.prepare(std::string("INSERT OR REPLACE") + kDirsInsert + kDirsRow, &replace);
            !s) {
            return s;
        }
        if (auto s = db_.prepare(std::string("INSERT") + kDirsInsert + kDirsRow, &insert); !s)
            return s;
        if (auto s = db_.prepare(many, &insert_many); !s) return s;
        struct DirRow {
            std::int64_t id;
            std::int64_t parent;
            std::int64_t depth;
            std::string_view prefix;
            Totals totals;
            std::uint64_t digest;
        };
        auto bind_row = [this](Statement& stmt, int base, const DirRow& r) {
            stmt.bind_int64(base + 1, r.id)
                .bind_int64(base + 2, r.parent)
                .bind_int64(base + 3, scan_id_)
                .bind_int64(base + 4, r.depth)
                .bind_blob_static(base + 5, r.prefix)
                .bind_int64(base + 6, r.totals.size)
                .bind_int64(base + 7, r.totals.blocks)
                .bind_int64(base + 8, r.totals.files)
                .bind_int64(base + 9, r.totals.dirs)
                .bind_int64(base + 10, static_cast<std::int64_t>(r.digest));
        };
        std::vector<DirRow> staged;  // new rows for the next insert_many
        staged.reserve(kDirRowsPerInsert);
        auto flush_staged = [&]() -> core::Status {
            if (staged.size() == kDirRowsPerInsert) {
                for (std::size_t i = 0; i < staged.size(); ++i) {
                    bind_row(insert_many, static_cast<int>(i) * 10, staged[i]);
                }
                if (auto s = insert_many.run(); !s) return s;
            } else {
                for (const DirRow& r : staged) {
                    bind_row(insert, 0, r);
                    if (auto s = insert.run(); !s) return s;
                }
            }
            staged.clear();
            return {};
        };
        // A reused directory keeps its old id, and its children's parent follows it.
        auto final_id = [this](std::uint64_t walk_id) {
            const NewDir& d = new_dirs_[walk_id];
            return d.old != nullptr ? d.old->id : gid(walk_id);
        };
        // Ascending walk ids, so that new rows append to dirs.
        for (std::uint64_t walk_id = 1; walk_id < new_dirs_.size(); ++walk_id) {
            const NewDir& d = new_dirs_[walk_id];
            if (!d.seen) continue;
            const DirRow row{final_id(walk_id),
                             d.parent == 0 ? root_parent_ : final_id(d.parent),
                             d.depth,
                             d.prefix,
                             totals_.total(walk_id),
                             walk_id < digests_.size() ? digests_[walk_id] : 0};
            if (d.old == nullptr) {
                keys_changed_ = true;
                staged.push_back(row);
                if (staged.size() == kDirRowsPerInsert) {
                    if (auto s = flush_staged(); !s) return s;
                }
                continue;
            }
            // A reused directory whose row would not change is left alone: a rescan of an
            // unchanged tree rewrites no dirs rows but the root's (its scan_id moves).
            if (walk_id != 1 && d.old->parent == row.parent && d.old->depth == row.depth &&
                d.old->totals == row.totals) {
                continue;
            }
            bind_row(replace, 0, row);
            if (auto s = replace.run(); !s) return s;
        }
        if (auto s = flush_staged(); !s) return s;
    }

    // 4. Ancestors: additive part adjusted by the difference, multi-link part recounted.
    if (!ancestors.empty()) {
        Totals new_single = totals_.single(1);
        new_single.dirs += 1;
        Statement prefix_of;
        Statement update;
        if (auto s = db_.prepare("SELECT prefix FROM dirs WHERE id = ?", &prefix_of); !s) return s;
        if (auto s = db_.prepare("UPDATE dirs SET size = ?, blocks = ?, files = ?, dirs = ?"
                                 " WHERE id = ?",
                                 &update);
            !s) {
            return s;
        }
        for (const Ancestor& a : ancestors) {
            prefix_of.bind_int64(1, a.id);
            bool row = false;
            if (auto s = prefix_of.step(&row); !s) return s;
            const std::string prefix(prefix_of.column_bytes(0));
            prefix_of.reset();
            Totals t = a.single;
            t -= old_single;
            t += new_single;
            Totals m;
            if (auto s = multi_of(prefix, &m); !s) return s;
            t += m;
            update.bind_int64(1, t.size)
                .bind_int64(2, t.blocks)
                .bind_int64(3, t.files)
                .bind_int64(4, t.dirs)
                .bind_int64(5, a.id);
            if (auto s = update.run(); !s) return s;
        }
    }

    // 5. The scan is complete, and the index generation moves if any key (directory, name)
    //    may have changed (name indexes reload).
    {
        Statement done;
        if (auto s = db_.prepare("UPDATE scans SET state = 'complete', finished_ns = ?,"
                                 " entries = ?, errors = ?, dir_max = ? WHERE id = ?",
                                 &done);
            !s) {
            return s;
        }
        done.bind_int64(1, now_ns())
            .bind_int64(2, static_cast<std::int64_t>(entries_))
            .bind_int64(3, static_cast<std::int64_t>(errors_))
            .bind_int64(4, dir_max_)
            .bind_int64(5, scan_id_);
        if (auto s = done.run(); !s) return s;
        if (!keys_changed_) return txn.commit();
        if (auto s = db_.exec("UPDATE meta SET value = value + 1 WHERE key = 'generation'"); !s) {
            return s;
        }
    }
    return txn.commit();
}

core::Status ScanWriter::checkpoint() {
    if (scan_id_ != 0) {
        return storage_status(StorageErrc::scan_in_progress, "checkpoint during a scan");
    }
    const int rc = sqlite3_wal_checkpoint_v2(db_.handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                             nullptr, nullptr);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY) return sqlite_status(db_.handle(), rc, "checkpoint");
    return {};
}

core::Status ScanWriter::mark_finished(const char* state, const std::string& error) {
    Statement stmt;
    if (auto s = db_.prepare("UPDATE scans SET state = ?, finished_ns = ?, entries = ?,"
                             " errors = ?, error = ? WHERE id = ?",
                             &stmt);
        !s) {
        return s;
    }
    stmt.bind_text(1, state)
        .bind_int64(2, now_ns())
        .bind_int64(3, static_cast<std::int64_t>(entries_))
        .bind_int64(4, static_cast<std::int64_t>(errors_))
        .bind_text(5, error)
        .bind_int64(6, scan_id_);
    return stmt.run();
}

core::Status ScanWriter::abort(const core::Status& reason, bool cancelled) {
    if (scan_id_ == 0) return storage_status(StorageErrc::no_scan, "abort without a scan");
    stop_checkpointer();
    pending_.clear();
    pending_.shrink_to_fit();
    totals_ = {};
    // On a full disk the WAL holds the space: checkpointing and truncating it may free enough
    // to record the failure. Best effort; recovery at the next open finishes the job.
    (void)db_.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    core::Status first =
        mark_finished(cancelled ? "cancelled" : "failed",
                      reason.is_ok() ? std::string("cancelled") : reason.to_string());
    core::Status cleared = clear_scan_rows(scan_id_, base_, dir_max_);
    release_scan_memory();
    last_scan_id_ = scan_id_;
    scan_id_ = 0;
    return first ? cleared : first;
}

core::Status ScanWriter::collect_garbage(std::size_t batch_dirs) {
    const auto t0 = std::chrono::steady_clock::now();
    struct Timer {
        std::chrono::steady_clock::time_point t0;
        double* out;
        ~Timer() {
            *out = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
    } timer{t0, &gc_seconds_};
    Statement pick;
    Statement del_entries;
    Statement del_links;
    Statement del_garbage;
    core::Status s = db_.prepare("SELECT dir FROM garbage ORDER BY dir LIMIT ?", &pick);
    if (s) s = db_.prepare("DELETE FROM entries WHERE dir = ?", &del_entries);
    if (s) s = db_.prepare("DELETE FROM links WHERE dir = ?", &del_links);
    if (s) s = db_.prepare("DELETE FROM garbage WHERE dir = ?", &del_garbage);
    if (!s) return s;
    std::vector<std::int64_t> ids;
    for (;;) {
        ids.clear();
        pick.bind_int64(1, static_cast<std::int64_t>(batch_dirs));
        for (bool row = true;;) {
            if (auto st = pick.step(&row); !st) return st;
            if (!row) break;
            ids.push_back(pick.column_int64(0));
        }
        pick.reset();
        if (ids.empty()) return {};
        TransactionGuard txn(db_);
        if (auto st = txn.begin(); !st) return st;
        for (std::int64_t id : ids) {
            del_entries.bind_int64(1, id);
            del_links.bind_int64(1, id);
            del_garbage.bind_int64(1, id);
            if (auto st = del_entries.run(); !st) return st;
            if (auto st = del_links.run(); !st) return st;
            if (auto st = del_garbage.run(); !st) return st;
        }
        if (auto st = txn.commit(); !st) return st;
    }
}

}  // namespace wsindex::storage
