#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# CPU on a real cgroup-v2 kernel: --cpus 0.5 halves a spinner's CPU time and is seen
# throttling; cpu_time_s matches a ground truth counted by the job itself.

. "$(dirname "$0")/../../integration/lib.sh"

# In the VM every controller is there: its absence is a failure, not a skip.
if ! has_controller cpu; then
	not_ok "the cpu controller is available under $PARENT"
	finish
fi

run_leash -c 0.5 -o "$TMP/spin.json" -- "$HELPERS/lh-spin" 2
cpu=$(jget "$TMP/spin.json" usage.cpu_time_s)
wall=$(jget "$TMP/spin.json" usage.wall_time_s)
diag "--cpus 0.5, lh-spin 2: cpu_time_s=$cpu wall_time_s=$wall throttled_s=$(jget "$TMP/spin.json" usage.throttled_s)"
check "--cpus 0.5: exit 0" test "$RC" = 0
check "--cpus 0.5: CPU time is half the wall time, +-15% ($cpu / $wall)" \
	fcmp "0.85 * 0.5 <= $cpu / $wall <= 1.15 * 0.5"
check "--cpus 0.5: throttled_s > 0" fcmp "$(jget "$TMP/spin.json" usage.throttled_s) > 0"
check "--cpus 0.5: limits.cpus.enforced_by cgroup" test "$(jget "$TMP/spin.json" limits.cpus.enforced_by)" = cgroup

# Ground truth, the whole tree: a subreaper's RUSAGE_SELF + RUSAGE_CHILDREN after reaping
# every child is what the cgroup's cpu.stat counts.
run_leash -o "$TMP/c.json" -- "$LEASH_VM_HOG" children 500 4
truth=$(sed -n 's/.*tree_cpu_s=\([0-9.]*\).*/\1/p' <<<"$OUT")
got=$(jget "$TMP/c.json" usage.cpu_time_s)
diag "vm-hog children 500 4: $OUT; leash cpu_time_s=$got"
check "500 children: cpu_time_s within 1% of the tree's rusage ($got vs $truth)" \
	fcmp "abs($got - $truth) <= 0.01 * $truth"

# The same with the project's helper.  lh-children prints getrusage(RUSAGE_CHILDREN) as
# children_cpu_s; when it also prints the whole tree (tree_cpu_s), that is the truth.
run_leash -o "$TMP/c.json" -- "$HELPERS/lh-children" 500 4
truth=$(sed -n 's/.*tree_cpu_s=\([0-9.]*\).*/\1/p' <<<"$OUT")
[ -n "$truth" ] || truth=$(sed -n 's/.*children_cpu_s=\([0-9.]*\).*/\1/p' <<<"$OUT")
got=$(jget "$TMP/c.json" usage.cpu_time_s)
diag "lh-children 500 4: $OUT; leash cpu_time_s=$got"
check "lh-children 500 4: cpu_time_s within 1% of its printed ground truth ($got vs $truth)" \
	fcmp "abs($got - ${truth:-0}) <= 0.01 * ${truth:-0}"
finish
