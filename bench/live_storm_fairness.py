#!/usr/bin/env python3
"""live_storm_fairness.py: another directory's change-to-find latency while one directory storms.

  bench/live_storm_fairness.py [-b BUILD] [--seconds 20] [--samples 40] [--files 20000]

A fresh daemon follows a root holding `storm/` (pre-filled with --files files) and `quiet/`. A
process creates and unlinks files in storm/ as fast as it can (the "270k create/unlink" storm of
issue #33); meanwhile, one at a time, a file is created in quiet/ and timed from its close to the
end of the first `wsctl find NAME` whose output shows it. Printed: p50, p99 and max of those
latencies without the storm (a baseline) and under it, and the storm's rate.
"""
import argparse
import multiprocessing
import os
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib  # noqa: E402

TIMEOUT = 30.0


def storm(directory, stop, count):
    n = 0
    while not stop.is_set():
        for _ in range(100):
            p = os.path.join(directory, "s%d" % (n % 5000))
            os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))
            os.unlink(p)
            n += 1
    count.value = n


def sample(daemon, quiet, tag, samples):
    out = []
    for i in range(samples):
        name = "q_%s_%d" % (tag, i)
        os.close(os.open(os.path.join(quiet, name), os.O_CREAT | os.O_WRONLY, 0o644))
        t0 = time.monotonic()
        while time.monotonic() - t0 < TIMEOUT:
            _, lines = daemon.find(name)
            if any(line.endswith("/" + name) for line in lines):
                break
        out.append(time.monotonic() - t0)
    return out


def show(label, values):
    print("%-10s p50 %.3f s  p99 %.3f s  max %.3f s  (%d samples)" % (
        label, livelib.median(values), livelib.percentile(values, 99), max(values), len(values)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-b", "--build", default=os.path.join(livelib.REPO, "build-rel"))
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--files", type=int, default=20000)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="wsbench-storm.", dir="/var/tmp")
    root = os.path.join(work, "root")
    storm_dir, quiet = os.path.join(root, "storm"), os.path.join(root, "quiet")
    os.makedirs(storm_dir)
    os.makedirs(quiet)
    for i in range(args.files):
        os.close(os.open(os.path.join(storm_dir, "f%d" % i), os.O_CREAT | os.O_WRONLY, 0o644))
    daemon = livelib.Daemon(args.build).start()
    try:
        daemon.scan(root)
        show("baseline", sample(daemon, quiet, "base", args.samples // 2))
        stop, count = multiprocessing.Event(), multiprocessing.Value("q", 0)
        proc = multiprocessing.Process(target=storm, args=(storm_dir, stop, count))
        t0 = time.monotonic()
        proc.start()
        values = []
        while time.monotonic() - t0 < args.seconds or len(values) < args.samples:
            values += sample(daemon, quiet, "storm%d" % len(values), 1)
            if len(values) >= args.samples and time.monotonic() - t0 >= args.seconds:
                break
        stop.set()
        proc.join()
        elapsed = time.monotonic() - t0
        show("storm", values)
        print("storm: %d create+unlink pairs in %.1f s (%.0f/s)" % (
            count.value, elapsed, count.value / elapsed))
        st = daemon.status().get("live", {})
        print("live: batches %s, busy_ms %s, rows_changed %s" % (
            st.get("batches"), st.get("busy_ms"), st.get("rows_changed")))
    finally:
        daemon.cleanup()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
