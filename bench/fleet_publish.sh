#!/usr/bin/env bash
# fleet_publish.sh: rows/s of a full fleet publish (docs/fleet.md) of a fresh index.
#
#   bench/fleet_publish.sh [-b BUILD_DIR] [TREE]
#
# TREE: a directory, or a bench/lib.sh tree name (default: lopsided, 1M entries). A throwaway
# PostgreSQL 15 (initdb in $TMPDIR, Unix socket only, fsync on as in production) runs as the
# postgres user; a wsindexd with [fleet] scans TREE once; the publisher's log line gives the
# publish time (local read + COPY + indexes + swap, one transaction). Prints entries, seconds,
# rows/s and PostgreSQL bytes per entry.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
build=$repo/build-rel
while getopts "b:h" opt; do
    case $opt in
        b) build=$OPTARG ;;
        *) sed -n '2,11p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
trees=${TMPDIR:-/tmp}/wstrees
shared=/work/shared
tree=$(resolve "${1:-lopsided}")

bench_workdir fleetbench

start_postgres "$work" log_min_duration_statement=500
"$build/bin/wsctl" fleet init --url "$url" >/dev/null

printf '[fleet]\nurl = "%s"\nhost = "bench"\n' "$url" >"$work/wsindexd.conf"
"$build/bin/wsindexd" --config "$work/wsindexd.conf" --socket "$work/d.sock" --db "$work/index.db" \
    --no-watch 2>"$work/wsindexd.log" &
dpid=$!
for _ in $(seq 100); do [ -S "$work/d.sock" ] && break; sleep 0.1; done
"$build/bin/wsctl" --socket "$work/d.sock" scan "$tree" --wait >/dev/null
line=
for _ in $(seq 600); do
    line=$(grep -a "fleet: published generation [1-9]" "$work/wsindexd.log" | tail -1 || true)
    [ -n "$line" ] && break
    grep -a "fleet: " "$work/wsindexd.log" | grep -av published | tail -1 >&2 || true
    sleep 1
done
[ -n "$line" ] || { echo "no publish within 10 min" >&2; exit 1; }
entries=$(sed -E 's/.*\(([0-9]+) entries.*/\1/' <<<"$line")
seconds=$(sed -E 's/.* in ([0-9.]+) s.*/\1/' <<<"$line")
bytes=$(psql "$url" -Atc "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c
    WHERE c.relkind = 'r' AND (c.relname LIKE 'entries_h_%' OR c.relname LIKE 'dirs_h_%')" 2>/dev/null || echo 0)
grep -a "duration:" "$work/postgres.log" | cut -c1-160 >&2 || true
printf 'tree %s\nentries %s\npublish_s %s\nrows_per_s %s\npg_bytes_per_entry %s\n' "$tree" \
    "$entries" "$seconds" "$(ratio "$entries" "$seconds")" "$(ratio "$bytes" "$entries")"
