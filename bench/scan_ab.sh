#!/usr/bin/env bash
# scan_ab.sh: two (or more) builds' daemons alternated on a fresh scan of one tree, for a
# change's before and after: medians of `wsctl scan ROOT --wait` (whole process) and of the
# daemon's CPU time over the scan (user + system from /proc, which a loaded machine disturbs
# less than the wall), and each build's ratios to the first.
#
#   bench/scan_ab.sh [-k RUNS] [-t TREES_DIR] TARGET BUILD_DIR BUILD_DIR...
#
# BUILD_DIR/bin holds wsindexd and wsctl. Each run starts a fresh daemon (--workers 2, no
# watching) on a fresh database, times the scan, reads the daemon's CPU and stops it. One
# warm-up round is not counted. TARGET as in walk_compare.sh (balanced, lopsided, ..., or a
# directory).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${WSINDEX_SHARED_DIR:-$repo/../shared}
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
trees=${WSTREES:-/tmp/wstrees}
runs=5
while getopts "k:t:h" opt; do
    case $opt in
        k) runs=$OPTARG ;;
        t) trees=$OPTARG ;;
        *) sed -n '2,12p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] || { sed -n '2,12p' "$0"; exit 2; }
root=$(resolve "$1")
shift
builds=("$@")
work=$(mktemp -d "${WORKDIR:-/tmp}/scan_ab.XXXXXX")
daemon_pid=
cleanup() {
    [ -n "$daemon_pid" ] && kill -TERM "$daemon_pid" 2>/dev/null && wait "$daemon_pid" || true
    rm -rf "$work"
}
trap cleanup EXIT
printf 'watch = false\nrescan_interval = "off"\n' > "$work/conf"
ticks=$(getconf CLK_TCK)

# CPU seconds (user + system) of process $1 so far.
cpu_of() { awk -v t="$ticks" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat"; }

declare -A walls=() cpus=()
echo "# scan_ab: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), runs=$runs, root=$root"
for ((round = 0; round <= runs; round++)); do  # round 0 warms the caches
    for i in "${!builds[@]}"; do
        bin=${builds[$i]}/bin
        rm -f "$work/i.db" "$work/i.db-wal" "$work/i.db-shm"
        "$bin/wsindexd" --socket "$work/s" --db "$work/i.db" --workers 2 --config "$work/conf" \
            --log-level warn 2>>"$work/daemon.log" &
        daemon_pid=$!
        for _ in $(seq 300); do
            "$bin/wsctl" --socket "$work/s" status >/dev/null 2>&1 && break
            sleep 0.1
        done
        before=$(cpu_of "$daemon_pid")
        t0=$(now)
        "$bin/wsctl" --socket "$work/s" scan "$root" --wait >/dev/null
        t1=$(now)
        after=$(cpu_of "$daemon_pid")
        kill -TERM "$daemon_pid"
        wait "$daemon_pid" || true
        daemon_pid=
        [ "$round" -eq 0 ] && continue
        walls[$i]+=" $(elapsed "$t0" "$t1")"
        cpus[$i]+=" $(awk -v a="$after" -v b="$before" 'BEGIN { printf "%.2f", a - b }')"
    done
done
first=$(median <<<"${walls[0]}")
first_cpu=$(median <<<"${cpus[0]}")
printf "%-8s %-8s %-8s %-9s %s\n" wall cpu ratio cpu_ratio build
for i in "${!builds[@]}"; do
    w=$(median <<<"${walls[$i]}")
    c=$(median <<<"${cpus[$i]}")
    printf "%-8s %-8s %-8s %-9s %s\n" "$w" "$c" "$(ratio "$w" "$first")" "$(ratio "$c" "$first_cpu")" \
        "${builds[$i]}"
    echo "#   wall:${walls[$i]}"
    echo "#   cpu:${cpus[$i]}"
done
