#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Root under systemd as PID 1, started from a system service that delegates nothing
# (leash-vm.service): leash places its job in the system manager's shared unit
# leash.slice/leash-jobs.service (Delegate=yes; 45-join.sh: started when absent, joined
# when there) and stays in the unit that started it; never at the top of systemd's tree
# (the busybox flavour's <cgroup2>/leash).  A daemon-reload while a job runs leaves its
# limits in place and its report true; `systemctl stop leash.slice` ends the job, and
# the report says interrupted (as a user's does, user-30-stop.sh): the stop's SIGTERM
# reaches leash through its watchdog, which is in the shared unit's leaf.

. "$(dirname "$0")/lib.sh"

# Where the job is, and where leash is (the job's parent).
run_leash -m 64M -o "$TMP/where.json" -- /bin/sh -c 'cat /proc/self/cgroup "/proc/$PPID/cgroup"'
tap_is "$RC" 0 "a job runs as root (stderr: $ERR)"
cg=$(jget "$TMP/where.json" cgroup)
tap_check "its cgroup is in leash.slice/leash-jobs.service ($cg)" \
	grep -Eq "^$CG/leash.slice/leash-jobs.service/[^/]+$" <<<"$cg"
tap_check "the job itself was there (/proc/self/cgroup: $OUT)" grep -Eq '^0::/leash.slice/leash-jobs.service/[^/]+$' <<<"$(head -n 1 <<<"$OUT")"
tap_is "$(tail -n 1 <<<"$OUT")" "0::/system.slice/leash-vm.service" "leash stayed in the unit that started it"
tap_check "nothing at the top of systemd's tree ($CG/leash)" test ! -e "$CG/leash"
tap_is "$(jget "$TMP/where.json" limits.memory.enforced_by)" cgroup "memory is enforced by the cgroup"
tap_is "$(jget "$TMP/where.json" placement.kind)" systemd "the report's placement is systemd ($(jget "$TMP/where.json" placement.why))"
tap_check "the job cgroup is gone once leash is" test ! -e "$cg"

# daemon-reload while a job runs under --cpus 0.5: the scope is delegated, so systemd
# leaves its subtree's cpu.max alone.
"$LEASH" run -c 0.5 -w 8s -o "$TMP/reload.json" -- "$LEASH_VM_HOG" spin 20000 >/dev/null 2>&1 &
lpid=$!
sleep 2
systemctl daemon-reload
tap_is "$?" 0 "daemon-reload while a job runs"
wait "$lpid"
rc=$?
tap_is "$(jget "$TMP/reload.json" reason)" wall_time "the job ended at its wall-time limit (exit $rc)"
cpu=$(jget "$TMP/reload.json" usage.cpu_time_s)
wall=$(jget "$TMP/reload.json" usage.wall_time_s)
tap_check "its CPU stayed at 0.5 core across the reload ($cpu s CPU in $wall s)" \
	awk -v c="$cpu" -v w="$wall" 'BEGIN { exit !(c <= 0.65 * w) }'
tap_is "$(jget "$TMP/reload.json" limits.cpus.enforced_by)" cgroup "and the report says the cgroup enforced it"

# systemctl stop leash.slice: systemd stops the shared unit: SIGTERM to the job and to
# the watchdog, which passes it to leash.
"$LEASH" run -w 60s -o "$TMP/stop.json" -- sleep 50 >/dev/null 2>&1 &
lpid=$!
wait_for 60 bash -c "compgen -G '$CG/leash.slice/leash-jobs.service/sleep@$lpid*' >/dev/null && pgrep -x -f 'sleep 50' >/dev/null"
sleep 0.5
# systemd's own walk of the unit it stops meets the job cgroup as leash (or its
# watchdog) removes it: it may log "Failed to kill control group ..., ignoring: No
# such device" for this unit (a dying cgroup's files answer ENODEV). The suite's
# journal check passes that one line by for the unit named here, and no other.
echo "leash-jobs.service" >>/run/leash-vm-stopped-scopes
systemctl stop leash.slice
tap_is "$?" 0 "systemctl stop leash.slice"
wait "$lpid"
rc=$?
tap_check "leash ended by the stop: exit $rc is not 0" test "$rc" -ne 0
tap_is "$(jget "$TMP/stop.json" reason)" interrupted "its report says interrupted"
tap_check "no sleep 50 is left" bash -c '! pgrep -x -f "sleep 50"'
tap_plan "$_tap_n"
tap_done
