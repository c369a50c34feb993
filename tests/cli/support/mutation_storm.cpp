// The mutation storm: forked children, each running seeded operations on a fixed pool of paths.
#include "tests/cli/support/mutation_storm.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>

#include "tests/cli/support/scratch.hpp"

namespace wsindex::cli::test {

namespace {

enum Op : int {
    kCreate,
    kAppend,
    kTruncate,
    kUnlink,
    kRenameSameDir,
    kRenameAcrossDirs,
    kRenameOut,
    kRenameIn,
    kMkdirDeep,
    kRemoveTree,
    kChmod,
    kChown,
    kTouch,
    kLinkSameDir,
    kLinkAcrossDirs,
    kSymlink,
    kMakeOutside,
    kMoveSubtreeOut,
    kMoveSubtreeIn,
    kOpCount
};

constexpr std::array<const char*, kOpCount> kOpNames = {
    "create",      "append",  "truncate",     "unlink",   "rename", "rename-across", "rename-out",
    "rename-in",   "mkdir-p", "rm-r",         "chmod",    "chown",  "touch-d",       "link",
    "link-across", "symlink", "make-outside", "move-out", "move-in"};

// Relative weights of the operations (the storm is mostly creates, writes and renames).
constexpr std::array<unsigned, kOpCount> kOpWeights = {12, 8, 5, 8, 6, 6, 4, 4, 6, 2,
                                                       5,  4, 4, 4, 4, 4, 3, 1, 1};

constexpr int kMaxErrno = 134;

// What one child sends to the parent: fixed size, well below PIPE_BUF.
struct Counts {
    std::array<std::uint64_t, kOpCount> done{};
    std::array<std::uint64_t, kOpCount> failed{};
    std::array<std::uint64_t, kMaxErrno + 1> by_errno{};
};

// touch -d '2001-02-03 04:05:06.123456789 UTC': a time no scan could mistake for "now".
constexpr timespec kPastTime{981173106, 123456789};

class Storm {
  public:
    Storm(const StormOptions& options, std::uint64_t seed, int child) : o_(options), rng_(seed) {
        if (!o_.log_path.empty()) {
            log_fd_ = ::open((o_.log_path + "." + std::to_string(child)).c_str(),
                             O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        }
    }
    Storm(const Storm&) = delete;
    Storm& operator=(const Storm&) = delete;
    ~Storm() {
        if (log_fd_ >= 0) ::close(log_fd_);
    }

    void run(Counts& counts) {
        auto weights = kOpWeights;
        if (o_.names_only) {
            for (const Op op : {kAppend, kTruncate, kChmod, kChown, kTouch}) weights[op] = 0;
        }
        unsigned total = 0;
        for (const unsigned w : weights) total += w;
        for (int i = 0; i < o_.ops_per_process; ++i) {
            unsigned pick = below(total);
            int op = 0;
            while (pick >= weights[static_cast<std::size_t>(op)]) {
                pick -= weights[static_cast<std::size_t>(op)];
                ++op;
            }
            errno = 0;
            const auto index = static_cast<std::size_t>(op);
            args_.clear();
            const std::string started = log_fd_ >= 0 ? now_text() : std::string();
            const bool ok = apply(static_cast<Op>(op));
            const int saved_errno = errno;
            if (log_fd_ >= 0) log_op(started, static_cast<Op>(op), ok, saved_errno);
            errno = saved_errno;
            if (ok) {
                ++counts.done[index];
            } else {
                ++counts.failed[index];
                const int e = errno > 0 && errno <= kMaxErrno ? errno : 0;
                ++counts.by_errno[static_cast<std::size_t>(e)];
            }
        }
    }

  private:
    unsigned below(unsigned n) { return static_cast<unsigned>(rng_() % n); }

    // The operation log (StormOptions::log_path): the paths an operation acts on, in order.
    std::string note(std::string path) {
        if (log_fd_ >= 0) args_.push_back(path);
        return path;
    }
    // Wall-clock time as the daemon's log prints it, to the microsecond.
    static std::string now_text() {
        timespec ts{};
        ::clock_gettime(CLOCK_REALTIME, &ts);
        tm parts{};
        ::gmtime_r(&ts.tv_sec, &parts);
        char text[64];
        std::snprintf(text, sizeof text, "%02d:%02d:%02d.%06ld", parts.tm_hour, parts.tm_min,
                      parts.tm_sec, ts.tv_nsec / 1000);
        return text;
    }
    // "START END op ok|ERRNO path [path]": names with bytes other than printable ASCII
    // escaped (\n, \xHH), the daemon's way.
    void log_op(const std::string& started, Op op, bool ok, int error) {
        std::string line = started + " " + now_text() + " " + kOpNames[op] + " " +
                           (ok ? "ok" : (error > 0 ? ::strerrorname_np(error) : "failed"));
        for (const std::string& a : args_) {
            line += ' ';
            for (const char c : a) {
                const auto b = static_cast<unsigned char>(c);
                if (b == '\\') {
                    line += "\\\\";
                } else if (b == '\n') {
                    line += "\\n";
                } else if (b < 0x20 || b >= 0x7f) {
                    char hex[8];
                    std::snprintf(hex, sizeof hex, "\\x%02x", b);
                    line += hex;
                } else {
                    line += c;
                }
            }
        }
        line += '\n';
        (void)!::write(log_fd_, line.data(), line.size());
    }
    bool chance(unsigned percent) { return below(100) < percent; }

    // A name for a file-like entry: mostly a few plain names (so that processes meet on the same
    // paths), the names the generated tree already uses, and odd ones: a newline, invalid
    // UTF-8, a leading dash, 255 bytes.
    std::string file_name() {
        const unsigned d = below(2);
        switch (below(20)) {
            case 0:
            case 1:
            case 2:
                return "file" + std::to_string(below(100)) + ".dat";
            case 3:
                return "nl\n" + std::to_string(d);
            case 4:
                return "bad\xff\xfe" + std::to_string(d);
            case 5:
                return std::string(254, 'L') + static_cast<char>('a' + d);  // NAME_MAX
            case 6:
                return (d ? "-dash " : "\xc3(") + std::to_string(d);
            default:
                return "f" + std::to_string(below(4));
        }
    }

    // A name for a directory the storm makes: few, so that mkdir -p, rm -r and renames collide.
    std::string dir_name() {
        const unsigned d = below(3);
        if (chance(10)) return (d % 2 ? "m\n" : "m\xff") + std::to_string(d);
        return "m" + std::to_string(d);
    }

    std::string given_dir() {
        const std::string& rel = o_.dirs[below(static_cast<unsigned>(o_.dirs.size()))];
        return rel.empty() ? o_.root : o_.root + "/" + rel;
    }

    // A directory below the root: a given one, or a chain of storm-made ones below a given one
    // (which may not exist at the moment), mostly short.
    std::string dir() {
        std::string path = given_dir();
        if (chance(20)) {
            const unsigned depth = chance(60) ? 1 : chance(75) ? 2 : 3;
            for (unsigned i = 0; i < depth; ++i) path += "/" + dir_name();
        }
        return path;
    }

    // A given directory that is not the root nor one of its children (those hold the others).
    std::string given_deep_dir() {
        std::vector<const std::string*> deep;
        for (const auto& d : o_.dirs) {
            if (d.find('/') != std::string::npos) deep.push_back(&d);
        }
        if (deep.empty()) return {};
        return o_.root + "/" + *deep[below(static_cast<unsigned>(deep.size()))];
    }

    // A storm-made directory (never a given one): what rm -r and directory renames act on.
    std::string made_dir() { return given_dir() + "/" + dir_name(); }

    // An entry below the root that may be a file, a symlink or a storm-made directory.
    std::string entry() { return chance(75) ? dir() + "/" + file_name() : made_dir(); }

    std::string outside_entry() {
        std::string path = o_.outside + "/o" + std::to_string(below(6));
        if (chance(30)) path += "/" + dir_name();
        return path;
    }

    bool write_some(int fd) {
        static const std::string bytes(8192, 'w');
        const std::size_t n = below(8193);
        const bool ok = ::write(fd, bytes.data(), n) == static_cast<ssize_t>(n);
        ::close(fd);
        return ok;
    }

    bool create(const std::string& path) {
        const int fd = ::open(path.c_str(),
                              O_WRONLY | O_CREAT | (o_.names_only ? O_EXCL : O_TRUNC) | O_NOFOLLOW |
                                  O_NONBLOCK | O_CLOEXEC,
                              0644);
        return fd >= 0 && write_some(fd);
    }

    // mkdir -p of `path` below the given directory `base`; true if it exists at the end.
    bool mkdir_p(const std::string& base, const std::vector<std::string>& parts) {
        std::string path = base;
        for (const auto& part : parts) {
            path += "/" + part;
            if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return false;
        }
        return true;
    }

    bool apply(Op op) {
        switch (op) {
            case kCreate:
                return create(note(dir() + "/" + file_name()));
            case kAppend: {
                const std::string path = note(entry());
                const int fd =
                    ::open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                return fd >= 0 && write_some(fd);
            }
            case kTruncate: {
                const std::string path = note(entry());
                const int fd = ::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                if (fd < 0) return false;
                const bool ok = ::ftruncate(fd, static_cast<off_t>(below(20000))) == 0;
                ::close(fd);
                return ok;
            }
            case kUnlink:
                return ::unlink(note(entry()).c_str()) == 0;
            case kRenameSameDir: {
                const std::string d = dir();
                const bool dirs = chance(25);
                const std::string from = note(d + "/" + (dirs ? dir_name() : file_name()));
                const std::string to = note(d + "/" + (dirs ? dir_name() : file_name()));
                return ::rename(from.c_str(), to.c_str()) == 0;
            }
            case kRenameAcrossDirs: {
                const std::string from = note(entry());
                const std::string to = note(entry());
                return ::rename(from.c_str(), to.c_str()) == 0;
            }
            case kRenameOut: {
                const std::string from = note(entry());
                const std::string to = note(outside_entry());
                return ::rename(from.c_str(), to.c_str()) == 0;
            }
            case kRenameIn: {
                const std::string from = note(outside_entry());
                const std::string to = note(entry());
                return ::rename(from.c_str(), to.c_str()) == 0;
            }
            case kMkdirDeep: {
                std::vector<std::string> parts;
                const unsigned depth = 2 + below(5);
                for (unsigned i = 0; i < depth; ++i) parts.push_back(dir_name());
                const std::string base = given_dir();
                if (!mkdir_p(base, parts)) return false;
                std::string bottom = base;
                for (const auto& p : parts) bottom += "/" + p;
                return create(note(bottom + "/" + file_name()));
            }
            case kRemoveTree: {
                const std::string path = note(made_dir());
                struct stat st {};
                if (::lstat(path.c_str(), &st) != 0) return false;
                if (!S_ISDIR(st.st_mode)) {
                    errno = ENOTDIR;
                    return false;
                }
                if (remove_tree(path)) return true;
                if (errno == 0) errno = ENOTEMPTY;
                return false;
            }
            case kChmod: {
                static constexpr std::array<mode_t, 6> kModes = {0644, 0600, 0755,
                                                                 0700, 0444, 0751};
                // Not through a symlink: where the kernel cannot change a symlink's own mode
                // this fails (EOPNOTSUPP), which is counted like any other failure.
                return ::fchmodat(AT_FDCWD, note(entry()).c_str(), kModes[below(kModes.size())],
                                  AT_SYMLINK_NOFOLLOW) == 0;
            }
            case kChown: {
                const bool other = chance(70);
                return ::lchown(note(entry()).c_str(), other ? o_.other_uid : 0,
                                other ? o_.other_gid : 0) == 0;
            }
            case kTouch: {
                const timespec times[2] = {kPastTime, kPastTime};
                return ::utimensat(AT_FDCWD, note(entry()).c_str(), times, AT_SYMLINK_NOFOLLOW) ==
                       0;
            }
            case kLinkSameDir: {
                const std::string d = dir();
                const std::string from = note(d + "/" + file_name());
                const std::string to = note(d + "/" + file_name());
                return ::link(from.c_str(), to.c_str()) == 0;
            }
            case kLinkAcrossDirs: {
                const std::string from = !o_.link_sources.empty() && chance(50)
                                             ? o_.root + "/" +
                                                   o_.link_sources[below(static_cast<unsigned>(
                                                       o_.link_sources.size()))] +
                                                   "/file" + std::to_string(below(100)) + ".dat"
                                             : dir() + "/" + file_name();
                note(from);
                const std::string to = note(dir() + "/" + file_name());
                return ::link(from.c_str(), to.c_str()) == 0;
            }
            case kSymlink: {
                // Targets never lead out of the directory the link is in (no "..", no absolute
                // path that exists), so paths through a link stay inside the storm's area.
                static constexpr std::array<const char*, 4> kTargets = {
                    "f1", "m0/f2", "/nonexistent/dangling", "nl\nx\xff"};
                return ::symlink(kTargets[below(kTargets.size())],
                                 note(dir() + "/" + file_name()).c_str()) == 0;
            }
            case kMakeOutside: {
                // Material for rename-in: a file, or a small directory tree.
                const std::string top = "o" + std::to_string(below(6));
                if (chance(40)) return create(note(o_.outside + "/" + top));
                std::vector<std::string> parts{top};
                const unsigned depth = below(3);
                for (unsigned i = 0; i < depth; ++i) parts.push_back(dir_name());
                if (!mkdir_p(o_.outside, parts)) return false;
                std::string bottom = o_.outside;
                for (const auto& p : parts) bottom += "/" + p;
                return create(note(bottom + "/" + file_name())) &&
                       create(note(bottom + "/" + file_name()));
            }
            case kMoveSubtreeOut: {
                // A whole given directory (a hundred files) leaves the root for a while.
                const std::string from = given_deep_dir();
                if (from.empty()) break;
                note(from);
                const std::string to = note(o_.outside + "/big" + std::to_string(below(3)));
                return ::rename(from.c_str(), to.c_str()) == 0;
            }
            case kMoveSubtreeIn: {
                // Back in: to where a given directory was (if it is missing, or empty), or
                // below another directory.
                const std::string from = note(o_.outside + "/big" + std::to_string(below(3)));
                const std::string back = given_deep_dir();
                const std::string to =
                    note(chance(70) && !back.empty() ? back : dir() + "/" + dir_name());
                return ::rename(from.c_str(), to.c_str()) == 0;
            }
            case kOpCount:
                break;
        }
        return false;
    }

    const StormOptions& o_;
    std::mt19937_64 rng_;
    int log_fd_ = -1;
    std::vector<std::string> args_;  // of the running operation, for the log
};

std::uint64_t child_seed(std::uint64_t seed, int child) {
    // splitmix64 of (seed, child): neighbouring seeds give unrelated children.
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(child + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

bool read_all(int fd, void* data, std::size_t n) {
    auto* p = static_cast<char*>(data);
    while (n > 0) {
        const ssize_t r = ::read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= static_cast<std::size_t>(r);
    }
    return true;
}

}  // namespace

std::string StormResult::summary(std::uint64_t seed) const {
    std::string out = "storm seed " + std::to_string(seed) + ": " + std::to_string(ops) + " ops, " +
                      std::to_string(failed) + " failed;";
    for (const auto& [op, n] : done_by_op) {
        const auto f = failed_by_op.find(op);
        out += " " + op + " " + std::to_string(n) + "/" +
               std::to_string(f == failed_by_op.end() ? 0 : f->second);
    }
    out += "; errors:";
    for (const auto& [e, n] : failed_by_errno) {
        out += " " + std::string(e == 0 ? "other" : ::strerrorname_np(e)) + " " + std::to_string(n);
    }
    if (!error.empty()) out += "; " + error;
    return out;
}

StormResult run_mutation_storm(const StormOptions& options) {
    StormResult result;
    struct Child {
        pid_t pid = -1;
        int fd = -1;
    };
    std::vector<Child> children;
    for (int i = 0; i < options.processes; ++i) {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) {
            result.error += std::string("pipe: ") + std::strerror(errno) + "; ";
            break;
        }
        const pid_t pid = ::fork();
        if (pid < 0) {
            result.error += std::string("fork: ") + std::strerror(errno) + "; ";
            ::close(fds[0]);
            ::close(fds[1]);
            break;
        }
        if (pid == 0) {
            ::close(fds[0]);
            Counts counts;
            Storm(options, child_seed(options.seed, i), i).run(counts);
            const bool sent = ::write(fds[1], &counts, sizeof counts) == sizeof counts;
            ::_exit(sent ? 0 : 3);  // no atexit handlers, no gtest teardown in the child
        }
        ::close(fds[1]);
        children.push_back({pid, fds[0]});
    }
    for (std::size_t i = 0; i < children.size(); ++i) {
        Counts counts;
        const bool got = read_all(children[i].fd, &counts, sizeof counts);
        ::close(children[i].fd);
        int status = 0;
        while (::waitpid(children[i].pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            result.error += "storm process " + std::to_string(i) + " did not report (status " +
                            std::to_string(status) + "); ";
            continue;
        }
        for (std::size_t op = 0; op < kOpCount; ++op) {
            result.ops += counts.done[op] + counts.failed[op];
            result.failed += counts.failed[op];
            result.done_by_op[kOpNames[op]] += counts.done[op];
            result.failed_by_op[kOpNames[op]] += counts.failed[op];
        }
        for (std::size_t e = 0; e < counts.by_errno.size(); ++e) {
            if (counts.by_errno[e] > 0) {
                result.failed_by_errno[static_cast<int>(e)] += counts.by_errno[e];
            }
        }
    }
    return result;
}

}  // namespace wsindex::cli::test
