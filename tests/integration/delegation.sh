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

# Issue 38: root believes no mark a user can set. The same x.scope, with the
# same user.delegate=1 that placed uid 65534's job in it just above (the
# control: the walk that trusts the mark), and leash run as root from a
# shell in it ("sudo leash run" from a user's terminal): root's job must not
# go into the user's subtree, where its owner could move root's job process
# out of its job cgroup or freeze it. Before issue 38: placement delegated,
# the job cgroup in x.scope.
# in_x_root DIR ARGS...: leash as root, from a shell in DIR
in_x_root() {
        bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' - "$1" "$LEASH" "${@:2}"
}
in_x_root "$X" run -o "$TMP/root-deleg.json" -- true >/dev/null 2>&1
rcg=$(jget "$TMP/root-deleg.json" cgroup)
check "root from the user's x.scope (user.delegate=1): not delegated ($(jget "$TMP/root-deleg.json" placement.kind))" \
        test "$(jget "$TMP/root-deleg.json" placement.kind)" != delegated
check "root's job cgroup is outside the user's subtree ($rcg)" \
        bash -c 'case "$1" in "$2"/*) false ;; *) true ;; esac' - "$rcg" "$U"
check "why says root believes no mark in the user's cgroup" \
        bash -c 'grep -q "root believes no mark at or below .*user@'$NB'.service" <<<"$1"' - \
        "$(jget "$TMP/root-deleg.json" placement.why)"
for d in "$X"/*/; do [ -d "$d" ] && rmdir "$d"; done

# A leash job's name and user.leash mark on a cgroup uid 65534 owns: root
# does not nest in it. The control: the same cgroup given back to root, where
# only uid 0 can have made it (a root leash in a root job, without
# CAP_SYS_ADMIN, knows its outer job by the name alone): root nests there.
J=$PARENT/fake@1
mkdir "$J"
chown $NB:$NB "$J" "$J/cgroup.procs" "$J/cgroup.subtree_control" "$J/cgroup.threads"
setpriv --reuid=$NB --regid=$NB --clear-groups "$PY" -c \
        'import os, sys; os.setxattr(sys.argv[1], "user.leash", b"pid=1 pidns=1")' "$J" ||
        not_ok "uid $NB sets user.leash on its cgroup"
in_x_root "$J" run -o "$TMP/root-job.json" -- true >/dev/null 2>&1
rcg=$(jget "$TMP/root-job.json" cgroup)
check "root from a user's cgroup named and marked as a job: not kind job ($(jget "$TMP/root-job.json" placement.kind))" \
        test "$(jget "$TMP/root-job.json" placement.kind)" != job
check "root's job cgroup is not under it ($rcg)" bash -c 'case "$1" in "$2"/*) false ;; *) true ;; esac' - "$rcg" "$J"
chown 0:0 "$J" "$J/cgroup.procs" "$J/cgroup.subtree_control" "$J/cgroup.threads"
in_x_root "$J" run -o "$TMP/root-job2.json" -- true >/dev/null 2>&1
check "control: the same cgroup root's: root nests in it ($(jget "$TMP/root-job2.json" placement.kind))" \
        test "$(jget "$TMP/root-job2.json" placement.kind)" = job
for d in "$J"/*/; do [ -d "$d" ] && rmdir "$d"; done
rmdir "$J"

rmdir "$X" "$U/app.slice" "$U"
finish
