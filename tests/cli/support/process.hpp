// Child processes for the wsctl tests: spawn with stdout/stderr captured to files, wait with a
// deadline (pidfd + poll, no sleeps), optionally as another user (for the unprivileged daemon).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace wsindex::cli::test {

struct Exit {
    int code = -1;    // exit status, or -1 if killed by a signal
    int signal = 0;   // the signal that killed it, or 0
    std::string out;  // everything written to stdout
    std::string err;  // everything written to stderr
};

struct SpawnOptions {
    std::vector<std::string> env;  // "NAME=value" added to (or replacing in) the environment
    std::optional<uid_t> uid;      // drop to this uid (and gid, no groups) before exec
    std::optional<gid_t> gid;
    std::string out_path;  // where stdout goes (required)
    std::string err_path;  // where stderr goes (required)
    // SIGKILL the child when the thread that spawned it dies (PR_SET_PDEATHSIG): a test binary
    // killed mid-run (a timeout, Ctrl-C on a --gtest_repeat loop) leaves no daemon running.
    // Only for children spawned by a thread that outlives them (the test's main thread).
    bool die_with_parent = false;
};

// A running child. Not copyable; the destructor kills (SIGKILL) and reaps a child still running.
class Process {
  public:
    // Forks and execs argv[0] (a path) with argv. Aborts the test binary (ADD_FAILURE + empty
    // process) if fork fails; an exec failure shows up as exit code 127.
    static Process spawn(const std::vector<std::string>& argv, const SpawnOptions& options);

    Process() = default;
    Process(Process&& other) noexcept;
    Process& operator=(Process&& other) noexcept;
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;
    ~Process();

    [[nodiscard]] pid_t pid() const { return pid_; }
    [[nodiscard]] bool running() const { return pid_ > 0; }
    // True if the child has exited (reaps it); never blocks.
    bool poll_exited();
    // Waits until the child exits or `timeout` passes. nullopt on timeout (the child runs on).
    std::optional<Exit> wait(std::chrono::milliseconds timeout);
    // Sends `sig` (if still running).
    void kill(int sig);
    // Waits up to `timeout` for the pidfd to become readable (the child exited); true if so.
    bool wait_readable(std::chrono::milliseconds timeout);

  private:
    Exit collect(int status);
    // Kills and reaps a child still running, closes the pidfd; leaves the paths alone.
    void reset();

    pid_t pid_ = -1;
    int pidfd_ = -1;
    std::string out_path_;
    std::string err_path_;
};

// Runs a command to completion (at most `timeout`, then SIGKILL and a failed Exit with
// code -1 and "timed out" in err). Output files live under `scratch_dir`.
Exit run(const std::vector<std::string>& argv, const std::string& scratch_dir,
         std::chrono::milliseconds timeout = std::chrono::minutes(5),
         const std::vector<std::string>& env = {});

// The whole content of a file ("" if it cannot be read).
std::string read_file(const std::string& path);

}  // namespace wsindex::cli::test
