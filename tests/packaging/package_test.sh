#!/bin/sh
# package_test.sh: builds the .deb, checks its contents and metadata, installs, runs, removes it.
# Usage: package_test.sh SOURCE_DIR BUILD_DIR
# With REUSE_BUILD=1 in the environment, BUILD_DIR is an existing Release tree that is packaged
# as it is (scripts/package's REUSE_BUILD; CI's release build); otherwise scripts/package
# configures and builds BUILD_DIR from scratch.
#
# Needs root (dpkg -i) and a system without a wsindexd package of its own; otherwise it exits
# 77, which CTest reports as skipped. Everything it adds is taken away again: the package is
# purged and the `wsindex` user deleted if the test created it, also when a check fails.
set -eu
src=$1
build=$2
limit=${WSINDEX_PACKAGE_TEST_BUILD_TIMEOUT:-2400}   # seconds for the Release build + cpack

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for dpkg -i"; exit 77; }
command -v dpkg >/dev/null || { echo "SKIP: not a dpkg system"; exit 77; }
if dpkg-query -W -f '${Status}' wsindexd 2>/dev/null | grep -q installed; then
    echo "SKIP: a wsindexd package is already installed; not touching it"
    exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wsindex-pkg.XXXXXX")
user_existed=no
getent passwd wsindex >/dev/null && user_existed=yes
daemon_pid=
cleanup() {
    [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null || true
    if dpkg-query -W wsindexd >/dev/null 2>&1; then dpkg --purge wsindexd >/dev/null 2>&1 || true; fi
    if [ "$user_existed" = no ] && getent passwd wsindex >/dev/null; then
        userdel wsindex 2>/dev/null || true
        getent group wsindex >/dev/null && groupdel wsindex 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail=0
check() {  # check DESCRIPTION COMMAND...: runs the command, reports and counts a failure
    desc=$1
    shift
    if "$@" >/dev/null 2>&1; then echo "ok   $desc"; else echo "FAIL $desc"; fail=1; fi
}

echo "== build (scripts/package, at most ${limit}s)"
timeout "$limit" "$src/scripts/package" "$build" > "$tmp/package.log" 2>&1 || {
    tail -40 "$tmp/package.log"
    echo "FAIL scripts/package"
    exit 1
}
deb=$(tail -n 1 "$tmp/package.log")
check "last line of scripts/package is a .deb" test -f "$deb"
echo "package: $deb"

echo "== contents (dpkg-deb -c)"
dpkg-deb -c "$deb" | awk '{print $1, $6}' > "$tmp/contents"
cat "$tmp/contents"
has() { grep -q " \./$1\$" "$tmp/contents"; }
mode_of() { grep " \./$1\$" "$tmp/contents" | cut -c1-10; }
for path in usr/sbin/wsindexd usr/bin/wsctl usr/libexec/wsindexd/wsctl-fleet \
    usr/lib/systemd/system/wsindexd.service usr/lib/systemd/system/wsindexd.socket \
    usr/lib/systemd/user/wsindexd.service usr/lib/systemd/user/wsindexd.socket \
    usr/lib/sysusers.d/wsindexd.conf usr/lib/wsindexd/user-config etc/wsindexd.conf \
    usr/share/man/man1/wsctl.1.gz usr/share/man/man8/wsindexd.8.gz \
    usr/share/man/man5/wsindexd.conf.5.gz usr/share/doc/wsindexd/security.md; do
    check "contains /$path" has "$path"
done
check "wsindexd is 0755" test "$(mode_of usr/sbin/wsindexd)" = "-rwxr-xr-x"
check "no test binaries or static libraries" sh -c "! grep -Eq '_tests\$|\\.a\$|include/' '$tmp/contents'"

echo "== metadata (dpkg-deb -I)"
dpkg-deb -I "$deb" > "$tmp/info"
cat "$tmp/info"
field() { dpkg-deb -f "$deb" "$1"; }
check "Package: wsindexd" test "$(field Package)" = wsindexd
version=$(sed -n 's/^project(wsindexd VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
check "Version: $version-1" test "$(field Version)" = "$version-1"
for dep in libc6 libstdc++6 libsqlite3-0 libsystemd0 libacl1; do
    check "Depends on $dep" sh -c "dpkg-deb -f '$deb' Depends | grep -q '$dep'"
done
check "Depends names a sysusers provider" sh -c "dpkg-deb -f '$deb' Depends | grep -q 'systemd | systemd-standalone-sysusers | adduser'"
dpkg-deb --ctrl-tarfile "$deb" | tar -x -C "$tmp" ./conffiles ./postinst ./prerm ./postrm
check "conffiles lists /etc/wsindexd.conf" grep -qx /etc/wsindexd.conf "$tmp/conffiles"
check "maintainer scripts are executable" test -x "$tmp/postinst" -a -x "$tmp/prerm" -a -x "$tmp/postrm"

echo "== install (dpkg -i)"
if ! dpkg -i "$deb" > "$tmp/dpkg.log" 2>&1; then
    cat "$tmp/dpkg.log"
    echo "FAIL dpkg -i"
    exit 1
fi
check "user wsindex exists" getent passwd wsindex
check "group wsindex exists" getent group wsindex
check "wsindexd --version" /usr/sbin/wsindexd --version
/usr/sbin/wsindexd --version || true
check "wsctl --help" /usr/bin/wsctl --help
check "wsctl fleet runs the installed wsctl-fleet" sh -c \
    "WSINDEX_FLEET_URL= /usr/bin/wsctl fleet hosts 2>&1 | grep -q 'give --url'"
check "man pages are found" sh -c "man -w 5 wsindexd.conf && man -w 1 wsctl && man -w 8 wsindexd"
echo "-- systemd-analyze verify on the installed units"
out=$(systemd-analyze verify /usr/lib/systemd/system/wsindexd.service /usr/lib/systemd/system/wsindexd.socket 2>&1) && [ -z "$out" ] \
    && echo "ok   installed system units verify" || { echo "$out"; echo "FAIL installed system units verify"; fail=1; }
mkdir -m 0700 "$tmp/xdg"
out=$(XDG_RUNTIME_DIR=$tmp/xdg systemd-analyze --user verify /usr/lib/systemd/user/wsindexd.service /usr/lib/systemd/user/wsindexd.socket 2>&1) && [ -z "$out" ] \
    && echo "ok   installed user units verify" || { echo "$out"; echo "FAIL installed user units verify"; fail=1; }

echo "-- the shipped configuration starts the daemon (roots pointed at a scratch tree)"
mkdir -p "$tmp/tree/a/b" "$tmp/state"
: > "$tmp/tree/a/b/file"
sed "s|^roots = .*|roots = [\"$tmp/tree\"]|" /etc/wsindexd.conf > "$tmp/wsindexd.conf"
/usr/sbin/wsindexd --config "$tmp/wsindexd.conf" --socket "$tmp/wsindexd.sock" \
    --db "$tmp/state/index.db" > "$tmp/daemon.log" 2>&1 &
daemon_pid=$!
i=0
while [ ! -S "$tmp/wsindexd.sock" ] && [ $i -lt 100 ] && kill -0 "$daemon_pid" 2>/dev/null; do
    sleep 0.1
    i=$((i + 1))
done
check "daemon listens with the shipped configuration" test -S "$tmp/wsindexd.sock"
check "wsctl version talks to it" timeout 10 /usr/bin/wsctl --socket "$tmp/wsindexd.sock" version
check "database is not world-readable" sh -c "[ \$(( 0\$(stat -c %a '$tmp/state/index.db') & 07 )) -eq 0 ]"
kill -TERM "$daemon_pid" 2>/dev/null || true
i=0
while kill -0 "$daemon_pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "daemon stops on SIGTERM within 10 s" sh -c "! kill -0 $daemon_pid"
kill -KILL "$daemon_pid" 2>/dev/null || true
wait "$daemon_pid" 2>/dev/null || true
daemon_pid=
[ "$fail" = 0 ] || { echo "-- daemon log"; cat "$tmp/daemon.log"; }

echo "== upgrade keeps a locally edited /etc/wsindexd.conf"
echo "# local edit by package_test" >> /etc/wsindexd.conf
dpkg -i --force-confold "$deb" > "$tmp/dpkg2.log" 2>&1 || { cat "$tmp/dpkg2.log"; fail=1; }
check "local edit survives reinstall" grep -q "local edit by package_test" /etc/wsindexd.conf

echo "== remove and purge"
dpkg -r wsindexd > "$tmp/dpkg3.log" 2>&1 || { cat "$tmp/dpkg3.log"; fail=1; }
check "binaries gone after dpkg -r" test ! -e /usr/sbin/wsindexd -a ! -e /usr/bin/wsctl -a ! -e /usr/libexec/wsindexd/wsctl-fleet
check "conffile kept after dpkg -r" test -e /etc/wsindexd.conf
dpkg -P wsindexd > "$tmp/dpkg4.log" 2>&1 || { cat "$tmp/dpkg4.log"; fail=1; }
check "conffile gone after purge" test ! -e /etc/wsindexd.conf
check "state gone after purge" test ! -e /var/lib/wsindexd

[ "$fail" = 0 ] && echo "package test passed"
exit "$fail"
