#!/usr/bin/env bash
# primes_sweep.sh: the seed's sweep tables for our WorkerPool beside oneTBB, and the targets check.
#
# Usage: bench/primes_sweep.sh [BUILD_DIR]        (default: build; needs BUILD_DIR/bin/wsbench-primes)
# Environment (all optional):
#   K=3            repeats per cell; each cell is the median of K warm runs
#   LO=0 HI=2000000  the interval counted by the tables and the main targets
#   WORKERS=2      pool size / TBB threads where a table does not sweep it
#   THRESHOLD=1000 leaf threshold where a table does not sweep it
#   TABLES="threshold workers capacity batch grid targets"   which sections to print
#
# Tables (each cell: median seconds; ratio = pool / tbb, below 1 means we are faster):
#   1. leaf threshold          pool vs tbb at WORKERS, and both against seq
#   2. pool size               pool vs tbb at THRESHOLD
#   3. initial deque capacity  pool only (tbb has no such knob; its time is the reference)
#   4. result buffer size      pool only (idem)
#   5. pool size x threshold   pool / tbb ratio for each pair
# Targets (issue 2), measured side by side in one run:
#   threshold 1000, 2 workers: pool within 10% of tbb, and >= 1.8x faster than seq
#   threshold 1: pool no worse than 1.5x tbb
#   --slow-worker 3, 2 workers: range >= 1.7x faster than static, on [LO,HI) and on a range of
#   near-uniform per-number cost ([1e8, 1e8+4e5)). On [0, 2e6) the cost of a number grows with
#   its square root, so static's worker 0 (the slow one) holds the cheaper half: the best any
#   schedule can do there is max(3a, b) / 0.75 with a, b the halves' shares of the work (the
#   script prints it from measured seq times).
#
# Runs are interleaved (pool, tbb, pool, tbb, ...) and each run does one untimed warm-up
# repetition, so a machine whose load drifts biases neither side. Results go to stdout; the raw
# JSON lines are kept in a temporary file whose name is printed at the end.
set -euo pipefail

build_dir=${1:-build}
bin="$build_dir/bin/wsbench-primes"
if [[ ! -x "$bin" ]]; then
    echo "primes_sweep.sh: $bin not found; build it with: cmake --build $build_dir --target wsbench-primes" >&2
    exit 1
fi

export WSBENCH_PRIMES="$bin"
export K="${K:-3}" LO="${LO:-0}" HI="${HI:-2000000}" WORKERS="${WORKERS:-2}"
export THRESHOLD="${THRESHOLD:-1000}"
export TABLES="${TABLES:-threshold workers capacity batch grid targets}"
export RAW_LOG
RAW_LOG="$(mktemp /tmp/primes_sweep.XXXXXX.jsonl)"

exec python3 - <<'PY'
import json, os, statistics, subprocess, sys

BIN = os.environ["WSBENCH_PRIMES"]
K = int(os.environ["K"])
LO, HI = int(os.environ["LO"]), int(os.environ["HI"])
W = int(os.environ["WORKERS"])
T = int(os.environ["THRESHOLD"])
TABLES = os.environ["TABLES"].split()
RAW = open(os.environ["RAW_LOG"], "w")
expected_counts = {}  # (lo, hi) -> count, to check that every scheduler agrees


def run_once(scheduler, workers=W, threshold=T, lo=LO, hi=HI, **extra):
    """One process, one warm-up repetition and one timed one; returns the timed JSON object."""
    args = [BIN, "--scheduler", scheduler, "--workers", str(workers), "--threshold",
            str(threshold), "--lo", str(lo), "--hi", str(hi), "--repeat", "2"]
    for key, value in extra.items():
        args += ["--" + key.replace("_", "-"), str(value)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    for line in lines:
        RAW.write(json.dumps(line) + "\n")
    last = lines[-1]
    if "error" in last:
        sys.exit(f"{' '.join(args)}: {last['error']}")
    known = expected_counts.setdefault((lo, hi), last["count"])
    if last["count"] != known:
        sys.exit(f"{' '.join(args)}: count {last['count']} != {known} from another scheduler")
    return last


def medians(configs):
    """configs: {name: (scheduler, kwargs)}. Interleaves K rounds; returns {name: median s}."""
    times = {name: [] for name in configs}
    for _ in range(K):
        for name, (scheduler, kwargs) in configs.items():
            times[name].append(run_once(scheduler, **kwargs)["seconds"])
    return {name: statistics.median(v) for name, v in times.items()}


def table(title, header, rows):
    print(f"\n## {title}\n")
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(header)]
    fmt = " | ".join("{:>%d}" % w for w in widths)
    print(fmt.format(*header))
    print("-|-".join("-" * w for w in widths))
    for r in rows:
        print(fmt.format(*r))
    sys.stdout.flush()


def s(x):
    return f"{x:.4f}"


def r(x):
    return f"{x:.2f}"


print(f"# wsbench-primes sweep: [{LO}, {HI}), median of {K} warm runs per cell, "
      f"{os.cpu_count()} CPUs online")
print(f"# binary: {BIN}")

if "threshold" in TABLES:
    rows = []
    seq = medians({"seq": ("seq", {})})["seq"]
    for th in [1, 10, 100, 1000, 10_000, 100_000, 1_000_000]:
        m = medians({"pool": ("pool", {"threshold": th}), "tbb": ("tbb", {"threshold": th})})
        rows.append([th, s(m["pool"]), s(m["tbb"]), r(m["pool"] / m["tbb"]),
                     r(seq / m["pool"]), r(seq / m["tbb"])])
    table(f"1. Leaf threshold ({W} workers; seq = {s(seq)} s)",
          ["threshold", "pool s", "tbb s", "pool/tbb", "seq/pool", "seq/tbb"], rows)

if "workers" in TABLES:
    rows = []
    for w in [1, 2, 3, 4, 8]:
        m = medians({"pool": ("pool", {"workers": w}), "tbb": ("tbb", {"workers": w})})
        rows.append([w, s(m["pool"]), s(m["tbb"]), r(m["pool"] / m["tbb"])])
    table(f"2. Pool size (threshold {T})", ["workers", "pool s", "tbb s", "pool/tbb"], rows)

if "capacity" in TABLES:
    rows = []
    for cap in [2, 16, 256, 4096]:
        m = medians({"pool": ("pool", {"deque_capacity": cap}), "tbb": ("tbb", {})})
        rows.append([cap, s(m["pool"]), s(m["tbb"]), r(m["pool"] / m["tbb"])])
    table(f"3. Initial deque capacity ({W} workers, threshold {T}; tbb has no such knob)",
          ["capacity", "pool s", "tbb s", "pool/tbb"], rows)

if "batch" in TABLES:
    rows = []
    for batch in [1, 16, 256, 1024, 65536]:
        m = medians({"pool": ("pool", {"result_batch": batch}), "tbb": ("tbb", {})})
        rows.append([batch, s(m["pool"]), s(m["tbb"]), r(m["pool"] / m["tbb"])])
    table(f"4. Result buffer size ({W} workers, threshold {T}; tbb has no such knob)",
          ["batch", "pool s", "tbb s", "pool/tbb"], rows)

if "grid" in TABLES:
    rows = []
    thresholds = [10, 1000, 100_000]
    for w in [1, 2, 4]:
        row = [w]
        for th in thresholds:
            m = medians({"pool": ("pool", {"workers": w, "threshold": th}),
                         "tbb": ("tbb", {"workers": w, "threshold": th})})
            row += [s(m["pool"]), r(m["pool"] / m["tbb"])]
        rows.append(row)
    header = ["workers"]
    for th in thresholds:
        header += [f"pool s @{th}", f"pool/tbb @{th}"]
    table("5. Pool size x threshold", header, rows)

if "targets" in TABLES:
    checks = []

    def check(name, value, ok, detail):
        checks.append([name, r(value), "PASS" if ok else "FAIL", detail])

    m = medians({"pool": ("pool", {"workers": 2, "threshold": 1000}),
                 "tbb": ("tbb", {"workers": 2, "threshold": 1000}),
                 "seq": ("seq", {})})
    check("t=1000: pool/tbb <= 1.10", m["pool"] / m["tbb"], m["pool"] <= 1.10 * m["tbb"],
          f"pool {s(m['pool'])} s, tbb {s(m['tbb'])} s")
    check("t=1000: seq/pool >= 1.8", m["seq"] / m["pool"], m["seq"] >= 1.8 * m["pool"],
          f"seq {s(m['seq'])} s, pool {s(m['pool'])} s")

    m = medians({"pool": ("pool", {"workers": 2, "threshold": 1}),
                 "tbb": ("tbb", {"workers": 2, "threshold": 1})})
    check("t=1: pool/tbb <= 1.5", m["pool"] / m["tbb"], m["pool"] <= 1.5 * m["tbb"],
          f"pool {s(m['pool'])} s, tbb {s(m['tbb'])} s")

    for lo, hi, label in [(LO, HI, f"[{LO},{HI})"), (100_000_000, 100_400_000, "[1e8,1e8+4e5)")]:
        m = medians({"range": ("range", {"workers": 2, "slow_worker": 3, "lo": lo, "hi": hi}),
                     "static": ("static", {"workers": 2, "slow_worker": 3, "lo": lo, "hi": hi})})
        # The best any schedule can do with worker 0 three times slower, from the halves' costs.
        mid = lo + (hi - lo) // 2
        h = medians({"a": ("seq", {"lo": lo, "hi": mid}), "b": ("seq", {"lo": mid, "hi": hi})})
        a = h["a"] / (h["a"] + h["b"])
        bound = max(3 * a, 1 - a) / 0.75
        check(f"slow 3 {label}: static/range >= 1.7", m["static"] / m["range"],
              m["static"] >= 1.7 * m["range"],
              f"range {s(m['range'])} s, static {s(m['static'])} s, "
              f"best possible static/ideal {r(bound)}")
    table("Targets (2 workers)", ["check", "value", "result", "detail"], checks)

RAW.close()
print(f"\nraw JSON lines: {os.environ['RAW_LOG']}")
PY
