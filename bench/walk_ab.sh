#!/usr/bin/env bash
# walk_ab.sh: two (or more) wsbench-walk binaries alternated on one tree, for a change's before
# and after: medians of the process wall, of the walk's own `seconds` and of the CPU time (user +
# system, which a loaded machine disturbs less than the wall), and each binary's ratios to the
# first.
#
#   bench/walk_ab.sh [-k RUNS] [-t TREES_DIR] [-w WORKERS] TARGET BINARY BINARY...
#
# Build the "before" binary from a worktree of the old commit (cmake -DWSINDEX_BUILD_BENCH=ON,
# target wsbench-walk). One warm-up round is not counted; the binaries take turns, so the
# machine's drift hits all alike. TARGET as in walk_compare.sh (balanced, lopsided, wide, deep,
# or a directory).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${WSINDEX_SHARED_DIR:-$repo/../shared}
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
trees=${WSTREES:-/tmp/wstrees}
runs=9
workers=2
while getopts "k:t:w:h" opt; do
    case $opt in
        k) runs=$OPTARG ;;
        t) trees=$OPTARG ;;
        w) workers=$OPTARG ;;
        *) sed -n '2,11p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] || { sed -n '2,11p' "$0"; exit 2; }
root=$(resolve "$1")
shift
binaries=("$@")

cpu_file=$(mktemp)
trap 'rm -f "$cpu_file"' EXIT
declare -A walls=() seconds=() cpus=()
echo "# walk_ab: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), runs=$runs, workers=$workers, root=$root"
for ((round = 0; round <= runs; round++)); do  # round 0 warms the caches
    for i in "${!binaries[@]}"; do
        t0=$(now)
        out=$(/usr/bin/time -f '%U %S' -o "$cpu_file" "${binaries[$i]}" "$root" --workers "$workers")
        t1=$(now)
        [ "$round" -eq 0 ] && continue
        cpus[$i]+=" $(awk '{ printf "%.2f", $1 + $2 }' "$cpu_file")"
        walls[$i]+=" $(elapsed "$t0" "$t1")"
        seconds[$i]+=" $(grep -o '"seconds":[0-9.]*' <<<"$out" | cut -d: -f2)"
    done
done
first=$(median <<<"${walls[0]}")
first_cpu=$(median <<<"${cpus[0]}")
printf "%-8s %-8s %-8s %-8s %-8s %s\n" wall seconds cpu ratio cpu_ratio binary
for i in "${!binaries[@]}"; do
    w=$(median <<<"${walls[$i]}")
    c=$(median <<<"${cpus[$i]}")
    printf "%-8s %-8s %-8s %-8s %-8s %s\n" "$w" "$(median <<<"${seconds[$i]}")" "$c" \
        "$(ratio "$w" "$first")" "$(ratio "$c" "$first_cpu")" "${binaries[$i]}"
    echo "#   wall:${walls[$i]}"
    echo "#   cpu:${cpus[$i]}"
done
