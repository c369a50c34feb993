#!/usr/bin/env bash
# walk_compare.sh: wsbench-walk beside the 2-thread floor, bfs and find, same run, medians + ratios.
#
#   bench/walk_compare.sh [-k RUNS] [-b BUILD_DIR] [-t TREES_DIR] [-w WORKERS] [TARGET...]
#
# TARGETs: balanced lopsided wide deep (mktree.py trees in TREES_DIR, generated when missing:
# 1M, 1M, 300k, 20k entries as in shared/bench/ANCHORS.md) or any directory path (e.g. /usr).
# Default: balanced lopsided wide deep /usr. Every tool runs once to warm the caches, then the
# tools take turns for RUNS rounds (so machine noise hits all of them alike); the table shows
# median wall seconds, wsbench-walk's ratio to the floor and to bfs, its entry count against
# find's, and its peak RSS. Environment: WSINDEX_SHARED_DIR (default: ../shared beside the repo),
# WSTREES (default /tmp/wstrees).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${WSINDEX_SHARED_DIR:-$repo/../shared}
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
trees=${WSTREES:-/tmp/wstrees}
build=$repo/build
runs=5
workers=2
while getopts "k:b:t:w:h" opt; do
    case $opt in
        k) runs=$OPTARG ;;
        b) build=$OPTARG ;;
        t) trees=$OPTARG ;;
        w) workers=$OPTARG ;;
        *) sed -n '2,14p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(balanced lopsided wide deep /usr)

ws=$build/bin/wsbench-walk
[ -x "$ws" ] || { echo "no $ws: build it first (cmake --build $build --target wsbench-walk)" >&2; exit 1; }
[ -f "$shared/bench/walkfloor.c" ] || { echo "no $shared/bench (set WSINDEX_SHARED_DIR)" >&2; exit 1; }
for tool in bfs find python3 gcc; do
    command -v $tool >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
floor=$(mktemp /tmp/walkfloor.XXXXXX)
trap 'rm -f "$floor"' EXIT
gcc -O2 -pthread -o "$floor" "$shared/bench/walkfloor.c"



run_tool() {  # tool root -> prints seconds; wsbench-walk's JSON goes to $json_out
    local tool=$1 root=$2 t0 t1
    t0=$(now)
    case $tool in
        ws) "$ws" "$root" --workers "$workers" > "$json_out" ;;
        floor) "$floor" -t 2 "$root" 2>/dev/null ;;
        bfs) bfs "$root" -printf '%s %T@ %i\n' > /dev/null 2>&1 || true ;;
        find) find "$root" -printf '%s %T@ %i\n' > /dev/null 2>&1 || true ;;
    esac
    t1=$(now)
    elapsed "$t0" "$t1"
}

echo "# walk_compare: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), runs=$runs, wsbench-walk --workers $workers"
printf "%-10s %8s %8s %8s %8s  %8s %8s  %9s %9s %7s\n" target ws floor bfs find ws/floor ws/bfs entries find_cnt rss_MiB
json_out=$(mktemp /tmp/wsbench.XXXXXX)
trap 'rm -f "$floor" "$json_out"' EXIT
for name in "${targets[@]}"; do
    root=$(resolve "$name")
    declare -A times=([ws]="" [floor]="" [bfs]="" [find]="")
    for tool in ws floor bfs find; do run_tool $tool "$root" > /dev/null; done  # warm-up
    rss=0
    for ((i = 0; i < runs; i++)); do
        for tool in ws floor bfs find; do
            s=$(run_tool $tool "$root")
            times[$tool]+=" $s"
            if [ $tool = ws ]; then
                r=$(grep -o '"peak_rss_kib":[0-9]*' "$json_out" | cut -d: -f2)
                [ "$r" -gt "$rss" ] && rss=$r
            fi
        done
    done
    entries=$(grep -o '"entries":[0-9]*' "$json_out" | cut -d: -f2)
    find_cnt=$(find "$root" -printf x 2>/dev/null | wc -c)
    m_ws=$(echo "${times[ws]}" | median)
    m_floor=$(echo "${times[floor]}" | median)
    m_bfs=$(echo "${times[bfs]}" | median)
    m_find=$(echo "${times[find]}" | median)
    printf "%-10s %8s %8s %8s %8s  %8.2f %8.2f  %9s %9s %7.1f\n" "$name" "$m_ws" "$m_floor" \
        "$m_bfs" "$m_find" "$(awk -v a="$m_ws" -v b="$m_floor" 'BEGIN{print a/b}')" \
        "$(awk -v a="$m_ws" -v b="$m_bfs" 'BEGIN{print a/b}')" "$entries" "$find_cnt" \
        "$(awk -v r="$rss" 'BEGIN{print r/1024}')"
    unset times
done
