#!/usr/bin/env bash
# live_outside_cost.sh: what changes outside every root cost the live index. A daemon follows a
# small root (10 files) while a 100k-entry tar is unpacked next to it, on the same file system:
# a file-system mark sees every one of those events, and each must be dropped cheaply.
#
#   bench/live_outside_cost.sh [-k RUNS] [-d WORKDIR] [WSINDEXD...]
#
# WSINDEXD: one or more daemon binaries to compare (default: build-rel/bin/wsindexd); rounds
# alternate between them, RUNS each (default 3). Every round unpacks into a new ext4 file system
# (a 3 GiB image in WORKDIR, default /var/tmp, loop-mounted; root), so no round meets the slow
# creates that ext4 shows after an `rm -rf` of 100k files. Printed per binary: the medians of the
# daemon's CPU time (user + sys, /proc/PID/stat, from just before the tar until 1 s after it) and
# of tar's wall time. The archive is bench/live_unpack.sh's ($WSINDEX_TREES/unpack100000.tar).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
trees=${WSINDEX_TREES:-/var/tmp/wsbench-trees}
runs=3
workdir=/var/tmp
while getopts "k:d:h" opt; do
    case $opt in
        k) runs=$OPTARG ;;
        d) workdir=$OPTARG ;;
        *) sed -n '2,14p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
daemons=("$@")
[ ${#daemons[@]} -gt 0 ] || daemons=("$repo/build-rel/bin/wsindexd")
wsctl=$repo/build-rel/bin/wsctl
archive=$trees/unpack100000.tar
[ -f "$archive" ] || { echo "no $archive: run bench/live_unpack.sh once" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "root needed (mount, fanotify)" >&2; exit 1; }

work=$(mktemp -d "$workdir/live_outside.XXXXXX")
mnt=$work/mnt
daemon_pid=
cleanup() {
    [ -z "$daemon_pid" ] || { kill -TERM "$daemon_pid" 2>/dev/null; wait "$daemon_pid" 2>/dev/null || true; }
    umount "$mnt" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
hz=$(getconf CLK_TCK)

declare -A cpu_ms tar_s
for round in $(seq "$runs"); do
    for i in "${!daemons[@]}"; do
        umount "$mnt" 2>/dev/null || true
        rm -f "$work/img"
        truncate -s 3G "$work/img"
        mkfs.ext4 -q -F "$work/img"
        mkdir -p "$mnt" && mount -o loop "$work/img" "$mnt"
        mkdir -p "$mnt/root" "$mnt/outside" "$work/state"
        rm -f "$work/state/"*
        for f in $(seq 10); do echo "$f" > "$mnt/root/f$f"; done
        export WSINDEX_SOCKET=$work/state/sock
        "${daemons[$i]}" --socket "$WSINDEX_SOCKET" --db "$work/state/index.db" --log-level warn \
            2> "$work/state/log" &
        daemon_pid=$!
        for _ in $(seq 200); do "$wsctl" version > /dev/null 2>&1 && break; sleep 0.05; done
        "$wsctl" scan "$mnt/root" --wait > /dev/null
        for _ in $(seq 200); do
            "$wsctl" status | grep -q "live (fanotify)" && break
            sleep 0.05
        done
        sync
        t0=$(cpu_ticks "$daemon_pid")
        s0=$(date +%s.%N)
        tar -xf "$archive" -C "$mnt/outside"
        s1=$(date +%s.%N)
        sleep 1  # the monitor reads what is still queued
        t1=$(cpu_ticks "$daemon_pid")
        kill -TERM "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true
        daemon_pid=
        ms=$(( (t1 - t0) * 1000 / hz ))
        wall=$(echo "$s1 - $s0" | bc)
        echo "round $round, ${daemons[$i]}: daemon CPU $ms ms, tar $wall s"
        cpu_ms[$i]+="$ms "
        tar_s[$i]+="$wall "
    done
done
echo "medians over $runs rounds:"
for i in "${!daemons[@]}"; do
    printf '  %s: daemon CPU %s ms, tar %s s\n' "${daemons[$i]}" \
        "$(tr ' ' '\n' <<< "${cpu_ms[$i]}" | grep . | median)" \
        "$(tr ' ' '\n' <<< "${tar_s[$i]}" | grep . | median)"
done
