#!/usr/bin/env bash
# fleet_hosts.sh: N hosts in one fleet database (issue #22's "10 hosts x 1M entries"):
# `wsctl fleet find FRAGMENT` and `wsctl fleet du --depth 1`, whole process, beside `plocate`
# over the same N hosts' databases (`plocate -d a:b:...`), and PostgreSQL's bytes per entry.
#
#   bench/fleet_hosts.sh [-b BUILD_DIR] [-H HOSTS] [-k RUNS] [-q FRAGMENT] [-P] [TREE]
#
# TREE: a directory or a bench/lib.sh tree name (default: balanced, 1M entries). A throwaway
# PostgreSQL 15 (initdb in $TMPDIR, Unix socket only) runs as the postgres user. Each host
# (h0 .. h<HOSTS-1>, default 10) is a wsindexd of its own (its own index, --no-watch) that scans
# TREE once and publishes, one after the other (the hosts index the same tree: N copies of 1M
# rows, as N machines with alike trees). plocate: `updatedb.plocate` of TREE once, the database
# copied per host. Then RUNS (default 21) rounds, tools taking turns, of:
#   fleet_find  wsctl fleet find FRAGMENT  (default "arse17": 570 matches per host in the 1M balanced tree)
#   plocate     plocate -d h0.db:h1.db:... FRAGMENT
#   fleet_du    wsctl fleet du --depth 1
# Medians and p90 in ms (output to /dev/null), the match counts, and the publish times.
# -P: PostgreSQL's shared memory on huge pages (as root: reserves vm.nr_hugepages for the 1 GB of
# shared_buffers, starts the server with huge_pages=on, and gives the old reservation back at
# exit). Each `wsctl fleet` command is a new server process that maps the shared buffers it
# reads; with 4 KiB pages each first touch is a page fault (docs/fleet.md, "Tuning").
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
build=$repo/build-rel
hosts=10 runs=21 fragment=arse17 hugepages=0
while getopts "b:H:k:q:Ph" opt; do
    case $opt in
        b) build=$OPTARG ;;
        H) hosts=$OPTARG ;;
        k) runs=$OPTARG ;;
        q) fragment=$OPTARG ;;
        P) hugepages=1 ;;
        *) sed -n '2,21p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
trees=${WSINDEX_TREES:-/var/tmp/wsbench-trees}
shared=/work/shared
tree=$(resolve "${1:-balanced}")
pgbin=/usr/lib/postgresql/15/bin
wsctl=$build/bin/wsctl
command -v updatedb.plocate >/dev/null || { echo "missing updatedb.plocate (apt-get install plocate)" >&2; exit 1; }

bench_workdir fleethosts

settings=(shared_buffers=1GB)
if [ "$hugepages" = 1 ]; then
    old_hugepages=$(cat /proc/sys/vm/nr_hugepages)
    trap 'bench_cleanup; echo "$old_hugepages" >/proc/sys/vm/nr_hugepages' EXIT
    # 1 GiB of buffers and ~80 MiB of PostgreSQL's other shared memory, in pages of this size.
    page_kib=$(awk '/^Hugepagesize:/ { print $2 }' /proc/meminfo)
    want=$(((1024 + 96) * 1024 / page_kib))
    sync
    echo 1 >/proc/sys/vm/compact_memory  # free memory in large enough pieces
    echo $((old_hugepages + want)) >/proc/sys/vm/nr_hugepages
    got=$(($(cat /proc/sys/vm/nr_hugepages) - old_hugepages))
    [ "$got" -ge "$want" ] || { echo "-P: only $got of $want huge pages could be reserved" >&2; exit 1; }
    settings+=(huge_pages=on)
fi
start_postgres "$work" "${settings[@]}"
"$wsctl" fleet init --url "$url" >/dev/null

echo "# fleet_hosts: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), hosts=$hosts, runs=$runs, tree=$tree, fragment=$fragment, server: ${settings[*]}"
publish_s=()
for ((i = 0; i < hosts; i++)); do
    h=h$i
    printf '[fleet]\nurl = "%s"\nhost = "%s"\n' "$url" "$h" >"$work/$h.conf"
    "$build/bin/wsindexd" --config "$work/$h.conf" --socket "$work/$h.sock" --db "$work/$h.db" \
        --no-watch 2>"$work/$h.log" &
    dpid=$!
    for _ in $(seq 100); do [ -S "$work/$h.sock" ] && break; sleep 0.1; done
    "$wsctl" --socket "$work/$h.sock" scan "$tree" --wait >/dev/null
    line=
    for _ in $(seq 1200); do
        line=$(grep -a "fleet: published generation [1-9]" "$work/$h.log" | tail -1 || true)
        [ -n "$line" ] && break
        sleep 0.5
    done
    [ -n "$line" ] || { echo "$h: no publish within 10 min" >&2; tail -5 "$work/$h.log" >&2; exit 1; }
    publish_s+=("$(sed -E 's/.* in ([0-9.]+) s.*/\1/' <<<"$line")")
    entries=$(sed -E 's/.*\(([0-9]+) entries.*/\1/' <<<"$line")
    kill "$dpid"; wait "$dpid" 2>/dev/null || true; dpid=
    rm -f "$work/$h.db"*  # the fleet copy is what is measured; keep the disk free
done
echo "publish per host: ${publish_s[*]} s ($entries entries each; median $(echo "${publish_s[*]}" | median) s, $(ratio "$entries" "$(echo "${publish_s[*]}" | median)") rows/s)"
su postgres -s /bin/sh -c "$pgbin/psql -h $work -U wsfleet -d wsfleet -qc 'VACUUM ANALYZE'"

t0=$(now)
updatedb.plocate -U "$tree" -o "$work/p0.db" -l no
t1=$(now)
dbs=$work/p0.db
for ((i = 1; i < hosts; i++)); do cp "$work/p0.db" "$work/p$i.db"; dbs+=":$work/p$i.db"; done
echo "updatedb.plocate of the tree: $(elapsed "$t0" "$t1") s (once; copied per host)"

fleet_matches=$("$wsctl" fleet find --url "$url" "$fragment" | wc -l)
plocate_matches=$(plocate -d "$dbs" "$fragment" | wc -l)
echo "matches: fleet find $fleet_matches, plocate $plocate_matches"
declare -A t
for ((r = 0; r <= runs; r++)); do  # round 0 warms the caches, not counted
    for tool in fleet_find plocate fleet_du; do
        a=$(now)
        case $tool in
            fleet_find) "$wsctl" fleet find --url "$url" "$fragment" >/dev/null ;;
            plocate) plocate -d "$dbs" "$fragment" >/dev/null ;;
            fleet_du) "$wsctl" fleet du --url "$url" --depth 1 >/dev/null ;;
        esac
        b=$(now)
        [ "$r" -gt 0 ] && t[$tool]+="$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", (b - a) * 1000 }') "
    done
done
for tool in fleet_find plocate fleet_du; do
    p90=$(echo "${t[$tool]}" | tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int(NR * 0.9 + 0.5)] }')
    printf '%-11s median %7s ms  p90 %7s ms\n' "$tool" "$(echo "${t[$tool]}" | median)" "$p90"
done
rows=$(su postgres -s /bin/sh -c "$pgbin/psql -h $work -U wsfleet -d wsfleet -Atc 'SELECT sum(entries) FROM hosts'")
bytes=$(su postgres -s /bin/sh -c "$pgbin/psql -h $work -U wsfleet -d wsfleet -Atc \"SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c WHERE c.relkind = 'r' AND (c.relname LIKE 'entries_h_%' OR c.relname LIKE 'dirs_h_%')\"")
echo "PostgreSQL: $rows entries, $(ratio "$bytes" "$rows") bytes per entry (tables and indexes); plocate $(stat -c %s "$work/p0.db") bytes per host database"
