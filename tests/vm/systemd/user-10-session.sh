#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# An ordinary user (uid 1000) in a real login session (runuser -l: pam_systemd's
# session-N.scope, owned by root, delegating nothing) under systemd as PID 1, with only
# what the packages install (leash.slice, user@.service's io drop-in): the user manager
# moves leash into the leaf of its shared unit leash.slice/leash-jobs.service
# (Delegate=yes; AttachProcessesToUnit, started by the first run) and its limits are the
# cgroup's: -m 32M is an OOM kill with reason memory, -P 10 stops a 20-fork job, --cpus
# 0.5 throttles; the scope holds every controller the user manager has, io included (the
# packaged drop-in).  The Python side is user-20-python.sh.

. "$(dirname "$0")/lib.sh"

own=$(sed -n 's/^0:://p' /proc/self/cgroup)
tap_check "the test runs in a login session's scope ($own)" grep -Eq '^/user.slice/user-1000.slice/session-[^/]+\.scope$' <<<"$own"
tap_check "which is not delegated to the user" test ! -w "$CG$own/cgroup.procs"

# The OOM kill, and the evidence the closing note shows.
run_leash -m 32M -w 60s -o "$TMP/oom.json" -- "$LEASH_VM_HOG" alloc 200
keep user-oom-report.json "$TMP/oom.json"
echo "$ERR" >"$LEASH_VM_KEEP/user-oom-stderr.txt"
tap_is "$RC" 137 "-m 32M: exit 137 (stderr: $ERR)"
tap_is "$(jget "$TMP/oom.json" reason)" memory "-m 32M: reason memory"
tap_is "$(jget "$TMP/oom.json" limits.memory.enforced_by)" cgroup "-m 32M: enforced_by cgroup"
cg=$(jget "$TMP/oom.json" cgroup)
tap_check "the job was in the user manager's leash.slice ($cg)" \
	grep -Eq "^$CG/user.slice/user-1000.slice/user@1000.service/leash.slice/leash-jobs.service/[^/]+$" <<<"$cg"
tap_is "$(jget "$TMP/oom.json" placement.kind)" systemd "the report's placement is systemd ($(jget "$TMP/oom.json" placement.why))"
"$LEASH" check >"$TMP/check.txt" 2>&1
tap_check "leash check: placement systemd, the user manager's shared unit" \
	grep -q '^placement: *systemd .*/user@1000.service/leash.slice/leash-jobs.service$' "$TMP/check.txt"
tap_check "leash check: the user manager delegates memory, pids, cpu and io (the packaged drop-in adds io)" \
	grep -q 'memory=yes pids=yes cpu=yes io=yes' "$TMP/check.txt"
run_leash -- sh -c 'cat "/sys/fs/cgroup$(dirname "$(sed -n "s/^0:://p" /proc/self/cgroup)")/cgroup.controllers"'
tap_is "$OUT" "cpu io memory pids" "the job's scope holds cpu, io, memory and pids"
keep user-leash-check.txt "$TMP/check.txt"
tap_diag "$(cat "$TMP/check.txt")"

# pids: 20 forks at once against -P 10.
run_leash -P 10 -w 60s -o "$TMP/pids.json" -- "$LEASH_VM_HOG" fork 20
tap_check "-P 10: the 20-fork job fails (exit $RC, $OUT)" test "$RC" -ne 0
tap_check "-P 10: fewer than 20 forks ($OUT)" bash -c "[[ '$OUT' =~ forked=([0-9]+) ]] && (( BASH_REMATCH[1] < 10 ))"
tap_is "$(jget "$TMP/pids.json" limits.pids.enforced_by)" cgroup "-P 10: enforced_by cgroup"

# cpu: 0.5 core for 4 s of wall time.
run_leash -c 0.5 -w 4s -o "$TMP/cpu.json" -- "$LEASH_VM_HOG" spin 20000
cpu=$(jget "$TMP/cpu.json" usage.cpu_time_s)
wall=$(jget "$TMP/cpu.json" usage.wall_time_s)
tap_check "--cpus 0.5 throttles: $cpu s CPU in $wall s" awk -v c="$cpu" -v w="$wall" 'BEGIN { exit !(c <= 0.65 * w && c > 0) }'
tap_is "$(jget "$TMP/cpu.json" limits.cpus.enforced_by)" cgroup "--cpus 0.5: enforced_by cgroup"
tap_check "--cpus 0.5: throttled periods counted ($(jget "$TMP/cpu.json" usage.cpu_throttled_periods))" \
	awk -v t="$(jget "$TMP/cpu.json" usage.cpu_throttled_periods)" 'BEGIN { exit !(t > 0) }'

tap_plan "$_tap_n"
tap_done
