// Dupes finder: candidates, visibility, partial and full hashes, byte comparison
// (dupes_finder.hpp).
#include "daemon/dupes_finder.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "daemon/dupes_candidate_cache.hpp"
#include "storage/content_hashes.hpp"
#include "storage/database.hpp"

namespace wsindex::daemon {

std::string_view to_string(DupesPhase phase) {
    switch (phase) {
        case DupesPhase::Listing:
            return "listing";
        case DupesPhase::Checking:
            return "checking";
        case DupesPhase::Partial:
            return "partial";
        case DupesPhase::Full:
            return "full";
        case DupesPhase::Compare:
            return "compare";
        case DupesPhase::Done:
            return "done";
    }
    return "unknown";
}

DupesProgress::DupesProgress(unsigned workers)
    : worker_count_(workers), slots_(std::make_unique<Slot[]>(workers)) {}

void DupesProgress::start_phase(DupesPhase phase, std::uint64_t files, std::uint64_t bytes) {
    files_total_.store(files, std::memory_order_relaxed);
    bytes_total_.store(bytes, std::memory_order_relaxed);
    files_done_.store(0, std::memory_order_relaxed);
    bytes_done_.store(0, std::memory_order_relaxed);
    for (unsigned i = 0; i < worker_count_; ++i) {
        slots_[i].items.store(0, std::memory_order_relaxed);
        slots_[i].bytes.store(0, std::memory_order_relaxed);
    }
    phase_.store(static_cast<int>(phase), std::memory_order_relaxed);
}

void DupesProgress::file_done(unsigned w, std::uint64_t size, std::uint64_t read) {
    files_done(w, 1, size, read);
}

void DupesProgress::files_done(unsigned w, std::uint64_t files, std::uint64_t sizes,
                               std::uint64_t read) {
    files_done_.fetch_add(files, std::memory_order_relaxed);
    bytes_done_.fetch_add(sizes, std::memory_order_relaxed);
    bytes_read_.fetch_add(read, std::memory_order_relaxed);
    if (w < worker_count_) {
        slots_[w].items.fetch_add(files, std::memory_order_relaxed);
        slots_[w].bytes.fetch_add(read, std::memory_order_relaxed);
    }
}

void DupesProgress::set_executor_stats(std::vector<core::RangeWorkerStats> stats) {
    std::lock_guard lock(mu_);
    executor_ = std::move(stats);
}

DupesProgress::Snapshot DupesProgress::snapshot() const {
    Snapshot s;
    s.phase = static_cast<DupesPhase>(phase_.load(std::memory_order_relaxed));
    s.files_total = files_total_.load(std::memory_order_relaxed);
    s.files_done = files_done_.load(std::memory_order_relaxed);
    s.bytes_total = bytes_total_.load(std::memory_order_relaxed);
    s.bytes_done = bytes_done_.load(std::memory_order_relaxed);
    s.bytes_read = bytes_read_.load(std::memory_order_relaxed);
    for (unsigned i = 0; i < worker_count_; ++i) {
        s.workers.push_back({slots_[i].items.load(std::memory_order_relaxed),
                             slots_[i].bytes.load(std::memory_order_relaxed)});
    }
    std::lock_guard lock(mu_);
    s.executor = executor_;
    return s;
}

namespace {

// One candidate inode through the steps. Written during a phase only by the worker that runs
// its index; read between phases (parallel_for's return orders them).
struct Item {
    DupesFile file;
    std::optional<storage::Hash128> partial;
    std::optional<storage::Hash128> full;
    bool partial_new = false;
    bool full_new = false;
    HashOutcome outcome = HashOutcome::Hashed;  // anything else: left out
    ReadCounters read;
};

// Adds the wall time of its scope to one step's total.
class StepTimer {
  public:
    StepTimer(DupesResult* out, DupesPhase phase)
        : slot_(out->phase_us[static_cast<std::size_t>(phase)]),
          started_(std::chrono::steady_clock::now()) {}
    ~StepTimer() {
        slot_ += static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                std::chrono::steady_clock::now() - started_)
                                                .count());
    }
    StepTimer(const StepTimer&) = delete;
    StepTimer& operator=(const StepTimer&) = delete;

  private:
    std::uint64_t& slot_;
    std::chrono::steady_clock::time_point started_;
};

bool alive(const Item& i) { return i.outcome == HashOutcome::Hashed; }

bool small(const Item& i) { return i.file.inode.size <= 2 * kPartialBytes; }

// Groups of alive items (indices) with equal size and key; only groups of two or more, in
// (size, key) order. A sort of small keys rather than a map: no allocation per item.
template <class Key>
std::vector<std::vector<std::size_t>> group_by(const std::vector<Item>& items,
                                               const std::vector<std::size_t>& among, Key key) {
    struct Keyed {
        std::int64_t size;
        storage::Hash128 hash;
        std::size_t index;
    };
    std::vector<Keyed> keyed;
    keyed.reserve(among.size());
    for (std::size_t i : among) {
        if (!alive(items[i])) continue;
        const std::optional<storage::Hash128> k = key(items[i]);
        if (!k) continue;
        keyed.push_back({items[i].file.inode.size, *k, i});
    }
    const auto same = [](const Keyed& a, const Keyed& b) {
        return a.size == b.size && a.hash == b.hash;
    };
    std::sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
        if (a.size != b.size) return a.size < b.size;
        if (a.hash != b.hash) return a.hash < b.hash;
        return a.index < b.index;
    });
    std::vector<std::vector<std::size_t>> out;
    for (std::size_t i = 0; i < keyed.size();) {
        std::size_t j = i + 1;
        while (j < keyed.size() && same(keyed[i], keyed[j])) ++j;
        if (j - i > 1) {
            std::vector<std::size_t>& g = out.emplace_back();
            g.reserve(j - i);
            for (std::size_t k = i; k < j; ++k) g.push_back(keyed[k].index);
        }
        i = j;
    }
    return out;
}

class Run {
  public:
    Run(DupesEnvironment& env, std::stop_token stop, DupesResult* out)
        : env_(env), stop_(std::move(stop)), out_(out) {}

    core::Status go(const DupesRequest& request) {
        env_.progress.start_phase(DupesPhase::Listing, 0, 0);
        {
            const StepTimer timer(out_, DupesPhase::Listing);
            if (auto st = list(request); !st) return st;
        }
        out_->candidates = items_.size();
        std::vector<std::size_t> all(items_.size());
        for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;

        std::vector<std::size_t> need_partial;
        for (std::size_t i : all) {
            if (!alive(items_[i])) continue;
            if (items_[i].partial) {
                ++out_->cached;
            } else {
                need_partial.push_back(i);
            }
        }
        if (auto st = phase(DupesPhase::Partial, need_partial,
                            [](FileHasher& h, DirChain& dirs, Item& it) {
                                storage::Hash128 hash{};
                                it.outcome = h.partial(dirs, it.file.names.front(), it.file.inode,
                                                       &hash, &it.read);
                                if (it.outcome != HashOutcome::Hashed) return;
                                it.partial = hash;
                                it.partial_new = true;
                                // A small file was read whole: its partial hash is its hash.
                                if (small(it)) {
                                    it.full = hash;
                                    it.full_new = true;
                                }
                            });
            !st) {
            return st;
        }
        out_->hashed += need_partial.size();
        store(DupesPhase::Partial, need_partial);

        std::vector<std::size_t> need_full;
        std::vector<std::size_t> colliding;
        for (const auto& g : group_by(items_, all, [](const Item& i) { return i.partial; })) {
            for (std::size_t i : g) {
                colliding.push_back(i);
                if (!items_[i].full) {
                    need_full.push_back(i);
                } else if (!items_[i].full_new) {
                    ++out_->cached;
                }
            }
        }
        if (auto st = phase(DupesPhase::Full, need_full,
                            [](FileHasher& h, DirChain& dirs, Item& it) {
                                storage::Hash128 hash{};
                                it.outcome = h.full(dirs, it.file.names.front(), it.file.inode,
                                                    &hash, &it.read);
                                if (it.outcome != HashOutcome::Hashed) return;
                                it.full = hash;
                                it.full_new = true;
                            });
            !st) {
            return st;
        }
        out_->hashed += need_full.size();
        store(DupesPhase::Full, need_full);

        std::vector<std::vector<std::size_t>> groups =
            group_by(items_, colliding, [](const Item& i) { return i.full; });

        // A file whose hashes all came from the cache was not opened by this run. Before it is
        // reported it is still looked at (no content read): it must be the inode the index
        // describes (an index not followed live can be behind), and the caller must be allowed
        // to read it. Only group members need it: leaving a file out of a group changes no
        // other file's group.
        std::vector<std::size_t> check;
        for (const auto& g : groups) {
            for (std::size_t i : g) {
                if (!items_[i].partial_new && !items_[i].full_new) check.push_back(i);
            }
        }
        if (auto st = check_cached(check); !st) return st;
        // Regrouped only when the check left a file out (mostly it leaves none).
        if (std::any_of(check.begin(), check.end(),
                        [this](std::size_t i) { return !alive(items_[i]); })) {
            groups = group_by(items_, colliding, [](const Item& i) { return i.full; });
        }
        if (request.paranoid) {
            if (auto st = compare(&groups); !st) return st;
        }
        {
            const StepTimer timer(out_, DupesPhase::Done);
            report(groups);
        }
        env_.progress.start_phase(DupesPhase::Done, 0, 0);
        return {};
    }

  private:
    core::Status list(const DupesRequest& request) {
        storage::CandidateQuery q;
        q.roots = request.roots;
        q.min_size = request.min_size;
        std::vector<storage::DupeCandidate> rows;
        if (auto st = env_.candidates != nullptr
                          ? env_.candidates->list(q, &rows, &out_->listing_kept)
                          : storage::dupe_candidates(*env_.db, q, &rows);
            !st) {
            return st;
        }
        // Rows come by size, then inode, then path: consecutive rows of one inode are its names,
        // in order.
        std::vector<Item> items;
        items.reserve(rows.size());
        bool hidden = false;
        for (storage::DupeCandidate& c : rows) {
            if (env_.can_see && !env_.can_see(c.path)) {
                hidden = true;
                ++out_->hidden;
                continue;
            }
            if (items.empty() || items.back().file.inode.dev != c.dev ||
                items.back().file.inode.ino != c.ino) {
                Item& it = items.emplace_back();
                it.file.inode = {c.dev, c.ino, c.size, c.mtime_ns, c.ctime_ns};
                it.partial = c.partial;
                it.full = c.full;
            }
            items.back().file.names.push_back(std::move(c.path));
        }
        if (!hidden) {
            items_ = std::move(items);
            return {};
        }
        // Sizes left with one visible inode are no candidates any more.
        for (std::size_t i = 0; i < items.size();) {
            std::size_t j = i;
            while (j < items.size() && items[j].file.inode.size == items[i].file.inode.size) ++j;
            if (j - i > 1) {
                for (std::size_t k = i; k < j; ++k) items_.push_back(std::move(items[k]));
            }
            i = j;
        }
        return {};
    }

    // The check of the files whose hashes all came from the cache (see go()), on the executor
    // that reads no content. The files go by path, so that each worker meets the files of one
    // directory one after another and its DirChain reaches the directory once. Their paths and
    // inodes are first copied, in that order, into one buffer: the items are large and in size
    // order, and walking them in path order missed the cache on nearly every file.
    core::Status check_cached(const std::vector<std::size_t>& check) {
        const StepTimer timer(out_, DupesPhase::Checking);
        struct Target {
            std::size_t path;  // offset in `paths`
            std::size_t size;  // of the path
            IndexedInode inode;
            std::size_t item;
        };
        std::vector<std::pair<std::string_view, std::size_t>> by_path;
        by_path.reserve(check.size());
        std::size_t bytes = 0;
        for (std::size_t i : check) {
            by_path.emplace_back(items_[i].file.names.front(), i);
            bytes += by_path.back().first.size();
        }
        std::sort(by_path.begin(), by_path.end());
        std::string paths;
        paths.reserve(bytes);
        std::vector<Target> targets;
        targets.reserve(check.size());
        std::uint64_t sizes = 0;
        for (const auto& [path, i] : by_path) {
            targets.push_back({paths.size(), path.size(), items_[i].file.inode, i});
            paths.append(path);
            sizes += static_cast<std::uint64_t>(items_[i].file.inode.size);
        }

        env_.progress.start_phase(DupesPhase::Checking, targets.size(), sizes);
        if (targets.empty()) return {};
        std::vector<HashOutcome> outcomes(targets.size(), HashOutcome::Hashed);
        std::vector<DirChain> dirs = chains(env_.executor.size());
        FileHasher hasher(env_.may_read);
        const core::Status st = env_.executor.parallel_for(
            targets.size(),
            [&](std::size_t begin, std::size_t end, unsigned worker) {
                std::uint64_t done = 0;
                for (std::size_t k = begin; k < end; ++k) {
                    const Target& t = targets[k];
                    outcomes[k] = hasher.check(
                        dirs[worker], std::string_view(paths).substr(t.path, t.size), t.inode);
                    done += static_cast<std::uint64_t>(t.inode.size);
                }
                // Once per chunk: the counters are shared, and a chunk takes microseconds.
                env_.progress.files_done(worker, end - begin, done, 0);
            },
            stop_);
        env_.progress.set_executor_stats(env_.executor.stats());
        if (!st) return st;
        for (std::size_t k = 0; k < targets.size(); ++k)
            items_[targets[k].item].outcome = outcomes[k];
        return {};
    }

    // One DirChain per worker of an executor, each judging directories as the caller's
    // (DupesEnvironment::may_list).
    std::vector<DirChain> chains(unsigned workers) const {
        std::vector<DirChain> out;
        out.reserve(workers);
        for (unsigned w = 0; w < workers; ++w) out.emplace_back(env_.may_list);
        return out;
    }

    // Where the steps that read content run (DupesEnvironment::readers).
    core::RangeExecutor& readers() { return env_.readers ? env_.readers() : env_.executor; }

    template <class Fn>
    core::Status phase(DupesPhase which, const std::vector<std::size_t>& indices, Fn fn) {
        const StepTimer timer(out_, which);
        std::uint64_t bytes = 0;
        for (std::size_t i : indices)
            bytes += static_cast<std::uint64_t>(items_[i].file.inode.size);
        env_.progress.start_phase(which, indices.size(), bytes);
        if (indices.empty()) return {};
        core::RangeExecutor& executor = which == DupesPhase::Checking ? env_.executor : readers();
        const std::stop_token stop = stop_;
        FileHasher hasher(env_.may_read, [stop] { return stop.stop_requested(); });
        std::vector<DirChain> dirs = chains(executor.size());
        const core::Status st = executor.parallel_for(
            indices.size(),
            [&](std::size_t begin, std::size_t end, unsigned worker) {
                // Progress once per chunk: the counters are shared by the workers, and a chunk of
                // files that need no read takes microseconds.
                std::uint64_t sizes = 0;
                std::uint64_t read = 0;
                for (std::size_t k = begin; k < end; ++k) {
                    Item& it = items_[indices[k]];
                    const std::uint64_t before = it.read.bytes;
                    fn(hasher, dirs[worker], it);
                    sizes += static_cast<std::uint64_t>(it.file.inode.size);
                    read += it.read.bytes - before;
                    if (it.read.bytes != before) {
                        env_.progress.files_done(worker, k + 1 - begin, sizes, read);
                        begin = k + 1;
                        sizes = 0;
                        read = 0;
                    }
                }
                if (end > begin) env_.progress.files_done(worker, end - begin, sizes, read);
            },
            stop_);
        env_.progress.set_executor_stats(executor.stats());
        for (std::size_t i : indices) {
            Item& it = items_[i];
            if (it.outcome == HashOutcome::Cancelled) return cancelled();
        }
        if (!st) return st;
        return {};
    }

    static core::Status cancelled() {
        return {std::make_error_code(std::errc::operation_canceled), "dupes cancelled"};
    }

    // Hashes are a cache: a write that fails (the index busy for long, a full disk) costs the
    // next run a read, nothing else.
    void store(DupesPhase which, const std::vector<std::size_t>& indices) {
        const StepTimer timer(out_, which);
        std::vector<storage::HashRecord> records;
        for (std::size_t i : indices) {
            const Item& it = items_[i];
            if (!alive(it) || !(it.partial_new || it.full_new)) continue;
            const IndexedInode& n = it.file.inode;
            records.push_back({n.dev, n.ino, n.size, n.mtime_ns, n.ctime_ns, it.partial, it.full});
        }
        if (auto st = env_.candidates != nullptr ? env_.candidates->store(records)
                                                 : storage::store_content_hashes(*env_.db, records);
            !st) {
            spdlog::warn("dupes: keeping {} content hashes failed: {}", records.size(),
                         st.to_string());
        }
    }

    // Splits each group into sets of byte-identical files: every file against the first one
    // left, one group at a time per executor index.
    core::Status compare(std::vector<std::vector<std::size_t>>* groups) {
        std::vector<std::vector<std::size_t>> pending = std::move(*groups);
        groups->clear();
        while (!pending.empty()) {
            std::uint64_t files = 0;
            std::uint64_t bytes = 0;
            for (const auto& g : pending) {
                files += g.size();
                bytes += g.size() * static_cast<std::uint64_t>(items_[g[0]].file.inode.size);
            }
            env_.progress.start_phase(DupesPhase::Compare, files, bytes);
            const StepTimer timer(out_, DupesPhase::Compare);
            std::vector<std::vector<std::size_t>> same(pending.size());
            std::vector<std::vector<std::size_t>> rest(pending.size());
            const std::stop_token stop = stop_;
            FileHasher hasher(env_.may_read, [stop] { return stop.stop_requested(); });
            std::atomic<bool> was_cancelled{false};
            core::RangeExecutor& executor = readers();
            std::vector<DirChain> dirs = chains(executor.size());
            const core::Status st = executor.parallel_for(
                pending.size(),
                [&](std::size_t begin, std::size_t end, unsigned worker) {
                    for (std::size_t k = begin; k < end; ++k) {
                        const auto& g = pending[k];
                        Item& first = items_[g[0]];
                        same[k].push_back(g[0]);
                        for (std::size_t j = 1; j < g.size(); ++j) {
                            Item& other = items_[g[j]];
                            ReadCounters read;
                            bool equal = false;
                            const HashOutcome o = hasher.same_content(
                                dirs[worker], first.file.names.front(), first.file.inode,
                                other.file.names.front(), other.file.inode, &equal, &read);
                            env_.progress.file_done(
                                worker, static_cast<std::uint64_t>(other.file.inode.size),
                                read.bytes);
                            other.read.bytes += read.bytes;
                            if (o == HashOutcome::Cancelled) {
                                was_cancelled = true;
                                return;
                            }
                            if (o != HashOutcome::Hashed) {
                                other.outcome = o;
                            } else if (equal) {
                                same[k].push_back(g[j]);
                            } else {
                                rest[k].push_back(g[j]);
                            }
                        }
                    }
                },
                stop_);
            env_.progress.set_executor_stats(executor.stats());
            if (was_cancelled) return cancelled();
            if (!st) return st;
            pending.clear();
            for (std::size_t k = 0; k < same.size(); ++k) {
                if (same[k].size() > 1) groups->push_back(std::move(same[k]));
                if (rest[k].size() > 1) pending.push_back(std::move(rest[k]));
            }
        }
        return {};
    }

    void report(const std::vector<std::vector<std::size_t>>& groups) {
        for (const Item& it : items_) {
            out_->read.bytes += it.read.bytes;
            out_->read.files += it.read.files;
            if (it.outcome == HashOutcome::Changed) {
                out_->changed.push_back(it.file.names.front());
            } else if (it.outcome == HashOutcome::Unreadable) {
                ++out_->unreadable;
            }
        }
        for (const auto& g : groups) {
            DupesGroup group;
            for (std::size_t i : g) {
                if (!alive(items_[i])) continue;
                // The groups are disjoint and this is the items' last use: no copy of the names.
                group.files.push_back(std::move(items_[i].file));
            }
            if (group.files.size() < 2) continue;
            group.size = group.files.front().inode.size;
            std::sort(group.files.begin(), group.files.end(),
                      [](const DupesFile& a, const DupesFile& b) { return a.names < b.names; });
            out_->groups.push_back(std::move(group));
        }
        std::sort(out_->groups.begin(), out_->groups.end(),
                  [](const DupesGroup& a, const DupesGroup& b) {
                      if (a.wasted() != b.wasted()) return a.wasted() > b.wasted();
                      return a.files.front().names < b.files.front().names;
                  });
        std::sort(out_->changed.begin(), out_->changed.end());
    }

    DupesEnvironment& env_;
    std::stop_token stop_;
    DupesResult* out_;
    std::vector<Item> items_;
};

}  // namespace

core::Status find_dupes(DupesEnvironment& env, const DupesRequest& request, std::stop_token stop,
                        DupesResult* out) {
    *out = {};
    Run run(env, std::move(stop), out);
    return run.go(request);
}

}  // namespace wsindex::daemon
