#!/usr/bin/env python3
"""live_idle.py: the cost of watching — wsindexd's CPU while it follows a quiet tree, and its
memory after the scan of the 1M-entry balanced tree, with name_index = true and false.

  bench/live_idle.py [-b BUILD] [--tree PATH | --entries N] [--seconds 60]

For each name_index setting, a fresh daemon (fresh database, watch on, default settle) scans the
tree (default: the 1M-entry balanced mktree tree in $WSINDEX_TREES), waits 10 s (the name index
loads, the WAL is checkpointed), then reads /proc/PID/stat (utime + stime) at the start and the
end of SECONDS with the tree untouched, and /proc/PID/status (RssAnon, RssFile, VmRSS, VmHWM)
at the end. The daemon also sees changes elsewhere on the same file system (fanotify marks the
whole file system); the root's changed-directory counter (status) says if any came from the
tree. Target: CPU ~0, RssAnon < 64 MiB.
"""
import argparse
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-b", "--build", default=os.path.join(livelib.REPO, "build-rel"))
    ap.add_argument("--tree")
    ap.add_argument("--entries", type=int, default=1000000)
    ap.add_argument("--seconds", type=float, default=60.0)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (fanotify)")
    root = livelib.tree(args.tree) if args.tree else livelib.tree(
        f"balanced{args.entries}" if args.entries != 1000000 else "balanced", args.entries)
    print(f"# live_idle: {time.strftime('%FT%TZ', time.gmtime())}, {os.cpu_count()} CPUs, "
          f"load {open('/proc/loadavg').read().split()[:3]}, root={root}, {args.seconds:.0f} s")
    rows = []
    for name_index in (True, False):
        d = livelib.Daemon(args.build, name_index=name_index)
        try:
            d.start()
            d.scan(root)
            time.sleep(10)
            st = d.status()
            r0 = [r for r in st["roots"] if r["root"] == root][0]
            cpu0, t0 = livelib.cpu_seconds(d.pid), time.monotonic()
            time.sleep(args.seconds)
            cpu = livelib.cpu_seconds(d.pid) - cpu0
            wall = time.monotonic() - t0
            r1 = [r for r in d.status()["roots"] if r["root"] == root][0]
            kib = {k: livelib.status_kib(d.pid, k) for k in ("RssAnon", "RssFile", "VmRSS",
                                                             "VmHWM")}
            rows.append((name_index, r1["entries"], r1.get("live"), cpu, wall, kib,
                         r1.get("live_changes", 0) - r0.get("live_changes", 0)))
        finally:
            d.cleanup()
    print(f"\n{'name_index':<10} {'entries':>8} {'mode':<9} {'cpu_s':>6} {'cpu_%':>6} "
          f"{'RssAnon':>9} {'RssFile':>9} {'VmRSS':>9} {'VmHWM':>9} {'dir_changes':>11}")
    for ni, entries, mode, cpu, wall, kib, changes in rows:
        mib = {k: f"{v / 1024:.1f}M" for k, v in kib.items()}
        print(f"{str(ni).lower():<10} {entries:>8} {mode:<9} {cpu:>6.2f} "
              f"{100 * cpu / wall:>6.2f} {mib['RssAnon']:>9} {mib['RssFile']:>9} "
              f"{mib['VmRSS']:>9} {mib['VmHWM']:>9} {changes:>11}")
    print(f"# load at the end: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
