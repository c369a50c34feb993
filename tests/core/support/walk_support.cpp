// Test helpers for the walker: temporary trees, find -print0, child processes, result encoding.
#include "tests/core/support/walk_support.hpp"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

namespace wsindex::test {

TempDir::TempDir() {
    char tmpl[] = "/tmp/wswalk-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
        ADD_FAILURE() << "mkdtemp: " << std::strerror(errno);
        return;
    }
    path_ = tmpl;
    ::chmod(path_.c_str(), 0755);
}

TempDir::~TempDir() {
    if (path_.empty()) return;
    run_command("chmod -R u+rwx '" + path_ + "' 2>/dev/null; rm -rf '" + path_ + "'");
}

void make_dir(const std::string& path, mode_t mode) {
    if (::mkdir(path.c_str(), mode) != 0) ADD_FAILURE() << "mkdir " << path << ": " << errno;
    ::chmod(path.c_str(), mode);  // umask-proof
}

void make_file(const std::string& path, const std::string& contents) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        ADD_FAILURE() << "create " << path << ": " << errno;
        return;
    }
    if (!contents.empty() &&
        ::write(fd, contents.data(), contents.size()) != static_cast<ssize_t>(contents.size())) {
        ADD_FAILURE() << "write " << path;
    }
    ::close(fd);
}

void make_symlink(const std::string& target, const std::string& path) {
    if (::symlink(target.c_str(), path.c_str()) != 0) {
        ADD_FAILURE() << "symlink " << path << ": " << errno;
    }
}

bool run_command(const std::string& command) { return std::system(command.c_str()) == 0; }

std::string shared_dir() {
    if (const char* env = std::getenv("WSINDEX_SHARED_DIR"); env != nullptr && *env != 0) {
        return env;
    }
    // Beside the checkout, else the workplace's copy (a fresh clone elsewhere, as in CI).
    for (const std::string& guess :
         {std::string(WSINDEX_SOURCE_DIR) + "/../shared", std::string("/work/shared")}) {
        if (::access((guess + "/bench/mktree.py").c_str(), R_OK) == 0) return guess;
    }
    return {};
}

bool make_tree(const std::string& out, int n, const std::string& shape, const std::string& extra) {
    const std::string shared = shared_dir();
    if (shared.empty()) return false;
    return run_command("python3 '" + shared + "/bench/mktree.py' '" + out + "' " +
                       std::to_string(n) + " " + shape + " 1 -j 1 --no-manifest " + extra +
                       " 2>/dev/null");
}

std::vector<std::string> find_paths(const std::string& root, const std::string& find_args) {
    std::vector<std::string> out;
    const std::string cmd = "find '" + root + "' " + find_args + " -print0 2>/dev/null";
    std::FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return out;
    std::string cur;
    for (int c; (c = std::fgetc(p)) != EOF;) {
        if (c == 0) {
            out.push_back(std::move(cur));
            cur.clear();
        } else {
            cur.push_back(static_cast<char>(c));
        }
    }
    ::pclose(p);
    std::sort(out.begin(), out.end());
    return out;
}

Walked walk(const std::string& root, core::WalkOptions options, bool copy_results) {
    Walked w;
    core::Walker walker(std::move(options));
    w.status = walker.run(root, [&](std::span<core::WalkResult> batch) {
        ++w.consumer_calls;
        for (auto& r : batch) {
            if (copy_results) {
                w.results.push_back(r);
            } else {
                w.results.push_back(std::move(r));
            }
        }
        return core::Status::ok();
    });
    w.stats = walker.stats();
    return w;
}

std::vector<std::string> paths_of(const std::vector<core::WalkResult>& results) {
    std::vector<std::string> out;
    out.reserve(results.size());
    for (const auto& r : results) out.push_back(r.path);
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<core::WalkResult> with_full_paths(std::vector<core::WalkResult> results) {
    std::map<std::uint64_t, std::string> dir_paths;
    for (const auto& r : results) {
        if (r.is_dir() && r.dir_id != 0) dir_paths[r.dir_id] = r.path;
    }
    for (auto& r : results) {
        if (r.parent_id == 0 || r.is_dir() || r.path.find('/') != std::string::npos) continue;
        const auto it = dir_paths.find(r.parent_id);
        if (it == dir_paths.end()) continue;  // leaves it wrong: the caller's comparison fails
        std::string full = it->second;
        if (full.empty() || full.back() != '/') full.push_back('/');
        r.name_offset = static_cast<std::uint32_t>(full.size());
        r.path = full + r.path;
    }
    return results;
}

const core::WalkResult* find_result(const std::vector<core::WalkResult>& results,
                                    const std::string& path) {
    for (const auto& r : results) {
        if (r.path == path) return &r;
    }
    return nullptr;
}

std::optional<struct stat> lstat_any(const std::string& path) {
    struct stat st {};
    if (path.size() < 4000) {
        if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
        return st;
    }
    // Too long for one syscall: open each directory relative to the previous one.
    const std::size_t slash = path.rfind('/');
    int dir = ::open(path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    std::size_t pos = 0;
    while (dir >= 0 && pos < slash) {
        std::size_t next = path.find('/', pos);
        if (next == pos) {
            ++pos;
            continue;
        }
        const std::string comp = path.substr(pos, next - pos);
        const int sub =
            ::openat(dir, comp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        ::close(dir);
        dir = sub;
        pos = next + 1;
    }
    if (dir < 0) return std::nullopt;
    const int rc = ::fstatat(dir, path.c_str() + slash + 1, &st, AT_SYMLINK_NOFOLLOW);
    ::close(dir);
    if (rc != 0) return std::nullopt;
    return st;
}

namespace {

void put(std::string& out, const std::string& field) {
    out.append(field);
    out.push_back('\0');
}

}  // namespace

std::string encode(const std::vector<core::WalkResult>& results, const core::Status& status) {
    std::string out;
    put(out, std::to_string(status ? 0 : status.code().value()));
    for (const auto& r : results) {
        put(out, r.path);
        put(out, std::string(1, static_cast<char>(r.type)));
        put(out, std::to_string(r.error));
        put(out, r.has_stat ? "1" : "0");
        put(out, std::to_string(r.size));
        put(out, std::to_string(r.ino));
    }
    return out;
}

Decoded decode(const std::string& bytes) {
    Decoded d;
    std::vector<std::string> f;
    std::size_t pos = 0;
    while (pos < bytes.size()) {
        const std::size_t end = bytes.find('\0', pos);
        if (end == std::string::npos) break;
        f.push_back(bytes.substr(pos, end - pos));
        pos = end + 1;
    }
    if (f.empty()) return d;
    d.status_errno = std::stoi(f[0]);
    for (std::size_t i = 1; i + 5 < f.size(); i += 6) {
        core::WalkResult r;
        r.path = f[i];
        r.type = static_cast<core::EntryType>(f[i + 1][0]);
        r.error = std::stoi(f[i + 2]);
        r.has_stat = f[i + 3] == "1";
        r.size = std::stoull(f[i + 4]);
        r.ino = std::stoull(f[i + 5]);
        d.results.push_back(std::move(r));
    }
    return d;
}

std::optional<std::string> run_in_child(const std::function<std::string()>& body) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
    const pid_t pid = ::fork();
    if (pid < 0) return std::nullopt;
    if (pid == 0) {
        ::close(fds[0]);
        std::string out = body();
        std::size_t off = 0;
        while (off < out.size()) {
            const ssize_t n = ::write(fds[1], out.data() + off, out.size() - off);
            if (n <= 0) ::_exit(3);
            off += static_cast<std::size_t>(n);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string bytes;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        bytes.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        ADD_FAILURE() << "child failed, wait status " << wstatus;
        return std::nullopt;
    }
    return bytes;
}

bool drop_privileges() {
    return ::setgroups(0, nullptr) == 0 && ::setgid(65534) == 0 && ::setuid(65534) == 0 &&
           ::geteuid() == 65534;
}

}  // namespace wsindex::test
