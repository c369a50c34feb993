#!/usr/bin/env bash
# ingest_compare.sh: wsbench-ingest beside wsbench-walk, the 2-thread floor, duc index and
# updatedb.plocate, same run, medians and ratios (issue 4's benchmark).
#
#   bench/ingest_compare.sh [-k RUNS] [-b BUILD_DIR] [-t TREES_DIR] [-w WORKERS] [TARGET...]
#
# TARGETs: balanced lopsided wide deep (mktree.py trees in TREES_DIR, generated when missing) or
# any directory. Default: balanced lopsided. Every tool writes a fresh database each run (deleted
# first, outside the timing). One warm-up round, then the tools take turns for RUNS rounds. The
# table: median wall seconds; ingest's ratio to the floor, to duc and to plocate; the database's
# bytes per entry (search index included: the name index lives in memory, the files table and
# its indexes on disk); the peak RSS of wsbench-ingest. Environment: WSINDEX_SHARED_DIR
# (default ../shared beside the repo), WSTREES (default /tmp/wstrees), WORKDIR (default a
# fresh directory under /tmp, on the same file system as the trees).
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
[ ${#targets[@]} -gt 0 ] || targets=(balanced lopsided)

ingest=$build/bin/wsbench-ingest
walk=$build/bin/wsbench-walk
for b in "$ingest" "$walk"; do
    [ -x "$b" ] || { echo "no $b: build with -DWSINDEX_BUILD_BENCH=ON first" >&2; exit 1; }
done
[ -f "$shared/bench/walkfloor.c" ] || { echo "no $shared/bench (set WSINDEX_SHARED_DIR)" >&2; exit 1; }
for tool in duc updatedb.plocate python3 gcc; do
    command -v $tool >/dev/null || { echo "missing $tool (scripts/install-deps installs it)" >&2; exit 1; }
done
work=${WORKDIR:-$(mktemp -d /tmp/ingest_compare.XXXXXX)}
mkdir -p "$work"
floor=$work/walkfloor
json_out=$work/ingest.json
trap 'rm -rf "$work"' EXIT
gcc -O2 -pthread -o "$floor" "$shared/bench/walkfloor.c"



run_tool() {  # tool root -> prints wall seconds
    local tool=$1 root=$2 t0 t1
    rm -rf "$work/db" && mkdir -p "$work/db"
    t0=$(now)
    case $tool in
        ingest) "$ingest" "$root" --db "$work/db/index.db" --workers "$workers" > "$json_out" ;;
        walk) "$walk" "$root" --workers "$workers" > /dev/null ;;
        floor) "$floor" -t 2 "$root" 2>/dev/null ;;
        duc) duc index -q -d "$work/db/duc.db" "$root" > /dev/null 2>&1 || true ;;
        plocate) updatedb.plocate -U "$root" -o "$work/db/plocate.db" -l 0 > /dev/null 2>&1 || true ;;
    esac
    t1=$(now)
    elapsed "$t0" "$t1"
}

tools=(ingest walk floor duc plocate)
echo "# ingest_compare: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), runs=$runs, --workers $workers"
printf "%-10s %8s %8s %8s %8s %8s  %8s %8s %8s  %9s %7s %7s\n" target ingest walk floor duc plocate \
    in/floor in/duc in/ploc entries B/entry rss_MiB
for name in "${targets[@]}"; do
    root=$(resolve "$name")
    declare -A times=()
    for tool in "${tools[@]}"; do run_tool $tool "$root" > /dev/null; done  # warm-up
    rss=0
    for ((i = 0; i < runs; i++)); do
        for tool in "${tools[@]}"; do
            times[$tool]+=" $(run_tool $tool "$root")"
            if [ $tool = ingest ]; then
                r=$(grep -o '"peak_rss_kib":[0-9]*' "$json_out" | cut -d: -f2)
                [ "$r" -gt "$rss" ] && rss=$r
                cp "$json_out" "$work/last_ingest.json"
            fi
        done
    done
    entries=$(grep -o '"entries":[0-9]*' "$work/last_ingest.json" | cut -d: -f2)
    db_bytes=$(grep -o '"db_bytes":[0-9]*' "$work/last_ingest.json" | cut -d: -f2)
    declare -A m=()
    for tool in "${tools[@]}"; do m[$tool]=$(echo "${times[$tool]}" | median); done
    printf "%-10s %8s %8s %8s %8s %8s  %8s %8s %8s  %9s %7.1f %7.1f\n" "$name" "${m[ingest]}" \
        "${m[walk]}" "${m[floor]}" "${m[duc]}" "${m[plocate]}" "$(ratio "${m[ingest]}" "${m[floor]}")" \
        "$(ratio "${m[ingest]}" "${m[duc]}")" "$(ratio "${m[ingest]}" "${m[plocate]}")" "$entries" \
        "$(awk -v b="$db_bytes" -v e="$entries" 'BEGIN { print b / e }')" "$(awk -v r="$rss" 'BEGIN { print r / 1024 }')"
    unset times m
done
