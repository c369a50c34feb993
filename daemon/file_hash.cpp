// File hash: safe open, verification against the index, and XXH3-128 of a file (file_hash.hpp).
#include "daemon/file_hash.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace wsindex::daemon {
namespace {

constexpr std::size_t kReadBuffer = 256 * 1024;

std::int64_t ns_of(const struct timespec& t) {
    return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

bool matches(const struct stat& st, const IndexedInode& e) {
    return S_ISREG(st.st_mode) && st.st_dev == e.dev && st.st_ino == e.ino &&
           st.st_size == e.size && ns_of(st.st_mtim) == e.mtime_ns &&
           ns_of(st.st_ctim) == e.ctime_ns;
}

class Fd {
  public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    [[nodiscard]] int get() const { return fd_; }

  private:
    int fd_;
};

storage::Hash128 to_hash(XXH128_hash_t h) {
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    storage::Hash128 out{};
    std::memcpy(out.data(), c.digest, out.size());
    return out;
}

// pread until `len` bytes or end of file; false on error.
bool read_at(int fd, char* buf, std::size_t len, off_t at, std::size_t* got) {
    *got = 0;
    while (*got < len) {
        const ssize_t n = ::pread(fd, buf + *got, len - *got, at + static_cast<off_t>(*got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) break;
        *got += static_cast<std::size_t>(n);
    }
    return true;
}

// An open, verified, readable file; `fd` < 0 with the outcome otherwise.
struct OpenedFile {
    int fd = -1;
    HashOutcome outcome = HashOutcome::Unreadable;
    bool was_cached = false;  // its first page was in the page cache before we read
};

// Whether the file's first page is in the page cache: a read that may not wait for the disk
// (RWF_NOWAIT) succeeds only then. Pages someone else had cached are left there after hashing;
// only what this read brought in is dropped (finish_read).
bool first_page_cached(int fd) {
    char byte = 0;
    struct iovec iov {
        &byte, 1
    };
    return ::preadv2(fd, &iov, 1, 0, RWF_NOWAIT) == 1;
}

// What a failed DirChain::open means for the file below: the path no longer leads to the
// directory the index holds there (a symlink, another object, gone) or the caller may not
// list it.
HashOutcome dir_outcome(int err) {
    switch (err) {
        case -ELOOP:
        case -ENOTDIR:
        case -ENOENT:
        case -ESTALE:
            return HashOutcome::Changed;
        default:
            return HashOutcome::Unreadable;
    }
}

// The file at absolute `path`, its directory reached with `dirs` and the file opened relative to
// that descriptor (file_hash.hpp).
OpenedFile open_checked(DirChain& dirs, std::string_view path, const IndexedInode& expect,
                        const ReadPermission& may_read, bool for_reading) {
    OpenedFile r;
    const std::size_t slash = path.rfind('/');
    if (slash == std::string_view::npos || slash + 1 == path.size()) return r;
    const int dir_fd = dirs.open(slash == 0 ? std::string_view("/") : path.substr(0, slash));
    if (dir_fd < 0) {
        r.outcome = dir_outcome(dir_fd);
        return r;
    }
    const std::string name(path.substr(slash + 1));
    const int pfd = ::openat(dir_fd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (pfd < 0) {
        r.outcome =
            errno == ENOENT || errno == ELOOP ? HashOutcome::Changed : HashOutcome::Unreadable;
        return r;
    }
    Fd path_fd(pfd);
    struct stat st {};
    if (::fstat(pfd, &st) != 0) return r;
    if (!matches(st, expect)) {
        r.outcome = HashOutcome::Changed;
        return r;
    }
    if (may_read && !may_read(pfd)) return r;
    if (!for_reading) {
        r.outcome = HashOutcome::Hashed;
        return r;
    }
    const std::string link = "/proc/self/fd/" + std::to_string(pfd);
    int fd = ::open(link.c_str(), O_RDONLY | O_NOATIME | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == EPERM) fd = ::open(link.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return r;
    struct stat again {};
    if (::fstat(fd, &again) != 0 || !matches(again, expect)) {
        ::close(fd);
        r.outcome = HashOutcome::Changed;
        return r;
    }
    r.fd = fd;
    r.outcome = HashOutcome::Hashed;
    r.was_cached = first_page_cached(fd);
    return r;
}

// After reading: still the same inode as indexed, and the pages this read brought into the
// cache dropped again.
HashOutcome finish_read(const OpenedFile& f, const IndexedInode& expect) {
    const int fd = f.fd;
    if (!f.was_cached) (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    struct stat st {};
    if (::fstat(fd, &st) != 0) return HashOutcome::Unreadable;
    return matches(st, expect) ? HashOutcome::Hashed : HashOutcome::Changed;
}

}  // namespace

HashOutcome FileHasher::check(DirChain& dirs, std::string_view path, const IndexedInode& expect) {
    if (may_read_) return open_checked(dirs, path, expect, may_read_, false).outcome;
    // Anyone may read it: one stat relative to the directory reached, no descriptor (no symlink
    // followed either), compared with the index like an opened file.
    const std::size_t slash = path.rfind('/');
    if (slash == std::string_view::npos || slash + 1 == path.size()) return HashOutcome::Unreadable;
    const int dir_fd = dirs.open(slash == 0 ? std::string_view("/") : path.substr(0, slash));
    if (dir_fd < 0) return dir_outcome(dir_fd);
    const std::string name(path.substr(slash + 1));
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) != 0) {
        return errno == ENOENT ? HashOutcome::Changed : HashOutcome::Unreadable;
    }
    return matches(st, expect) ? HashOutcome::Hashed : HashOutcome::Changed;
}

HashOutcome FileHasher::partial(DirChain& dirs, const std::string& path, const IndexedInode& expect,
                                storage::Hash128* out, ReadCounters* counters) {
    if (expect.size > 2 * kPartialBytes) {
        OpenedFile f = open_checked(dirs, path, expect, may_read_, true);
        if (f.fd < 0) return f.outcome;
        Fd fd(f.fd);
        char buf[2 * kPartialBytes];
        std::size_t head = 0;
        std::size_t tail = 0;
        if (!read_at(fd.get(), buf, kPartialBytes, 0, &head) ||
            !read_at(fd.get(), buf + head, kPartialBytes, expect.size - kPartialBytes, &tail)) {
            return HashOutcome::Unreadable;
        }
        counters->bytes += head + tail;
        ++counters->files;
        if (head + tail != 2 * kPartialBytes) return HashOutcome::Changed;  // truncated meanwhile
        const HashOutcome after = finish_read(f, expect);
        if (after == HashOutcome::Hashed) *out = to_hash(XXH3_128bits(buf, head + tail));
        return after;
    }
    return full(dirs, path, expect, out, counters);
}

HashOutcome FileHasher::full(DirChain& dirs, const std::string& path, const IndexedInode& expect,
                             storage::Hash128* out, ReadCounters* counters) {
    OpenedFile f = open_checked(dirs, path, expect, may_read_, true);
    if (f.fd < 0) return f.outcome;
    Fd fd(f.fd);
    (void)::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                   &XXH3_freeState);
    if (!state || XXH3_128bits_reset(state.get()) != XXH_OK) return HashOutcome::Unreadable;
    std::vector<char> buf(kReadBuffer);
    std::int64_t total = 0;
    for (;;) {
        if (stop_ && stop_()) return HashOutcome::Cancelled;
        std::size_t got = 0;
        if (!read_at(fd.get(), buf.data(), buf.size(), total, &got)) {
            return HashOutcome::Unreadable;
        }
        if (got == 0) break;
        counters->bytes += got;
        total += static_cast<std::int64_t>(got);
        (void)XXH3_128bits_update(state.get(), buf.data(), got);
        if (total > expect.size) break;  // grew meanwhile: finish_read says Changed
    }
    ++counters->files;
    if (total != expect.size) return HashOutcome::Changed;
    const HashOutcome after = finish_read(f, expect);
    if (after == HashOutcome::Hashed) *out = to_hash(XXH3_128bits_digest(state.get()));
    return after;
}

HashOutcome FileHasher::same_content(DirChain& dirs, const std::string& a_path,
                                     const IndexedInode& a, const std::string& b_path,
                                     const IndexedInode& b, bool* equal, ReadCounters* counters) {
    *equal = false;
    OpenedFile fa = open_checked(dirs, a_path, a, may_read_, true);
    if (fa.fd < 0) return fa.outcome;
    Fd fda(fa.fd);
    OpenedFile fb = open_checked(dirs, b_path, b, may_read_, true);
    if (fb.fd < 0) return fb.outcome;
    Fd fdb(fb.fd);
    std::vector<char> ba(kReadBuffer);
    std::vector<char> bb(kReadBuffer);
    std::int64_t at = 0;
    bool same = a.size == b.size;
    while (same && at < a.size) {
        if (stop_ && stop_()) return HashOutcome::Cancelled;
        std::size_t ga = 0;
        std::size_t gb = 0;
        if (!read_at(fda.get(), ba.data(), ba.size(), at, &ga) ||
            !read_at(fdb.get(), bb.data(), bb.size(), at, &gb)) {
            return HashOutcome::Unreadable;
        }
        counters->bytes += ga + gb;
        if (ga == 0 || ga != gb) return HashOutcome::Changed;
        same = std::memcmp(ba.data(), bb.data(), ga) == 0;
        at += static_cast<std::int64_t>(ga);
    }
    counters->files += 2;
    HashOutcome after = finish_read(fa, a);
    if (after == HashOutcome::Hashed) after = finish_read(fb, b);
    if (after == HashOutcome::Hashed) *equal = same;
    return after;
}

}  // namespace wsindex::daemon
