#!/usr/bin/env bash
# scale.sh: the daemon at 1M and at 10M entries side by side (issue #19's table, the rows that
# need a real tree), each beside its reference.
#
#   bench/scale.sh [-b BUILD_DIR] [-d TREES_DIR] [-q "FRAGMENT..."] [-r ROUNDS] [SIZES...]
#
# SIZES: entry counts of balanced mktree trees (default: 1000000 10000000), kept in TREES_DIR
# (default /var/tmp/wsbench-trees: balanced for 1M, balanced<N/1M>m for the others) and made
# with ../shared/bench/mktree.py when missing (10M: ~4 min, 12.5M inodes, ~2.5 GB). A plocate
# database of each tree is made once (updatedb.plocate, kept beside the tree). BUILD_DIR needs
# wsindexd, wsctl and wsbench-walk (-DWSINDEX_BUILD_BENCH=ON). Per size, a daemon with default
# settings on a fresh database, ROUNDS times (default 3; medians), the four taking turns:
#   scan    `wsctl scan TREE --wait`, fresh          vs walkfloor -t 2 (the 2-thread floor)
#   rescan  the same again, tree unchanged           vs `wsbench-walk TREE --workers 2`, and
#           vs `wsbench-walk TREE` (the walker's default workers, as the daemon walks)
#   anon    RssAnon (and RssFile) 10 s after the rescan, the daemon idle
#   db      bytes per entry: index.db + WAL, and the name file (<db>.names)
#   find    `wsctl find FRAGMENT`, whole process, median of 5 after one warm-up (default
#           fragments: json_9, 53 names per 1M; crypto, 19k) vs `plocate -b` (the same names),
#           measured once the name index (and, from 3M names, its trigram lists) is in place;
#           then again from daemons that scan (no lists) with the default workers and with one
#           (what the lists gain, and what the parallel scan gains)
#   du      `wsctl du TREE --depth 1`, median of 5
# Then the ratios of the largest size to the smallest.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${WSINDEX_SHARED_DIR:-$repo/../shared}
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
build=$repo/build-bench
trees=/var/tmp/wsbench-trees
fragments="json_9 crypto"
rounds=3
while getopts "b:d:q:r:h" opt; do
    case $opt in
        b) build=$OPTARG ;;
        d) trees=$OPTARG ;;
        q) fragments=$OPTARG ;;
        r) rounds=$OPTARG ;;
        *) sed -n '2,24p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000 10000000)
for bin in wsindexd wsctl wsbench-walk; do
    [ -x "$build/bin/$bin" ] || { echo "no $build/bin/$bin (configure with -DWSINDEX_BUILD_BENCH=ON)" >&2; exit 1; }
done

bench_workdir scale
gcc -O2 -pthread -o "$work/walkfloor" "$shared/bench/walkfloor.c"
ctl() { "$build/bin/wsctl" --socket "$work/d.sock" "$@"; }
plocate_b() { plocate -b "$@" || [ $? -eq 1 ]; }  # 1: nothing found
tree_of() {
    local name=balanced
    [ "$1" -eq 1000000 ] || name=balanced$(($1 / 1000000))m
    if [ ! -d "$trees/$name" ]; then
        echo "generating $trees/$name ($1 entries)" >&2
        python3 "$shared/bench/mktree.py" "$trees/$name" "$1" balanced 1 -j 2 >&2
    fi
    if [ ! -f "$trees/$name.plocate.db" ] || [ "$trees/$name.plocate.db" -ot "$trees/$name" ]; then
        updatedb.plocate -U "$trees/$name" -o "$trees/$name.plocate.db" -l 0
    fi
    echo "$trees/$name"
}

echo "# scale: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), sizes ${sizes[*]}"
declare -A v=()
for size in "${sizes[@]}"; do
    tree=$(tree_of "$size")
    # Each tool beside its reference, in turns, ROUNDS times (medians): what runs first meets
    # the dentries and inodes the one before it pushed out of the caches (at 10M the tree's
    # metadata and the index together nearly fill this machine's memory; one rescan measured
    # first took 1.2x the walk after it, and 1.03-1.09x when they alternated).
    declare -A all=()
    for round in $(seq "$rounds"); do
        if [ -n "$dpid" ]; then
            kill "$dpid"
            wait "$dpid" 2>/dev/null || true
        fi
        rm -f "$work"/db*
        "$build/bin/wsindexd" --socket "$work/d.sock" --db "$work/db" --no-watch 2>>"$work/daemon.log" &
        dpid=$!
        for _ in $(seq 100); do ctl status >/dev/null 2>&1 && break; sleep 0.1; done
        all[scan]+=" $(timed ctl scan "$tree" --wait)"
        all[floor]+=" $(timed "$work/walkfloor" -t 2 "$tree" 2>/dev/null)"
        all[rescan]+=" $(timed ctl scan "$tree" --wait)"
        all[walk]+=" $(timed "$build/bin/wsbench-walk" "$tree" --workers 2)"
        all[walkd]+=" $(timed "$build/bin/wsbench-walk" "$tree")"
        echo "$size round $round: scan floor rescan walk walkd:$(for k in scan floor rescan walk walkd; do echo -n " ${all[$k]##* }"; done) (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    done
    for k in scan floor rescan walk walkd; do v[$size,$k]=$(echo "${all[$k]}" | median); done
    # The name index current, and its trigram lists in place where the base is big enough
    # (trigram_min_names, default 3M): what the finds below use.
    want_lists=false
    [ "$size" -lt 3000000 ] || want_lists=true
    for _ in $(seq 600); do
        st=$(ctl status --json)
        echo "$st" | grep -q '"generation":-1' || {
            $want_lists || break
            echo "$st" | grep -q '"trigrams":true' && break
        }
        sleep 0.5
    done
    v[$size,lists_s]=$({ grep -o 'trigram lists built for [0-9]* names: .* in [0-9.]* s' \
        "$work/daemon.log" || true; } | tail -1 | sed 's/.* in \([0-9.]*\) s/\1/')
    [ -n "${v[$size,lists_s]}" ] || v[$size,lists_s]=-
    sleep 10
    v[$size,anon]=$(awk '/^RssAnon:/ { printf "%.1f", $2 / 1024 }' "/proc/$dpid/status")
    v[$size,file]=$(awk '/^RssFile:/ { printf "%.1f", $2 / 1024 }' "/proc/$dpid/status")
    entries=$(ctl scans --json --limit 1 | grep -o '"entries":[0-9]*' | head -1 | cut -d: -f2)
    bytes=$(stat -c %s "$work"/db "$work"/db-wal 2>/dev/null | awk '{ s += $1 } END { print s }')
    v[$size,db]=$(ratio "$bytes" "$entries")
    v[$size,names]=$(ratio "$(stat -c %s "$work"/db.names)" "$entries")
    v[$size,lists]=$(ratio "$(stat -c %s "$work"/db.names.tri 2>/dev/null || echo 0)" "$entries")
    v[$size,entries]=$entries
    for f in $fragments; do
        v[$size,find_$f]=$(median_of 5 ctl find "$f")
        v[$size,plocate_$f]=$(median_of 5 plocate_b -d "$tree.plocate.db" "$f")
        v[$size,n_$f]=$(ctl find "$f" | wc -l)
    done
    v[$size,du]=$(median_of 5 ctl du "$tree" --depth 1)
    kill "$dpid"
    wait "$dpid" 2>/dev/null || true
    # The same finds by the scan alone (no trigram lists), with the default workers and with
    # one: what the lists gain, and what the parallel scan gains.
    for w in 0 1; do
        printf 'search_workers = %s\ntrigram_min_names = 1000000000000\n' "$w" >"$work/scan.conf"
        "$build/bin/wsindexd" --config "$work/scan.conf" --socket "$work/d.sock" --db "$work/db" \
            --no-watch 2>>"$work/daemon.log" &
        dpid=$!
        for _ in $(seq 600); do
            ctl status --json 2>/dev/null | grep -q '"loaded":true' && break
            sleep 0.1
        done
        for f in $fragments; do v[$size,scan${w}_$f]=$(median_of 5 ctl find "$f"); done
        kill "$dpid"
        wait "$dpid" 2>/dev/null || true
        dpid=
    done
done

small=${sizes[0]}
big=${sizes[-1]}
row() {  # label key [reference-key reference-label]
    local a=${v[$small,$2]} b=${v[$big,$2]}
    printf '%-34s %10s %10s %8s' "$1" "$a" "$b" "$(ratio "$b" "$a")"
    if [ $# -ge 3 ]; then
        printf '   %-26s %10s %6s' "$4" "${v[$big,$3]}" "$(ratio "$b" "${v[$big,$3]}")"
    fi
    echo
}
printf '\n%-34s %10s %10s %8s   %-26s %10s %6s\n' measure "$small" "$big" ratio "reference (at $big)" value ratio
row "entries" entries
row "fresh scan --wait (s)" scan floor "walkfloor -t 2"
row "rescan, unchanged (s)" rescan walk "wsbench-walk --workers 2"
row "  the same" rescan walkd "wsbench-walk (default workers)"
row "RssAnon idle (MiB)" anon
row "RssFile idle (MiB)" file
row "index.db + WAL bytes per entry" db
row "name file bytes per entry" names
row "trigram file bytes per entry" lists
row "trigram lists build (s, log)" lists_s
for f in $fragments; do
    row "find $f (s; ${v[$big,n_$f]} at $big)" "find_$f" "plocate_$f" "plocate -b $f"
    row "  by the scan, default workers" "scan0_$f" "find_$f" "default (lists from 3M)"
    row "  by the scan, 1 worker" "scan1_$f" "scan0_$f" "scan, default workers"
done
row "du --depth 1 (s)" du
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
