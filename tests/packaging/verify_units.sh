#!/bin/sh
# verify_units.sh: `systemd-analyze verify` on every unit, the capabilities and system calls the
# live index needs, plus sysusers and script syntax.
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

# The capabilities and system calls the live index needs, and no more capabilities than that.
# Values are compared as sets (order and repetition do not matter); an assignment list that
# starts with ~ (a deny list) is not expected in these units and fails the check.
unit_values() {  # unit_values UNIT KEY: every value of KEY=, one word a line, sorted
    sed -n "s/^$2=//p" "$1" | tr ' ' '\n' | sed '/^$/d' | sort -u
}
# Every group's members, from one call: a line "@group" at column 0, then its members indented.
systemd-analyze syscall-filter 2>/dev/null > "$tmp/syscall-groups"
expand_syscalls() {  # names on stdin, one a line: system calls, @groups expanded recursively
    awk '
        FNR == NR {
            if ($0 ~ /^@/) { group = $1; next }
            if ($1 == "" || $1 ~ /^#/) next
            members[group] = members[group] " " $1
            next
        }
        function expand(name,    parts, n, i) {
            if (name !~ /^@/) { print name; return }
            if (seen[name]++) return
            n = split(members[name], parts, " ")
            for (i = 1; i <= n; i++) expand(parts[i])
        }
        { expand($1) }' "$tmp/syscall-groups" -
}
check_caps() {  # check_caps UNIT KEY EXPECTED...
    unit=$1
    key=$2
    shift 2
    want=$(printf '%s\n' "$@" | sed '/^$/d' | sort -u)
    got=$(unit_values "$unit" "$key")
    [ "$got" = "$want" ] || {
        echo "$unit: $key= is '$(echo "$got" | tr '\n' ' ')', expected '$(echo "$want" | tr '\n' ' ')'"
        fail=1
    }
}
check_syscalls() {  # check_syscalls UNIT SYSCALL...: each is allowed by SystemCallFilter=
    unit=$1
    shift
    filters=$(unit_values "$unit" SystemCallFilter)
    [ -n "$filters" ] || return 0   # no filter: every call is allowed
    case $filters in ~* | *"
~"*) echo "$unit: a SystemCallFilter= deny list; this check expects allow lists"; fail=1 ;; esac
    allowed=$(echo "$filters" | expand_syscalls | sort -u)
    for call in "$@"; do
        echo "$allowed" | grep -qx "$call" || { echo "$unit: SystemCallFilter= refuses $call"; fail=1; }
    done
}
echo "== capabilities and system calls of the live index"
# System unit: CAP_DAC_READ_SEARCH (read every directory; open_by_handle_at), CAP_SYS_ADMIN
# (fanotify file-system marks); fanotify and file handles through the seccomp filter.
check_caps "$src/systemd/wsindexd.service" AmbientCapabilities CAP_DAC_READ_SEARCH CAP_SYS_ADMIN
check_caps "$src/systemd/wsindexd.service" CapabilityBoundingSet CAP_DAC_READ_SEARCH CAP_SYS_ADMIN
check_syscalls "$src/systemd/wsindexd.service" fanotify_init fanotify_mark open_by_handle_at \
    name_to_handle_at inotify_init1 inotify_add_watch inotify_rm_watch
system_allowed=$(unit_values "$src/systemd/wsindexd.service" SystemCallFilter | expand_syscalls)
for call in mount umount2 fsopen open_tree move_mount pivot_root swapon quotactl bpf acct \
    sethostname init_module kexec_load; do
    echo "$system_allowed" | grep -qx "$call" &&
        { echo "wsindexd.service: SystemCallFilter= allows $call"; fail=1; }
done
# User unit: a user manager cannot grant capabilities, so it asks for none and uses inotify
# (fanotify_init is refused by its filter, which the daemon takes as "use inotify").
check_caps "$src/systemd/user/wsindexd.service" AmbientCapabilities
check_caps "$src/systemd/user/wsindexd.service" CapabilityBoundingSet
check_syscalls "$src/systemd/user/wsindexd.service" inotify_init1 inotify_add_watch \
    inotify_rm_watch

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
