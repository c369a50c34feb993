#!/usr/bin/env bash
# walk_ab.sh: two (or more) wsbench-walk binaries alternated on one tree, for a change's before
# and after: medians of the process wall and of the walk's own `seconds`, and each binary's
# ratio to the first.
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

declare -A walls=() seconds=()
echo "# walk_ab: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), runs=$runs, workers=$workers, root=$root"
for ((round = 0; round <= runs; round++)); do  # round 0 warms the caches
    for i in "${!binaries[@]}"; do
        t0=$(now)
        out=$("${binaries[$i]}" "$root" --workers "$workers")
        t1=$(now)
        [ "$round" -eq 0 ] && continue
        walls[$i]+=" $(elapsed "$t0" "$t1")"
        seconds[$i]+=" $(grep -o '"seconds":[0-9.]*' <<<"$out" | cut -d: -f2)"
    done
done
first=$(median <<<"${walls[0]}")
printf "%-10s %-10s %-8s %s\n" wall seconds ratio binary
for i in "${!binaries[@]}"; do
    w=$(median <<<"${walls[$i]}")
    printf "%-10s %-10s %-8s %s\n" "$w" "$(median <<<"${seconds[$i]}")" "$(ratio "$w" "$first")" \
        "${binaries[$i]}"
    echo "#   wall:${walls[$i]}"
done
