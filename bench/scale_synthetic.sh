#!/usr/bin/env bash
# scale_synthetic.sh: the query side at 10M and 100M entries (issue #19's "100M synthetic rows"
# row): `wsctl find FRAGMENT` from a daemon serving a synthetic index, beside plocate over the
# same paths.
#
#   bench/scale_synthetic.sh [-b BUILD_DIR] [-d TREES_DIR] [-q "FRAGMENT..."] [-n] [SIZES...]
#
# SIZES: entries (default: 10000000 100000000). Per size, TREES_DIR/synth<N/1M>m (default
# TREES_DIR /var/tmp/wsbench-trees) holds index.db, made by wsbench-synth-index (a balanced tree
# of generated names under /synthetic, a root that does not exist; 100M: minutes, ~9 GB) and
# plocate.db, made by `plocate-build --plaintext` from the same paths; both are made once and
# reused (generate.json, the generator's report, marks a complete pair). The daemon serves
# index.db in place with `watch = false` and no roots configured: nothing rescans /synthetic.
# Its name file (index.db.names) is kept from run to run; -n removes it first, so that the
# daemon builds its name index from the database again (the build time is in the table).
# Per size:
#   start    daemon start -> `wsctl status` answers (the daemon checks the index file first:
#            quick_check), and -> it shows the name index loaded with every entry
#   find     `wsctl find FRAGMENT`, whole process, median of 5 after one warm-up, vs
#            `plocate -b -d plocate.db FRAGMENT` the same way (default fragments: zephyr, ~15
#            names per 1M; crypto, ~8k per 1M); the line counts of both must be equal
#   anon     RssAnon of the daemon until the name index is loaded (peak of the polls), and
#            RssAnon and RssFile idle, after the finds
#   bytes    per entry: index.db + WAL, the name file, plocate.db
# BUILD_DIR needs wsindexd, wsctl and wsbench-synth-index (-DWSINDEX_BUILD_BENCH=ON).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
build=$repo/build-bench
trees=/var/tmp/wsbench-trees
fragments="zephyr crypto"
fresh_names=false
while getopts "b:d:q:nh" opt; do
    case $opt in
        b) build=$OPTARG ;;
        d) trees=$OPTARG ;;
        q) fragments=$OPTARG ;;
        n) fresh_names=true ;;
        *) sed -n '2,25p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000000 100000000)
for bin in wsindexd wsctl wsbench-synth-index; do
    [ -x "$build/bin/$bin" ] || { echo "no $build/bin/$bin (configure with -DWSINDEX_BUILD_BENCH=ON)" >&2; exit 1; }
done
for tool in plocate plocate-build; do
    command -v "$tool" >/dev/null || { echo "no $tool" >&2; exit 1; }
done

bench_workdir scale-synthetic
ctl() { "$build/bin/wsctl" --socket "$work/d.sock" "$@"; }
plocate_b() { plocate -b "$@" || [ $? -eq 1 ]; }  # 1: nothing found
bytes_of() { stat -c %s "$@" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
json_field() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }  # first "key":value on stdin

# synth_of SIZE: the directory with index.db and plocate.db of SIZE entries, made if missing.
synth_of() {
    local size=$1 name dir
    name=synth$((size / 1000000))m
    [ "$size" -ge 1000000 ] || name=synth$size
    dir=$trees/$name
    if [ ! -f "$dir/generate.json" ]; then
        echo "generating $dir ($size entries)" >&2
        rm -rf "$dir"
        mkdir -p "$dir"
        "$build/bin/wsbench-synth-index" --db "$dir/index.db" --entries "$size" \
            --paths "$dir/paths.txt" >"$dir/generate.json.part"
        local t0
        t0=$(now)
        plocate-build --plaintext -l no "$dir/paths.txt" "$dir/plocate.db"
        echo "plocate-build: $(elapsed "$t0" "$(now)") s" >&2
        rm "$dir/paths.txt"  # as big as the index; made again with the index when needed
        mv "$dir/generate.json.part" "$dir/generate.json"
    fi
    echo "$dir"
}

printf 'watch = false\n' >"$work/synth.conf"  # and no roots: nothing is scanned
echo "# scale_synthetic: $(date -u +%FT%TZ), $(nproc) CPUs, $(free -g | awk '/^Mem:/ { print $2 }') GiB," \
    "load $(cut -d' ' -f1-3 /proc/loadavg), sizes ${sizes[*]}, fragments $fragments"
declare -A v=()
for size in "${sizes[@]}"; do
    dir=$(synth_of "$size")
    gen=$(cat "$dir/generate.json")
    echo "# $dir: $gen"
    entries=$(json_field entries <<<"$gen")
    v[$size,entries]=$entries
    v[$size,generate]=$(json_field seconds <<<"$gen")
    $fresh_names && rm -f "$dir/index.db.names"
    t0=$(now)
    "$build/bin/wsindexd" --config "$work/synth.conf" --socket "$work/d.sock" --db "$dir/index.db" \
        --no-watch 2>"$work/daemon-$size.log" &
    dpid=$!
    # Answering (the socket listens once the index file is checked and opened), then loaded:
    # the name index holds every entry. Polled; at 100M each step takes minutes.
    ready=
    loaded=
    anon_peak=0
    for _ in $(seq 36000); do
        anon=$(awk '/^RssAnon:/ { print $2 }' "/proc/$dpid/status" 2>/dev/null || echo 0)
        [ "${anon:-0}" -le "$anon_peak" ] || anon_peak=$anon
        if status=$(ctl status --json 2>/dev/null); then
            [ -n "$ready" ] || ready=$(elapsed "$t0" "$(now)")
            if grep -q '"loaded":true' <<<"$status" &&
                [ "$(json_field names <<<"${status#*\"names\":\{}")" = "$entries" ]; then
                loaded=$(elapsed "$t0" "$(now)")
                break
            fi
        fi
        kill -0 "$dpid" 2>/dev/null || { cat "$work/daemon-$size.log" >&2; exit 1; }
        sleep 0.1
    done
    [ -n "$loaded" ] || { echo "name index not loaded after an hour" >&2; exit 1; }
    v[$size,ready]=$ready
    v[$size,anon_peak]=$(awk -v k="$anon_peak" 'BEGIN { printf "%.1f", k / 1024 }')
    v[$size,load]=$loaded
    v[$size,names_log]=$(grep -o 'name index \(built\|opened\).*' "$work/daemon-$size.log" | tail -1)
    # From trigram_min_names (default 3M) the base gets trigram lists, opened or built in the
    # background: the finds below are measured with them in place.
    v[$size,lists]=-
    if [ "$entries" -ge 3000000 ]; then
        for _ in $(seq 36000); do
            ctl status --json 2>/dev/null | grep -q '"trigrams":true' && break
            kill -0 "$dpid" 2>/dev/null || { cat "$work/daemon-$size.log" >&2; exit 1; }
            sleep 1  # the build runs at nice 19: leave it the CPU
        done
        v[$size,lists]=$(elapsed "$t0" "$(now)")
        echo "# $size: $({ grep -o 'trigram lists .*' "$work/daemon-$size.log" || true; } | tail -1)"
    fi
    echo "# $size: answering ${ready} s after start, name index loaded ${loaded} s after start: ${v[$size,names_log]}; load $(cut -d' ' -f1-3 /proc/loadavg)"
    for f in $fragments; do
        v[$size,n_$f]=$(ctl find "$f" | wc -l)
        v[$size,np_$f]=$(plocate_b -d "$dir/plocate.db" "$f" | wc -l)
        [ "${v[$size,n_$f]}" = "${v[$size,np_$f]}" ] ||
            echo "MISMATCH: $f: wsctl find ${v[$size,n_$f]} lines, plocate ${v[$size,np_$f]}" >&2
        v[$size,find_$f]=$(median_of 5 ctl find "$f")
        v[$size,plocate_$f]=$(median_of 5 plocate_b -d "$dir/plocate.db" "$f")
    done
    v[$size,anon]=$(awk '/^RssAnon:/ { printf "%.1f", $2 / 1024 }' "/proc/$dpid/status")
    v[$size,file]=$(awk '/^RssFile:/ { printf "%.1f", $2 / 1024 }' "/proc/$dpid/status")
    # The daemon never scanned: the index still holds the one synthetic scan.
    scans=$(ctl scans --json | grep -o '"root":' | wc -l)
    [ "$scans" -eq 1 ] || echo "the daemon scanned: $scans scans in the history" >&2
    v[$size,db]=$(ratio "$(bytes_of "$dir/index.db" "$dir/index.db-wal")" "$entries")
    v[$size,names]=$(ratio "$(bytes_of "$dir/index.db.names")" "$entries")
    v[$size,plocatedb]=$(ratio "$(bytes_of "$dir/plocate.db")" "$entries")
    v[$size,tri]=$(ratio "$(bytes_of "$dir/index.db.names.tri")" "$entries")
    kill "$dpid"
    wait "$dpid" 2>/dev/null || true
    dpid=
done

printf '\n%-36s' measure
for size in "${sizes[@]}"; do printf ' %14s' "$size"; done
echo
row() {  # label key
    printf '%-36s' "$1"
    for size in "${sizes[@]}"; do printf ' %14s' "${v[$size,$2]}"; done
    echo
}
row "entries" entries
row "generation (s, wsbench-synth-index)" generate
row "daemon start -> answering (s)" ready
row "daemon start -> name index (s)" load
row "daemon start -> trigram lists (s)" lists
row "RssAnon peak until loaded (MiB)" anon_peak
row "RssAnon idle after the finds (MiB)" anon
row "RssFile idle after the finds (MiB)" file
row "index.db + WAL bytes per entry" db
row "name file bytes per entry" names
row "trigram file bytes per entry" tri
row "plocate.db bytes per entry" plocatedb
for f in $fragments; do
    for size in "${sizes[@]}"; do v[$size,nn_$f]=${v[$size,n_$f]}/${v[$size,np_$f]}; done
    row "find $f: lines (wsctl/plocate)" "nn_$f"
    row "  wsctl find $f (s)" "find_$f"
    row "  plocate -b $f (s)" "plocate_$f"
    for size in "${sizes[@]}"; do v[$size,r_$f]=$(ratio "${v[$size,find_$f]}" "${v[$size,plocate_$f]}"); done
    row "  wsctl / plocate" "r_$f"
done
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
