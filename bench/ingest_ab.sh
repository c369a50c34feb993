#!/usr/bin/env bash
# ingest_ab.sh: two (or more) wsbench-ingest binaries alternated on one tree, for a change's
# before and after: medians of the process wall and of the scan's own `seconds` per binary.
#
#   bench/ingest_ab.sh [-k RUNS] [-t TREES_DIR] [-w WORKERS] TARGET BINARY BINARY...
#
# Build the "before" binary from a worktree (or copy build/bin/wsbench-ingest aside before
# rebuilding). Each run ingests into a fresh database (deleted first, outside the timing); one
# warm-up round is not counted; the binaries take turns, so the machine's drift hits all alike.
# The wall includes closing the connection (the checkpoint of the rest of the log); `seconds`
# stops when the scan is complete. TARGET as in ingest_compare.sh (balanced, lopsided, ... or
# a directory).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${WSINDEX_SHARED_DIR:-$repo/../shared}
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
trees=${WSTREES:-/tmp/wstrees}
runs=7
workers=2
while getopts "k:t:w:h" opt; do
    case $opt in
        k) runs=$OPTARG ;;
        t) trees=$OPTARG ;;
        w) workers=$OPTARG ;;
        *) sed -n '2,12p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] || { sed -n '2,12p' "$0"; exit 2; }
root=$(resolve "$1")
shift
binaries=("$@")
work=$(mktemp -d "${WORKDIR:-/tmp}/ingest_ab.XXXXXX")
trap 'rm -rf "$work"' EXIT

declare -A walls=() seconds=()
echo "# ingest_ab: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), runs=$runs, root=$root"
for ((round = 0; round <= runs; round++)); do  # round 0 warms the caches
    for i in "${!binaries[@]}"; do
        rm -f "$work/i.db" "$work/i.db-wal" "$work/i.db-shm"
        t0=$(now)
        out=$("${binaries[$i]}" "$root" --db "$work/i.db" --workers "$workers")
        t1=$(now)
        [ "$round" -eq 0 ] && continue
        walls[$i]+=" $(elapsed "$t0" "$t1")"
        seconds[$i]+=" $(grep -o '"seconds":[0-9.]*' <<<"$out" | cut -d: -f2)"
    done
done
printf "%-10s %-10s %s\n" wall seconds binary
for i in "${!binaries[@]}"; do
    printf "%-10s %-10s %s\n" "$(median <<<"${walls[$i]}")" "$(median <<<"${seconds[$i]}")" \
        "${binaries[$i]}"
    echo "#   wall:${walls[$i]}"
done
