#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The launch path's shortcuts (issues 5 and 16) change nothing a user sees:
# the cgroup2 mount found by statfs is the one /proc/self/mountinfo names, the
# static leash loads no shared object at all, `leash check` still finds v1
# controllers through libcgroup, and reports still come out of json-c.
. "$(dirname "$0")/lib.sh"

# default placement (root): <the cgroup2 mount from mountinfo>/leash/<job>
if [ "$(id -u)" = 0 ]; then
        "$LEASH" run --report "$TMP/r.json" -- /bin/true
        check "default placement: run succeeds" test $? = 0
        cg=$(jget "$TMP/r.json" cgroup)
        check "default placement is under the mountinfo cgroup2 mount ($CG2)" bash -c "[[ '$cg' == '$CG2/leash/true@'* ]]"
        check "default placement: the job cgroup is gone" test ! -e "$cg"
else
        SKIP_WHY="needs root for the default placement"
        skip "default placement"
        skip "default placement"
        skip "default placement"
fi

# -static-pie (the default where the static archives exist): no
# interpreter, no NEEDED entry; a sanitizer or --disable-static-leash build
# is dynamic on purpose
if ! command -v readelf >/dev/null; then
        SKIP_WHY="no readelf"
        skip "static leash has no interpreter"
        skip "static leash needs no shared library"
elif readelf -lW "$LEASH" | grep -q 'INTERP'; then
        SKIP_WHY="leash is linked dynamically here (sanitizers or --disable-static-leash)"
        skip "static leash has no interpreter"
        skip "static leash needs no shared library"
else
        check "static leash has no interpreter" bash -c "! readelf -lW '$LEASH' | grep -q INTERP"
        check "static leash needs no shared library" bash -c "! readelf -dW '$LEASH' | grep -q NEEDED"
fi

# JSON and kv reports (json-c) still come out whole
"$LEASH" run --cgroup-parent "$PARENT" --report "$TMP/j.json" -- /bin/true
check "JSON report parses" test "$(jget "$TMP/j.json" exit.code)" = 0
"$LEASH" run --cgroup-parent "$PARENT" --format kv --report "$TMP/k.kv" -- /bin/true
check "kv report has nested keys" grep -qx 'exit.code:0' "$TMP/k.kv"

# check still finds the v1 hierarchies through libcgroup
v1mem=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
if [ -n "$v1mem" ]; then
        "$LEASH" check --cgroup-parent "$PARENT" >"$TMP/c" 2>&1
        check "check lists the v1 memory hierarchy (libcgroup)" \
                grep -Eq "^  v1 memory +$v1mem " "$TMP/c"
else
        SKIP_WHY="no v1 memory hierarchy on this host"
        skip "check lists the v1 memory hierarchy"
fi
finish
