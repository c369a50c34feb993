#!/usr/bin/env bash
# fleet_scan_cost.sh: does publishing to the fleet slow the host's own scans? (issue #22: "no
# more than 5% slower with publishing on")
#
#   bench/fleet_scan_cost.sh [-b BUILD_DIR] [-k ROUNDS] [TREE]
#
# TREE: a directory or a bench/lib.sh tree name (default: balanced, 1M entries). A throwaway
# PostgreSQL 15 (Unix socket, fsync on). ROUNDS times (default 5), a daemon with [fleet] and
# one without take turns, each with a fresh index (--no-watch): `wsctl scan TREE --wait`
# (fresh: the publish runs after it), then at once a second `wsctl scan TREE --wait` (a
# rescan of the unchanged tree, which with [fleet] runs while the first scan's full publish
# does). Prints the medians and the ratios on/off.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
build=$repo/build-rel
rounds=5
while getopts "b:k:h" opt; do
    case $opt in
        b) build=$OPTARG ;;
        k) rounds=$OPTARG ;;
        *) sed -n '2,13p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
trees=${TMPDIR:-/tmp}/wstrees
shared=/work/shared
tree=$(resolve "${1:-balanced}")

bench_workdir fleetcost

start_postgres "$work"
"$build/bin/wsctl" fleet init --url "$url" >/dev/null
printf '[fleet]\nurl = "%s"\nhost = "bench"\n' "$url" >"$work/on.conf"
: >"$work/off.conf"

# One round of one setting: appends "fresh_s rescan_s;" to the variable named $2.
round() {
    local conf=$1 t0 t1 t2
    local -n out=$2
    rm -f "$work"/index.db*
    "$build/bin/wsindexd" --config "$work/$conf.conf" --socket "$work/d.sock" \
        --db "$work/index.db" --no-watch 2>>"$work/$conf.log" &
    dpid=$!
    for _ in $(seq 100); do [ -S "$work/d.sock" ] && break; sleep 0.1; done
    t0=$(now)
    "$build/bin/wsctl" --socket "$work/d.sock" scan "$tree" --wait >/dev/null
    t1=$(now)
    "$build/bin/wsctl" --socket "$work/d.sock" scan "$tree" --wait >/dev/null
    t2=$(now)
    kill "$dpid"
    wait "$dpid" 2>/dev/null || true
    dpid=
    rm -f "$work/d.sock"
    out+="$(elapsed "$t0" "$t1") $(elapsed "$t1" "$t2");"
}

on=
off=
for r in $(seq "$rounds"); do
    round off off
    round on on
    echo "round $r: off $off on $on" | tr ';' ' ' >&2
done
col() { tr ';' '\n' | awk -v c="$1" 'NF { print $c }' | median; }
fresh_off=$(col 1 <<<"$off") fresh_on=$(col 1 <<<"$on")
rescan_off=$(col 2 <<<"$off") rescan_on=$(col 2 <<<"$on")
printf 'tree %s\nrounds %s\n' "$tree" "$rounds"
printf 'fresh_scan_off_s %s\nfresh_scan_on_s %s\nfresh_ratio %s\n' "$fresh_off" "$fresh_on" \
    "$(ratio "$fresh_on" "$fresh_off")"
printf 'rescan_off_s %s\nrescan_on_s %s\nrescan_ratio %s\n' "$rescan_off" "$rescan_on" \
    "$(ratio "$rescan_on" "$rescan_off")"
grep -a "fleet: published" "$work/on.log" | tail -2 >&2 || true
