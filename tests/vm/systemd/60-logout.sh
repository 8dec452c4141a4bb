#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A login session that ends while a job runs (issue 40): uid 1000 logs in (runuser -l:
# pam_systemd's session-N.scope) and runs `leash run` with a job that ignores SIGTERM,
# while a second session of the same user stays open (so the user manager lives on), and
# root ends the first session with `loginctl terminate-session`.  The user manager moved
# leash out of the session's scope into its shared unit's leaf (AttachProcessesToUnit);
# the sentinel leash left in the scope passes the stop on, so the job ends through the
# ladder (only the grace's SIGKILL ends it), the report says interrupted and nothing is
# left.  The control: the same session whose sentinel is SIGKILLed before the stop (what
# leash did before it had one): nothing reaches leash and its job runs on.  The job
# sleeps 40 s, so the 25 s bound is a correctness bound (it would still be there).

. "$(dirname "$0")/lib.sh"

user=$(getent passwd 1000 | cut -d: -f1)
chmod 0777 "$TMP"
cat >"$TMP/login.sh" <<'SH'
"$LEASH" run -w 300s -o "$DIR/s.json" -- /bin/sh -c 'trap "" TERM; echo $$ >"$1/job.pid"; exec sleep 40' sh "$DIR"
echo "$?" >"$DIR/leash.rc"
SH

# A second session of the same user stays open: the user manager lives on.
runuser -l "$user" -c "exec sleep 600" </dev/null >/dev/null 2>&1 &
opid=$!
wait_for 60 pgrep -u 1000 -x sleep >/dev/null

# session KILL-SENTINEL: logs in, runs the job, ends the session (after SIGKILLing the
# sentinel when KILL-SENTINEL is yes); sets JPID, LPID and REPORT (the report's reason
# within 25 s, empty when there is none).
session() {
	local rpid sid scope p
	rm -f -- "$TMP/s.json" "$TMP/job.pid" "$TMP/leash.rc"
	runuser -l "$user" -c "env LEASH=$LEASH LEASH_CONFIG_DIR=$LEASH_CONFIG_DIR LEASH_RESIDENT=0 DIR=$TMP bash $TMP/login.sh" </dev/null >"$TMP/login.out" 2>&1 &
	rpid=$!
	wait_for 120 test -s "$TMP/job.pid"
	JPID=$(cat "$TMP/job.pid")
	sid=$(sed -n 's|^0::/user.slice/user-1000.slice/session-\([^/]*\)\.scope$|\1|p' "/proc/$rpid/cgroup")
	scope=$CG/user.slice/user-1000.slice/session-$sid.scope
	tap_check "the login is a session of its own (session $sid)" test -n "$sid"
	LPID=$(pgrep -o -u 1000 -x leash)
	tap_check "leash ($LPID) is out of the session's scope" bash -c "! grep -q 'session-$sid.scope' /proc/$LPID/cgroup"
	SENTINEL=
	for p in $(cat "$scope/cgroup.procs"); do
		[[ $(cat "/proc/$p/comm" 2>/dev/null) == leash ]] && SENTINEL=$p
	done
	tap_check "leash left its sentinel ($SENTINEL) in the session's scope" test -n "$SENTINEL"
	stopped_scope "/proc/$JPID/cgroup"
	[[ $1 == yes && -n $SENTINEL ]] && kill -KILL "$SENTINEL"
	loginctl terminate-session "$sid"
	tap_is "$?" 0 "loginctl terminate-session $sid"
	wait_for 25 test -s "$TMP/s.json"
	REPORT=$( [[ -s $TMP/s.json ]] && jget "$TMP/s.json" reason)
	kill -KILL "$JPID" "$LPID" 2>/dev/null
	wait "$rpid" 2>/dev/null
}

session yes
tap_is "$REPORT" "" "control, the sentinel killed: the session's end reaches nothing (no report in 25 s)"
wait_for 30 gone "$JPID" "$LPID"

session no
tap_is "$REPORT" interrupted "the session's end reaches leash: reason interrupted"
tap_check "its job ($JPID) and leash ($LPID) are gone" gone "$JPID" "$LPID"
tap_check "its sentinel ($SENTINEL) is gone" gone "$SENTINEL"
tap_check "no leash scope is left" no_leash_scope
kill "$opid"
wait "$opid"
tap_plan "$_tap_n"
tap_done
