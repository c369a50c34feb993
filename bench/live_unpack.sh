#!/usr/bin/env bash
# live_unpack.sh: the cost of the live index to writers, and how soon the index is current, for
# the unpack of a 100k-entry tar archive into a watched root.
#
#   bench/live_unpack.sh [-k RUNS] [-b BUILD_DIR] [-n ENTRIES] [-d WORKDIR] [-w WORKERS] [-f]
#
# The archive is a balanced mktree tree of ENTRIES (default 100000) entries, made once in
# $WSINDEX_TREES (default /var/tmp/wsbench-trees). Rounds alternate (RUNS each, default 3, after
# one untimed warm-up of each):
#   none     no wsindexd running: `tar -xf ARCHIVE -C ROOT/x` (wall seconds)
#   watched  wsindexd following ROOT (scanned once; fanotify): the same tar
# Before each tar the previous extraction is removed, `sync` runs, and in the watched rounds the
# index is back to the empty root's entry count. After each watched tar, `wsctl find NAME` of
# the archive's last regular file and `wsctl status --json` (the root's entries) are polled back
# to back: "current" is the time from tar's exit (its last write) until both show the unpacked
# tree. Printed: medians, the slowdown (target <= 10%), tar's own CPU time (user + sys: the
# kernel's event generation counts there; less sensitive than wall time to other load on the
# machine), and the time to current (target <= 2 s).
#
# -w: the daemon's `workers` (default 2: live batches walk new subtrees on that many threads).
# -f (root only): every round unpacks into a freshly made ext4 file system (a 2 GiB image in
# WORKDIR, loop-mounted as ROOT). Without it the rounds share one directory, and ext4 after an
# `rm -rf` of 100k files makes the next tar up to 10x slower in the kernel (20 s instead of 2 s of
# system time, measured here), which swamps what the daemon costs.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${WSINDEX_SHARED_DIR:-$repo/../shared}
trees=${WSINDEX_TREES:-/var/tmp/wsbench-trees}
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
build=$repo/build-rel
runs=3
entries=100000
workdir=/var/tmp
fresh_fs=
workers=2
while getopts "k:b:n:d:w:fh" opt; do
    case $opt in
        k) runs=$OPTARG ;;
        b) build=$OPTARG ;;
        n) entries=$OPTARG ;;
        d) workdir=$OPTARG ;;
        w) workers=$OPTARG ;;
        f) fresh_fs=1 ;;
        *) sed -n '2,24p' "$0"; exit 2 ;;
    esac
done
wsindexd=$build/bin/wsindexd
wsctl=$build/bin/wsctl
for bin in "$wsindexd" "$wsctl"; do
    [ -x "$bin" ] || { echo "no $bin: build wsindexd wsctl first" >&2; exit 1; }
done
for tool in tar jq python3; do
    command -v $tool >/dev/null || { echo "missing $tool" >&2; exit 1; }
done

src=$trees/unpack$entries
archive=$trees/unpack$entries.tar
if [ ! -f "$archive" ]; then
    [ -d "$src" ] || python3 "$shared/bench/mktree.py" "$src" "$entries" balanced 1 > /dev/null
    tar -cf "$archive" -C "$src" .
    rm -rf "$src"
fi
members=$(tar -tf "$archive" | grep -cv '^\./$')
last=$(tar -tvf "$archive" | awk '$1 ~ /^-/ { p = $NF } END { print p }')
last_name=${last##*/}

work=$(mktemp -d "$workdir/live_unpack.XXXXXX")
root=$work/root
mkdir -p "$root"
sock=$work/wsindexd.sock
cat > "$work/wsindexd.toml" <<EOF
socket = "$sock"
db = "$work/index.db"
workers = $workers
log_level = "info"
EOF
daemon_pid=
cleanup() {
    [ -z "$daemon_pid" ] || { kill -TERM "$daemon_pid" 2>/dev/null; wait "$daemon_pid" 2>/dev/null || true; }
    [ -z "$fresh_fs" ] || umount "$root" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
ctl() { "$wsctl" --socket "$sock" "$@"; }
# new_fs: with -f, ROOT becomes a new, empty ext4 file system.
new_fs() {
    [ -n "$fresh_fs" ] || return 0
    mountpoint -q "$root" && umount "$root"
    rm -f "$work/fs.img"
    truncate -s 2G "$work/fs.img"
    mkfs.ext4 -q -F "$work/fs.img"
    mount -o loop "$work/fs.img" "$root"
}
root_entries() { ctl status --json | jq -r --arg r "$root" '.roots[] | select(.root == $r) | .entries'; }

start_daemon() {
    "$wsindexd" --config "$work/wsindexd.toml" 2>>"$work/daemon.log" &
    daemon_pid=$!
    for _ in $(seq 300); do
        ctl status >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "wsindexd did not start:" >&2; cat "$work/daemon.log" >&2; exit 1
}
stop_daemon() { kill -TERM "$daemon_pid"; wait "$daemon_pid" || true; daemon_pid=; }
# wait_entries N: until the index says the root holds N entries (60 s at most).
wait_entries() {
    for _ in $(seq 600); do
        [ "$(root_entries)" = "$1" ] && return 0
        sleep 0.1
    done
    echo "the index did not reach $1 entries (has $(root_entries))" >&2; exit 1
}

new_fs
start_daemon
ctl scan "$root" --wait > /dev/null
base=$(root_entries)
stop_daemon
want=$((base + members + 1))  # the members, and x itself

echo "# live_unpack: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), runs=$runs, archive=$archive ($members members), root=$root${fresh_fs:+ (a new ext4 per round)}"
none=() watched=() current=() none_cpu=() watched_cpu=()
for ((round = 0; round <= runs; round++)); do  # round 0 warms up, not counted
    for mode in none watched; do
        rm -rf "$root/x"
        new_fs
        if [ "$mode" = watched ]; then
            start_daemon
            wait_entries "$base"
        fi
        sync
        [ "$mode" = none ] || wait_entries "$base"
        t0=$(now)
        mkdir "$root/x"
        /usr/bin/time -f "%U %S" -o "$work/tar.cpu" tar -xf "$archive" -C "$root/x"
        t1=$(now)
        s=$(elapsed "$t0" "$t1")
        cpu=$(awk '{ printf "%.3f", $1 + $2 }' "$work/tar.cpu")
        if [ "$mode" = watched ]; then
            seen=
            while :; do
                if [ -z "$seen" ] && ctl find "$last_name" | grep -qF "/$last_name"; then seen=1; fi
                if [ -n "$seen" ] && [ "$(root_entries)" = "$want" ]; then break; fi
                if awk -v a="$t1" -v b="$(now)" 'BEGIN { exit !(b - a > 60) }'; then
                    echo "not current 60 s after tar (entries $(root_entries), want $want)" >&2
                    exit 1
                fi
            done
            c=$(elapsed "$t1" "$(now)")
            stop_daemon
            echo "# round $round watched: tar $s s ($cpu s CPU), current $c s after"
            [ "$round" -eq 0 ] || { watched+=("$s"); watched_cpu+=("$cpu"); current+=("$c"); }
        else
            echo "# round $round none: tar $s s ($cpu s CPU)"
            [ "$round" -eq 0 ] || { none+=("$s"); none_cpu+=("$cpu"); }
        fi
    done
done

m_none=$(echo "${none[@]}" | median)
m_watched=$(echo "${watched[@]}" | median)
m_current=$(echo "${current[@]}" | median)
m_none_cpu=$(echo "${none_cpu[@]}" | median)
m_watched_cpu=$(echo "${watched_cpu[@]}" | median)
max_current=$(printf '%s\n' "${current[@]}" | sort -g | tail -1)
printf "\n%-44s %9s\n" what seconds
printf "%-44s %9s\n" "tar -xf, no daemon (median)" "$m_none"
printf "%-44s %9s\n" "tar -xf, wsindexd watching (median)" "$m_watched"
printf "%-44s %9s\n" "slowdown (target <= 1.10)" "$(ratio "$m_watched" "$m_none")"
printf "%-44s %9s\n" "tar user+sys CPU, no daemon (median)" "$m_none_cpu"
printf "%-44s %9s\n" "tar user+sys CPU, wsindexd watching (median)" "$m_watched_cpu"
printf "%-44s %9s\n" "CPU ratio" "$(ratio "$m_watched_cpu" "$m_none_cpu")"
printf "%-44s %9s\n" "tar exit to index current (median)" "$m_current"
printf "%-44s %9s\n" "tar exit to index current (max)" "$max_current"
echo "# raw: none: ${none[*]}; watched: ${watched[*]}; current: ${current[*]}"
echo "# raw CPU: none: ${none_cpu[*]}; watched: ${watched_cpu[*]}"
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
