#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A login session that ends while a job started through the resident launcher runs
# (issue 40, src/cli/resident.c): uid 1000 logs in (runuser -l), runs `leash run` once
# (the user manager moves it, and it leaves a launcher in the shared unit's leaf), then a
# job that ignores SIGTERM, which the launcher's leash runs outside the session; a second
# session of the same user keeps the user manager alive; root ends the first session.
# The caller, still in the session's scope, gets the session's SIGTERM and passes it on:
# the job ends through the ladder (only the grace's SIGKILL ends it), the report says
# interrupted, and nothing is left.  What shows that only the caller carries the stop:
# the job's leash is out of the session's scope (so the session's end does not reach it
# by itself).  The job sleeps 40 s, so the 25 s bound is a correctness bound.

. "$(dirname "$0")/lib.sh"

user=$(getent passwd 1000 | cut -d: -f1)
chmod 0777 "$TMP"
cat >"$TMP/login.sh" <<'SH'
"$LEASH" run -q -- true </dev/null
sock=${XDG_RUNTIME_DIR:-/run/user/1000}/leash/resident.sock
for i in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
"$LEASH" run -w 300s -o "$DIR/s.json" -- /bin/sh -c 'trap "" TERM; echo $$ >"$1/job.pid"; exec sleep 40' sh "$DIR" </dev/null
echo "$?" >"$DIR/leash.rc"
SH

runuser -l "$user" -c "exec sleep 600" </dev/null >/dev/null 2>&1 &
opid=$!
wait_for 60 pgrep -u 1000 -x sleep >/dev/null

runuser -l "$user" -c "env LEASH=$LEASH LEASH_CONFIG_DIR=$LEASH_CONFIG_DIR DIR=$TMP bash $TMP/login.sh" </dev/null >"$TMP/login.out" 2>&1 &
rpid=$!
wait_for 120 test -s "$TMP/job.pid"
JPID=$(cat "$TMP/job.pid")
sid=$(sed -n 's|^0::/user.slice/user-1000.slice/session-\([^/]*\)\.scope$|\1|p' "/proc/$rpid/cgroup")
tap_check "the login is a session of its own (session $sid)" test -n "$sid"
# the job's leash, its parent, and that one's: the launcher
LPID=$(awk '/^PPid:/{print $2}' "/proc/$JPID/status")
RPID=$(awk '/^PPid:/{print $2}' "/proc/$LPID/status")
tap_check "the job's leash ($LPID) was started by the launcher ($(tr '\0' ' ' <"/proc/$RPID/cmdline"))" \
	grep -q __resident "/proc/$RPID/cmdline"
tap_check "the job's leash is out of the session's scope ($(cat "/proc/$LPID/cgroup"))" \
	bash -c "! grep -q 'session-$sid.scope' /proc/$LPID/cgroup"
stopped_scope "/proc/$JPID/cgroup"
loginctl terminate-session "$sid"
tap_is "$?" 0 "loginctl terminate-session $sid"
wait_for 25 test -s "$TMP/s.json"
tap_is "$([[ -s $TMP/s.json ]] && jget "$TMP/s.json" reason)" interrupted \
	"the session's end reaches the launcher's leash through its caller: reason interrupted"
tap_check "its job ($JPID) and leash ($LPID) are gone" gone "$JPID" "$LPID"
kill -KILL "$JPID" "$LPID" 2>/dev/null
wait "$rpid" 2>/dev/null
tap_check "no leash scope is left" no_leash_scope
# over the user manager's private socket (no session bus to start)
runuser -u "$user" -- env XDG_RUNTIME_DIR=/run/user/1000 systemctl --user stop leash.slice
wait_for 30 bash -c "! kill -0 $RPID 2>/dev/null"
tap_check "the launcher ends with leash.slice" bash -c "! kill -0 $RPID 2>/dev/null"
kill "$opid"
wait "$opid"
tap_plan "$_tap_n"
tap_done
