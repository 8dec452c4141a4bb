#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A forked C function (libleash's leash_job_fork, tests/api/lh-fn) under the
# controllers of a real cgroup-v2 kernel: memory (OOM-killed as a whole,
# reason memory), pids (a fork refused, reason pids), cpu (cpu.max throttles
# it to half a core).

. "$(dirname "$0")/../../integration/lib.sh"
FN=${LH_FN:-$(dirname "$HELPERS")/api/lh-fn}
[ -x "$FN" ] || skip_all "no tests/api/lh-fn (build with make check first)"

for c in memory pids cpu; do
	if ! has_controller $c; then
		not_ok "the $c controller is available under $PARENT"
		finish
	fi
done

"$FN" "$PARENT" mem >"$TMP/mem.json"
check "function past memory: reported" test -s "$TMP/mem.json"
diag "mem: reason $(jget "$TMP/mem.json" reason), exit $(jget "$TMP/mem.json" exit.code), status $(jget "$TMP/mem.json" exit.status), signal $(jget "$TMP/mem.json" exit.signal), oom_kills $(jget "$TMP/mem.json" usage.oom_kills), peak $(jget "$TMP/mem.json" usage.memory_peak_bytes), swap $(jget "$TMP/mem.json" limits.swap.value)"
check "function past memory: reason memory" test "$(jget "$TMP/mem.json" reason)" = memory
check "function past memory: OOM-killed (SIGKILL, 137)" test "$(jget "$TMP/mem.json" exit.code)" = 137
check "function past memory: enforced by the cgroup" test "$(jget "$TMP/mem.json" limits.memory.enforced_by)" = cgroup
check "function past memory: oom_kills >= 1" fcmp "$(jget "$TMP/mem.json" usage.oom_kills) >= 1"
check "function past memory: peak within 64 MiB ($(jget "$TMP/mem.json" usage.memory_peak_bytes))" \
	fcmp "$(jget "$TMP/mem.json" usage.memory_peak_bytes) <= 64 * 1048576"

"$FN" "$PARENT" pids >"$TMP/pids.json"
check "function past pids: reason pids" test "$(jget "$TMP/pids.json" reason)" = pids
check "function past pids: pids_peak <= 20 ($(jget "$TMP/pids.json" usage.pids_peak))" \
	fcmp "$(jget "$TMP/pids.json" usage.pids_peak) <= 20"
check "function past pids: its 19 children did not outlive it" test "$(jget "$TMP/pids.json" usage.leftovers_killed)" -ge 1

"$FN" "$PARENT" cpu >"$TMP/cpu.json"
cpu=$(jget "$TMP/cpu.json" usage.cpu_time_s)
check "function under cpus=0.5: ended by the wall time" test "$(jget "$TMP/cpu.json" reason)" = wall_time
check "function under cpus=0.5: about half a core over 2 s ($cpu s of CPU)" fcmp "0.7 <= $cpu <= 1.3"
check "function under cpus=0.5: throttled" fcmp "$(jget "$TMP/cpu.json" usage.throttled_s) > 0"

finish
