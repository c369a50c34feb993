// The swap attacker (tests/support/swap_attacker.cpp) as a child process of a test: started
// with its stdin and stdout on pipes, ready once it prints "ready LEAF", stopped by closing its
// stdin (or when its attempts or time run out), its counters read from its last line.
//
// Header-only so that the core tests and the end-to-end tests share it without a library.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace wsindex::test {

struct SwapAttackerOptions {
    std::string program;  // the wsindex_swap_attacker executable
    uid_t uid = 65534;
    gid_t gid = 65534;
    std::vector<gid_t> groups;  // supplementary groups after the drop
    std::string base;           // a directory the user owns
    std::string target;         // the absolute path her chain spells
    std::string link = "/";     // where BASE/L points
    int files = 3;
    long attempts = 1000;
    double seconds = 10;
    std::string trigger = "none";  // none, rename, attrib, many, subdir
    std::string content = "mine";
    std::string rename = "mine-0";  // the file the rename trigger moves (made if not hers yet)
    bool blind = false;             // also swap between the daemon's opens, half of the time
    long burst_us = 0;              // each open starts a burst of swaps back and forth that long
    int delay = 0;     // files the trigger renames in the directory visited before the target
    int depth = 0;     // directories of hers (BASE/d/d/...) above m and L
    long hold_us = 0;  // each open starts one swap held (asleep) up to that long
};

// What the attacker's last line says (all -1 when it did not print one).
struct SwapReport {
    long swaps = -1;
    long during_open = -1;  // swaps made while an open of her chain was in progress
    long opens = -1;        // opens of her directories and files she saw
    long triggers = -1;
    long exchange_errors = -1;
    long elapsed_ms = -1;
    int exit_status = -1;  // waitpid's status
    std::string output;    // everything it printed
    std::string describe() const {
        return "attacker: " + output + " (wait status " + std::to_string(exit_status) + ")";
    }
};

class SwapAttacker {
  public:
    SwapAttacker() = default;
    SwapAttacker(const SwapAttacker&) = delete;
    SwapAttacker& operator=(const SwapAttacker&) = delete;
    ~SwapAttacker() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            int status = 0;
            ::waitpid(pid_, &status, 0);
        }
        if (in_ >= 0) ::close(in_);
        if (out_ >= 0) ::close(out_);
    }

    // Starts it and waits (at most `deadline`) for its "ready" line; false with the reason in
    // *error otherwise.
    bool start(const SwapAttackerOptions& o, std::string* error,
               std::chrono::milliseconds deadline = std::chrono::seconds(60)) {
        std::string groups;
        for (const gid_t g : o.groups) groups += (groups.empty() ? "" : ",") + std::to_string(g);
        std::vector<std::string> args{o.program,
                                      "--uid",
                                      std::to_string(o.uid),
                                      "--gid",
                                      std::to_string(o.gid),
                                      "--base",
                                      o.base,
                                      "--target",
                                      o.target,
                                      "--link",
                                      o.link,
                                      "--files",
                                      std::to_string(o.files),
                                      "--attempts",
                                      std::to_string(o.attempts),
                                      "--seconds",
                                      std::to_string(o.seconds),
                                      "--trigger",
                                      o.trigger,
                                      "--content",
                                      o.content,
                                      "--rename",
                                      o.rename,
                                      "--blind",
                                      o.blind ? "1" : "0",
                                      "--burst",
                                      std::to_string(o.burst_us),
                                      "--delay",
                                      std::to_string(o.delay),
                                      "--depth",
                                      std::to_string(o.depth),
                                      "--hold",
                                      std::to_string(o.hold_us)};
        if (!groups.empty()) {
            args.push_back("--groups");
            args.push_back(groups);
        }
        std::vector<char*> argv;
        for (std::string& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        int to_child[2], from_child[2];
        if (::pipe2(to_child, O_CLOEXEC) != 0) return fail(error, "pipe");
        if (::pipe2(from_child, O_CLOEXEC) != 0) return fail(error, "pipe");
        pid_ = ::fork();
        if (pid_ < 0) return fail(error, "fork");
        if (pid_ == 0) {  // only async-signal-safe calls until exec: the test has threads
            ::dup2(to_child[0], STDIN_FILENO);
            ::dup2(from_child[1], STDOUT_FILENO);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        ::close(to_child[0]);
        ::close(from_child[1]);
        in_ = to_child[1];
        out_ = from_child[0];
        const auto until = std::chrono::steady_clock::now() + deadline;
        while (output_.find('\n') == std::string::npos) {
            if (!read_some(until)) {
                *error = "no ready line from the attacker: " + output_;
                return false;
            }
        }
        const std::string first = output_.substr(0, output_.find('\n'));
        if (first.rfind("ready ", 0) != 0) {
            *error = "the attacker said: " + output_;
            return false;
        }
        leaf_ = first.substr(6);
        return true;
    }

    // Her leaf: BASE[/d...]/m/<target's components>.
    [[nodiscard]] const std::string& leaf() const { return leaf_; }
    [[nodiscard]] pid_t pid() const { return pid_; }

    // Closes its stdin (it stops at its next poll), then collects its report.
    SwapReport stop(std::chrono::milliseconds deadline = std::chrono::seconds(60)) {
        if (in_ >= 0) {
            ::close(in_);
            in_ = -1;
        }
        return finish(deadline);
    }

    // Waits for it to stop by itself (attempts or time used up).
    SwapReport finish(std::chrono::milliseconds deadline = std::chrono::seconds(120)) {
        const auto until = std::chrono::steady_clock::now() + deadline;
        while (out_ >= 0 && read_some(until)) {
        }
        SwapReport r;
        if (pid_ > 0) {
            if (std::chrono::steady_clock::now() >= until) ::kill(pid_, SIGKILL);
            ::waitpid(pid_, &r.exit_status, 0);
            pid_ = -1;
        }
        r.output = output_;
        const std::size_t at = output_.rfind("swaps=");
        if (at != std::string::npos) {
            long long ms = -1;
            std::sscanf(output_.c_str() + at,
                        "swaps=%ld during_open=%ld opens=%ld triggers=%ld exchange_errors=%ld "
                        "elapsed_ms=%lld",
                        &r.swaps, &r.during_open, &r.opens, &r.triggers, &r.exchange_errors, &ms);
            r.elapsed_ms = static_cast<long>(ms);
        }
        return r;
    }

  private:
    static bool fail(std::string* error, const char* what) {
        *error = what;
        return false;
    }

    // Reads what is there (waiting until `until`); false at end of file or the deadline.
    bool read_some(std::chrono::steady_clock::time_point until) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            until - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        pollfd p{out_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
        char buf[4096];
        const ssize_t n = ::read(out_, buf, sizeof buf);
        if (n <= 0) {
            ::close(out_);
            out_ = -1;
            return false;
        }
        output_.append(buf, static_cast<std::size_t>(n));
        return true;
    }

    pid_t pid_ = -1;
    int in_ = -1;
    int out_ = -1;
    std::string output_;
    std::string leaf_;
};

}  // namespace wsindex::test
