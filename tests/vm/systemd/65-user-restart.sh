#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A restart of the user manager while jobs run (issue 40): uid 1000 in a login session
# (runuser -l) runs `leash run` with a job that ignores SIGTERM (the user manager moved
# leash into its shared unit's leaf), and a user service whose shell runs the same (leash
# stays in that service, its job joins the shared unit).  root restarts
# user@1000.service: its stop stops leash.slice/leash-jobs.service, whose processes (leash, its watchdog, the job) get
# SIGTERM, so leash ends the job through its ladder (only the grace's SIGKILL ends it)
# and its report says interrupted (the service's leash: its unit is stopped with the
# manager, SIGTERM, the same); nothing of the old shared unit is left, and the next
# run from the same session starts the shared unit again under the new user manager.
# The job sleeps 40 s, so the 30 s bound is a correctness bound (it would still be there).

. "$(dirname "$0")/lib.sh"

user=$(getent passwd 1000 | cut -d: -f1)
chmod 0777 "$TMP"
cat >"$TMP/svc.sh" <<'SH'
"$LEASH" run -w 300s -o "$DIR/svc.json" -- /bin/sh -c 'trap "" TERM; echo $$ >"$1/svcjob.pid"; exec sleep 40' sh "$DIR"
SH
cat >"$TMP/login.sh" <<'SH'
systemd-run --user --quiet --unit=leash-vm-restart-svc -E LEASH="$LEASH" -E DIR="$DIR" -E LEASH_CONFIG_DIR="$LEASH_CONFIG_DIR" /bin/sh "$DIR/svc.sh"
"$LEASH" run -w 300s -o "$DIR/s.json" -- /bin/sh -c 'trap "" TERM; echo $$ >"$1/job.pid"; exec sleep 40' sh "$DIR"
echo "$?" >"$DIR/leash.rc"
while [ ! -e "$DIR/again" ]; do sleep 0.2; done
"$LEASH" run -o "$DIR/again.json" -- true
echo "$?" >"$DIR/again.rc"
SH
runuser -l "$user" -c "env LEASH=$LEASH LEASH_CONFIG_DIR=$LEASH_CONFIG_DIR LEASH_RESIDENT=0 DIR=$TMP bash $TMP/login.sh" </dev/null >"$TMP/login.out" 2>&1 &
rpid=$!
wait_for 120 test -s "$TMP/job.pid"
wait_for 120 test -s "$TMP/svcjob.pid"
jpid=$(cat "$TMP/job.pid")
spid=$(cat "$TMP/svcjob.pid")
# the session's leash: its job's parent (the oldest leash of uid 1000 may be the
# service's, which systemd-run started first: CI of e9e953a picked it once)
lpid=$(awk '/^PPid:/{print $2}' "/proc/$jpid/status")
old=$(systemctl show -P MainPID user@1000.service)
tap_check "leash ($lpid) is in the user manager's shared unit" \
	grep -q 'user@1000.service/leash.slice/leash-jobs.service/' "/proc/$lpid/cgroup"
stopped_scope "/proc/$jpid/cgroup"
echo "leash-jobs.service" >>/run/leash-vm-stopped-scopes
systemctl restart user@1000.service
tap_is "$?" 0 "systemctl restart user@1000.service"
tap_check "a new user manager runs (MainPID $old before)" \
	bash -c "[[ \$(systemctl show -P MainPID user@1000.service) != '$old' ]]"
wait_for 30 test -s "$TMP/s.json"
tap_is "$(jget "$TMP/s.json" reason 2>/dev/null)" interrupted "the running job's report: reason interrupted"
tap_check "its job ($jpid) and leash ($lpid) are gone" gone "$jpid" "$lpid"
wait_for 30 test -s "$TMP/svc.json"
tap_is "$(jget "$TMP/svc.json" reason 2>/dev/null)" interrupted "a user service's leash run (the unit stopped with its manager): reason interrupted"
tap_check "its job ($spid) is gone" gone "$spid"
tap_diag "leash's exit: $(cat "$TMP/leash.rc" 2>&1)"
touch "$TMP/again"
wait_for 120 test -s "$TMP/again.rc"
tap_is "$(cat "$TMP/again.rc" 2>&1)" 0 "a run after the restart, from the same session"
why=$(jget "$TMP/again.json" placement.why 2>/dev/null)
tap_check "it started the shared unit again ($why)" grep -q 'leash-jobs.service, started now' <<<"$why"
tap_is "$(jget "$TMP/again.json" placement.kind 2>/dev/null)" systemd "its placement is systemd"
kill -KILL "$jpid" "$lpid" "$spid" 2>/dev/null
wait "$rpid"
tap_plan "$_tap_n"
tap_done
