#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The launch path's shortcuts (issue 5) change nothing a user sees: the
# cgroup2 mount found by statfs is the one /proc/self/mountinfo names, a plain
# run loads neither libcgroup nor json-c, `leash check` still loads libcgroup
# to find v1 controllers, and reports still load json-c.
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

# libcgroup is dlopen()ed by check only: never in the binary's NEEDED list
if command -v objdump >/dev/null; then
        check "leash does not link libcgroup" bash -c "! objdump -p '$LEASH' | grep -q 'NEEDED.*libcgroup'"
        check "leash does not link json-c" bash -c "! objdump -p '$LEASH' | grep -q 'NEEDED.*json-c'"
else
        SKIP_WHY="no objdump"
        skip "leash does not link libcgroup"
        skip "leash does not link json-c"
fi

# ...json-c is loaded for a JSON or kv report: both still come out whole
"$LEASH" run --cgroup-parent "$PARENT" --report "$TMP/j.json" -- /bin/true
check "JSON report parses (json-c loaded on demand)" test "$(jget "$TMP/j.json" exit.code)" = 0
"$LEASH" run --cgroup-parent "$PARENT" --format kv --report "$TMP/k.kv" -- /bin/true
check "kv report has nested keys (json-c loaded on demand)" grep -qx 'exit.code:0' "$TMP/k.kv"

# ...and check still finds the v1 hierarchies through it
v1mem=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
if [ -n "$v1mem" ]; then
        "$LEASH" check --cgroup-parent "$PARENT" >"$TMP/c" 2>&1
        check "check lists the v1 memory hierarchy (libcgroup loaded on demand)" \
                grep -Eq "^  v1 memory +$v1mem " "$TMP/c"
else
        SKIP_WHY="no v1 memory hierarchy on this host"
        skip "check lists the v1 memory hierarchy"
fi
finish
