#!/usr/bin/env bash
# cold_walk.sh: walks on a cold page cache (issue #19's "cold cache /usr" row), the tools taking
# turns, the caches dropped (sync; echo 3 > /proc/sys/vm/drop_caches) before every timed run.
#
#   bench/cold_walk.sh [-k RUNS] [-b BUILD_DIR] [TARGET]        (as root; TARGET default /usr)
#
# Tools, each run RUNS times (default 5), one round = every tool once:
#   scan      a wsindexd with default settings (--no-watch), fresh database:
#             `wsctl scan TARGET --wait` (the daemon is started before the caches are dropped)
#   walk      `wsbench-walk TARGET` with the walker's default workers (what the daemon uses)
#   walk2     `wsbench-walk TARGET --workers 2` (one worker per CPU here)
#   floor16   walkfloor -t 16 (getdents64 + fstatat, 16 threads, no output)
#   floor2    walkfloor -t 2
#   bfs       bfs TARGET -printf '%s %T@ %i\n' (a stat per entry, as the index needs)
# The table shows median wall seconds and median user+system CPU seconds (GNU time), and the
# ratios the issue asks for: scan and walk against floor16 and bfs. BUILD_DIR needs wsindexd,
# wsctl and wsbench-walk (-DWSINDEX_BUILD_BENCH=ON).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${WSINDEX_SHARED_DIR:-$repo/../shared}
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
build=$repo/build-bench
runs=5
while getopts "k:b:h" opt; do
    case $opt in
        k) runs=$OPTARG ;;
        b) build=$OPTARG ;;
        *) sed -n '2,18p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
target=${1:-/usr}
[ -w /proc/sys/vm/drop_caches ] || { echo "cold_walk.sh needs root (/proc/sys/vm/drop_caches)" >&2; exit 1; }
for bin in wsindexd wsctl wsbench-walk; do
    [ -x "$build/bin/$bin" ] || { echo "no $build/bin/$bin (configure with -DWSINDEX_BUILD_BENCH=ON)" >&2; exit 1; }
done
command -v bfs >/dev/null || { echo "missing bfs (apt-get install bfs)" >&2; exit 1; }

bench_workdir cold_walk
gcc -O2 -pthread -o "$work/walkfloor" "$shared/bench/walkfloor.c"
ctl() { "$build/bin/wsctl" --socket "$work/d.sock" "$@"; }

start_daemon() {
    rm -f "$work"/db*
    "$build/bin/wsindexd" --socket "$work/d.sock" --db "$work/db" --no-watch 2>>"$work/daemon.log" &
    dpid=$!
    for _ in $(seq 100); do ctl status >/dev/null 2>&1 && return; sleep 0.1; done
    echo "wsindexd did not start (see $work/daemon.log)" >&2
    exit 1
}
stop_daemon() {
    kill "$dpid"
    wait "$dpid" 2>/dev/null || true
    dpid=
}
run_tool() {
    case $1 in
        scan) ctl scan "$target" --wait ;;
        walk) "$build/bin/wsbench-walk" "$target" ;;
        walk2) "$build/bin/wsbench-walk" "$target" --workers 2 ;;
        floor16) "$work/walkfloor" -t 16 "$target" 2>/dev/null ;;
        floor2) "$work/walkfloor" -t 2 "$target" 2>/dev/null ;;
        bfs) bfs "$target" -printf '%s %T@ %i\n' ;;
    esac
}
# timed_cold TOOL: "wall cpu" of one run of TOOL after the caches are dropped. The daemon's
# CPU is its own (from /proc/PID/stat before and after), not wsctl's.
timed_cold() {
    local out t0 t1 c0 c1 hz
    hz=$(getconf CLK_TCK)
    drop_page_cache
    if [ "$1" = scan ]; then
        c0=$(awk '{ print $14 + $15 }' "/proc/$dpid/stat")
        t0=$(now)
        run_tool scan >/dev/null
        t1=$(now)
        c1=$(awk '{ print $14 + $15 }' "/proc/$dpid/stat")
        echo "$(elapsed "$t0" "$t1") $(awk -v a="$c0" -v b="$c1" -v hz="$hz" 'BEGIN { printf "%.2f", (b - a) / hz }')"
        return
    fi
    out=$( { /usr/bin/time -f '%e %U %S' bash -c "$(declare -f run_tool); target='$target' build='$build' work='$work'; run_tool $1" >/dev/null; } 2>&1 | tail -1)
    echo "$out" | awk '{ printf "%s %.2f\n", $1, $2 + $3 }'
}

tools="scan walk walk2 floor16 floor2 bfs"
echo "# cold walk of $target: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $runs rounds"
echo "entries: find $(find "$target" -mindepth 1 | wc -l), walkfloor: $("$work/walkfloor" -t 2 "$target" 2>&1 >/dev/null | tail -1)"
declare -A wall=() cpu=()
for round in $(seq "$runs"); do
    for t in $tools; do
        [ "$t" = scan ] && start_daemon
        read -r w c <<<"$(timed_cold "$t")"
        [ "$t" = scan ] && stop_daemon
        wall[$t]="${wall[$t]:-} $w"
        cpu[$t]="${cpu[$t]:-} $c"
        echo "round $round $t ${w} s wall, ${c} s CPU (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    done
done
declare -A med=()
printf '\n%-8s %10s %10s   %s\n' tool "wall s" "CPU s" "all wall figures"
for t in $tools; do
    med[$t]=$(echo "${wall[$t]}" | median)
    printf '%-8s %10s %10s   %s\n' "$t" "${med[$t]}" "$(echo "${cpu[$t]}" | median)" "${wall[$t]# }"
done
echo
for t in scan walk; do
    echo "$t / floor16 $(ratio "${med[$t]}" "${med[floor16]}")   $t / bfs $(ratio "${med[$t]}" "${med[bfs]}")   $t / walk2 $(ratio "${med[$t]}" "${med[walk2]}")"
done
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
