#!/usr/bin/env bash
# fleet_delta.sh: how long a delta publish (docs/fleet.md) of 10k changed entries takes on a
# host that already published a big index.
#
#   bench/fleet_delta.sh [-b BUILD_DIR] [-k ROUNDS] [-n FILES] [TREE]
#
# TREE: a directory, or a bench/lib.sh tree name (default: balanced, 1M entries); it is only
# read. A throwaway PostgreSQL 15 (Unix socket, fsync on) and a wsindexd (no live index: each
# change is one rescan) that indexes TREE and a scratch root; the first publish is full. Then
# ROUNDS times (default 5): FILES new files (default 10,000, in 100 directories) in the scratch
# root, then the same files rewritten (metadata only: size and time), then removed; after each,
# one `wsctl scan --wait` of the scratch root and the publisher's log line gives the delta's
# publish time (the merge of both dirs tables, deletes, COPY, one transaction); "visible" is
# from the rescan's return until `wsctl fleet find` shows the change. Prints medians.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
build=$repo/build-rel
rounds=5
files=10000
while getopts "b:k:n:h" opt; do
    case $opt in
        b) build=$OPTARG ;;
        k) rounds=$OPTARG ;;
        n) files=$OPTARG ;;
        *) sed -n '2,14p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
trees=${TMPDIR:-/tmp}/wstrees
shared=/work/shared
tree=$(resolve "${1:-balanced}")

bench_workdir fleetdelta

start_postgres "$work"
wsctl() { "$build/bin/wsctl" "$@"; }
wsctl fleet init --url "$url" >/dev/null
scratch=$work/scratch
mkdir -p "$scratch"

printf '[fleet]\nurl = "%s"\nhost = "bench"\n' "$url" >"$work/wsindexd.conf"
"$build/bin/wsindexd" --config "$work/wsindexd.conf" --socket "$work/d.sock" --db "$work/index.db" \
    --no-watch 2>"$work/wsindexd.log" &
dpid=$!
for _ in $(seq 100); do [ -S "$work/d.sock" ] && break; sleep 0.1; done

# Waits for publish line number $1 (of any kind) and prints it.
published() {
    local line=
    for _ in $(seq 6000); do
        line=$(grep -a "fleet: published generation" "$work/wsindexd.log" | sed -n "${1}p")
        [ -n "$line" ] && { echo "$line"; return; }
        sleep 0.1
    done
    echo "no publish $1 within 10 min" >&2
    exit 1
}
count_published() { grep -ac "fleet: published generation" "$work/wsindexd.log" || true; }

wsctl --socket "$work/d.sock" scan "$tree" --wait >/dev/null
wsctl --socket "$work/d.sock" scan "$scratch" --wait >/dev/null
# The publish of the index as both scans left it (the big one is full, the scratch root's may
# follow as a delta).
generation=$(python3 -c "import sqlite3, sys
db = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)
print(db.execute(\"SELECT value FROM meta WHERE key = 'generation'\").fetchone()[0])" "$work/index.db")
for _ in $(seq 6000); do
    grep -aq "fleet: published generation $generation of" "$work/wsindexd.log" && break
    sleep 0.1
done
full=$(grep -a "fleet: published generation .* in full" "$work/wsindexd.log" | tail -1)
echo "full: $full" >&2

# One change of the scratch root: rescan it, wait for its publish and for fleet find to show
# the file `probe`; appends "publish_s visible_s" to the variable named $1.
measure() {
    local -n out=$1
    local probe=$2 want=$3 n t0 line seconds t1
    n=$(($(count_published) + 1))
    wsctl --socket "$work/d.sock" scan "$scratch" --wait >/dev/null
    t0=$(now)
    line=$(published "$n")
    case $line in *"as a delta"*) ;; *) echo "not a delta: $line" >&2 ;; esac
    seconds=$(sed -E 's/.* in ([0-9.]+) s.*/\1/' <<<"$line")
    for _ in $(seq 6000); do
        [ "$(wsctl fleet find --url "$url" --host bench -0 "$probe" | tr -cd '\0' | wc -c)" = "$want" ] && break
        sleep 0.01
    done
    t1=$(now)
    out+="$seconds $(elapsed "$t0" "$t1");"
}

add=
touch_=
remove=
per_dir=$((files / 100))
for round in $(seq "$rounds"); do
    for d in $(seq 100); do
        mkdir -p "$scratch/r$round/d$d"
        (cd "$scratch/r$round/d$d" && for f in $(seq "$per_dir"); do echo x >"f$f-r$round"; done)
    done
    measure add "f$per_dir-r$round" 100
    for d in $(seq 100); do
        (cd "$scratch/r$round/d$d" && for f in $(seq "$per_dir"); do echo longer >"f$f-r$round"; done)
    done
    measure touch_ "f$per_dir-r$round" 100
    rm -rf "$scratch/r$round"
    measure remove "f$per_dir-r$round" 0
    echo "round $round: add $add touch $touch_ remove $remove" | tr ';' ' ' >&2
done

col() { tr ';' '\n' | awk -v c="$1" 'NF { print $c }' | median; }
entries=$(sed -E 's/.*\(([0-9]+) entries.*/\1/' <<<"$full")
full_s=$(sed -E 's/.* in ([0-9.]+) s.*/\1/' <<<"$full")
printf 'tree %s\nentries %s\nfull_publish_s %s\n' "$tree" "$entries" "$full_s"
printf 'delta_files %s\nrounds %s\n' "$files" "$rounds"
for kind in add touch_ remove; do
    printf '%s_publish_s %s\n%s_visible_s %s\n' "${kind%_}" "$(col 1 <<<"${!kind}")" \
        "${kind%_}" "$(col 2 <<<"${!kind}")"
done
