#!/usr/bin/env python3
"""Hostile clients against a running wsindexd, while a well-behaved client measures `status`.

Starts its own wsindexd (temporary socket, database and a generated tree of --files files) or
targets one given with --socket/--pid, then runs each phase in turn:

  garbage     connections that send random bytes (with and without a NUL) and read the answer
  oversize    connections that send 2 MiB without a NUL (the cap is 1 MiB)
  slow        clients that send a valid request one byte a second
  idle        hundreds of connections that connect and never send, from another uid (nobody)
              so the caller's own per-uid slots stay free, as they would for other users
  idle-self   the same from our own uid: it meets the per-uid cap (64) and gets Busy
  idle-uids   64 idle connections from each of 5 uids: more than the total cap (256)
  midstream   streamed finds (more: true) over the whole tree, closed after the first bytes,
              half of them with a reset (SO_LINGER 0)
  regex       finds with regexes that used to make regcomp run away

Throughout, a well-behaved client sends wsindex.Status on one connection in a loop; per phase
the tool prints its p50/p99/max latency, every status that failed, and a fresh connection's
status at the end of the phase. At the end: the daemon's peak RSS (VmHWM), RSS and open
descriptors from /proc, and whether it still answers. Exit status 1 if a status failed or the
daemon stopped serving.

Why Python (stdlib only): the hostile side needs exact control over bytes, timing and socket
options on hundreds of sockets, and nothing to build; its own overhead (tens of microseconds)
is far below the latencies measured. Run as root (the idle phase drops to nobody in a child).

  bench/hostile_clients.py --wsindexd build/bin/wsindexd [--files 20000] [--idle 300]
  bench/hostile_clients.py --socket /run/wsindexd/wsindexd.sock --pid PID
"""
import argparse
import json
import os
import random
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time


def frame(obj):
    return json.dumps(obj).encode() + b"\0"


def connect(path, timeout=10.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    return s


def read_frame(s, buf):
    """One NUL-terminated frame from s (buf holds bytes read past earlier frames)."""
    while b"\0" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed by the daemon")
        buf += chunk
    i = buf.index(b"\0")
    out = bytes(buf[:i])
    del buf[: i + 1]
    return json.loads(out)


def call(path, method, params=None, more=False, timeout=30.0):
    """A complete call on a fresh connection: the replies' parameters, or raises on error."""
    with connect(path, timeout) as s:
        req = {"method": method, "parameters": params or {}}
        if more:
            req["more"] = True
        s.sendall(frame(req))
        buf = bytearray()
        replies = []
        while True:
            r = read_frame(s, buf)
            if "error" in r:
                raise RuntimeError(r["error"] + ": " + r.get("parameters", {}).get("message", ""))
            replies.append(r.get("parameters", {}))
            if not r.get("continues"):
                return replies


def error_of(s, timeout=15.0):
    """The error name the daemon sends before closing, or how the connection ended."""
    s.settimeout(timeout)
    buf = bytearray()
    try:
        r = read_frame(s, buf)
        return r.get("error", "reply")
    except ConnectionError:
        return "closed"
    except ConnectionResetError:
        return "reset"
    except socket.timeout:
        return "no answer"


class StatusProbe(threading.Thread):
    """The well-behaved client: wsindex.Status on one connection, back to back."""

    def __init__(self, path, pause=0.01):
        super().__init__(daemon=True)
        self.path, self.pause = path, pause
        self.lock = threading.Lock()
        self.samples, self.failures = [], []
        self.stop = threading.Event()

    def run(self):
        s, buf = None, bytearray()
        while not self.stop.is_set():
            try:
                if s is None:
                    s, buf = connect(self.path), bytearray()
                t0 = time.perf_counter()
                s.sendall(frame({"method": "wsindex.Status", "parameters": {}}))
                r = read_frame(s, buf)
                dt = time.perf_counter() - t0
                with self.lock:
                    if "error" in r:
                        self.failures.append(r["error"])
                    else:
                        self.samples.append(dt)
            except Exception as e:  # counted, then reconnect
                with self.lock:
                    self.failures.append(type(e).__name__ + ": " + str(e))
                if s is not None:
                    s.close()
                s = None
            time.sleep(self.pause)

    def take(self):
        with self.lock:
            samples, failures = self.samples, self.failures
            self.samples, self.failures = [], []
        return samples, failures


def pct(samples, q):
    if not samples:
        return float("nan")
    xs = sorted(samples)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000


def proc_status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmHWM", "VmRSS", "Threads"):
                out[k] = v.strip()
    out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return out


# ---- phases: each returns (count, what happened) -------------------------------------------

def phase_garbage(path, n):
    outcomes = {}
    rnd = random.Random(7)
    for i in range(n):
        body = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 4096)))
        if i % 2 == 0:
            body += b"\0"  # a complete (bad) frame: InvalidRequest expected
        else:
            body = body.replace(b"\0", b"") + b"\0"
        with connect(path) as s:
            try:
                s.sendall(body)
                got = error_of(s)
            except (BrokenPipeError, ConnectionResetError):
                got = "reset"
        outcomes[got] = outcomes.get(got, 0) + 1
    return n, outcomes


def phase_oversize(path, n):
    outcomes = {}
    payload = b"x" * (2 << 20)
    for _ in range(n):
        with connect(path) as s:
            try:
                s.sendall(payload)
                got = error_of(s)
            except (BrokenPipeError, ConnectionResetError):
                got = "reset while sending (MessageTooLarge sent, then close)"
        outcomes[got] = outcomes.get(got, 0) + 1
    return n, outcomes


def phase_slow(path, n, seconds):
    req = frame({"method": "wsindex.Status", "parameters": {}})
    results = {}

    def trickle(i):
        s = connect(path)
        sent, t0 = 0, time.monotonic()
        try:
            while time.monotonic() - t0 < seconds and sent < len(req):
                s.sendall(req[sent:sent + 1])
                sent += 1
                time.sleep(1.0)
            got = error_of(s, timeout=2.0)
        except (BrokenPipeError, ConnectionResetError):
            got = "closed"
        results[i] = (got, sent, round(time.monotonic() - t0, 1))
        s.close()

    threads = [threading.Thread(target=trickle, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    outcomes = {}
    for got, sent, secs in results.values():
        key = f"{got} after {sent} bytes / {secs:.0f} s"
        outcomes[key] = outcomes.get(key, 0) + 1
    return n, outcomes


def hold_idle(path, n, hold, uid):
    """In a child (as `uid` if given): open n connections, never send, hold them; report."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            socks, outcomes = [], {}
            for _ in range(n):
                try:
                    socks.append(connect(path))
                except OSError as e:
                    outcomes["connect: " + e.strerror] = outcomes.get("connect: " + e.strerror, 0) + 1
            time.sleep(0.5)
            held = 0
            for s in socks:
                # A refused connection got one Busy frame and was closed; a held one is quiet.
                s.setblocking(False)
                try:
                    data = s.recv(4096)
                    key = "Busy then closed" if b"wsindex.Busy" in data else "closed"
                    outcomes[key] = outcomes.get(key, 0) + 1
                except BlockingIOError:
                    held += 1
            outcomes["held open, silent"] = held
            os.write(w, json.dumps(outcomes).encode())
            os.close(w)
            time.sleep(hold)
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
        if data.endswith(b"}"):
            break
    os.close(r)
    return pid, json.loads(data)


def phase_idle(path, n, hold, uid):
    pid, outcomes = hold_idle(path, n, hold, uid)
    # While they are held: a fresh connection (our uid) must still be served.
    try:
        call(path, "wsindex.Status", timeout=5)
        outcomes["fresh status while held"] = "ok"
    except Exception as e:
        outcomes["fresh status while held"] = str(e)
    os.waitpid(pid, 0)
    return n, outcomes


def phase_idle_uids(path, uids, per_uid, hold):
    """Idle connections from several uids at once: together they can reach the total cap."""
    children, outcomes = [], {}
    for uid in uids:
        pid, got = hold_idle(path, per_uid, hold, uid)
        children.append(pid)
        for k, v in got.items():
            outcomes[k] = outcomes.get(k, 0) + v
    try:
        call(path, "wsindex.Status", timeout=5)
        outcomes["fresh status (root) while held"] = "ok"
    except Exception as e:
        outcomes["fresh status (root) while held"] = str(e)
    for pid in children:
        os.waitpid(pid, 0)
    return len(uids) * per_uid, outcomes


def phase_midstream(path, n):
    outcomes = {}
    for i in range(n):
        s = connect(path)
        s.sendall(frame({"method": "wsindex.Find", "parameters": {}, "more": True}))
        got = 0
        try:
            got = len(s.recv(4096 + i * 97))
        except OSError:
            pass
        if i % 2:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            key = "reset after first bytes"
        else:
            key = "closed after first bytes"
        s.close()
        outcomes[key] = outcomes.get(key, 0) + (1 if got else 0)
    return n, outcomes


def phase_regex(path, patterns):
    outcomes = {}
    for p in patterns:
        t0 = time.perf_counter()
        try:
            call(path, "wsindex.Find", {"pattern": p, "match": "regex"}, timeout=30)
            got = "answered"
        except RuntimeError as e:
            got = str(e).split(":")[0]
        except socket.timeout:
            got = "no answer in 30 s"
        outcomes[f"{p!r}: {got} in {(time.perf_counter() - t0) * 1000:.0f} ms"] = 1
    return len(patterns), outcomes


def make_tree(root, files):
    per_dir = 500
    for d in range((files + per_dir - 1) // per_dir):
        dd = os.path.join(root, f"d{d:04}")
        os.makedirs(dd)
        for f in range(min(per_dir, files - d * per_dir)):
            open(os.path.join(dd, f"file-{f:05}.txt"), "w").close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wsindexd", help="start this daemon on a temporary socket and database")
    ap.add_argument("--socket", help="target a running daemon (with --pid)")
    ap.add_argument("--pid", type=int)
    ap.add_argument("--files", type=int, default=20000, help="files in the generated tree")
    ap.add_argument("--garbage", type=int, default=200)
    ap.add_argument("--oversize", type=int, default=20)
    ap.add_argument("--slow", type=int, default=5)
    ap.add_argument("--slow-seconds", type=float, default=15)
    ap.add_argument("--idle", type=int, default=300)
    ap.add_argument("--idle-hold", type=float, default=5)
    ap.add_argument("--midstream", type=int, default=100)
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()

    tmp, proc = None, None
    if args.wsindexd:
        tmp = tempfile.mkdtemp(prefix="wsindex-hostile-")
        sock = os.path.join(tmp, "wsindexd.sock")
        tree = os.path.join(tmp, "tree")
        make_tree(tree, args.files)
        log = open(os.path.join(tmp, "wsindexd.log"), "w")
        proc = subprocess.Popen([args.wsindexd, "--socket", sock, "--db", os.path.join(tmp, "index.db")],
                                stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not os.path.exists(sock):
            if proc.poll() is not None or time.monotonic() > deadline:
                sys.exit("wsindexd did not start; see " + log.name)
            time.sleep(0.05)
        os.chmod(tmp, 0o755)  # the idle phase's uid must reach the socket
        os.chmod(sock, 0o666)
        pid = proc.pid
        call(sock, "wsindex.Scan", {"paths": [tree], "wait": True}, more=True, timeout=600)
    else:
        if not (args.socket and args.pid):
            ap.error("give --wsindexd, or --socket and --pid")
        sock, pid = args.socket, args.pid

    nobody = 65534 if os.geteuid() == 0 else None
    phases = [
        ("baseline (no hostile clients, 3 s)", lambda: (0, time.sleep(3) or {})),
        ("garbage bytes", lambda: phase_garbage(sock, args.garbage)),
        ("messages over the 1 MiB limit", lambda: phase_oversize(sock, args.oversize)),
        ("one byte a second", lambda: phase_slow(sock, args.slow, args.slow_seconds)),
        ("idle connections (uid nobody)", lambda: phase_idle(sock, args.idle, args.idle_hold, nobody)),
        ("idle connections (own uid)", lambda: phase_idle(sock, args.idle, args.idle_hold, None)),
        ("idle connections (5 uids x 64)",
         lambda: phase_idle_uids(sock, [65534 - i for i in range(5)], 64, args.idle_hold)),
        ("disconnect mid-stream (find, more)", lambda: phase_midstream(sock, args.midstream)),
        ("runaway regexes", lambda: phase_regex(sock, ["(a{32767}){32767}", "(a|aa)*\\1", "^file-0*1\\.txt$"])),
    ]
    probe = StatusProbe(sock)
    probe.start()
    results, all_samples, all_failures = [], [], []
    for name, run in phases:
        probe.take()
        t0 = time.monotonic()
        count, outcomes = run()
        secs = time.monotonic() - t0
        samples, failures = probe.take()
        all_samples += samples
        all_failures += failures
        try:
            call(sock, "wsindex.Status", timeout=5)
            after = "ok"
        except Exception as e:
            after = str(e)
        row = {"phase": name, "count": count, "seconds": round(secs, 1), "outcomes": outcomes,
               "status_calls": len(samples), "status_failures": failures,
               "status_p50_ms": round(pct(samples, 0.5), 2), "status_p99_ms": round(pct(samples, 0.99), 2),
               "status_max_ms": round(max(samples) * 1000, 2) if samples else None,
               "fresh_status_after": after, "daemon": proc_status(pid)}
        results.append(row)
        print(json.dumps(row), flush=True)
    probe.stop.set()
    probe.join()

    alive = True
    try:
        v = call(sock, "wsindex.Version", timeout=5)[0]
        found = sum(len(r.get("entries", [])) for r in call(sock, "wsindex.Find", {"pattern": "file-"}, more=True))
    except Exception as e:
        alive, v, found = False, str(e), 0
    summary = {"status_calls": len(all_samples), "status_failures": len(all_failures),
               "status_p50_ms": round(pct(all_samples, 0.5), 2), "status_p99_ms": round(pct(all_samples, 0.99), 2),
               "status_max_ms": round(max(all_samples) * 1000, 2) if all_samples else None,
               "serving_after": alive, "find_after": found, "daemon": proc_status(pid)}
    print(json.dumps({"summary": summary}), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"phases": results, "summary": summary}, f, indent=1)
    if proc:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if alive and not all_failures else 1


if __name__ == "__main__":
    sys.exit(main())
