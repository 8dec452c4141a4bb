#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 23: a container's view, made with unshare: a cgroup namespace rooted
# at a test cgroup, with cgroup2 mounted afresh in a private mount namespace.
# Writable, leash places its jobs in the namespace (placement namespace,
# leash's processes moved into leash-leaf); read-only (Docker's default),
# it runs them without a cgroup and says how to get one. On the code before
# issue 23, root in the namespace made <mount>/leash (the read-only mount
# refused it: exit 125) and the report had no placement.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (unshare -C -m, mount)"
command -v unshare >/dev/null || skip_all "no unshare(1)"
NS=$PARENT/ns
mkdir "$NS" || skip_all "cannot create $NS"
# in_ns ro|rw SCRIPT: SCRIPT in a shell moved into $NS, in its own cgroup and
# mount namespaces, with cgroup2 mounted on /sys/fs/cgroup as a container
# runtime mounts it (over whatever is there, in the private namespace only)
in_ns() {
        local mode=$1
        shift
        bash -c 'echo $$ >"$1/cgroup.procs" && exec unshare -C -m --propagation private \
                bash -c "mount -t cgroup2 -o $2 none \"\$0\" && exec bash -c \"\$1\"" "$3" "$4"' \
                - "$NS" "$mode" /sys/fs/cgroup "$*"
}
if ! in_ns rw 'true' 2>"$TMP/err"; then
        rmdir "$NS"
        skip_all "cannot make a cgroup namespace with a cgroup2 mount here: $(head -1 "$TMP/err")"
fi

in_ns rw "'$LEASH' check >'$TMP/check-rw' 2>&1; '$LEASH' run -o '$TMP/rw.json' -- sh -c 'cat /proc/self/cgroup >\"$TMP/rw-cg\"'"
check "writable namespace: the job ran" test "$(jget "$TMP/rw.json" exit.code)" = 0
check "writable namespace: placement namespace ($(jget "$TMP/rw.json" placement.kind))" \
        test "$(jget "$TMP/rw.json" placement.kind)" = namespace
check "writable namespace: the job cgroup is under the namespace root, as the job sees it ($(grep '^0::' "$TMP/rw-cg"))" \
        grep -q '^0::/[^/]*@[0-9]*$' "$TMP/rw-cg"
check "writable namespace: leash's processes went into leash-leaf" test -d "$NS/leash-leaf"
check "writable namespace: check says placement namespace" grep -q '^placement: *namespace' "$TMP/check-rw"

in_ns ro "'$LEASH' check >'$TMP/check-ro' 2>&1; '$LEASH' run -o '$TMP/ro.json' -w 5 -- true; echo \$? >'$TMP/ro-rc'"
check "read-only namespace: the job ran without a cgroup (exit $(cat "$TMP/ro-rc"))" test "$(cat "$TMP/ro-rc")" = 0
check "read-only namespace: placement none ($(jget "$TMP/ro.json" placement.kind))" \
        test "$(jget "$TMP/ro.json" placement.kind)" = none
check "read-only namespace: why names the read-only cgroupfs" \
        bash -c 'grep -q read-only <<<"$1"' - "$(jget "$TMP/ro.json" placement.why)"
check "read-only namespace: check gives the container remedy" grep -q 'remedy: .*--cgroupns=private' "$TMP/check-ro"

for d in "$NS"/*/; do [ -d "$d" ] && rmdir "$d"; done
rmdir "$NS"
finish
