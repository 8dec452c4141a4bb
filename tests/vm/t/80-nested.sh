#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Issue 23 on a real cgroup-v2 kernel with controllers: a job inside a job
# nests. The inner leash moves the outer job's processes into leash-leaf,
# enables the controllers in the outer job cgroup and makes its job cgroup
# there, so the inner job's memory counts against the outer limit. On the
# code before issue 23 the inner job cgroup was made beside the outer job
# (<cgroup2>/leash): 100 MiB under an outer -m 64M went through.

. "$(dirname "$0")/../../integration/lib.sh"

MiB=1048576
if ! has_controller memory; then
	not_ok "the memory controller is available under $PARENT"
	finish
fi

# the inner job, with no limit of its own, touches 100 MiB under the outer 64 MiB
run_leash -m 64M -w 60 -o "$TMP/outer.json" -- \
	"$LEASH" run -o "$TMP/inner.json" -- sh -c "cat /proc/self/cgroup >'$TMP/inner-cg'; '$HELPERS/lh-alloc' 100; echo survived"
diag "outer: exit $RC, reason $(jget "$TMP/outer.json" reason); inner cgroup $(grep '^0::' "$TMP/inner-cg")"
outer=$(jget "$TMP/outer.json" cgroup)
check "the inner job ran below the outer job cgroup" grep -q "^0::${outer#/sys/fs/cgroup}/[^/]*@" "$TMP/inner-cg"
check "the inner job's 100 MiB counted against the outer 64 MiB: outer reason memory" \
	test "$(jget "$TMP/outer.json" reason)" = memory
check "the inner job did not survive its allocation" test "$(grep -c survived <<<"$OUT")" = 0
check "outer: memory enforced by cgroup" test "$(jget "$TMP/outer.json" limits.memory.enforced_by)" = cgroup
check "outer: the job cgroup (with the inner one and leash-leaf) is removed" test ! -e "$outer"

# a limit of the inner job is its own, inside the outer one
run_leash -m 128M -w 60 -o "$TMP/outer2.json" -- \
	"$LEASH" run -m 32M -o "$TMP/inner2.json" -- "$HELPERS/lh-alloc" 64
check "inner -m 32M inside outer -m 128M: the inner job is OOM-killed (inner reason $(jget "$TMP/inner2.json" reason))" \
	test "$(jget "$TMP/inner2.json" reason)" = memory
check "inner: placement job" test "$(jget "$TMP/inner2.json" placement.kind)" = job
check "outer: exits with the inner leash's status 137 ($RC)" test "$RC" = 137
finish
