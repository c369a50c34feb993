#!/usr/bin/env python3
"""ui_latency.py: `wsctl ui` keystroke-to-screen times on a large tree, next to ncdu, gdu and
`duc ui` on the same tree, all driven through a private tmux server.

  bench/ui_latency.py [-b BUILD] [--tree PATH | --entries N] [--runs 5] [--keys 20]
                      [--peers ncdu,gdu,duc]

A wsindexd of its own (livelib.Daemon, live index off) scans the tree first (not timed in the
browser's numbers: that is the point of an index). Then, in a 120x40 tmux pane:

- first screen: from starting the program to the listing on screen. For wsctl ui two figures:
  its own (WSINDEX_UI_TIMING: from the start of `ui` to the first screen refreshed) and the
  one seen through tmux (from new-window to capture-pane showing the listing, polled every
  ~5 ms, so it includes process start and the polling). For ncdu and gdu it includes their
  walk; for duc ui it reads duc's database (built before, `duc index`, not timed).
- enter: Enter on the first (largest) row until the new directory's listing is drawn, then
  Backspace back (timed too); --keys times each. wsctl ui's own timing and tmux's.
- search (wsctl ui only: the others have none over the whole tree): `/` NAME Enter until the
  results are drawn, NAME a substring of some entries' names.

Also timed: the tmux floor (a program that only prints a line), which every "through tmux"
figure includes. The daemon is left to go quiet after its scan (name index, checkpoint) first.

Printed: medians (and min/max) in milliseconds. Standard library only; needs tmux.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib  # noqa: E402


class Tmux:
    """A tmux server on a socket of its own, one session, windows made and killed per run."""

    def __init__(self, work):
        self.sock = os.path.join(work, "tmux.sock")
        self.cmd(["new-session", "-d", "-s", "bench", "-x", "120", "-y", "40"])

    def cmd(self, args, check=True):
        return subprocess.run(["tmux", "-S", self.sock, "-f", "/dev/null", *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=check,
                              text=True, errors="replace")

    def window(self, command, env):
        """Starts `command` in a new window (the target "bench:run"); returns the time it was
        asked for."""
        self.cmd(["kill-window", "-t", "bench:run"], check=False)
        args = ["new-window", "-d", "-n", "run", "-t", "bench:"]
        for k, v in env.items():
            args += ["-e", f"{k}={v}"]
        t0 = time.monotonic()
        self.cmd(args + [command])
        return t0

    def keys(self, *keys):
        t0 = time.monotonic()
        self.cmd(["send-keys", "-t", "bench:run", *keys])
        return t0

    def screen(self):
        return self.cmd(["capture-pane", "-p", "-t", "bench:run"], check=False).stdout

    def wait(self, ready, timeout=120.0):
        """(time the screen first satisfied `ready`, that screen)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            s = self.screen()
            if ready(s):
                return time.monotonic(), s
            time.sleep(0.005)
        raise SystemExit("timed out; last screen:\n" + self.screen())

    def close(self):
        self.cmd(["kill-server"], check=False)


def header_path(screen, marker):
    """The first line holding `marker` (each program's title/path line)."""
    for line in screen.splitlines():
        if marker in line:
            return line
    return None


def own_timings(path):
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                what, ms = line.split()
                out.setdefault(what, []).append(float(ms))
    return out


def summary(name, values):
    if not values:
        return f"{name:<44} -"
    return (f"{name:<44} median {statistics.median(values):8.1f} ms   "
            f"min {min(values):8.1f}   max {max(values):8.1f}   (n={len(values)})")


def bench_wsctl(t, daemon, tree, args, work, pattern):
    timing = os.path.join(work, "ui-timing.log")
    env = {"LANG": "C.UTF-8", "TERM": "xterm-256color", "WSINDEX_UI_TIMING": timing}
    cmd = f"{daemon.bin}/wsctl --socket {daemon.sock} ui {tree}"
    first_seen, enter_seen, back_seen, search_seen = [], [], [], []
    title = f" wsctl ui  {tree} "
    for _ in range(args.runs):
        t0 = t.window(cmd, env)
        t1, _ = t.wait(lambda s: title in s and "Total:" in s)
        first_seen.append((t1 - t0) * 1000)
        t.keys("q")
    t0 = t.window(cmd, env)
    t.wait(lambda s: title in s and "Total:" in s)
    for _ in range(args.keys):
        t0 = t.keys("Enter")
        t1, _ = t.wait(lambda s: header_path(s, " wsctl ui ") is not None
                       and title not in s)
        enter_seen.append((t1 - t0) * 1000)
        t0 = t.keys("BSpace")
        t1, _ = t.wait(lambda s: title in s)
        back_seen.append((t1 - t0) * 1000)
    for _ in range(args.keys):
        t.keys("/")
        t.wait(lambda s: "search below here:" in s)
        t.keys("-l", pattern)
        t0 = t.keys("Enter")
        t1, _ = t.wait(lambda s: f'search "{pattern}"' in s)
        search_seen.append((t1 - t0) * 1000)
        t.keys("q")
        t.wait(lambda s: title in s)
    t.keys("q")
    own = own_timings(timing)
    print(summary("wsctl ui first screen (own timing)", own.get("first_screen", [])))
    print(summary("wsctl ui first screen (through tmux)", first_seen))
    print(summary("wsctl ui enter a directory (own, Enter)", own.get("key:^M", [])))
    print(summary("wsctl ui enter a directory (through tmux)", enter_seen))
    back_own = own.get("key:KEY_BACKSPACE", []) + own.get("key:^?", [])
    print(summary("wsctl ui back up (own, Backspace)", back_own))
    print(summary("wsctl ui back up (through tmux)", back_seen))
    print(summary("wsctl ui search (own, from Enter)", own.get("search", [])))
    print(summary("wsctl ui search (through tmux)", search_seen))


def wait_quiet(daemon, quiet_s=1.0, timeout=300.0):
    """Waits until the daemon used no CPU for `quiet_s` (after a scan it still builds its name
    index and checkpoints its database; timing the browser then measures that work)."""
    deadline = time.monotonic() + timeout
    last = livelib.cpu_seconds(daemon.pid)
    while time.monotonic() < deadline:
        time.sleep(quiet_s)
        now = livelib.cpu_seconds(daemon.pid)
        if now - last < 0.01:
            return
        last = now


def bench_floor(t, runs):
    """The floor of every "through tmux" figure: a window whose program only prints a line."""
    seen = []
    for _ in range(runs):
        t0 = t.window("printf 'floor-ready\\n'; exec sleep 60", {})
        t1, _ = t.wait(lambda s: "floor-ready" in s)
        seen.append((t1 - t0) * 1000)
    t.cmd(["kill-window", "-t", "bench:run"], check=False)
    print(summary("tmux floor: a program that only prints", seen))


def bench_peer(t, name, command, ready, runs, quit_keys):
    seen = []
    for _ in range(runs):
        t0 = t.window(command, {"LANG": "C.UTF-8", "TERM": "xterm-256color"})
        t1, _ = t.wait(ready, timeout=600)
        seen.append((t1 - t0) * 1000)
        t.keys(*quit_keys)
    print(summary(f"{name} first screen (through tmux)", seen))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-b", "--build", default=os.path.join(livelib.REPO, "build-rel"))
    ap.add_argument("--tree", help="an existing tree")
    ap.add_argument("--entries", type=int, default=100000,
                    help="else a balanced mktree tree of N entries in $WSINDEX_TREES")
    ap.add_argument("--runs", type=int, default=5, help="first-screen runs per program")
    ap.add_argument("--keys", type=int, default=20, help="timed enter/back/search per kind")
    ap.add_argument("--pattern", default="thin_1", help="search text (substring of names)")
    ap.add_argument("--peers", default="ncdu,gdu,duc")
    args = ap.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("needs tmux")
    tree = livelib.tree(args.tree) if args.tree else livelib.tree(
        f"balanced-{args.entries}", args.entries, "balanced")
    work = tempfile.mkdtemp(prefix="wsbench-ui.", dir="/var/tmp")
    os.makedirs(os.path.join(work, "daemon"))
    daemon = livelib.Daemon(args.build, watch=False, workdir=os.path.join(work, "daemon"))
    t = None
    try:
        daemon.start()
        t0 = time.monotonic()
        daemon.scan(tree)
        print(f"# tree {tree}; wsindexd scan {time.monotonic() - t0:.1f} s (not in the figures)")
        wait_quiet(daemon)
        t = Tmux(work)
        bench_floor(t, args.runs)
        bench_wsctl(t, daemon, tree, args, work, args.pattern)
        peers = [p for p in args.peers.split(",") if p]
        marker = f"--- {tree} "
        if "ncdu" in peers and shutil.which("ncdu"):
            bench_peer(t, "ncdu", f"ncdu -x {tree}", lambda s: marker in s, args.runs, ["q"])
        if "gdu" in peers and shutil.which("gdu"):
            # gdu draws "--- PATH ---" over its list once the walk is done.
            bench_peer(t, "gdu", f"gdu --no-mouse {tree}", lambda s: marker in s, args.runs,
                       ["q"])
        if "duc" in peers and shutil.which("duc"):
            db = os.path.join(work, "duc.db")
            t0 = time.monotonic()
            subprocess.run(["duc", "index", "-x", "-d", db, tree], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            print(f"# duc index {time.monotonic() - t0:.1f} s (not in the figures)")
            bench_peer(t, "duc ui", f"duc ui -d {db} {tree}", lambda s: tree in s and "Total" in s,
                       args.runs, ["q"])
    finally:
        if t:
            t.close()
        daemon.cleanup()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
