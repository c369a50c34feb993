// Walker: directory tasks and stat chunks on the work-stealing pool (design note in walker.hpp).
#include "core/walker.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <mutex>
#include <thread>
#include <vector>

#include "core/dir_fd.hpp"
#include "core/dir_reader.hpp"
#include "core/fs_types.hpp"
#include "core/owner_counter.hpp"
#include "core/path_recycler.hpp"
#include "core/resolve.hpp"
#include "core/unique_fd.hpp"
#include "core/walk_errors.hpp"
#include "core/worker_pool.hpp"

namespace wsindex::core {

namespace {

// A directory's records, shared by the stat chunks of a split directory.
struct Listing {
    std::shared_ptr<const DirNode> node;
    std::shared_ptr<DirFd> fd;
    DirBuffer records;
};

// A pool item: either a directory to open (listing == null) or a stat chunk of a listing.
struct WalkItem {
    std::shared_ptr<const DirNode> parent;   // directory task: the parent (null for the root)
    std::shared_ptr<DirFd> parent_fd;        // directory task: open relative to it; null: reopen
    std::shared_ptr<DirFd> self_fd;          // a root: opened and identity-checked by run_many
    WalkResult self;                         // directory task: its record, stat'ed by the parent
    std::shared_ptr<const Listing> listing;  // stat chunk: [begin, end) of these records
    std::uint32_t begin = 0;
    std::uint32_t end = 0;
};

using Pool = WorkerPool<WalkItem, WalkResult>;

// Per-worker state, touched only by its worker during a run.
struct alignas(64) Scratch {
    DirBuffer buffer;                      // reused for every directory that is not split
    std::vector<std::string> spare_paths;  // buffers from the PathRecycler
    OwnerCounter dirs_read, entries, chunks, reopens, max_open_fds;  // read after the run
    bool priority_checked = false;  // this worker looked at its priority (its own thread only)
};

// Workers beyond one per CPU are there to keep requests in flight while the others wait on a
// cold disk. At the lowest priority they take a CPU only when it would otherwise idle (the
// others blocked), so on a warm cache they do not take CPU time from the walk's consumer.
void yield_priority_if_extra(unsigned worker_index, Scratch& me) {
    if (me.priority_checked) return;
    me.priority_checked = true;
    if (worker_index < std::max(1u, std::thread::hardware_concurrency())) return;
    const auto tid = static_cast<id_t>(::gettid());
    // Raising one's nice value needs no privilege; a failure leaves the thread as it was.
    (void)::setpriority(PRIO_PROCESS, tid, 19);
}

// How often a long stat loop looks at the stop flags (entries).
constexpr std::size_t kStopCheckEvery = 256;

Status canceled_status() {
    return Status(std::make_error_code(std::errc::operation_canceled), "walk cancelled");
}

}  // namespace

unsigned default_walk_workers() {
    return std::max(kMinDefaultWalkWorkers, std::thread::hardware_concurrency());
}

struct Walker::Impl {
    explicit Impl(WalkOptions o)
        : options(std::move(o)),
          fs(options.fs != nullptr ? *options.fs : real_fs_ops()),
          prune(options.prune),
          scratch(resolved_workers(options.workers)),
          pool(pool_options(static_cast<unsigned>(scratch.size()), options),
               [this](WalkItem& item, Pool::Context& ctx) { return run_task(item, ctx); }) {}

    static PoolOptions pool_options(unsigned workers, const WalkOptions& o) {
        PoolOptions p;
        p.workers = workers;
        p.result_batch = o.result_batch;
        const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
        p.queued_batches =
            o.queued_batches != 0 ? o.queued_batches : std::size_t{16} * std::min(workers, cpus);
        return p;
    }
    static unsigned resolved_workers(unsigned requested) {
        return requested != 0 ? requested : default_walk_workers();
    }

    Status run(std::string_view root, const Consumer& consume);
    Status run_many(std::span<const std::string> roots, const Consumer& consume,
                    std::vector<Status>* root_status);
    Status open_root(const std::string& path, WalkResult* root, int* fd) const;
    Status run_task(WalkItem& item, Pool::Context& ctx);
    [[nodiscard]] bool same_object_as(int fd, const WalkResult& listed) const {
        FileStat st;
        return fs.stat_fd(fd, st) == 0 && st.dev == listed.dev && st.ino == listed.ino &&
               (st.mode & S_IFMT) == S_IFDIR;
    }
    Status walk_dir(WalkItem& item, Pool::Context& ctx);
    Status stat_entries(const std::shared_ptr<const DirNode>& node,
                        const std::shared_ptr<DirFd>& dir_fd, const DirBuffer& records,
                        std::size_t begin, std::size_t end, Pool::Context& ctx);
    int reopen(const DirNode& parent, const char* name, Scratch& me) const;
    [[nodiscard]] bool cancelled() const {
        return options.cancel.cancelled() || cancel_flag.load(std::memory_order_relaxed);
    }
    void setup_fd_budget();

    const WalkOptions options;
    const FsOps& fs;
    const PruneMatcher prune;
    std::vector<Scratch> scratch;  // one per worker, indexed by worker_index(); outlives pool
    Pool pool;

    // Per run. Written by run() before submit (the pool's hub mutex publishes them).
    std::int64_t fd_budget = 0;
    // The roots' fds, kept open for the whole run: every reopen can start at one of them.
    std::mutex root_fds_mutex;
    std::vector<std::shared_ptr<DirFd>> root_fds;

    // relaxed: ids only need to be unique; nothing is published through the counter.
    std::atomic<std::uint64_t> next_dir_id{2};
    std::atomic<std::int64_t> open_fds{0};
    std::atomic<bool> cancel_flag{false};
    std::mutex run_mutex;  // one run at a time
    PathRecycler recycler;

    // A path buffer for a new result: recycled when one is at hand, else empty.
    std::string take_path(Scratch& me) {
        if (me.spare_paths.empty() && !recycler.take(me.spare_paths)) return {};
        std::string s = std::move(me.spare_paths.back());
        me.spare_paths.pop_back();
        s.clear();
        return s;
    }
};

void Walker::Impl::setup_fd_budget() {
    rlimit lim{};
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && options.raise_fd_limit &&
        lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &lim) != 0) getrlimit(RLIMIT_NOFILE, &lim);
    }
    if (options.fd_budget != 0) {
        fd_budget = static_cast<std::int64_t>(options.fd_budget);
        return;
    }
    // Half of what is left after 64 for the rest of the process (database, sockets, logs),
    // and no more than 256: a depth-first walk needs about one fd per level per worker.
    const auto soft = lim.rlim_cur == RLIM_INFINITY ? rlim_t{1} << 20 : lim.rlim_cur;
    const std::int64_t half = soft > 64 ? static_cast<std::int64_t>((soft - 64) / 2) : 0;
    fd_budget = std::clamp<std::int64_t>(half, 8, 256);
}

Status Walker::Impl::run(std::string_view root_view, const Consumer& consume) {
    if (root_view.empty()) {
        return Status(std::make_error_code(std::errc::invalid_argument), "empty scan root");
    }
    const std::string root(root_view);
    std::vector<Status> root_status;
    Status status = run_many(std::span<const std::string>(&root, 1), consume, &root_status);
    return root_status[0] ? status : root_status[0];
}

Status Walker::Impl::run_many(std::span<const std::string> roots, const Consumer& consume,
                              std::vector<Status>* root_status) {
    std::lock_guard guard(run_mutex);
    for (auto& s : scratch) {
        for (OwnerCounter* c : {&s.dirs_read, &s.entries, &s.chunks, &s.reopens, &s.max_open_fds}) {
            c->reset();  // workers are idle between runs
        }
    }
    root_status->assign(roots.size(), Status::ok());
    // The roots must exist: lstat each (no symlink following in the last component) before any
    // work; one that cannot be is left out with a clear error.
    std::vector<WalkResult> seeds;
    std::vector<WalkResult> single;  // roots that are files or symlinks: one record each
    std::vector<int> seed_fds;       // seeds[i]'s descriptor, opened and checked
    for (std::size_t i = 0; i < roots.size(); ++i) {
        if (roots[i].empty()) {
            (*root_status)[i] =
                Status(std::make_error_code(std::errc::invalid_argument), "empty scan root");
            continue;
        }
        WalkResult root;
        int fd = -1;
        if (Status st = open_root(roots[i], &root, &fd); !st) {
            (*root_status)[i] = std::move(st);
            continue;
        }
        if (!root.is_dir() || fd < 0) {  // not listed (or not listable): no pool needed for it
            if (root.is_dir()) root.dir_id = i + 1;
            scratch[0].entries.add();
            single.push_back(std::move(root));
            continue;
        }
        root.dir_id = i + 1;
        seeds.push_back(std::move(root));
        seed_fds.push_back(fd);
    }
    const auto close_seeds = [&] {
        for (const int fd : seed_fds) fs.close_fd(fd);
    };
    if (cancelled()) {
        close_seeds();
        cancel_flag.store(false, std::memory_order_relaxed);
        return canceled_status();
    }
    if (!single.empty()) {
        if (Status s = consume(std::span<WalkResult>(single)); !s) {
            close_seeds();
            return s;
        }
    }
    if (seeds.empty()) return Status::ok();
    next_dir_id.store(roots.size() + 1, std::memory_order_relaxed);
    setup_fd_budget();

    for (std::size_t i = 0; i < seeds.size(); ++i) {
        WalkItem item;
        item.self_fd = std::make_shared<DirFd>(seed_fds[i], fs, &open_fds);
        item.self = std::move(seeds[i]);
        pool.submit(std::move(item));
    }
    // A cancel() that raced with submit (which resets the pool's stop state) is not lost.
    if (cancelled()) pool.request_stop();
    Status status = pool.consume_until_done([&](std::span<WalkResult> batch) {
        Status s = consume(batch);
        if (s) recycler.give(batch);
        return s;
    });
    recycler.clear();
    for (auto& s : scratch) s.spare_paths.clear();  // workers are idle: the run is done
    {
        std::lock_guard lock(root_fds_mutex);
        root_fds.clear();
    }
    cancel_flag.store(false, std::memory_order_relaxed);
    // The pool's first error wins, whatever came after it: a fatal error followed by a cancel
    // is that error, not "cancelled".
    return status;
}

// A root is reached by descriptor (core/resolve.hpp): its parent directory is opened from "/"
// without following a symlink in any component, the root is lstat'ed relative to that
// descriptor (a root that is a symlink is recorded as one, not followed), opened relative to it,
// and the opened directory must be the one the lstat saw. Fills *root with the record and *fd
// with the open directory (-1 when it is not a directory, or could not be opened for a
// recoverable reason, recorded in root->error). Fails for a root that cannot be reached at all,
// or that changed between its lstat and its open (ESTALE): nothing read through it is recorded.
Status Walker::Impl::open_root(const std::string& path, WalkResult* root, int* fd) const {
    root->path = path;
    FileStat st;
    std::string_view parent;
    std::string_view name;
    if (!split_parent(path, &parent, &name)) {
        if (path.empty() || path.front() != '/') {
            return Status(std::make_error_code(std::errc::invalid_argument),
                          "scan root is not an absolute path");
        }
        // "/" (or "//"): it has no parent; its descriptor is its identity.
        const int dfd = fs.open_dir_path(AT_FDCWD, "/");
        if (dfd < 0) return Status::from_errno(-dfd, "scan root " + path);
        if (const int rc = fs.stat_fd(dfd, st); rc < 0) {
            fs.close_fd(dfd);
            return Status::from_errno(-rc, "scan root " + path);
        }
        fill_stat(*root, st);
        *fd = dfd;
        return Status::ok();
    }
    const std::string parent_path(parent);
    const std::string base(name);
    const int pfd = open_dir_absolute(parent_path, O_PATH);
    if (pfd < 0) return Status::from_errno(-pfd, "scan root " + path);
    const UniqueFd parent_fd(pfd);
    if (const int rc = fs.stat_at(pfd, base.c_str(), st, true); rc < 0) {
        return Status::from_errno(-rc, "scan root " + path);
    }
    fill_stat(*root, st);
    if (!root->is_dir()) return Status::ok();
    const int dfd = fs.open_dir(pfd, base.c_str());
    if (dfd < 0) {
        if (!walk_error_is_recoverable(-dfd)) return Status::from_errno(-dfd, "open " + path);
        root->error = -dfd;  // recorded as a walk records an unopenable directory
        return Status::ok();
    }
    FileStat opened;
    if (const int rc = fs.stat_fd(dfd, opened); rc < 0 || object_id(opened) != object_id(st)) {
        fs.close_fd(dfd);
        return Status::from_errno(ESTALE, "scan root " + path + " changed while it was opened");
    }
    *fd = dfd;
    return Status::ok();
}

Status Walker::Impl::run_task(WalkItem& item, Pool::Context& ctx) {
    if (cancelled()) return canceled_status();
    yield_priority_if_extra(ctx.worker_index(), scratch[ctx.worker_index()]);
    if (item.listing == nullptr) return walk_dir(item, ctx);
    scratch[ctx.worker_index()].chunks.add();
    const Listing& l = *item.listing;
    return stat_entries(l.node, l.fd, l.records, item.begin, item.end, ctx);
}

// Opens `name` below `parent` when no reference to parent's fd was handed down (fd budget):
// from the nearest ancestor whose fd is still open, one component at a time. Returns an fd or
// -errno (an intermediate failure counts as the child's).
int Walker::Impl::reopen(const DirNode& parent, const char* name, Scratch& me) const {
    me.reopens.add();
    std::vector<const DirNode*> chain;  // parent first, up to (excluding) the open base
    std::shared_ptr<DirFd> base;
    for (const DirNode* n = &parent; n != nullptr; n = n->parent.get()) {
        base = n->fd.lock();
        if (base) break;
        chain.push_back(n);
    }
    assert(base && "the root's fd stays open for the whole run");
    if (!base) return -EBADF;
    int cur = base->get();
    int owned = -1;  // `cur` when we opened it ourselves
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const int fd = fs.open_dir(cur, (*it)->name());
        if (owned >= 0) fs.close_fd(owned);
        if (fd < 0) return fd;
        cur = owned = fd;
    }
    const int fd = fs.open_dir(cur, name);
    if (owned >= 0) fs.close_fd(owned);
    return fd;
}

Status Walker::Impl::walk_dir(WalkItem& item, Pool::Context& ctx) {
    Scratch& me = scratch[ctx.worker_index()];
    WalkResult& self = item.self;
    const char* name = self.path.c_str() + self.name_offset;

    std::shared_ptr<DirFd> dir_fd = std::move(item.self_fd);
    int fd = dir_fd ? dir_fd->get() : -1;
    if (!dir_fd) {
        fd = item.parent_fd ? fs.open_dir(item.parent_fd->get(), name)
                            : reopen(*item.parent, name, me);
        // The directory opened must be the one the parent's listing stat'ed: a name renamed or
        // exchanged between the stat and the open is a change, recorded as ESTALE without its
        // contents (the change's own events, or the next scan, list it again).
        if (fd >= 0 && !same_object_as(fd, self)) {
            fs.close_fd(fd);
            fd = -ESTALE;
        }
    }
    item.parent_fd.reset();  // the parent's fd may close now: this child no longer needs it
    if (fd < 0) {
        if (!walk_error_is_recoverable(-fd)) return Status::from_errno(-fd, "open " + self.path);
        self.error = -fd;
        me.entries.add();
        ctx.emit(std::move(self));
        return Status::ok();
    }
    if (!dir_fd) dir_fd = std::make_shared<DirFd>(fd, fs, &open_fds);
    me.max_open_fds.max(static_cast<std::uint64_t>(open_fds.load(std::memory_order_relaxed)));
    if (item.parent == nullptr) {  // before any child exists (see reopen)
        std::lock_guard lock(root_fds_mutex);
        root_fds.push_back(dir_fd);
    }

    // A new file system (a mount point): its type decides whether to descend (PRUNEFS).
    if (prune.has_fs_rules() && item.parent != nullptr && self.dev != item.parent->dev) {
        std::uint64_t magic = 0;
        if (fs.fs_magic(fd, magic) == 0 && prune.prune_fs(fs_type_name(magic))) {
            me.entries.add();
            ctx.emit(std::move(self));
            return Status::ok();
        }
    }

    DirBuffer& records = me.buffer;
    if (const int err = records.read_all(fs, fd); err != 0) {
        if (!walk_error_is_recoverable(err)) return Status::from_errno(err, "read " + self.path);
        self.error = err;  // keep what was read before the error
    }
    me.dirs_read.add();

    auto node = std::make_shared<DirNode>();
    node->parent = std::move(item.parent);
    node->path = self.path;
    node->name_offset = self.name_offset;
    node->id = self.dir_id;
    node->depth = self.depth;
    node->dev = self.dev;
    node->root_dev = node->parent ? node->parent->root_dev : self.dev;
    node->ino = self.ino;
    node->fd = dir_fd;
    std::shared_ptr<const DirNode> cnode = std::move(node);
    const std::size_t n = records.count();
    self.children = static_cast<std::uint32_t>(n);
    me.entries.add();
    ctx.emit(std::move(self));

    if (n <= options.split_threshold) {
        return stat_entries(cnode, dir_fd, records, 0, n, ctx);
    }
    // A huge directory: its records move to a shared listing and its stats become chunks that
    // idle workers steal. This worker's buffer starts afresh.
    auto listing = std::make_shared<Listing>();
    listing->node = cnode;
    listing->fd = dir_fd;
    listing->records = std::exchange(me.buffer, DirBuffer());
    std::shared_ptr<const Listing> shared = std::move(listing);
    const std::size_t chunk = std::max<std::size_t>(1, options.chunk_entries);
    const std::size_t first_end = std::min(n, chunk);
    // Pushed last-to-first so that this worker pops them in order; thieves take from the far end.
    std::size_t nchunks = (n - first_end + chunk - 1) / chunk;
    for (std::size_t k = nchunks; k-- > 0;) {
        WalkItem c;
        c.listing = shared;
        c.begin = static_cast<std::uint32_t>(first_end + k * chunk);
        c.end = static_cast<std::uint32_t>(std::min(n, first_end + (k + 1) * chunk));
        ctx.spawn(std::move(c));
    }
    me.chunks.add();
    return stat_entries(cnode, dir_fd, shared->records, 0, first_end, ctx);
}

Status Walker::Impl::stat_entries(const std::shared_ptr<const DirNode>& node,
                                  const std::shared_ptr<DirFd>& dir_fd, const DirBuffer& records,
                                  std::size_t begin, std::size_t end, Pool::Context& ctx) {
    Scratch& me = scratch[ctx.worker_index()];
    const int dfd = dir_fd->get();
    const std::string& dir_path = node->path;
    // "/" and "dir/" as given already end in a slash (find prints "dir/a", not "dir//a").
    const bool need_slash = dir_path.empty() || dir_path.back() != '/';
    const std::size_t name_offset = dir_path.size() + (need_slash ? 1 : 0);
    std::uint64_t emitted = 0;

    for (std::size_t i = begin; i < end; ++i) {
        if ((i - begin) % kStopCheckEvery == kStopCheckEvery - 1) {
            if (cancelled()) return canceled_status();
            if (ctx.stop_requested()) break;  // another worker failed: stop quietly
        }
        const LinuxDirent64& d = records.entry(i);
        const char* name = d.d_name;
        const std::size_t name_len = std::char_traits<char>::length(name);

        WalkResult r;
        // The full path, now or (names only: when the record turns out to need it) later.
        const auto set_full_path = [&] {
            if (r.path.capacity() < name_offset + name_len) {
                std::string spare = take_path(me);
                r.path.swap(spare);
            }
            r.path.clear();
            r.path.reserve(name_offset + name_len);
            r.path.append(dir_path);
            if (need_slash) r.path.push_back('/');
            r.path.append(name, name_len);
            r.name_offset = static_cast<std::uint32_t>(name_offset);
        };
        if (options.full_paths) {
            set_full_path();
        } else {
            r.path.assign(name, name_len);  // inline up to 15 bytes: no allocation
        }
        r.parent_id = node->id;
        r.depth = node->depth + 1;

        FileStat st;
        const bool probably_dir = d.d_type == DT_DIR || d.d_type == DT_UNKNOWN;
        if (const int rc = fs.stat_at(dfd, name, st, probably_dir); rc < 0) {
            if (!options.full_paths) set_full_path();
            if (!walk_error_is_recoverable(-rc)) return Status::from_errno(-rc, "stat " + r.path);
            r.error = -rc;
            r.type = entry_type_from_dtype(d.d_type);
            // Known to be a directory but not stat'able (e.g. a parent without search
            // permission): it still gets an id, and is not descended (no dev/ino to check).
            if (r.is_dir()) r.dir_id = next_dir_id.fetch_add(1, std::memory_order_relaxed);
            ++emitted;
            ctx.emit(std::move(r));
            continue;
        }
        fill_stat(r, st);
        if (!r.is_dir()) {
            ++emitted;
            ctx.emit(std::move(r));
            continue;
        }

        if (!options.full_paths) set_full_path();
        r.dir_id = next_dir_id.fetch_add(1, std::memory_order_relaxed);
        bool descend = true;
        if (options.one_file_system && st.dev != node->root_dev) descend = false;
        if (options.max_depth != 0 && r.depth >= options.max_depth) descend = false;
        if (descend && prune.has_dir_rules() && prune.prune_dir(r.path, r.name())) descend = false;
        if (descend && (st.maybe_mount_root || st.dev != node->dev)) {
            // A directory equal to one of its ancestors (a bind mount of an ancestor below
            // itself) would be walked forever: record ELOOP and stop there. Only a mount root
            // can be one, so only there do we walk up the ancestors (a cost proportional to the
            // depth, for every directory, in a deep tree).
            for (const DirNode* a = node.get(); a != nullptr; a = a->parent.get()) {
                if (a->ino == st.ino && a->dev == st.dev) {
                    r.error = ELOOP;
                    descend = false;
                    break;
                }
            }
        }
        if (!descend) {
            ++emitted;
            ctx.emit(std::move(r));
            continue;
        }
        WalkItem child;
        child.parent = node;
        // Over budget: the child reopens from an open ancestor instead of pinning this fd.
        if (open_fds.load(std::memory_order_relaxed) < fd_budget) child.parent_fd = dir_fd;
        child.self = std::move(r);
        ctx.spawn(std::move(child));
    }
    me.entries.add(emitted);
    return Status::ok();
}

Walker::Walker(WalkOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Walker::~Walker() = default;

Status Walker::run(std::string_view root, const Consumer& consume) {
    return impl_->run(root, consume);
}

Status Walker::run_many(std::span<const std::string> roots, const Consumer& consume,
                        std::vector<Status>* root_status) {
    return impl_->run_many(roots, consume, root_status);
}

void Walker::cancel() {
    impl_->cancel_flag.store(true, std::memory_order_relaxed);
    impl_->pool.request_stop();
}

unsigned Walker::workers() const { return impl_->pool.size(); }

std::vector<PoolWorkerStats> Walker::worker_stats() const { return impl_->pool.stats(); }

std::size_t Walker::ready_batches() const { return impl_->pool.ready_batches(); }

WalkStats Walker::stats() const {
    WalkStats out;
    for (const auto& s : impl_->scratch) {
        out.dirs_read += s.dirs_read.get();
        out.entries += s.entries.get();
        out.chunks += s.chunks.get();
        out.reopens += s.reopens.get();
        out.max_open_fds = std::max(out.max_open_fds, s.max_open_fds.get());
    }
    out.fd_budget = static_cast<std::uint64_t>(impl_->fd_budget);
    for (const auto& w : impl_->pool.stats()) {
        out.tasks += w.tasks_run;
        out.steal_attempts += w.steal_attempts;
        out.steals += w.steals;
        out.parks += w.parks;
        out.parked_ns += w.parked_ns;
    }
    return out;
}

}  // namespace wsindex::core
