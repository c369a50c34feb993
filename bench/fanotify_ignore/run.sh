#!/usr/bin/env bash
# fanotify_ignore/run.sh: what watching costs a writer (a 100k-entry tar unpack), with the
# daemon's fanotify mask read as the daemon reads it ("full"), and with per-directory ignore
# marks for the children's attribute and write events while a directory waits for its whole
# re-listing ("ignore"), and with events that name only the directory ("dironly"); "none":
# nobody watching. watcher.c says what each mode does.
#
#   bench/fanotify_ignore/run.sh [-k RUNS] [-n ENTRIES] [-s SHAPE] [-d WORKDIR]   (as root)
#
# Every round unpacks into a new ext4 (a 2 GiB loop image in WORKDIR, default /var/tmp); modes
# take turns, RUNS rounds each (default 5) after one warm-up round. The archive is a mktree
# tree of ENTRIES (default 100000) entries of SHAPE (default balanced: ~20 files per directory;
# wide: thousands). Prints medians of tar's wall
# and CPU (user+sys) seconds and the ratios to "none".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shared=$(cd "$here/../../../shared" 2>/dev/null && pwd || echo /work/shared)
runs=5 entries=100000 shape=balanced workdir=/var/tmp
while getopts k:n:s:d: opt; do
    case $opt in
        k) runs=$OPTARG ;;
        n) entries=$OPTARG ;;
        s) shape=$OPTARG ;;
        d) workdir=$OPTARG ;;
        *) sed -n '2,14p' "$0"; exit 2 ;;
    esac
done
trees=${WSINDEX_TREES:-/var/tmp/wsbench-trees}
mkdir -p "$trees"
name=unpack$entries${shape/#balanced/}  # unpack100000.tar is live_unpack.sh's archive too
archive=$trees/$name.tar
if [ ! -f "$archive" ]; then
    python3 "$shared/bench/mktree.py" "$trees/$name" "$entries" "$shape" 1 > /dev/null
    tar -cf "$archive" -C "$trees/$name" .
    rm -rf "$trees/$name"
fi
work=$(mktemp -d "$workdir/fanotify_ignore.XXXXXX")
root=$work/root
mkdir -p "$root"
gcc -O2 -Wall -o "$work/watcher" "$here/watcher.c"
watcher_pid=
cleanup() {
    [ -z "$watcher_pid" ] || { kill -TERM "$watcher_pid" 2>/dev/null; wait "$watcher_pid" 2>/dev/null || true; }
    umount "$root" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
new_fs() {
    mountpoint -q "$root" && umount "$root"
    rm -f "$work/fs.img"
    truncate -s 2G "$work/fs.img"
    mkfs.ext4 -q -F "$work/fs.img"
    mount -o loop "$work/fs.img" "$root"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "# fanotify_ignore: $(date -u +%FT%TZ), $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), runs=$runs, archive=$archive"
declare -A wall cpu
for ((round = 0; round <= runs; round++)); do
    for mode in none full ignore dironly; do
        new_fs
        mkdir "$root/x"
        if [ "$mode" != none ]; then
            "$work/watcher" "$mode" "$root" 2>>"$work/watcher.log" &
            watcher_pid=$!
            until grep -q "watcher $mode ready" "$work/watcher.log" 2>/dev/null; do sleep 0.05; done
        fi
        sync
        t0=$(date +%s.%N)
        /usr/bin/time -f "%U %S" -o "$work/tar.cpu" tar -xf "$archive" -C "$root/x"
        t1=$(date +%s.%N)
        if [ -n "$watcher_pid" ]; then
            kill -TERM "$watcher_pid"; wait "$watcher_pid" || true; watcher_pid=
            : > "$work/watcher.log.tmp"; tail -1 "$work/watcher.log" >> "$work/watcher.log.tmp"
        fi
        w=$(echo "$t1 - $t0" | bc -l)
        c=$(awk '{ printf "%.3f", $1 + $2 }' "$work/tar.cpu")
        [ "$round" -gt 0 ] || continue
        wall[$mode]+="$w "
        cpu[$mode]+="$c "
        printf 'round %d %-6s wall %.3f s  cpu %.3f s\n' "$round" "$mode" "$w" "$c"
    done
done
grep "events" "$work/watcher.log" | tail -3
base_w=$(echo ${wall[none]} | tr ' ' '\n' | median)
base_c=$(echo ${cpu[none]} | tr ' ' '\n' | median)
for mode in none full ignore dironly; do
    mw=$(echo ${wall[$mode]} | tr ' ' '\n' | median)
    mc=$(echo ${cpu[$mode]} | tr ' ' '\n' | median)
    printf '%-6s median wall %.3f s (%.2fx)  cpu %.3f s (%.2fx)\n' "$mode" "$mw" \
        "$(echo "$mw / $base_w" | bc -l)" "$mc" "$(echo "$mc / $base_c" | bc -l)"
done
