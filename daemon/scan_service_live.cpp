// ScanService: the live index's batches on the scan thread — re-list the changed directories
// one level, walk the new subdirectories in full, apply everything in one transaction.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <system_error>
#include <thread>

#include "core/clock.hpp"
#include "core/fs_ops.hpp"
#include "core/named_stat.hpp"
#include "core/path.hpp"
#include "core/resolve.hpp"
#include "core/unique_fd.hpp"
#include "core/walker.hpp"
#include "daemon/scan_service.hpp"
#include "ipc/bytes_codec.hpp"
#include "storage/linked_names.hpp"
#include "storage/live_update.hpp"
#include "storage/path_range.hpp"

namespace wsindex::daemon {
namespace {

// Records of new subtrees one batch holds in memory (~200 bytes each). A larger new subtree
// (a big directory moved into a root) is inserted as its own entry and then scanned as a
// subtree: the scan streams it, in bounded memory.
constexpr std::size_t kMaxBatchRecords = 200000;

std::string shown(const std::string& path) { return ipc::log_bytes(path); }

std::int64_t ms_between(std::chrono::steady_clock::time_point from,
                        std::chrono::steady_clock::time_point to) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

// A directory that vanished or changed kind since it was reported, or that is reached through a
// symlink now (ELOOP: core/resolve.hpp never follows one), or that was renamed or exchanged while
// it was opened (ESTALE): its parent's listing (also reported, since the rename changed the
// parent) says what happened.
bool gone_since(const core::Status& st) {
    return st.code() == std::errc::no_such_file_or_directory ||
           st.code() == std::errc::not_a_directory ||
           st.code() == std::errc::too_many_symbolic_link_levels ||
           st.code() == std::error_code(ESTALE, std::generic_category());
}

// A directory reached through a symlink now, or renamed or exchanged while it was opened: what
// is at its path is not what was reported there. Its parent is re-listed whole and it is walked
// again from that listing, so a swap neither leaves rows of another object nor drops a change.
bool swapped(const core::Status& st) {
    return st.code() == std::errc::too_many_symbolic_link_levels ||
           st.code() == std::error_code(ESTALE, std::generic_category());
}
bool swapped(int error) { return error == ELOOP || error == ESTALE; }

// The device of the directory at `path`, opened by descriptor (never through a symlink).
std::optional<std::uint64_t> device_of(const std::string& path) {
    const core::UniqueFd fd(core::open_dir_absolute(path, O_PATH));
    core::FileStat st;
    if (!fd.valid() || core::stat_fd(fd.get(), st) != 0) return std::nullopt;
    return st.dev;
}

// Log level trace: what a batch is given and what its named stats found, the other half of
// the record that traces a divergence of the live index (TracingSink in live_monitor.cpp logs
// the events).
void trace_changed_dir(const ChangedDir& c) {
    std::string names;
    for (const std::string& n : c.names) names += " " + shown(n);
    std::string rewalk;
    for (const std::string& n : c.rewalk) rewalk += " " + shown(n);
    spdlog::trace("live batch: {} {}{}; rewalk{}", shown(c.path),
                  c.names.empty() ? "whole" : "names", names, rewalk);
}

void trace_named_stat(const core::NamedStat& named) {
    for (const core::WalkResult& e : named.found) {
        spdlog::trace("live batch: stat {} ino {} nlink {} size {} ctime {}", shown(e.path), e.ino,
                      e.nlink, e.size, e.ctime_ns);
    }
    for (const std::string& n : named.gone) {
        spdlog::trace("live batch: gone {}/{}", shown(named.self.path), shown(n));
    }
}

void trace_listing(const storage::RelistedDir& d) {
    spdlog::trace("live batch: listed {} ({} entries)", shown(d.self.path), d.entries.size());
    for (const core::WalkResult& e : d.entries) {
        spdlog::trace("live batch: entry {} ino {} nlink {} size {} ctime {}", shown(e.path), e.ino,
                      e.nlink, e.size, e.ctime_ns);
    }
}

}  // namespace

void ScanService::submit_live(std::vector<ChangedDir> dirs, std::vector<monitor::InodeId> inodes,
                              std::chrono::steady_clock::time_point oldest) {
    {
        std::lock_guard lock(mutex_);
        if (stopping_) return;
        if (live_dirs_.empty() && live_inodes_.empty()) live_oldest_ = oldest;
        live_oldest_ = std::min(live_oldest_, oldest);
        for (ChangedDir& d : dirs) merge_changed_locked(std::move(d));
        live_inodes_.insert(inodes.begin(), inodes.end());
        live_stats_.pending_dirs = live_dirs_.size();
    }
    wake_.notify_all();
}

void ScanService::merge_changed_locked(ChangedDir dir) {
    auto [it, inserted] = live_dirs_.try_emplace(std::move(dir.path));
    LiveDirty& dirty = it->second;
    // A name to walk again if it is a subdirectory. Past the bound it is dropped, and the
    // directory says so: its re-listing then walks again every subdirectory that differs from
    // its row (RelistedDir::rewalk_changed), which covers every name dropped.
    const auto rewalk = [&dirty](std::string name) {
        if (dirty.rewalk.size() < kMaxNamedChanges || dirty.rewalk.contains(name)) {
            dirty.rewalk.insert(std::move(name));
        } else {
            dirty.names_dropped = true;
        }
    };
    dirty.names_dropped = dirty.names_dropped || dir.names_dropped;
    for (std::string& n : dir.rewalk) rewalk(std::move(n));
    std::set<std::string>& names = dirty.names;  // empty: the whole directory
    if (!inserted && names.empty()) {
        // Whole already: a named subdirectory is still walked again (ChangedDir::rewalk).
        for (std::string& n : dir.names) rewalk(std::move(n));
        return;
    }
    if (dir.names.empty() || names.size() + dir.names.size() > kMaxNamedChanges) {
        // Whole from now on; the names so far keep their subdirectories walked again.
        for (const std::string& n : names) rewalk(n);
        names.clear();
        for (std::string& n : dir.names) rewalk(std::move(n));
        return;
    }
    for (std::string& n : dir.names) names.insert(std::move(n));
}

std::vector<ChangedDir> ScanService::take_live_batch_locked() {
    // Fairness: a whole re-listing of a large directory (a storm there re-lists it whole every
    // batch) runs in a batch of its own, taking turns with the batches of every other
    // directory. A change anywhere else then waits for at most one large re-listing already
    // under way, plus its own small batch, instead of sharing each batch with the storm.
    bool any_large = false;
    bool any_small = false;
    for (const auto& [path, dirty] : live_dirs_) {
        const bool large = dirty.names.empty() && live_large_.contains(path);
        any_large = any_large || large;
        any_small = any_small || !large;
    }
    const bool take_large = any_large && (!any_small || !live_last_large_);
    const bool take_small = any_small && (!any_large || live_last_large_);
    live_last_large_ = take_large && !take_small;
    std::vector<ChangedDir> dirs;
    for (auto it = live_dirs_.begin(); it != live_dirs_.end();) {
        LiveDirty& dirty = it->second;
        const bool large = dirty.names.empty() && live_large_.contains(it->first);
        if (large ? !take_large : !take_small) {
            ++it;
            continue;
        }
        dirs.push_back(ChangedDir{it->first,
                                  {dirty.names.begin(), dirty.names.end()},
                                  {dirty.rewalk.begin(), dirty.rewalk.end()},
                                  dirty.names_dropped});
        it = live_dirs_.erase(it);
    }
    return dirs;
}

LiveApplyStats ScanService::live_stats() const {
    std::lock_guard lock(mutex_);
    return live_stats_;
}

void ScanService::add_linked_names(const std::vector<monitor::InodeId>& inodes,
                                   std::vector<ChangedDir>* changed) {
    storage::Database& db = writer_->writer().database();
    std::vector<storage::LinkedName> names;
    std::vector<monitor::InodeId> unlinked;
    for (const monitor::InodeId& inode : inodes) {
        const std::size_t before = names.size();
        if (auto st = storage::linked_names(db, inode.dev, inode.ino, &names); !st) {
            // Not fatal: those names stay as they are until their next change or rescan.
            spdlog::warn(
                "live index: the names of a hard-linked file changed outside the roots "
                "could not be read: {}",
                st.to_string());
        } else if (names.size() == before) {
            unlinked.push_back(inode);
        }
    }
    std::vector<storage::InodeNumber> pass;
    {
        std::lock_guard lock(mutex_);
        for (const monitor::InodeId& inode : unlinked) {
            if (unlinked_inodes_.size() >= kMaxUnlinkedInodes) {
                spdlog::warn(
                    "live index: more than {} hard-linked files changed outside the "
                    "roots wait for their names; the others stay as indexed until "
                    "their next change or rescan",
                    kMaxUnlinkedInodes);
                break;
            }
            unlinked_inodes_.insert(inode);
        }
        if (!unlinked_inodes_.empty() && Clock::now() >= unlinked_pass_at_) {
            for (const monitor::InodeId& i : unlinked_inodes_) pass.push_back({i.dev, i.ino});
            unlinked_inodes_.clear();
        }
    }
    if (!pass.empty()) {
        const Clock::time_point started = Clock::now();
        if (auto st = storage::names_by_entries_pass(db, pass, &names); !st) {
            spdlog::warn(
                "live index: the names of hard-linked files changed outside the roots "
                "could not be read: {}",
                st.to_string());
        }
        const Clock::duration took = Clock::now() - started;
        spdlog::debug(
            "live index: names of {} hard-linked files changed outside the roots, "
            "one pass over entries: {} ms",
            pass.size(), std::chrono::duration_cast<std::chrono::milliseconds>(took).count());
        std::lock_guard lock(mutex_);
        unlinked_pass_at_ =
            Clock::now() + std::max<Clock::duration>(std::chrono::seconds(1), took * 20);
    }
    std::map<std::string, std::size_t> at;  // directory -> its entry in `changed`
    for (std::size_t i = 0; i < changed->size(); ++i) at.emplace((*changed)[i].path, i);
    // One name per inode: its re-stat sees nlink > 1, which re-lists its directory whole and
    // brings every other indexed name of the inode along (storage/inode_sync.hpp), the path a
    // link-count event inside the roots takes too.
    std::set<std::pair<std::uint64_t, std::uint64_t>> inodes_named;
    for (storage::LinkedName& n : names) {
        if (!inodes_named.emplace(n.dev, n.ino).second) continue;
        auto [it, inserted] = at.try_emplace(n.dir, changed->size());
        if (inserted) {
            changed->push_back(ChangedDir{std::move(n.dir), {std::move(n.name)}, {}});
            continue;
        }
        ChangedDir& c = (*changed)[it->second];
        if (c.names.empty()) continue;  // re-listed whole anyway
        if (std::find(c.names.begin(), c.names.end(), n.name) == c.names.end()) {
            c.names.insert(std::lower_bound(c.names.begin(), c.names.end(), n.name), n.name);
        }
    }
}

void ScanService::run_live(std::vector<ChangedDir> changed, std::vector<monitor::InodeId> inodes,
                           Clock::time_point oldest) {
    const Clock::time_point started = Clock::now();
    add_linked_names(inodes, &changed);
    if (changed.empty()) return;
    core::WalkOptions walk;
    bool one_file_system = false;
    std::vector<std::pair<std::string, bool>> roots;  // configured roots: one_file_system
    {
        std::lock_guard lock(mutex_);
        // A batch lists what just changed (warm in the page cache): one thread per CPU at
        // most. Extra walkers beyond the CPUs help a scan on a cold disk, not this.
        const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
        walk.workers =
            options_.settings.workers == 0 ? cpus : std::min(options_.settings.workers, cpus);
        walk.prune = options_.settings.prune;
        one_file_system = options_.settings.one_file_system;
        for (const Due& d : due_) roots.emplace_back(d.canonical, d.root.one_file_system);
    }
    walk.full_paths = true;
    walk.fs = options_.fs;
    walk.raise_fd_limit = false;
    core::WalkOptions one_level = walk;
    one_level.max_depth = 1;
    const core::PruneMatcher prune(walk.prune);
    core::Walker lister(one_level);
    std::unique_ptr<core::Walker> full;  // made when a batch has a new subdirectory

    storage::Database& db = writer_->writer().database();
    storage::LiveBatch batch;
    storage::UnindexedSubdirs subdirs(db);
    std::size_t records = 0;
    std::vector<std::string> too_large;  // new subtrees left to a subtree scan
    std::vector<std::string> failed;     // directories that could not be listed: rescan them
    // Directories swapped while they were opened (swapped()): their parents, re-listed whole
    // by the next batch, each walking the swapped name again.
    std::vector<ChangedDir> relist_parents;
    std::vector<std::pair<std::string, bool>> listed_sizes;  // whole listings: large?
    const auto relist_parent_of = [&](const std::string& path) {
        std::string_view parent;
        std::string_view name;
        for (const auto& [root, ofs] : roots) {
            if (path == root) return;  // a root has no parent in the index: gone, as before
        }
        if (!core::split_parent(path, &parent, &name)) return;
        spdlog::debug("live index: {} changed while it was opened; re-listing its parent",
                      shown(path));
        relist_parents.push_back(ChangedDir{std::string(parent), {}, {std::string(name)}});
    };
    // Directories with named changes: a stat per name (core/named_stat.hpp). One that cannot
    // be done so (a name that fails with more than ENOENT, the directory unopenable) is
    // re-listed whole below, which records errors as a walk does.
    std::vector<std::string> dirs;  // every directory of the batch, for the log and rescans
    std::vector<std::string> whole;
    std::vector<std::vector<std::string>> whole_rewalk;  // RelistedDir::rewalk of each
    std::vector<bool> whole_dropped;                     // RelistedDir::rewalk_changed of each
    std::vector<storage::RelistedDir> listings;
    std::vector<std::string> listing_paths;
    const core::FsOps& fs = options_.fs != nullptr ? *options_.fs : core::real_fs_ops();
    const bool tracing = spdlog::should_log(spdlog::level::trace);
    for (ChangedDir& c : changed) {
        if (tracing) trace_changed_dir(c);
        dirs.push_back(c.path);
        if (c.names.empty()) {
            whole.push_back(std::move(c.path));
            whole_rewalk.push_back(std::move(c.rewalk));
            whole_dropped.push_back(c.names_dropped);
            continue;
        }
        core::NamedStat named;
        if (auto st = core::stat_named(c.path, c.names, fs, &named); !st) {
            if (swapped(st)) relist_parent_of(c.path);
            if (!gone_since(st)) {
                whole.push_back(std::move(c.path));
                c.rewalk.insert(c.rewalk.end(), c.names.begin(), c.names.end());
                whole_rewalk.push_back(std::move(c.rewalk));
                whole_dropped.push_back(c.names_dropped);
            }
            continue;  // gone: its parent's change says so
        }
        if (tracing) trace_named_stat(named);
        storage::RelistedDir d;
        d.self = std::move(named.self);
        d.entries = std::move(named.found);
        d.partial = true;
        d.gone = std::move(named.gone);
        listings.push_back(std::move(d));
        listing_paths.push_back(std::move(c.path));
    }
    // The others one level, in one run of the pool: root i of the run is whole[i], and its
    // records name it by dir id i + 1.
    const std::size_t first_whole = listings.size();
    listings.resize(first_whole + whole.size());
    listing_paths.insert(listing_paths.end(), whole.begin(), whole.end());
    std::vector<core::Status> list_status;
    const core::Status listed = lister.run_many(
        whole,
        [&](std::span<core::WalkResult> b) {
            for (core::WalkResult& r : b) {
                const std::uint64_t i = r.parent_id == 0 ? r.dir_id : r.parent_id;
                if (i == 0 || i > whole.size()) continue;  // a root that is not a directory
                if (r.parent_id == 0) {
                    listings[first_whole + i - 1].self = std::move(r);
                } else {
                    listings[first_whole + i - 1].entries.push_back(std::move(r));
                }
            }
            return core::Status{};
        },
        &list_status);
    list_status.insert(list_status.begin(), first_whole, core::Status{});
    for (std::size_t i = 0; i < whole.size(); ++i) {
        std::vector<std::string>& rewalk = whole_rewalk[i];
        std::sort(rewalk.begin(), rewalk.end());
        listings[first_whole + i].rewalk = std::move(rewalk);
        listings[first_whole + i].rewalk_changed = whole_dropped[i];
    }
    const Clock::time_point listed_at = Clock::now();
    if (!listed) {
        // Not one directory's trouble (EIO, ENOMEM...): every root of this batch is rescanned.
        spdlog::warn("live index: re-listing {} directories failed: {}", dirs.size(),
                     listed.to_string());
        failed.insert(failed.end(), dirs.begin(), dirs.end());
        listings.clear();
    }
    for (std::size_t i = 0; i < listings.size(); ++i) {
        const std::string& dir = listing_paths[i];
        if (const core::Status& st = list_status[i]; !st) {
            if (swapped(st)) relist_parent_of(dir);
            if (!gone_since(st)) {
                spdlog::warn("live index: cannot list {}: {}", shown(dir), st.to_string());
                failed.push_back(dir);
            }
            continue;
        }
        storage::RelistedDir& relisted = listings[i];
        if (tracing && i >= first_whole) trace_listing(relisted);
        if (i >= first_whole) {
            listed_sizes.emplace_back(dir, relisted.entries.size() >= kLargeListing);
        }
        if (!relisted.self.is_dir()) {
            // No longer a directory (a symlink or a file took its name): as for a swap, its
            // parent's whole listing records what is there now.
            // (The walk hands no record of a root that is not a directory.)
            if (i >= first_whole || !relisted.self.path.empty()) relist_parent_of(dir);
            continue;
        }
        std::vector<std::string> fresh;
        if (auto st = subdirs.find(relisted, &fresh); !st) {
            report_damage(st);
            spdlog::error("live index: reading the index failed: {}", st.to_string());
            failed.push_back(dir);
            continue;
        }
        for (const std::string& sub : fresh) {
            const core::WalkResult* entry = nullptr;
            for (const core::WalkResult& e : relisted.entries) {
                if (e.path == sub) entry = &e;
            }
            // What the scan's walk would have done at this directory: record it without its
            // contents when pruned or on another file system (one_file_system).
            bool descend = entry != nullptr && entry->has_stat && entry->error == 0;
            if (descend && prune.has_dir_rules() && prune.prune_dir(sub, storage::base_name(sub))) {
                descend = false;
            }
            bool ofs = one_file_system;
            std::string root_of_sub;
            for (const auto& [root, root_ofs] : roots) {
                if (core::at_or_below(sub, root) && root.size() > root_of_sub.size()) {
                    root_of_sub = root;
                    ofs = root_ofs;
                }
            }
            if (descend && ofs && !root_of_sub.empty()) {
                const std::optional<std::uint64_t> dev = device_of(root_of_sub);
                if (dev && *dev != entry->dev) descend = false;
            }
            if (descend && records >= kMaxBatchRecords) {
                too_large.push_back(sub);
                descend = false;
            }
            if (!descend) continue;  // the writer records the directory by itself
            if (!full) full = std::make_unique<core::Walker>(walk);
            storage::WalkedSubtree subtree;
            bool over = false;
            const core::Status walked =
                full->run(sub, [&](std::span<core::WalkResult> b) -> core::Status {
                    if (records + subtree.records.size() + b.size() > kMaxBatchRecords) {
                        over = true;  // stop the walk: a subtree scan takes it, streaming
                        return core::Status(std::make_error_code(std::errc::file_too_large),
                                            "subtree too large");
                    }
                    for (core::WalkResult& r : b) subtree.records.push_back(std::move(r));
                    return core::Status{};
                });
            if (over) {
                too_large.push_back(sub);
                continue;
            }
            if (auto st = walked; !st) {
                if (swapped(st)) relist_parent_of(sub);
                if (!gone_since(st)) {
                    spdlog::warn("live index: cannot walk {}: {}", shown(sub), st.to_string());
                    failed.push_back(dir);
                }
                continue;
            }
            // A directory below that the walk found swapped (recorded with that error, its
            // contents not listed): listed again from its parent by the next batch.
            for (const core::WalkResult& r : subtree.records) {
                if (r.parent_id != 0 && swapped(r.error)) relist_parent_of(r.path);
            }
            records += subtree.records.size();
            batch.subtrees.push_back(std::move(subtree));
        }
        batch.dirs.push_back(std::move(relisted));
    }

    const Clock::time_point walked_at = Clock::now();
    storage::LiveReport report;
    const core::Status applied = storage::apply_live_batch(db, batch, &report);
    if (applied && !report.name_dirs.empty() && options_.on_names_changed) {
        options_.on_names_changed(std::move(report.name_dirs), report.generation);
    }
    if (applied) (void)writer_->writer().collect_garbage();
    const std::uint64_t lag_ms = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - oldest).count());
    if (!applied) {
        spdlog::error("live index: applying {} changed directories failed: {}", dirs.size(),
                      applied.to_string());
        report_damage(applied);
        failed.insert(failed.end(), dirs.begin(), dirs.end());
    } else if (report.rows_inserted + report.rows_updated + report.rows_deleted > 0) {
        spdlog::debug(
            "live index: {} directories ({} skipped), {} rows added, {} changed, {} removed, {} "
            "subtrees removed, {} ms after the first change; on this thread {} ms listing, {} ms "
            "walking new subtrees, {} ms applying",
            report.dirs_applied, report.dirs_skipped, report.rows_inserted, report.rows_updated,
            report.rows_deleted, report.subtrees_removed, lag_ms, ms_between(started, listed_at),
            ms_between(listed_at, walked_at), ms_between(walked_at, Clock::now()));
    }
    // Never keep a wrong index silently: what could not be applied is rescanned — the root
    // holding it, incrementally (unchanged directories are not rewritten).
    std::vector<std::string> rescans = too_large;
    for (const std::string& d : failed) {
        std::string best;
        for (const auto& [root, ofs] : roots) {
            if (core::at_or_below(d, root) && root.size() > best.size()) best = root;
        }
        rescans.push_back(best.empty() ? d : best);
    }
    std::sort(rescans.begin(), rescans.end());
    rescans.erase(std::unique(rescans.begin(), rescans.end()), rescans.end());
    std::vector<std::shared_ptr<ScanJob>> added;
    {
        std::lock_guard lock(mutex_);
        ++live_stats_.batches;
        for (auto& [dir, large] : listed_sizes) {
            if (!large) {
                live_large_.erase(dir);
                continue;
            }
            if (live_large_.size() >= kMaxLargeListings) live_large_.clear();
            live_large_.insert(std::move(dir));
        }
        live_stats_.busy_ms += static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count());
        if (applied) {
            live_stats_.dirs += report.dirs_applied;
            const std::uint64_t rows =
                report.rows_inserted + report.rows_updated + report.rows_deleted;
            live_stats_.rows_changed += rows;
            if (rows > 0) {
                live_stats_.last_applied_ns = core::wall_clock_ns();
                live_stats_.last_lag_ms = lag_ms;
            }
            // Named changes to hard-linked inodes: the next batch lists those directories whole
            // (the scan thread takes it as soon as this one returns).
            for (ChangedDir& d : relist_parents) {
                if (live_dirs_.empty()) live_oldest_ = oldest;
                merge_changed_locked(std::move(d));
            }
            for (storage::WholeRelisting& d : report.relist_whole) {
                if (live_dirs_.empty()) live_oldest_ = oldest;
                merge_changed_locked(ChangedDir{std::move(d.path), {}, std::move(d.rewalk)});
            }
            live_stats_.pending_dirs = live_dirs_.size();
        } else {
            ++live_stats_.failures;
        }
        for (const std::string& root : rescans) {
            bool is_new = false;
            auto job = enqueue_locked(root, ScanOrigin::Live, &is_new);
            if (job && is_new) added.push_back(std::move(job));
        }
    }
    for (const auto& job : added) {
        spdlog::warn("live index: rescanning {} (changes there could not be applied live)",
                     shown(job->root()));
        notify(*job);
    }
}

}  // namespace wsindex::daemon
