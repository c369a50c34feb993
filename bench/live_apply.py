#!/usr/bin/env python3
"""live_apply.py: how fast changed entries reach the live index, beside what a user would run
instead after the same changes (updatedb.plocate + plocate; an incremental `wsctl scan`).

  bench/live_apply.py [-b BUILD] [--tree PATH | --entries N] [--files 200000] [--dirs 2000]
                      [-k RUNS] [--settle MS --max-delay MS]

The tree (default: the 1M-entry balanced mktree tree in $WSINDEX_TREES) gets DIRS empty
directories (ROOT/live_apply/dNNNN) before anything indexes it. Then:
  live      wsindexd A (watching, log_level = debug) has scanned the tree;
  scan      wsindexd B (--no-watch, its own database) has scanned it too;
  plocate   `updatedb.plocate -U ROOT -o DB -l 0` has built DB.
Each round (RUNS, default 3) has three phases, one process writing as fast as it can:
  create    FILES empty files, spread evenly over the DIRS directories
  touch     utime() on each of them (every row's mtime changes)
  delete    unlink each of them
Per phase: "applied/s" is the rows the index took per second of the scan thread's time on
live batches (status live.busy_ms): the apply rate apart from how fast the writer writes.
"live" is the time from the first syscall until A's index holds the result (the
root's entry count for create/delete, the live rows-changed counter of status for touch) and
the rate FILES / that time; "writer" the time the writing process took. Then, in turn: B's
`wsctl scan ROOT --wait` (incremental) and a `wsctl find NAME`; `updatedb.plocate` into the
same DB (it reuses the old database for unchanged directories) and `plocate -d DB NAME`; and
A's `wsctl find NAME` (the live index's answer). NAME is one of the new files. The table shows
medians; A's log gives the rows per batch (debug lines), summarised at the end.

With the default settle time (200 ms) and a writer slower than the daemon, a directory written
to every few hundred ms is re-listed for almost every change: "applied/s" then measures the work
per change while the daemon keeps up, not how much it can take. --settle 2000 --max-delay 5000
lets changes gather as they do when the daemon is behind: the rate it can apply a backlog at.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib  # noqa: E402


def timed(cmd, check=True):
    t0 = time.monotonic()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=check).stdout
    return time.monotonic() - t0, out.decode(errors="replace").splitlines()


def wait_until(pred, limit=300.0):
    t0 = time.monotonic()
    while not pred():
        if time.monotonic() - t0 > limit:
            sys.exit("the live index did not converge in time")
        time.sleep(0.02)
    return time.monotonic()


def root_info(daemon, root):
    st = daemon.status()
    r = [r for r in st["roots"] if r["root"] == root][0]
    live = st.get("live") or {}
    return r["entries"], live.get("rows_changed", 0), live.get("busy_ms", 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-b", "--build", default=os.path.join(livelib.REPO, "build-rel"))
    ap.add_argument("--tree")
    ap.add_argument("--entries", type=int, default=1000000)
    ap.add_argument("--files", type=int, default=200000)
    ap.add_argument("--dirs", type=int, default=2000)
    ap.add_argument("-k", "--runs", type=int, default=3)
    ap.add_argument("--settle", type=int, help="daemon A's watch_settle_ms")
    ap.add_argument("--max-delay", type=int, help="daemon A's watch_max_delay_ms")
    ap.add_argument("--log", help="keep daemon A's log (debug level) in this file")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (fanotify)")
    for tool in ("updatedb.plocate", "plocate"):
        if shutil.which(tool) is None:
            sys.exit(f"missing {tool} (apt-get install plocate)")
    root = livelib.tree(args.tree) if args.tree else livelib.tree(
        f"balanced{args.entries}" if args.entries != 1000000 else "balanced", args.entries)
    base = os.path.join(root, "live_apply")
    shutil.rmtree(base, ignore_errors=True)
    dirs = [os.path.join(base, f"d{i:04d}") for i in range(args.dirs)]
    for d in dirs:
        os.makedirs(d)
    files = [os.path.join(dirs[i % args.dirs], f"apf_{i:07d}") for i in range(args.files)]
    name = os.path.basename(files[args.files // 2])

    work = tempfile.mkdtemp(prefix="wsbench-apply.", dir="/var/tmp")
    plocate_db = os.path.join(work, "plocate.db")
    live = livelib.Daemon(args.build, log_level="debug", settle_ms=args.settle,
                          max_delay_ms=args.max_delay)
    scan = livelib.Daemon(args.build, watch=False)
    print(f"# live_apply: {time.strftime('%FT%TZ', time.gmtime())}, {os.cpu_count()} CPUs, "
          f"load {open('/proc/loadavg').read().split()[:3]}, root={root}, {args.files} files "
          f"in {args.dirs} dirs, runs={args.runs}, settle {args.settle or 'default'} ms, "
          f"max delay {args.max_delay or 'default'} ms")
    res = {}

    def add(phase, what, value):
        res.setdefault((phase, what), []).append(value)

    try:
        live.start()
        live.scan(root)
        scan.start()
        scan.scan(root)
        subprocess.run(["updatedb.plocate", "-U", root, "-o", plocate_db, "-l", "0"], check=True)
        time.sleep(5)  # name index loads, WAL checkpoints
        for _ in range(args.runs):
            for phase in ("create", "touch", "delete"):
                entries0, rows0, busy0 = root_info(live, root)
                t0 = time.monotonic()
                if phase == "create":
                    for p in files:
                        os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))
                    target = entries0 + args.files
                elif phase == "touch":
                    now = time.time()
                    for p in files:
                        os.utime(p, (now + 1000, now + 1000))
                else:
                    for p in files:
                        os.unlink(p)
                    target = entries0 - args.files
                t_written = time.monotonic()
                if phase == "touch":
                    t_done = wait_until(lambda: root_info(live, root)[1] - rows0 >= args.files)
                else:
                    t_done = wait_until(lambda: root_info(live, root)[0] == target)
                add(phase, "writer", t_written - t0)
                add(phase, "live", t_done - t0)
                add(phase, "after_last_write", t_done - t_written)
                _, rows1, busy1 = root_info(live, root)
                add(phase, "applied_per_s", (rows1 - rows0) / max(busy1 - busy0, 1) * 1000)
                s, _ = timed([os.path.join(scan.bin, "wsctl"), "--socket", scan.sock, "scan", root,
                              "--wait"])
                add(phase, "wsctl_scan", s)
                s, out = scan.find(name)
                add(phase, "scan_find", s)
                add(phase, "scan_find_lines", len(out))
                s, _ = timed(["updatedb.plocate", "-U", root, "-o", plocate_db, "-l", "0"])
                add(phase, "updatedb", s)
                s, out = timed(["plocate", "-d", plocate_db, name], check=False)  # 1: no match
                add(phase, "plocate", s)
                add(phase, "plocate_lines", len(out))
                s, out = live.find(name)
                add(phase, "live_find", s)
                add(phase, "live_find_lines", len(out))
                s, out = live.find(name)
                add(phase, "live_find2", s)
    finally:
        log = live.log_text() if os.path.exists(live.log) else ""
        if args.log:
            with open(args.log, "w") as f:
                f.write(log)
        live.cleanup()
        scan.cleanup()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(base, ignore_errors=True)

    def m(phase, what):
        return livelib.median(res[(phase, what)])

    print(f"\n{'phase':<7} {'writer_s':>8} {'live_s':>7} {'entries/s':>9} {'after_last_s':>12} "
          f"{'live_find_s':>11} {'applied/s':>9} | {'wsctl_scan_s':>12} {'+find_s':>7} | {'updatedb_s':>10} "
          f"{'+plocate_s':>10} | {'lines live/scan/plocate':>23}")
    for phase in ("create", "touch", "delete"):
        lines = "/".join(str(int(m(phase, k))) for k in ("live_find_lines", "scan_find_lines",
                                                          "plocate_lines"))
        print(f"{phase:<7} {m(phase, 'writer'):>8.2f} {m(phase, 'live'):>7.2f} "
              f"{args.files / m(phase, 'live'):>9.0f} {m(phase, 'after_last_write'):>12.2f} "
              f"{m(phase, 'live_find'):>11.3f} {m(phase, 'applied_per_s'):>9.0f} | {m(phase, 'wsctl_scan'):>12.2f} "
              f"{m(phase, 'scan_find'):>7.3f} | {m(phase, 'updatedb'):>10.2f} "
              f"{m(phase, 'plocate'):>10.3f} | {lines:>23}")
    print(f"# live_find2 (the same find again) medians: "
          + ", ".join(f"{p} {m(p, 'live_find2'):.3f} s" for p in ("create", "touch", "delete")))
    rows = [sum(int(x) for x in g) for g in
            re.findall(r"live index: \d+ directories(?: \(\d+ skipped\))?, (\d+) rows added, (\d+) changed, (\d+) "
                       r"removed", log)]
    if rows:
        print(f"# live batches (debug log): {len(rows)}, rows per batch median "
              f"{livelib.median(rows):.0f}, max {max(rows)}, total {sum(rows)}")
    print(f"# raw: " + "; ".join(f"{p}.{w}={['%.3f' % x for x in v]}" for (p, w), v in res.items()
                                 if not w.endswith("lines")))
    print(f"# load at the end: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
