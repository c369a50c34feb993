#!/usr/bin/env python3
"""live_latency.py: change-to-query latency of the live index under a steady load of changes.

  bench/live_latency.py [-b BUILD] [--tree PATH | --entries N] [--rate 1000] [--samples 100]
                        [--settle 200,50]

For each settle time (watch_settle_ms; a fresh daemon and database each) the daemon scans the
tree (default: a 1M-entry balanced mktree tree in $WSINDEX_TREES, /var/tmp/wsbench-trees) and
then follows it. A generator process makes --rate changes per second (create, delete, rename
to another directory, size change: a quarter each) to its own files in 2000 directories of the
tree picked at random. Meanwhile, one at a time, --samples operations of each kind are timed:
from the syscall returning (close, unlink, rename) to the end of the first `wsctl find NAME`
process (whole process, run back to back) whose output shows the change; for a size change the
find is `wsctl find NAME --size BYTES`. Files to delete, rename and resize are made and seen in
the index before the timed part. Printed: p50, p99 and max per kind, timeouts (10 s), the
generator's achieved rate, wsindexd's CPU over the sampling, the median whole-process time of
one `wsctl find` (the resolution of the measurement) and the p50 of each half of the samples
(a lag that grows under load shows there).
"""
import argparse
import multiprocessing
import os
import random
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib  # noqa: E402

KINDS = ("create", "delete", "rename", "size")
TIMEOUT = 10.0


def pick_dirs(root, count, rng):
    """COUNT directories of the tree (breadth first over the first levels), at random."""
    found, queue = [], [root]
    while queue and len(found) < count * 4:
        d = queue.pop(0)
        try:
            with os.scandir(d) as it:
                for e in it:
                    if e.is_dir(follow_symlinks=False) and not e.name.startswith("locked_"):
                        found.append(e.path)
                        queue.append(e.path)
        except OSError:
            pass
    rng.shuffle(found)
    return found[:count]


def generator(dirs, rate, stop, done, seed):
    """RATE changes a second to files named churn_* in DIRS until STOP is set."""
    rng = random.Random(seed)
    pool, serial, ops = [], 0, 0
    tick = 0.01
    per_tick = max(1, int(rate * tick))
    start = time.monotonic()
    while not stop.is_set():
        for _ in range(per_tick):
            kind = rng.choice(KINDS) if len(pool) > 200 else "create"
            try:
                if kind == "create" or len(pool) < 50:
                    serial += 1
                    p = os.path.join(rng.choice(dirs), f"churn_{seed}_{serial}")
                    os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))
                    pool.append(p)
                elif kind == "delete":
                    os.unlink(pool.pop(rng.randrange(len(pool))))
                elif kind == "rename":
                    i = rng.randrange(len(pool))
                    serial += 1
                    q = os.path.join(rng.choice(dirs), f"churn_{seed}_{serial}")
                    os.rename(pool[i], q)
                    pool[i] = q
                else:
                    fd = os.open(rng.choice(pool), os.O_WRONLY | os.O_APPEND)
                    os.write(fd, b"x" * rng.randint(1, 100))
                    os.close(fd)
            except OSError:
                pass
            ops += 1
        done.value = ops
        # Paced on the clock, not on sleeps: a slow tick is caught up by the next ones.
        ahead = start + ops / rate - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
    for p in pool:
        try:
            os.unlink(p)
        except OSError:
            pass


def wait_for(daemon, name, shown, extra=()):
    """Seconds until `wsctl find NAME` shows (or no longer shows) a path ending in /NAME;
    None after TIMEOUT. Also the whole-process times of the finds."""
    t0 = time.monotonic()
    finds = []
    while True:
        took, lines = daemon.find(name, *extra)
        finds.append(took)
        now = time.monotonic()
        if any(line.endswith("/" + name) for line in lines) == shown:
            return now - t0, finds
        if now - t0 > TIMEOUT:
            return None, finds


def run_one(args, root, settle):
    rng = random.Random(settle)
    dirs = pick_dirs(root, 2000, rng)
    daemon = livelib.Daemon(args.build, settle_ms=settle)
    try:
        daemon.start()
        daemon.scan(root)
        time.sleep(1.0)  # the name index loads after the scan
        run = f"{os.getpid()}s{settle}"
        # Files for the delete, rename and size samples, indexed before the timed part.
        prepared = {k: [] for k in KINDS[1:]}
        for kind in KINDS[1:]:
            for i in range(args.samples):
                name = f"lat_{kind[0]}_{run}_{i:05d}z"
                p = os.path.join(rng.choice(dirs), name)
                os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))
                prepared[kind].append(p)
        deadline = time.monotonic() + 30
        want = 3 * args.samples
        while len(daemon.find(f"lat_")[1]) < want and time.monotonic() < deadline:
            time.sleep(0.2)

        stop = multiprocessing.Event()
        done = multiprocessing.Value("q", 0)
        gen = multiprocessing.Process(target=generator, args=(dirs, args.rate, stop, done, settle))
        gen.start()
        time.sleep(2.0)  # the load settles in
        cpu0, t0, ops0 = livelib.cpu_seconds(daemon.pid), time.monotonic(), done.value
        lat = {k: [] for k in KINDS}
        order = {k: [] for k in KINDS}  # sample index, for the halves
        timeouts = {k: 0 for k in KINDS}
        finds = []
        for i in range(args.samples):
            for kind in KINDS:
                if kind == "create":
                    name = f"lat_c_{run}_{i:05d}z"
                    p = os.path.join(rng.choice(dirs), name)
                    os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))
                    took, f = wait_for(daemon, name, True)
                elif kind == "delete":
                    p = prepared["delete"][i]
                    os.unlink(p)
                    took, f = wait_for(daemon, os.path.basename(p), False)
                elif kind == "rename":
                    p = prepared["rename"][i]
                    name = os.path.basename(p)[:-1] + "y"
                    os.rename(p, os.path.join(rng.choice(dirs), name))
                    took, f = wait_for(daemon, name, True)
                else:
                    p = prepared["size"][i]
                    fd = os.open(p, os.O_WRONLY)
                    os.write(fd, b"y" * 1000)
                    os.close(fd)
                    took, f = wait_for(daemon, os.path.basename(p), True, ("--size", "1000"))
                finds += f
                if took is None:
                    timeouts[kind] += 1
                else:
                    lat[kind].append(took)
                    order[kind].append(i)
        wall = time.monotonic() - t0
        cpu = livelib.cpu_seconds(daemon.pid) - cpu0
        rate = (done.value - ops0) / wall
        stop.set()
        gen.join()
        rows = []
        for kind in KINDS:
            v = lat[kind]
            half = args.samples // 2
            first = [x for x, j in zip(v, order[kind]) if j < half]
            second = [x for x, j in zip(v, order[kind]) if j >= half]
            rows.append((settle, kind, len(v), livelib.percentile(v, 50),
                         livelib.percentile(v, 99), max(v) if v else None, timeouts[kind],
                         livelib.median(first), livelib.median(second)))
        return rows, rate, cpu / wall, livelib.median(finds), len(finds)
    finally:
        daemon.cleanup()
        for d in dirs:  # the sampled files, so the tree is as it was
            try:
                with os.scandir(d) as it:
                    for e in it:
                        if e.name.startswith(("lat_", "churn_")):
                            os.unlink(e.path)
            except OSError:
                pass


def ms(x):
    return "-" if x is None else f"{x * 1000:.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-b", "--build", default=os.path.join(livelib.REPO, "build-rel"))
    ap.add_argument("--tree", help="an existing directory to follow (it gets changed)")
    ap.add_argument("--entries", type=int, default=1000000,
                    help="size of the generated balanced tree (without --tree)")
    ap.add_argument("--rate", type=float, default=1000.0, help="generator changes per second")
    ap.add_argument("--samples", type=int, default=100, help="timed operations per kind")
    ap.add_argument("--settle", default="200,50", help="watch_settle_ms values, comma-separated")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (fanotify)")
    root = livelib.tree(args.tree) if args.tree else livelib.tree(
        f"balanced{args.entries}" if args.entries != 1000000 else "balanced", args.entries)
    print(f"# live_latency: {time.strftime('%FT%TZ', time.gmtime())}, {os.cpu_count()} CPUs, "
          f"load {open('/proc/loadavg').read().split()[:3]}, root={root}, rate={args.rate}/s, "
          f"samples={args.samples}/kind")
    table = []
    for settle in [int(s) for s in args.settle.split(",")]:
        rows, rate, cpu, find_med, nfinds = run_one(args, root, settle)
        table += rows
        print(f"# settle {settle} ms: generator {rate:.0f} changes/s, wsindexd CPU "
              f"{cpu * 100:.0f}% of one core, wsctl find {ms(find_med)} ms median "
              f"({nfinds} finds)")
    print(f"\n{'settle_ms':>9} {'kind':<7} {'n':>4} {'p50_ms':>7} {'p99_ms':>7} {'max_ms':>7} "
          f"{'timeouts':>8} {'p50_1st_half':>12} {'p50_2nd_half':>12}")
    for settle, kind, n, p50, p99, mx, to, h1, h2 in table:
        print(f"{settle:>9} {kind:<7} {n:>4} {ms(p50):>7} {ms(p99):>7} {ms(mx):>7} {to:>8} "
              f"{ms(h1):>12} {ms(h2):>12}")
    print(f"# load at the end: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
