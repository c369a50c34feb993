#!/usr/bin/env bash
# run.sh: name search at several sizes — serial scan, parallel scan on the RangeExecutor, and
# trigram posting lists — one table per size, with the date and the machine's load. Builds nothing.
#
# Usage: bench/name_search/run.sh [BUILD_DIR]      (default: build-rel; needs BUILD_DIR/bin/name_search_bench)
# Environment (all optional):
#   SIZES="1000000 10000000 100000000"   names per table
#   RUNS=5 WORKERS=2 SEED=1              runs per query (median), scan workers, generator seed
#   DIR=/dev/shm                         where the name file is written before it is mapped
# A size whose estimated peak (about 110 bytes per name) exceeds MemAvailable is skipped and said so.
set -euo pipefail

build=${1:-build-rel}
bin=$build/bin/name_search_bench
[ -x "$bin" ] || { echo "run.sh: $bin not found (configure with -DWSINDEX_BUILD_BENCH=ON and build name_search_bench)" >&2; exit 2; }
sizes=${SIZES:-"1000000 10000000 100000000"}

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
    "$bin" --names "$n" --runs "${RUNS:-5}" --workers "${WORKERS:-2}" --seed "${SEED:-1}" --dir "${DIR:-/dev/shm}"
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
