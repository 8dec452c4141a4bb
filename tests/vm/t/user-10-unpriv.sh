#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Unprivileged, as uid 1000 in a delegated cgroup (LEASH_TEST_PARENT, set up by
# guest-suite.sh the way a service manager delegates): leash creates its job cgroup in
# the delegated subtree without being told where, enforces the limits with the
# controllers, and cleans up; leash check there says every limit is enforceable.

. "$(dirname "$0")/../../integration/lib.sh"

MiB=1048576
deleg=${LEASH_TEST_PARENT:?LEASH_TEST_PARENT is not set}
subtree() { find "$deleg" -mindepth 1 -maxdepth 1 -type d | sort; }
before=$(subtree)
check "running as uid 1000" test "$(id -u)" = 1000

# What a user would type: no --cgroup-parent.
"$LEASH" check >"$TMP/c" 2>&1
rc=$?
sed 's/^/# /' "$TMP/c"
check "leash check: exit 0" test "$rc" = 0
check "leash check: job cgroups under the delegated $deleg" grep -Eq "^job cgroups under: *$deleg\$" "$TMP/c"
check "leash check: may create job cgroups" grep -Eq '^  may create job cgroups: *yes' "$TMP/c"
for l in memory memory_high swap pids cpus; do
	check "leash check: $l enforced by cgroup" grep -Eq "^  $l +cgroup +ok" "$TMP/c"
done
check "leash check: verdict ok" grep -q '^verdict: *ok' "$TMP/c"

"$LEASH" run -m 32M -o "$TMP/oom.json" -- "$HELPERS/lh-alloc" 100 >"$TMP/out" 2>"$TMP/err"
RC=$?
job=$(jget "$TMP/oom.json" cgroup)
check "memory: OOM-killed, exit 137 (got $RC)" test "$RC" = 137
check "memory: reason memory" test "$(jget "$TMP/oom.json" reason)" = memory
check "memory: enforced_by cgroup" test "$(jget "$TMP/oom.json" limits.memory.enforced_by)" = cgroup
check "memory: oom_kills >= 1" fcmp "$(jget "$TMP/oom.json" usage.oom_kills) >= 1"
peak=$(jget "$TMP/oom.json" usage.memory_peak_bytes)
check "memory: memory_peak_bytes within [0.9, 1.0] x 32 MiB ($peak)" fcmp "0.9 * 32 * $MiB <= $peak <= 32 * $MiB"
check "memory: the job cgroup was made in the delegated subtree ($job)" bash -c "[[ '$job' == '$deleg'/* ]]"
check "memory: the job cgroup is removed" test ! -e "$job"

run_leash -m 32M -- sh -c 'cat /sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup)/memory.swap.max'
check "swap: memory.swap.max is 0 with --memory alone" test "$OUT" = 0

run_leash -P 10 -o "$TMP/p.json" -- "$HELPERS/lh-forkn" 20 200
check "pids: forks beyond 10 refused, reason pids" test "$RC" = 1 -a "$(jget "$TMP/p.json" reason)" = pids
check "pids: pids_peak <= 10" fcmp "$(jget "$TMP/p.json" usage.pids_peak) <= 10"

run_leash -c 0.5 -o "$TMP/s.json" -- "$HELPERS/lh-spin" 1
check "cpus: throttled_s > 0" fcmp "$(jget "$TMP/s.json" usage.throttled_s) > 0"
check "cpus: enforced_by cgroup" test "$(jget "$TMP/s.json" limits.cpus.enforced_by)" = cgroup

# Nothing of this script's jobs is left in the delegated subtree.
left=$(comm -13 <(echo "$before") <(subtree))
check "no job cgroup left in $deleg${left:+ (left: $left)}" test -z "$left"
finish
