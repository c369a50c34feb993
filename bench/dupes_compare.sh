#!/usr/bin/env bash
# dupes_compare.sh: `wsctl dupes` beside rmlint, jdupes and rdfind on one generated corpus.
#
#   bench/dupes_compare.sh [-k RUNS] [-b BUILD_DIR] [-n FILES] [-m TOTAL_MIB] [-c CORPUS] [-C]
#
# The corpus (bench/dupes_corpus.py: FILES files, default 50000, TOTAL_MIB MiB, default 4096,
# ~20% duplicates, skewed sizes) is generated in /tmp and deleted at the end; -c CORPUS uses
# that directory instead (generated there if it does not exist, kept at the end). A wsindexd on a
# temporary socket indexes it once (not timed). Rounds (default 3), tools taking turns, warm
# page cache (each tool reads the corpus once before the rounds):
#   dupes     `wsctl dupes CORPUS -0` with an empty hash cache (first run)
#   dupes2    the same again, the cache filled (second run: reads no content)
#   rmlint    `rmlint -o fdupes:/dev/null CORPUS` (multi-threaded)
#   jdupes    `jdupes -r -q CORPUS`
#   rdfind    `rdfind -dryrun true -outputname /dev/null CORPUS`
# wsindexd drops only the pages its reads brought into the cache (docs/dupes.md): the corpus,
# warmed first, stays cached for every tool. -C: cold instead, the page cache dropped
# (sync; echo 3 > /proc/sys/vm/drop_caches, as root) before every timed run, the index's
# database included.
# Medians in seconds and ratios to `dupes`. Environment: TMPDIR (default /tmp).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
build=$repo/build-rel
runs=3
files=50000
mib=4096
corpus=
cold=0
while getopts "k:b:n:m:c:Ch" opt; do
    case $opt in
        k) runs=$OPTARG ;;
        b) build=$OPTARG ;;
        n) files=$OPTARG ;;
        m) mib=$OPTARG ;;
        c) corpus=$OPTARG ;;
        C) cold=1 ;;
        *) sed -n '2,24p' "$0"; exit 2 ;;
    esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/dupes-bench.XXXXXX")
daemon_pid=
cleanup() {
    [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

if [ "$cold" = 1 ] && ! [ -w /proc/sys/vm/drop_caches ]; then
    echo "-C needs root (/proc/sys/vm/drop_caches)" >&2
    exit 2
fi
if [ -z "$corpus" ]; then
    corpus=$work/corpus
fi
if ! [ -d "$corpus" ]; then
    echo "generating $files files, $mib MiB in $corpus" >&2
    python3 "$repo/bench/dupes_corpus.py" "$corpus" "$files" "$mib"
fi
du -sh "$corpus" >&2

export WSINDEX_SOCKET=$work/d.sock
"$build/bin/wsindexd" --socket "$WSINDEX_SOCKET" --db "$work/index.db" --no-watch \
    >"$work/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do [ -S "$WSINDEX_SOCKET" ] && break; sleep 0.1; done
"$build/bin/wsctl" scan "$corpus" --wait >/dev/null

clear_cache() {
    python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1], timeout=30); c.execute('DELETE FROM content_hashes'); c.commit()" "$work/index.db"
}
run_tool() {
    case $1 in
        dupes | dupes2) "$build/bin/wsctl" dupes "$corpus" -0 >"$work/out.$1" ;;
        rmlint) (cd "$work" && rmlint -o fdupes:"$work/out.rmlint" "$corpus" >/dev/null 2>&1) ;;
        jdupes) jdupes -r -q "$corpus" >"$work/out.jdupes" ;;
        rdfind) (cd "$work" && rdfind -dryrun true -outputname "$work/out.rdfind" "$corpus" >/dev/null) ;;
    esac
}

tools="dupes dupes2 rmlint jdupes rdfind"
[ "$cold" = 1 ] || find "$corpus" -type f -exec cat {} + >/dev/null  # warm
declare -A times
for round in $(seq "$runs"); do
    for t in $tools; do
        [ "$t" = dupes ] && clear_cache
        [ "$cold" = 1 ] && drop_page_cache
        t0=$(now)
        run_tool "$t"
        t1=$(now)
        times[$t]="${times[$t]:-} $(elapsed "$t0" "$t1")"
        echo "round $round $t $(elapsed "$t0" "$t1") s" >&2
    done
done

"$build/bin/wsctl" dupes "$corpus" --json >"$work/out.json"
python3 - "$work/out.json" <<'PY' >&2
import json, sys
d = json.load(open(sys.argv[1]))
files = sum(len(g["files"]) for g in d["groups"])
print(f"wsctl dupes: {len(d['groups'])} groups, {files} files, {d['wasted']} bytes wasted, "
      f"second run read {d['bytes_read']} bytes")
PY
echo "jdupes: $(grep -c . "$work/out.jdupes") lines" >&2

base=$(echo "${times[dupes]}" | median)
[ "$cold" = 1 ] && echo "cold page cache" || echo "warm page cache"
printf '%-8s %10s %8s\n' tool median_s vs_dupes
for t in $tools; do
    m=$(echo "${times[$t]}" | median)
    printf '%-8s %10s %8s\n' "$t" "$m" "$(ratio "$m" "$base")"
done
