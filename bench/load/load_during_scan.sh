#!/bin/sh
# The load benchmark: wsindexd indexes TREE once, then rescans it while wsbench-load runs
# CLIENTS concurrent clients x QUERIES mixed queries (find, du, status), every answer checked.
# Prints wsbench-load's JSON line, then the scan's duration and whether the scan covered the
# whole load, and the load average.
#
#   bench/load/load_during_scan.sh TREE [CLIENTS] [QUERIES] [BUILD_DIR]
# (build with -DWSINDEX_BUILD_BENCH=ON; TREE e.g. from ../shared/bench/mktree.py, 1M entries)
set -eu
tree=${1:?usage: load_during_scan.sh TREE [CLIENTS] [QUERIES] [BUILD_DIR]}
clients=${2:-100}
queries=${3:-100}
build=${4:-build}
bin=$build/bin
work=$(mktemp -d /tmp/wsrel-load-XXXXXX)
cleanup() {
    [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

# Limits above the clients (all of one uid): each has one connection and one query in flight;
# and every query thread for that uid (the per-uid bound would leave one idle for other users).
printf 'max_pending_queries = %d\nmax_connections = %d\nmax_connections_per_uid = %d\nmax_queries_per_uid = 64\n' \
    $((clients * 2 + 16)) $((clients * 2 + 16)) $((clients * 2 + 16)) >"$work/conf"
"$bin/wsindexd" --config "$work/conf" --socket "$work/s" --db "$work/index.db" 2>"$work/log" &
pid=$!
i=0
until "$bin/wsctl" --socket "$work/s" version >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -lt 500 ] || { echo "wsindexd did not start" >&2; cat "$work/log" >&2; exit 1; }
    sleep 0.02
done
"$bin/wsbench-load" --make-probe "$work/probe" --probe-files 2000
"$bin/wsctl" --socket "$work/s" scan "$work/probe" --wait >/dev/null
"$bin/wsctl" --socket "$work/s" scan "$tree" --wait >/dev/null
"$bin/wsctl" --socket "$work/s" scan "$tree" >/dev/null
rc=0
"$bin/wsbench-load" --socket "$work/s" --probe "$work/probe" --clients "$clients" \
    --queries "$queries" || rc=$?
running_now() {
    "$bin/wsctl" --socket "$work/s" status --json |
        python3 -c 'import json,sys; print("yes" if json.load(sys.stdin).get("running") else "no")'
}
running=$(running_now)
while [ "$(running_now)" = yes ]; do sleep 0.5; done
# Newest first: the rescan under load, the first scan, the probe's scan.
"$bin/wsctl" --socket "$work/s" scans --json | python3 -c '
import json, sys
s = json.load(sys.stdin)["scans"]
print(json.dumps({"rescan_state": s[0]["state"], "rescan_ms": s[0]["elapsed_ms"],
                  "first_scan_ms": s[1]["elapsed_ms"], "entries": s[0]["entries"]}))'
echo "{\"scan_still_running_after_load\":\"$running\",\"loadavg\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
exit $rc
