// Resolution by descriptor: openat2 without symlinks, in pieces below PATH_MAX, or one
// component at a time where openat2 is missing (design note in resolve.hpp).
#include "core/resolve.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <string>

#include "core/fs_ops.hpp"

namespace wsindex::core {

namespace {

constexpr int kBaseFlags = O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr std::uint64_t kResolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH;

// Set once openat2 answered ENOSYS (or a sandbox's EPERM for the call itself): the fallback is
// used from then on. relaxed: a stale false costs one more failed call, nothing else.
std::atomic<bool> no_openat2{false};

// openat2 of one piece (shorter than PATH_MAX). RESOLVE_BENEATH makes the kernel answer EAGAIN
// when a rename raced with a ".." lookup; we never pass "..", but a retry costs nothing.
int openat2_piece(int dirfd, const std::string& piece, int flags) noexcept {
    open_how how{};
    how.flags = static_cast<std::uint64_t>(kBaseFlags | flags);
    how.resolve = kResolve;
    for (int attempt = 0; attempt < 4; ++attempt) {
        const long fd = ::syscall(SYS_openat2, dirfd, piece.c_str(), &how, sizeof how);
        if (fd >= 0) return static_cast<int>(fd);
        if (errno != EAGAIN && errno != EINTR) return -errno;
    }
    return -EAGAIN;
}

// Whether a component of `path` is "..".
bool has_dot_dot(std::string_view path) {
    for (std::size_t pos = 0; pos < path.size();) {
        std::size_t end = path.find('/', pos);
        if (end == std::string_view::npos) end = path.size();
        if (path.substr(pos, end - pos) == "..") return true;
        pos = end + 1;
    }
    return false;
}

}  // namespace

// One component at a time: openat(O_NOFOLLOW | O_DIRECTORY) refuses a symlink in the component
// it opens, and every component is opened relative to the descriptor of the one before.
int open_dir_by_components(int base_fd, std::string_view path, int flags) noexcept {
    int cur = base_fd;
    bool owned = false;
    std::size_t pos = 0;
    const auto close_owned = [&] {
        if (owned) ::close(cur);
    };
    while (true) {
        while (pos < path.size() && path[pos] == '/') ++pos;
        if (pos >= path.size()) break;
        std::size_t end = path.find('/', pos);
        if (end == std::string_view::npos) end = path.size();
        const std::string name(path.substr(pos, end - pos));
        pos = end;
        if (name == ".") continue;
        if (name == "..") {
            close_owned();
            return -EXDEV;  // as RESOLVE_BENEATH answers a step above the base
        }
        // Intermediate components only need search permission: O_PATH. The last one gets the
        // caller's flags.
        bool last = true;
        for (std::size_t p = pos; p < path.size(); ++p) {
            if (path[p] != '/') {
                last = false;
                break;
            }
        }
        const int fd = ::openat(cur, name.c_str(), kBaseFlags | (last ? flags : O_PATH));
        const int err = errno;
        close_owned();
        if (fd < 0) return -err;
        cur = fd;
        owned = true;
    }
    if (owned) return cur;
    // "" or only "." components: base_fd's directory again, with the caller's flags.
    const int fd = ::openat(base_fd, ".", kBaseFlags | flags);
    return fd >= 0 ? fd : -errno;
}

ObjectId object_id(const FileStat& st) { return {st.dev, st.ino, st.mode & S_IFMT}; }

int open_dir_beneath(int base_fd, std::string_view path, int flags) noexcept {
    while (!path.empty() && path.front() == '/') path.remove_prefix(1);
    if (path.empty()) path = ".";
    if (has_dot_dot(path)) return -EXDEV;  // RESOLVE_BENEATH would allow "a/../b": we do not
    if (no_openat2.load(std::memory_order_relaxed))
        return open_dir_by_components(base_fd, path, flags);
    const std::string_view whole = path;
    // Pieces of at most PATH_MAX - 1 bytes, cut at a '/': each piece is resolved relative to
    // the descriptor the one before reached, with the same rules.
    int cur = base_fd;
    bool owned = false;
    while (true) {
        std::size_t take = path.size();
        if (take >= PATH_MAX) {
            const std::size_t cut = path.rfind('/', PATH_MAX - 1);
            if (cut == std::string_view::npos || cut == 0) {
                if (owned) ::close(cur);
                return -ENAMETOOLONG;  // one component longer than any file system allows
            }
            take = cut;
        }
        const std::string piece(path.substr(0, take));
        path.remove_prefix(take);
        while (!path.empty() && path.front() == '/') path.remove_prefix(1);
        const bool last = path.empty();
        const int fd = openat2_piece(cur, piece, last ? flags : O_PATH);
        if (owned) ::close(cur);
        if (fd == -ENOSYS) {
            // No openat2 here (a kernel older than 5.6): the fallback, for this call and every
            // later one. Only the first call can say so, before any piece was resolved.
            no_openat2.store(true, std::memory_order_relaxed);
            return open_dir_by_components(base_fd, whole, flags);
        }
        if (fd < 0) return fd;
        if (last) return fd;
        cur = fd;
        owned = true;
    }
}

int open_dir_absolute(std::string_view path, int flags) noexcept {
    if (path.empty() || path.front() != '/') return -EINVAL;
    const int root = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) return -errno;
    const int fd = open_dir_beneath(root, path, flags);
    ::close(root);
    return fd;
}

bool split_parent(std::string_view path, std::string_view* parent, std::string_view* name) {
    if (path.empty() || path.front() != '/') return false;
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    if (path == "/") return false;
    const std::size_t slash = path.rfind('/');
    *name = path.substr(slash + 1);
    std::string_view p = path.substr(0, slash);
    while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
    *parent = p.empty() ? std::string_view("/") : p;
    return true;
}

int stat_fd(int fd, FileStat& out) noexcept { return real_fs_ops().stat_fd(fd, out); }

bool same_object(int fd, const ObjectId& expected) noexcept {
    FileStat st;
    return stat_fd(fd, st) == 0 && object_id(st) == expected;
}

}  // namespace wsindex::core
