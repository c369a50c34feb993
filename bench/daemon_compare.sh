#!/usr/bin/env bash
# daemon_compare.sh: wsindexd + wsctl beside their references, same run, medians + ratios.
#
#   bench/daemon_compare.sh [-k RUNS] [-b BUILD_DIR] [-f FRAGMENT] [ROOT]
#
# ROOT (default /tmp/wstrees/balanced, the 1M-entry mktree tree; only read) is measured as:
#   scan      `wsctl scan ROOT --wait` into a fresh database (a fresh daemon each round)
#             vs the 2-thread floor (shared/bench/walkfloor.c -t 2)
#   rescan    the same scan again on the unchanged tree vs `wsbench-walk ROOT --workers 2`
#   find      `wsctl find FRAGMENT` (whole process, output to /dev/null) vs `plocate -d DB
#             FRAGMENT` and `plocate -b` (basename only: the same answer set as wsctl's name
#             match) over a plocate database of ROOT (`updatedb.plocate -U ROOT -l 0`).
#             `find` is the first find of a daemon started this round; `find2` the same find
#             again at once (a daemon that has answered before: malloc arenas grown, code
#             paged in; page faults are costly on this VM). plocate has no second kind.
#   du        `wsctl du ROOT --depth 1` (whole process)
#   rss       wsindexd's largest VmRSS sampled every 20 ms during one more fresh scan (untimed:
#             sampling slows the scan), and the largest VmHWM read when a timed `scan --wait`
#             returned (it may already include the work after the scan: checkpoint, name
#             index reload, query connections' warm-up, whose mapped pages VmRSS counts;
#             docs/daemon.md)
# Every tool runs once to warm the caches, then the tools take turns for RUNS rounds (default
# 3); the table shows medians. The daemon's walker threads run at nice 10 (docs/daemon.md), so
# the floor and wsbench-walk run at nice 10 too; the query tools run at the caller's priority.
# Environment: WSINDEX_SHARED_DIR (default: ../shared beside the repo).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${WSINDEX_SHARED_DIR:-$repo/../shared}
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
build=$repo/build
runs=3
fragment=crypto
while getopts "k:b:f:h" opt; do
    case $opt in
        k) runs=$OPTARG ;;
        b) build=$OPTARG ;;
        f) fragment=$OPTARG ;;
        *) sed -n '2,19p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
root=${1:-/tmp/wstrees/balanced}
[ -d "$root" ] || { echo "no directory $root" >&2; exit 1; }

wsindexd=$build/bin/wsindexd
wsctl=$build/bin/wsctl
walk=$build/bin/wsbench-walk
for bin in "$wsindexd" "$wsctl" "$walk"; do
    [ -x "$bin" ] || { echo "no $bin: build wsindexd wsctl wsbench-walk first" >&2; exit 1; }
done
[ -f "$shared/bench/walkfloor.c" ] || { echo "no $shared/bench (set WSINDEX_SHARED_DIR)" >&2; exit 1; }
for tool in plocate updatedb.plocate gcc; do
    command -v $tool >/dev/null || { echo "missing $tool" >&2; exit 1; }
done

work=$(mktemp -d /tmp/daemon_compare.XXXXXX)
sock=$work/wsindexd.sock
db=$work/index.db
daemon_pid=
cleanup() {
    [ -z "$daemon_pid" ] || { kill -TERM "$daemon_pid" 2>/dev/null; wait "$daemon_pid" 2>/dev/null || true; }
    rm -rf "$work"
}
trap cleanup EXIT
gcc -O2 -pthread -o "$work/walkfloor" "$shared/bench/walkfloor.c"

ctl() { "$wsctl" --socket "$sock" "$@"; }

# A daemon on a fresh database (the old one and its WAL removed); returns once it answers.
start_fresh_daemon() {
    rm -f "$db" "$db-wal" "$db-shm"
    "$wsindexd" --socket "$sock" --db "$db" --workers 2 --log-level warn 2>>"$work/daemon.log" &
    daemon_pid=$!
    for _ in $(seq 300); do
        ctl status >/dev/null 2>&1 && return 0
        kill -0 "$daemon_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "wsindexd did not start; its log:" >&2
    cat "$work/daemon.log" >&2
    exit 1
}
stop_daemon() {
    kill -TERM "$daemon_pid"
    wait "$daemon_pid" || true
    daemon_pid=
}


run() {  # tool -> seconds
    case $1 in
        scan|rescan) timed ctl scan "$root" --wait ;;
        floor) timed nice -n 10 "$work/walkfloor" -t 2 "$root" 2>/dev/null ;;  # its summary line
        walk) timed nice -n 10 "$walk" "$root" --workers 2 ;;
        find|find2) timed ctl find "$fragment" ;;
        plocate) timed plocate -d "$work/plocate.db" "$fragment" ;;
        plocate_b) timed plocate -b -d "$work/plocate.db" "$fragment" ;;
        du) timed ctl du "$root" --depth 1 ;;
    esac
}

echo "# daemon_compare: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), runs=$runs, root=$root, fragment=$fragment"
t0=$(now)
updatedb.plocate -U "$root" -o "$work/plocate.db" -l 0
echo "# updatedb.plocate: $(elapsed "$t0" "$(now)") s (once, not compared)"

declare -A times=()
tools=(scan floor rescan walk find find2 plocate plocate_b du)
rss_kib=()
hwm_kib=()
# rss_sampler PID OUT: the largest VmRSS of PID, sampled every 20 ms until killed.
rss_sampler() {
    local max=0 key value _
    trap 'echo "$max" > "$2"; exit 0' TERM
    while :; do
        # bash builtins only (no awk per sample): the sampler must not compete with the scan
        while read -r key value _; do
            if [ "$key" = VmRSS: ] && [ "$value" -gt "$max" ]; then max=$value; fi
        done < "/proc/$1/status"
        sleep 0.02
    done
}
for ((round = 0; round <= runs; round++)); do  # round 0 warms the caches and is not counted
    start_fresh_daemon
    for tool in "${tools[@]}"; do
        s=$(run "$tool")
        [ "$round" -eq 0 ] || times[$tool]+=" $s"
        if [ "$tool" = scan ]; then
            hwm_kib+=("$(awk '/^VmHWM:/ { print $2 }' "/proc/$daemon_pid/status")")
        fi
    done
    stop_daemon
done
unset 'hwm_kib[0]'

# Answer sizes, for the reader to judge that the same work was done; and the resident size
# during a fresh scan, sampled in this untimed round (sampling slowed a timed scan by ~25%).
start_fresh_daemon
rss_sampler "$daemon_pid" "$work/rss_max" &
sampler=$!
ctl scan "$root" --wait > /dev/null
kill -TERM "$sampler"
wait "$sampler" || true
rss_kib+=("$(cat "$work/rss_max")")
n_find=$(ctl find "$fragment" | wc -l)
n_plocate=$(plocate -d "$work/plocate.db" "$fragment" | wc -l)
n_plocate_b=$(plocate -b -d "$work/plocate.db" "$fragment" | wc -l)
n_du=$(ctl du "$root" --depth 1 | tail -n +2 | wc -l)
entries=$(ctl scans --json --limit 1 | grep -o '"entries":[0-9]*' | head -1 | cut -d: -f2)
stop_daemon

declare -A m=()
for tool in "${tools[@]}"; do m[$tool]=$(echo "${times[$tool]}" | median); done
rss=$(printf '%s\n' "${rss_kib[@]}" | sort -n | tail -1)
hwm=$(printf '%s\n' "${hwm_kib[@]}" | sort -n | tail -1)

printf "\n%-8s %-44s %9s  %-34s %9s %7s\n" what wsindexd/wsctl seconds reference seconds ratio
printf "%-8s %-44s %9s  %-34s %9s %7s\n" scan "wsctl scan --wait (fresh db, $entries entries)" "${m[scan]}" \
    "walkfloor -t 2" "${m[floor]}" "$(ratio "${m[scan]}" "${m[floor]}")"
printf "%-8s %-44s %9s  %-34s %9s %7s\n" rescan "wsctl scan --wait (unchanged tree)" "${m[rescan]}" \
    "wsbench-walk --workers 2" "${m[walk]}" "$(ratio "${m[rescan]}" "${m[walk]}")"
printf "%-8s %-44s %9s  %-34s %9s %7s\n" find "wsctl find $fragment ($n_find lines)" "${m[find]}" \
    "plocate ($n_plocate lines, whole path)" "${m[plocate]}" "$(ratio "${m[find]}" "${m[plocate]}")"
printf "%-8s %-44s %9s  %-34s %9s %7s\n" "" "" "" \
    "plocate -b ($n_plocate_b lines, name)" "${m[plocate_b]}" "$(ratio "${m[find]}" "${m[plocate_b]}")"
printf "%-8s %-44s %9s  %-34s %9s %7s\n" "" "the same find again (second of the daemon)" "${m[find2]}" \
    "plocate" "${m[plocate]}" "$(ratio "${m[find2]}" "${m[plocate]}")"
printf "%-8s %-44s %9s  %-34s %9s %7s\n" du "wsctl du --depth 1 ($n_du rows)" "${m[du]}" "(target < 0.030 s)" "" ""
printf "%-8s %-44s %9s\n" rss "wsindexd VmRSS max during a fresh scan" "$(awk -v r="$rss" 'BEGIN { printf "%.1f MiB", r / 1024 }')"
printf "%-8s %-44s %9s\n" "" "VmHWM when scan --wait returned" "$(awk -v r="$hwm" 'BEGIN { printf "%.1f MiB", r / 1024 }')"
echo "# raw seconds per tool:"
for tool in "${tools[@]}"; do echo "#   $tool:${times[$tool]}"; done
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
