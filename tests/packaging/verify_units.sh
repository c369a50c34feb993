#!/bin/sh
# verify_units.sh: `systemd-analyze verify` on every unit, plus sysusers and script syntax.
# Usage: verify_units.sh SOURCE_DIR
#
# verify insists that ExecStart= binaries exist. Before the package is installed they do not,
# so the units are verified as copies whose /usr/sbin/wsindexd and /usr/lib/wsindexd/ paths
# point into a scratch root with stand-in executables; nothing else is changed. The package
# test (package_test.sh) verifies the installed, unmodified units once more.
set -eu
src=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wsindex-verify.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0

root=$tmp/root
mkdir -p "$root/usr/sbin" "$root/usr/lib/wsindexd" "$tmp/system" "$tmp/user" "$tmp/run"
chmod 0700 "$tmp/run"
printf '#!/bin/sh\nexit 0\n' > "$root/usr/sbin/wsindexd"
chmod 0755 "$root/usr/sbin/wsindexd"
cp "$src/systemd/user/user-config" "$root/usr/lib/wsindexd/user-config"
for page in wsctl.1 wsindexd.8 wsindexd.conf.5; do
    mkdir -p "$root/usr/share/man/man${page##*.}"
    gzip -9nc "$src/packaging/man/$page" > "$root/usr/share/man/man${page##*.}/$page.gz"
done
rewrite() {
    sed -e "s|/usr/sbin/wsindexd|$root/usr/sbin/wsindexd|g" \
        -e "s|/usr/lib/wsindexd/|$root/usr/lib/wsindexd/|g" "$1" > "$2"
}
for unit in wsindexd.service wsindexd.socket; do
    rewrite "$src/systemd/$unit" "$tmp/system/$unit"
    rewrite "$src/systemd/user/$unit" "$tmp/user/$unit"
done

# The Documentation=man: lines are checked too, against our own pages.
export MANPATH="$root/usr/share/man"
echo "== systemd-analyze verify (system)"
out=$(systemd-analyze verify "$tmp/system/wsindexd.service" "$tmp/system/wsindexd.socket" 2>&1) || fail=1
[ -z "$out" ] || { echo "$out"; fail=1; }   # warnings count as failures
echo "== systemd-analyze --user verify"
out=$(XDG_RUNTIME_DIR=$tmp/run systemd-analyze --user verify \
    "$tmp/user/wsindexd.service" "$tmp/user/wsindexd.socket" 2>&1) || fail=1
[ -z "$out" ] || { echo "$out"; fail=1; }

echo "== systemd-sysusers --dry-run"
if systemd-sysusers --help 2>/dev/null | grep -q -- --dry-run; then
    out=$(systemd-sysusers --dry-run "$src/systemd/wsindexd.sysusers" 2>&1) || { echo "$out"; fail=1; }
else
    echo "skipped: systemd-sysusers has no --dry-run"
fi

echo "== shell syntax of the maintainer scripts and user-config"
for script in "$src/packaging/debian/postinst" "$src/packaging/debian/prerm" \
    "$src/packaging/debian/postrm" "$src/systemd/user/user-config" "$src/scripts/package"; do
    sh -n "$script" || { echo "syntax error: $script"; fail=1; }
done

echo "== user-config writes a private configuration once"
home="$tmp/home dir"
mkdir -p "$home"
conf="$tmp/config/wsindexd/wsindexd.conf"
"$root/usr/lib/wsindexd/user-config" "$conf" "$home" || fail=1
grep -qx "path = \"$home\"" "$conf" || { echo "no root line in $conf"; fail=1; }
[ "$(stat -c %a "$conf")" = 600 ] || { echo "$conf is not 0600"; fail=1; }
echo "# edited" >> "$conf"
"$root/usr/lib/wsindexd/user-config" "$conf" "$home" || fail=1
grep -q "^# edited" "$conf" || { echo "user-config overwrote an existing file"; fail=1; }

[ "$fail" = 0 ] && echo "all unit checks passed"
exit "$fail"
