#!/usr/bin/env bash
# run.sh: name search at several sizes — serial scan, parallel scan on the RangeExecutor, and
# trigram posting lists — one table per size, with the date and the machine's load. Builds nothing.
#
# Usage: bench/name_search/run.sh [BUILD_DIR]      (default: build-rel; needs BUILD_DIR/bin/name_search_bench)
# Environment (all optional):
#   SIZES="1000000 10000000 100000000"   names per table
#   RUNS=5 WORKERS=2 SEED=1              runs per query (median), scan workers, generator seed
#   DIR=/dev/shm                         where the name file is written before it is mapped
#   PLOCATE_MAX=10000000                 sizes up to this also run plocate on the same names as
#                                        paths (plocate-build --plaintext; 0: never), whole process
# A size whose estimated peak (about 110 bytes per name) exceeds MemAvailable is skipped and said so.
set -euo pipefail

build=${1:-build-rel}
bin=$build/bin/name_search_bench
[ -x "$bin" ] || { echo "run.sh: $bin not found (configure with -DWSINDEX_BUILD_BENCH=ON and build name_search_bench)" >&2; exit 2; }
sizes=${SIZES:-"1000000 10000000 100000000"}
needles="zephyr str_fmt cache txt io"  # main.cpp's kNeedles
tmp=$(mktemp -d "${DIR:-/dev/shm}/name_search_run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "# name search: scan or trigram posting lists"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')  host: $(hostname)  cpus: $(nproc)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)  MemAvailable: $(awk '/MemAvailable/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
echo "command: $bin --names N --runs ${RUNS:-5} --workers ${WORKERS:-2} --seed ${SEED:-1} --dir ${DIR:-/dev/shm}"
echo
for n in $sizes; do
    avail_kib=$(awk '/MemAvailable/ { print $2 }' /proc/meminfo)
    need_kib=$((n * 110 / 1024))
    if [ "$need_kib" -gt "$avail_kib" ]; then
        echo "## N = $n: skipped, needs about $((need_kib / 1048576)) GiB, $((avail_kib / 1048576)) GiB available"
        echo
        continue
    fi
    echo "load before N = $n: $(cut -d' ' -f1-3 /proc/loadavg)"
    paths=()
    if [ "$n" -le "${PLOCATE_MAX:-10000000}" ] && command -v plocate-build > /dev/null; then
        paths=(--paths "$tmp/paths.txt")
    fi
    "$bin" --names "$n" --runs "${RUNS:-5}" --workers "${WORKERS:-2}" --seed "${SEED:-1}" --dir "${DIR:-/dev/shm}" "${paths[@]}"
    [ ${#paths[@]} -gt 0 ] || continue
    t0=$(date +%s%N)
    plocate-build --plaintext --require-visibility no "$tmp/paths.txt" "$tmp/plocate.db"
    build_ms=$((($(date +%s%N) - t0) / 1000000))
    rm -f "$tmp/paths.txt"
    bytes=$(stat -c %s "$tmp/plocate.db")
    ms_row="" count_row=""
    for needle in $needles; do
        # EPOCHREALTIME: no fork around the timed command (a $(date) costs milliseconds here).
        count=$(plocate -d "$tmp/plocate.db" -c "$needle")
        runs=""
        for _ in $(seq "${RUNS:-5}"); do
            t0=$EPOCHREALTIME
            plocate -d "$tmp/plocate.db" -c "$needle" > /dev/null
            t1=$EPOCHREALTIME
            runs="$runs $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) * 1000 }')"
        done
        ms_row="$ms_row $(echo "$runs" | tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }') |"
        count_row="$count_row $count |"
    done
    echo "plocate on the same names (paths /bench/d<dir>/<name>), whole process (exec, open, search, exit):"
    echo "| plocate | $(awk -v m="$build_ms" 'BEGIN { printf "%.2f", m / 1000 }') | $bytes | $(awk -v b="$bytes" -v n="$n" 'BEGIN { printf "%.1f", b / n }') |$ms_row"
    echo "| plocate matches | | | |$count_row"
    echo
    rm -f "$tmp/plocate.db"
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
