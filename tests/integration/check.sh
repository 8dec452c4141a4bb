#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# leash check says plainly what this host gives.
. "$(dirname "$0")/lib.sh"

"$LEASH" check --cgroup-parent "$PARENT" >"$TMP/c" 2>&1
rc=$?
cat "$TMP/c" | sed 's/^/# /'
check "check prints the cgroup2 mount" grep -q "^cgroup2 mount: *$CG2\$" "$TMP/c"
check "check names the mode" grep -Eq '^cgroup mode: *(v2|hybrid)' "$TMP/c"
check "check lists every limit" bash -c "for l in memory memory_high swap pids cpus cpu_time wall_time nofile fsize core; do grep -q \"^  \$l \" '$TMP/c' || exit 1; done"
if has_controller memory && has_controller pids && has_controller cpu; then
        check "all controllers: exit 0" test "$rc" = 0
        check "all controllers: verdict ok" grep -q '^verdict: *ok' "$TMP/c"
        check "memory by cgroup" grep -Eq '^  memory +cgroup +ok' "$TMP/c"
else
        check "missing controllers: exit 1" test "$rc" = 1
        check "missing controllers: verdict DEGRADED" grep -q '^verdict: *DEGRADED' "$TMP/c"
        check "memory degraded, and says why" grep -q 'no memory controller' "$TMP/c"
fi
# check changes nothing: no directory made, no controller enabled. Only what
# this test owns is compared (its parent, and a parent that does not exist yet):
# other programs on the machine, and leash runs with the default placement in
# parallel tests, create and remove cgroups under the cgroup2 root meanwhile.
cg_state() {
        find "$PARENT" -type d | sort
        cat "$PARENT/cgroup.subtree_control"
}
before=$(cg_state)
"$LEASH" check --cgroup-parent "$PARENT/not-yet" >/dev/null 2>&1
"$LEASH" check --cgroup-parent "$PARENT" >/dev/null 2>&1
after=$(cg_state)
check "check creates no cgroup and enables no controller" test "$before" = "$after"
"$LEASH" check --frob >/dev/null 2>&1
check "check: bad option is 125" test $? = 125
finish
