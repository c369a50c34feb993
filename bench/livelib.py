"""livelib: what the live-index benchmarks (bench/live_*.py) share: a wsindexd of their own
(temporary socket, database and configuration file), wsctl calls, trees, /proc readings,
percentiles. Standard library only."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("WSINDEX_SHARED_DIR", os.path.join(REPO, "..", "shared"))
TREES = os.environ.get("WSINDEX_TREES", "/var/tmp/wsbench-trees")


def tree(name_or_path, entries=None, shape="balanced"):
    """A directory path as given, or a mktree.py tree of ENTRIES in $WSINDEX_TREES (generated on
    first use: python3 shared/bench/mktree.py OUT N SHAPE 1)."""
    if entries is None:
        return os.path.abspath(name_or_path)
    path = os.path.join(TREES, name_or_path)
    if not os.path.isdir(path):
        os.makedirs(TREES, exist_ok=True)
        print(f"# generating {path} ({entries} entries, {shape})", file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(SHARED, "bench", "mktree.py"), path,
                        str(entries), shape, "1"], check=True, stdout=subprocess.DEVNULL)
    return path


def percentile(values, p):
    """The p-th percentile (0..100) by the nearest-rank method; None for no values."""
    if not values:
        return None
    v = sorted(values)
    k = max(0, min(len(v) - 1, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


def median(values):
    v = sorted(values)
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def cpu_seconds(pid):
    """utime + stime of PID (all its threads), in seconds, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status_kib(pid, key):
    """A kB field of /proc/PID/status (RssAnon, VmRSS, VmHWM...)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return None


class Daemon:
    """A wsindexd on a fresh database in a temporary directory, configured by a file."""

    def __init__(self, build, settle_ms=None, max_delay_ms=None, name_index=True, watch=True,
                 log_level="info", workers=2, workdir=None):
        self.bin = os.path.join(build, "bin")
        self.work = workdir or tempfile.mkdtemp(prefix="wsbench-live.", dir="/var/tmp")
        self.sock = os.path.join(self.work, "wsindexd.sock")
        self.db = os.path.join(self.work, "index.db")
        self.log = os.path.join(self.work, "daemon.log")
        self.config = os.path.join(self.work, "wsindexd.toml")
        lines = [f'socket = "{self.sock}"', f'db = "{self.db}"', f"workers = {workers}",
                 f'log_level = "{log_level}"', f"name_index = {str(name_index).lower()}",
                 f"watch = {str(watch).lower()}"]
        if settle_ms is not None:
            lines.append(f"watch_settle_ms = {settle_ms}")
        if max_delay_ms is not None:
            lines.append(f"watch_max_delay_ms = {max_delay_ms}")
        with open(self.config, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.proc = None

    @property
    def pid(self):
        return self.proc.pid

    def start(self):
        logf = open(self.log, "a")
        self.proc = subprocess.Popen([os.path.join(self.bin, "wsindexd"), "--config", self.config],
                                     stdout=logf, stderr=logf)
        for _ in range(600):
            if self.ctl("status", check=False).returncode == 0:
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        sys.exit("wsindexd did not start; its log:\n" + open(self.log).read())

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=60)
        self.proc = None

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.work, ignore_errors=True)

    def ctl(self, *args, check=True):
        return subprocess.run([os.path.join(self.bin, "wsctl"), "--socket", self.sock, *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=check)

    def scan(self, root):
        self.ctl("scan", root, "--wait")

    def status(self):
        return json.loads(self.ctl("status", "--json").stdout)

    def root_entries(self, root):
        for r in self.status().get("roots", []):
            if r.get("root") == root:
                return r.get("entries")
        return None

    def find(self, *args):
        """(seconds of the whole wsctl process, its output lines)."""
        t0 = time.monotonic()
        out = self.ctl("find", *args, check=False).stdout
        return time.monotonic() - t0, out.decode(errors="replace").splitlines()

    def log_text(self):
        with open(self.log, errors="replace") as f:
            return f.read()
