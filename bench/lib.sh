# bench/lib.sh: helpers shared by the bench scripts (sourced; they set $trees, $shared).

now() { date +%s.%N; }
# elapsed T0 T1: seconds between two `now` readings, 3 decimals.
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
# median: of the numbers on stdin (space or newline separated).
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# timed CMD...: wall seconds of CMD, its stdout discarded; exits the script if CMD fails.
timed() {
    local t0
    t0=$(now)
    "$@" >/dev/null || { echo "failed: $*" >&2; exit 1; }
    elapsed "$t0" "$(now)"
}
# median_of N CMD...: the median wall seconds of N runs of CMD after one warm-up run.
median_of() {
    local n=$1 all=
    shift
    "$@" >/dev/null
    for _ in $(seq "$n"); do all+=" $(timed "$@")"; done
    echo "$all" | median
}
# drop_page_cache: writes dirty pages back, then drops the page cache, dentries and inodes
# (as root), so that the next run reads from the disk.
drop_page_cache() {
    sync
    echo 3 >/proc/sys/vm/drop_caches
}
# ratio A B: A / B with 2 decimals, "-" when B is 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

# resolve NAME: balanced, lopsided (1M), wide (300k), deep (20k) are mktree.py trees in $trees,
# generated on first use as in shared/bench/ANCHORS.md; anything else is a directory path.
resolve() {
    local size
    case $1 in
        balanced|lopsided) size=1000000 ;;
        wide) size=300000 ;;
        deep) size=20000 ;;
        *) echo "$1"; return ;;
    esac
    if [ ! -d "$trees/$1" ]; then
        mkdir -p "$trees"
        echo "generating $trees/$1 ($size entries; takes a while)" >&2
        python3 "$shared/bench/mktree.py" "$trees/$1" $size "$1" 1 >&2
    fi
    echo "$trees/$1"
}

# start_postgres WORK [SETTING...]: a throwaway PostgreSQL 15 in WORK (initdb there, a Unix
# socket there, no TCP), run as the postgres user, with a database wsfleet owned by the
# superuser wsfleet. Sets pgpid and url (a libpq connection string); extra arguments are
# server settings ("log_min_duration_statement=500"). The caller kills pgpid (SIGINT) at exit.
start_postgres() {
    local work=$1 pgbin=/usr/lib/postgresql/15/bin settings=() s
    shift
    for s in "$@"; do settings+=(-c "$s"); done
    chmod 755 "$work"
    chown postgres "$work"
    su postgres -s /bin/sh -c "$pgbin/initdb -D $work/data -U wsfleet -A trust --no-locale -E UTF8" \
        >"$work/initdb.log" 2>&1
    su postgres -s /bin/sh -c "exec $pgbin/postgres -D $work/data -k $work -c listen_addresses= ${settings[*]}" \
        >"$work/postgres.log" 2>&1 &
    pgpid=$!
    url="host=$work dbname=wsfleet user=wsfleet"
    for _ in $(seq 100); do
        su postgres -s /bin/sh -c "$pgbin/pg_isready -q -h $work" && break
        sleep 0.1
    done
    su postgres -s /bin/sh -c "$pgbin/createdb -h $work -U wsfleet wsfleet"
}

# bench_workdir NAME: a scratch directory ($work, under $TMPDIR) removed at exit, with the
# daemon ($dpid) and the PostgreSQL ($pgpid, see start_postgres) the script started, if any.
bench_workdir() {
    work=$(mktemp -d "${TMPDIR:-/tmp}/$1-XXXXXX")
    pgpid=
    dpid=
    trap bench_cleanup EXIT
}
bench_cleanup() {
    [ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null || true
    [ -n "$pgpid" ] && kill -INT "$pgpid" 2>/dev/null && wait "$pgpid" 2>/dev/null || true
    rm -rf "$work"
}
