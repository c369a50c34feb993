#!/bin/sh
# Resource bounds over many consecutive scans: starts wsindexd on a scratch socket and database,
# scans TREE N times (default 50) with `wsctl scan --wait`, and after each scan prints the
# daemon's open descriptors (/proc/PID/fd), VmRSS and VmHWM, and the scan's wall time; then a
# summary line (JSON) with the first/last/max figures and the median scan time.
#
#   bench/reliability/scan_loop.sh TREE [N] [BUILD_DIR]
set -eu
tree=${1:?usage: scan_loop.sh TREE [N] [BUILD_DIR]}
count=${2:-50}
build=${3:-build}
bin=$build/bin
work=$(mktemp -d /tmp/wsrel-loop-XXXXXX)
cleanup() {
    [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

"$bin/wsindexd" --socket "$work/s" --db "$work/index.db" 2>"$work/log" &
pid=$!
i=0
until "$bin/wsctl" --socket "$work/s" version >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -lt 500 ] || { echo "wsindexd did not start" >&2; cat "$work/log" >&2; exit 1; }
    sleep 0.02
done

# Descriptors once the last client's connection is gone on the daemon's side.
fds() {
    n=0
    while [ "$(ls -l /proc/$pid/fd | grep -c 'socket:')" -gt 1 ] && [ $n -lt 500 ]; do
        n=$((n + 1)); sleep 0.01
    done
    ls /proc/$pid/fd | wc -l
}
kib() { awk -v f="$1:" '$1 == f { print $2 }' /proc/$pid/status; }

echo "scan fds vmrss_kib vmhwm_kib seconds"
: >"$work/times"
s=1
while [ $s -le "$count" ]; do
    t0=$(date +%s.%N)
    "$bin/wsctl" --socket "$work/s" scan "$tree" --wait >/dev/null
    t1=$(date +%s.%N)
    secs=$(echo "$t1 - $t0" | bc)
    echo "$secs" >>"$work/times"
    line="$s $(fds) $(kib VmRSS) $(kib VmHWM) $secs"
    echo "$line"
    echo "$line" >>"$work/rows"
    s=$((s + 1))
done
median=$(sort -n "$work/times" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
awk -v median="$median" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" '
    NR == 1 { f1 = $2; r1 = $3 }
    { if ($2 > fmax) fmax = $2; if ($2 < fmin || NR == 1) fmin = $2; if ($3 > rmax) rmax = $3; fl = $2; rl = $3; h = $4 }
    END { printf "{\"scans\":%d,\"fds_first\":%d,\"fds_min\":%d,\"fds_max\":%d,\"fds_last\":%d,\"rss_first_kib\":%d,\"rss_max_kib\":%d,\"rss_last_kib\":%d,\"hwm_kib\":%d,\"median_scan_s\":%s,\"loadavg\":\"%s\"}\n", NR, f1, fmin, fmax, fl, r1, rmax, rl, h, median, load }
' "$work/rows"
