#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 23: leash takes a subtree only where it is delegated to it. The
# layout of a systemd user manager, made by hand under the test parent and
# handed to uid 65534 the way systemd hands it to a user:
#   user@65534.service/app.slice/x.scope, every level owned by the user.
# Without the delegate mark on x.scope (a scope without Delegate=yes) leash
# must not climb into app.slice (the code before issue 23 made its job
# cgroups there and enabled controllers in it: systemd's, not ours); with
# user.delegate=1 on it (what systemd sets for Delegate=yes) the jobs go
# into x.scope, leash's processes into its leash-leaf.
. "$(dirname "$0")/lib.sh"

NB=65534
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
        skip_all "needs root and setpriv"
fi
U=$PARENT/user@$NB.service
X=$U/app.slice/x.scope
mkdir -p "$X" || skip_all "cannot create $X"
for d in "$U" "$U/app.slice" "$X"; do
        chown $NB:$NB "$d" "$d/cgroup.procs" "$d/cgroup.subtree_control" "$d/cgroup.threads"
done
chmod 0711 "$TMP"
mkdir -m 0777 "$TMP/w"
setpriv --reuid=$NB --regid=$NB --clear-groups test -w "$TMP/w" || {
        rmdir "$X" "$U/app.slice" "$U" 2>/dev/null
        skip_all "uid $NB cannot reach $TMP (a private ${TMPDIR:-/tmp} above it, as in a package build)"
}
cp "$LEASH" "$TMP/leash" && chmod 0755 "$TMP/leash"
# in_x ARGS...: leash as uid 65534, from a shell in x.scope
in_x() {
        bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec setpriv --reuid='$NB' --regid='$NB' --clear-groups "$@"' \
                - "$X" "$TMP/leash" "$@"
}
setxattr() { "$PY" -c 'import os, sys; os.setxattr(sys.argv[1], sys.argv[2], sys.argv[3].encode())' "$@"; }

in_x run -o "$TMP/w/plain.json" -- true >/dev/null 2>&1
jobs_in_app=$(find "$U/app.slice" -maxdepth 1 -mindepth 1 -name '*@*' | wc -l)
check "a scope without Delegate=yes: leash does not climb into app.slice (placement $(jget "$TMP/w/plain.json" placement.kind))" \
        test "$(jget "$TMP/w/plain.json" placement.kind)" = none
check "app.slice's subtree_control untouched ($(cat "$U/app.slice/cgroup.subtree_control"))" \
        test -z "$(cat "$U/app.slice/cgroup.subtree_control")"
check "why names the unit that is not delegated" \
        bash -c 'grep -q "x.scope, which is systemd" <<<"$1"' - "$(jget "$TMP/w/plain.json" placement.why)"

setxattr "$X" user.delegate 1
in_x run -o "$TMP/w/deleg.json" -- sh -c 'cat /proc/self/cgroup' >"$TMP/deleg-cg" 2>&1
check "a scope with the delegate mark: placement delegated ($(jget "$TMP/w/deleg.json" placement.kind))" \
        test "$(jget "$TMP/w/deleg.json" placement.kind)" = delegated
check "the job cgroup is in x.scope ($(jget "$TMP/w/deleg.json" cgroup))" \
        bash -c 'case "$1" in "$2"/*@*) true ;; *) false ;; esac' - "$(jget "$TMP/w/deleg.json" cgroup)" "$X"
check "leash's processes were moved into x.scope/leash-leaf" test -d "$X/leash-leaf"
in_x check >"$TMP/check" 2>&1
check "check: placement delegated" grep -q '^placement: *delegated' "$TMP/check"

for d in "$X"/*/; do [ -d "$d" ] && rmdir "$d"; done
rmdir "$X" "$U/app.slice" "$U"
finish
