#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Root: no unit per launch (issue 40, finding 5).  Where the system manager's shared unit
# leash.slice/leash-jobs.service is absent, the first run starts it (one transient
# service, Delegate=yes, whose one process, sleep infinity, keeps its cgroup); every
# later run joins it: no unit is started, its main process stays the same, and leash
# itself stays in the unit that started it, so that `systemctl stop` of that unit
# reaches leash (40-stop.sh).  A job never outlives its leash: the job's watchdog is in
# the shared unit's leaf, so a SIGKILL of every process of the unit that started leash
# (what the end of a stop sends) kills leash but not the watchdog, which kills the job.
# The control: the same job whose leash and watchdog are SIGKILLed together (as both
# were when the watchdog stayed in leash's unit) outlives them.

. "$(dirname "$0")/lib.sh"

shared=$CG/leash.slice/leash-jobs.service
echo "leash-jobs.service" >>/run/leash-vm-stopped-scopes
systemctl stop leash-jobs.service 2>/dev/null
tap_check "the shared unit is absent to begin with" bash -c "! systemctl is-active -q leash-jobs.service && test ! -e '$shared'"

"$LEASH" check >"$TMP/check.txt" 2>&1
tap_check "leash check names the shared unit a run would join" \
	grep -q '^placement: *systemd .*/leash.slice/leash-jobs.service$' "$TMP/check.txt"
tap_check "and starts nothing" bash -c "! systemctl is-active -q leash-jobs.service"

run_leash -o "$TMP/first.json" -- cat /proc/self/cgroup
tap_is "$RC" 0 "the first run (stderr: $ERR)"
tap_check "it started the shared unit ($(jget "$TMP/first.json" placement.why))" \
	grep -q 'leash-jobs.service.*started now' <<<"$(jget "$TMP/first.json" placement.why)"
tap_check "the job was in it ($OUT)" grep -Eq '^0::/leash.slice/leash-jobs.service/[^/]+$' <<<"$OUT"
tap_is "$(systemctl show -P ActiveState leash-jobs.service)" active "the shared unit stays active once leash is gone"
main=$(systemctl show -P MainPID leash-jobs.service)
tap_is "$(cat "$shared/leash-leaf/cgroup.procs" 2>&1)" "$main" "its keeper ($main) is in its leaf, nothing else is"
tap_is "$(cat "$shared/cgroup.procs" 2>&1)" "" "and its own cgroup holds no process"

run_leash -m 32M -o "$TMP/second.json" -- cat /proc/self/cgroup
tap_is "$RC" 0 "a second run (stderr: $ERR)"
why=$(jget "$TMP/second.json" placement.why)
tap_check "it joined the unit ($why)" grep -q "in the system manager's /leash.slice/leash-jobs.service" <<<"$why"
tap_check "and started none" test -z "$(grep -o started <<<"$why")"
tap_is "$(jget "$TMP/second.json" limits.memory.enforced_by)" cgroup "its memory limit is enforced by its cgroup"
tap_is "$(systemctl show -P MainPID leash-jobs.service)" "$main" "the shared unit is the same (MainPID $main)"
tap_is "$(systemctl list-units --all --plain --no-legend 'leash-*.scope' 'leash-jobs*' | awk '{ print $1 }' | tr '\n' ' ')" \
	"leash-jobs.service " "no leash scope exists, and no other shared unit"

# launch UNIT [LEASH-OPTION...]: a service whose shell runs leash with a job whose
# main process starts a child that ignores SIGTERM (STOPSEC, KILLSIG: the unit's
# TimeoutStopSec and KillSignal); sets LPID (leash), JPID (that child: not the main
# process, which dies with leash by its parent-death signal, but what the watchdog is
# for), WPID (the watchdog: the process of the shared leaf that is not the keeper).
launch() {
	local unit=$1 m
	shift
	rm -f "$TMP/job.pid" "$TMP/run.json"
	# a script file: systemd would expand the $ of a command line itself
	cat >"$TMP/svc.sh" <<'SVC'
"$LEASH" run "$@" -w 300s -o "$DIR/run.json" -- /bin/sh -c 'trap "" TERM; sleep 200 & echo $! >"$1/job.pid"; wait' sh "$DIR"
echo "$?" >"$DIR/leash.rc"
SVC
	systemd-run --quiet --unit="$unit" -p TimeoutStopSec="${STOPSEC:-90}" -p KillSignal="${KILLSIG:-SIGTERM}" \
		-E LEASH="$LEASH" -E DIR="$TMP" \
		-E LEASH_CONFIG_DIR="$LEASH_CONFIG_DIR" /bin/sh "$TMP/svc.sh" "$@"
	wait_for 120 test -s "$TMP/job.pid"
	JPID=$(cat "$TMP/job.pid")
	m=$(systemctl show -P MainPID "$unit.service")
	if [[ $(cat "/proc/$m/comm" 2>/dev/null) == leash ]]; then LPID=$m; else LPID=$(pgrep -x -P "$m" leash); fi
	WPID=$(grep -vx "$main" "$shared/leash-leaf/cgroup.procs")
	tap_diag "$unit: leash $LPID in $(cat "/proc/$LPID/cgroup" 2>&1), job $JPID in $(cat "/proc/$JPID/cgroup" 2>&1), watchdog $WPID"
}

# The defence: every process of the unit that started leash SIGKILLed (as a stop's
# final kill does).
launch vm-join-kill
tap_check "the watchdog is not in leash's unit" bash -c "[[ -n '$WPID' ]] && ! grep -qx '$WPID' '$CG/system.slice/vm-join-kill.service/cgroup.procs'"
systemctl kill -s KILL vm-join-kill.service
wait_for 60 gone "$LPID"
wait_for 60 gone "$JPID"
tap_check "SIGKILL of leash's unit: leash ($LPID) and its job ($JPID) are gone" gone "$LPID" "$JPID"
wait_for 60 bash -c "! compgen -G '$shared/sleep@$LPID*' >/dev/null"
tap_check "and the job cgroup is removed" bash -c "! compgen -G '$shared/sleep@$LPID*' >/dev/null"
systemctl reset-failed vm-join-kill.service 2>/dev/null

# The control: leash and its watchdog SIGKILLed at once.
launch vm-join-control
kill -KILL "$WPID" "$LPID" # the watchdog first: killed after leash, it might see leash die
wait_for 60 gone "$LPID" "$WPID"
wait_for 60 bash -c "[[ \$(systemctl show -P ActiveState vm-join-control.service) != active ]]"
tap_check "control: with its watchdog killed too, the job ($JPID) outlives leash ($LPID)" bash -c "! kill -0 $LPID 2>/dev/null && kill -0 $JPID"
kill -KILL "$JPID" 2>/dev/null
wait_for 60 gone "$JPID"
for d in "$shared"/sleep@"$LPID"*; do
	[[ -d $d ]] && wait_for 30 rmdir "$d"
done
systemctl stop vm-join-control.service 2>/dev/null
systemctl reset-failed vm-join-control.service 2>/dev/null

# The stop's own final SIGKILL: the unit's stop signal is one leash does not act on
# (SIGWINCH), so its stop timeout (3 s) ends in systemd's SIGKILL of leash.
STOPSEC=3 KILLSIG=SIGWINCH launch vm-join-stop
systemctl stop vm-join-stop.service
wait_for 60 gone "$LPID" "$JPID"
tap_check "a stop that SIGKILLs leash ends its job too" gone "$LPID" "$JPID"
tap_is "$(systemctl show -P Result vm-join-stop.service)" timeout "the stop timed out: its final SIGKILL ended leash"
tap_check "leash wrote no report" test ! -s "$TMP/run.json"
systemctl reset-failed vm-join-stop.service 2>/dev/null
tap_plan "$_tap_n"
tap_done
