// Spawning, waiting for and capturing child processes in the wsctl tests.
#include "tests/cli/support/process.hpp"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace wsindex::cli::test {

namespace {

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

std::vector<std::string> merged_environment(const std::vector<std::string>& extra) {
    std::vector<std::string> out;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string entry(*e);
        const std::string name = entry.substr(0, entry.find('='));
        bool replaced = false;
        for (const auto& x : extra) {
            if (x.substr(0, x.find('=')) == name) replaced = true;
        }
        if (!replaced) out.push_back(entry);
    }
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
    std::vector<char*> out;
    out.reserve(strings.size() + 1);
    for (auto& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

}  // namespace

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

Process Process::spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
    // Everything the child needs is prepared before fork: after it only async-signal-safe calls.
    std::vector<std::string> args = argv;
    std::vector<std::string> env = merged_environment(options.env);
    std::vector<char*> c_args = c_strings(args);
    std::vector<char*> c_env = c_strings(env);
    const int out_fd =
        ::open(options.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err_fd =
        ::open(options.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out_fd < 0 || err_fd < 0 || null_fd < 0) {
        ADD_FAILURE() << "cannot open output files for " << argv[0] << ": " << std::strerror(errno);
        for (const int fd : {out_fd, err_fd, null_fd}) {
            if (fd >= 0) ::close(fd);
        }
        return {};
    }
    if (options.uid) {
        // The unprivileged child must be able to write its own logs.
        if (::fchown(out_fd, *options.uid, options.gid.value_or(*options.uid)) != 0 ||
            ::fchown(err_fd, *options.uid, options.gid.value_or(*options.uid)) != 0) {
            ADD_FAILURE() << "fchown: " << std::strerror(errno);
        }
    }
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        ADD_FAILURE() << "fork: " << std::strerror(errno);
        ::close(out_fd);
        ::close(err_fd);
        ::close(null_fd);
        return {};
    }
    if (pid == 0) {
        // Child. dup2 clears O_CLOEXEC on the copies.
        if (::dup2(null_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) ::_exit(126);
        if (options.gid) {
            if (::setgroups(0, nullptr) != 0 || ::setgid(*options.gid) != 0) ::_exit(125);
        }
        if (options.uid && ::setuid(*options.uid) != 0) ::_exit(124);
        // After setuid, which clears the parent-death signal; then the parent may already be
        // gone (before the prctl), which getppid shows.
        if (options.die_with_parent &&
            (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)) {
            ::_exit(123);
        }
        ::execve(c_args[0], c_args.data(), c_env.data());
        ::_exit(127);
    }
    ::close(out_fd);
    ::close(err_fd);
    ::close(null_fd);
    Process p;
    p.pid_ = pid;
    p.pidfd_ = pidfd_open(pid);
    p.out_path_ = options.out_path;
    p.err_path_ = options.err_path;
    if (p.pidfd_ < 0) ADD_FAILURE() << "pidfd_open: " << std::strerror(errno);
    return p;
}

Process::Process(Process&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      pidfd_(std::exchange(other.pidfd_, -1)),
      out_path_(std::move(other.out_path_)),
      err_path_(std::move(other.err_path_)) {}

Process& Process::operator=(Process&& other) noexcept {
    if (this != &other) {
        reset();
        pid_ = std::exchange(other.pid_, -1);
        pidfd_ = std::exchange(other.pidfd_, -1);
        out_path_ = std::move(other.out_path_);
        err_path_ = std::move(other.err_path_);
    }
    return *this;
}

Process::~Process() { reset(); }

void Process::reset() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
    }
    if (pidfd_ >= 0) ::close(pidfd_);
    pidfd_ = -1;
}

void Process::kill(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
}

bool Process::wait_readable(std::chrono::milliseconds timeout) {
    if (pid_ <= 0) return true;
    pollfd pfd{pidfd_, POLLIN, 0};
    for (;;) {
        const int rc = ::poll(&pfd, 1, static_cast<int>(timeout.count()));
        if (rc < 0 && errno == EINTR) continue;
        return rc > 0;
    }
}

bool Process::poll_exited() {
    if (pid_ <= 0) return true;
    return wait_readable(std::chrono::milliseconds(0));
}

Exit Process::collect(int status) {
    Exit e;
    if (WIFEXITED(status)) e.code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
    e.out = read_file(out_path_);
    e.err = read_file(err_path_);
    return e;
}

std::optional<Exit> Process::wait(std::chrono::milliseconds timeout) {
    if (pid_ <= 0) return Exit{};
    if (!wait_readable(timeout)) return std::nullopt;
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return collect(status);
}

Exit run(const std::vector<std::string>& argv, const std::string& scratch_dir,
         std::chrono::milliseconds timeout, const std::vector<std::string>& env) {
    static std::atomic<unsigned> counter{0};
    const unsigned n = counter.fetch_add(1, std::memory_order_relaxed);
    SpawnOptions options;
    options.env = env;
    options.out_path = scratch_dir + "/run" + std::to_string(n) + ".out";
    options.err_path = scratch_dir + "/run" + std::to_string(n) + ".err";
    Process p = Process::spawn(argv, options);
    auto exit = p.wait(timeout);
    ::unlink(options.out_path.c_str());
    ::unlink(options.err_path.c_str());
    if (!exit) {
        p.kill(SIGKILL);
        Exit e;
        e.err = "timed out after " + std::to_string(timeout.count()) + " ms: " + argv[0];
        return e;
    }
    return *exit;
}

}  // namespace wsindex::cli::test
