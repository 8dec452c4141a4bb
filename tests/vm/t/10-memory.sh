#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Memory on a real cgroup-v2 kernel: --memory is memory.max with swap 0 and
# memory.oom.group, an over-limit job is OOM-killed as a whole and reported as such, and
# memory_peak_bytes matches what a probe touched.

. "$(dirname "$0")/../../integration/lib.sh"

MiB=1048576
# In the VM every controller is there: its absence is a failure, not a skip.
if ! has_controller memory; then
	not_ok "the memory controller is available under $PARENT"
	finish
fi

# The OOM kill.  The main process is a shell whose child touches 200 MiB: only
# memory.oom.group can kill the shell too (it would otherwise print "survived" and sleep
# into the wall-time limit), and the background sleeper must be gone as well.
run_leash -m 64M -w 60 -o "$TMP/oom.json" -- sh -c \
	"sleep 300 & echo \$! >'$TMP/bg'; '$HELPERS/lh-alloc' 200; echo survived; sleep 300"
cp "$TMP/oom.json" "${LEASH_VM_BUILDDIR:-$TMP}/tests/vm/oom-report.json" 2>/dev/null
check "OOM: exit status 137 (got $RC)" test "$RC" = 137
check "OOM: reason memory" test "$(jget "$TMP/oom.json" reason)" = memory
check "OOM: the main process was SIGKILLed" test "$(jget "$TMP/oom.json" exit.signal)" = KILL
check "OOM: memory.oom.group killed the whole job (no 'survived')" test "$OUT" = ""
check "OOM: oom_kills >= 1 ($(jget "$TMP/oom.json" usage.oom_kills))" \
	fcmp "$(jget "$TMP/oom.json" usage.oom_kills) >= 1"
peak=$(jget "$TMP/oom.json" usage.memory_peak_bytes)
check "OOM: memory_peak_bytes within [0.9, 1.0] x 64 MiB ($peak)" \
	fcmp "0.9 * 64 * $MiB <= $peak <= 64 * $MiB"
check "OOM: memory_peak_basis memory.peak" test "$(jget "$TMP/oom.json" usage.memory_peak_basis)" = memory.peak
check "OOM: limits.memory.enforced_by cgroup" test "$(jget "$TMP/oom.json" limits.memory.enforced_by)" = cgroup
check "OOM: limits.memory.value 64 MiB" test "$(jget "$TMP/oom.json" limits.memory.value)" = $((64 * MiB))
check "OOM: the background sleeper is gone" pid_gone "$(cat "$TMP/bg" 2>/dev/null || echo 0)" 2000
check "OOM: the group kill is not miscounted as leftovers" test "$(jget "$TMP/oom.json" usage.leftovers_killed)" = 0
job=$(jget "$TMP/oom.json" cgroup)
check "OOM: the job cgroup $job is removed" test ! -e "$job"

# What the job cgroup holds while the job runs, read by the job itself.
probe='cg=/sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup); for f in memory.max memory.swap.max memory.oom.group; do echo "$f=$(cat $cg/$f)"; done'
run_leash -m 64M -- sh -c "$probe"
check "--memory alone: memory.swap.max is 0 while the job runs" grep -qx 'memory.swap.max=0' <<<"$OUT"
check "--memory: memory.max is the limit" grep -qx "memory.max=$((64 * MiB))" <<<"$OUT"
check "--memory: memory.oom.group is 1" grep -qx 'memory.oom.group=1' <<<"$OUT"
diag "$(tr '\n' ' ' <<<"$OUT")"
run_leash -m 64M --swap 16M -- sh -c "$probe"
check "--swap 16M: memory.swap.max is 16 MiB" grep -qx "memory.swap.max=$((16 * MiB))" <<<"$OUT"

# Ground truth: a probe that touches N MiB; memory.peak may add the probe's own text,
# stack and page tables, never less than N.
for n in 32 100; do
	run_leash -o "$TMP/a.json" -- "$HELPERS/lh-alloc" "$n"
	peak=$(jget "$TMP/a.json" usage.memory_peak_bytes)
	check "lh-alloc $n: memory_peak_bytes in [$n, $((n + 8))] MiB ($peak)" \
		fcmp "$n * $MiB <= $peak <= ($n + 8) * $MiB"
done
finish
