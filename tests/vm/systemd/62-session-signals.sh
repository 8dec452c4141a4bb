#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The sentinel (issue 40) is no member of leash's process group: a signal the terminal or
# a shell sends to that group reaches leash once.  uid 1000 logs in (runuser -l:
# pam_systemd's session-N.scope), and a shell with job control (set -m, as an
# interactive one) runs `leash run` as a job of its own process group; the user manager
# moves leash into its shared unit's leaf and leash leaves its sentinel in the session's
# scope.  The job's SIGINT and SIGTERM handler writes `got`, waits for the test's
# `release` and exits 3: the grace period (120 s) is what the ladder must give it.
#  - Ctrl-C (SIGINT to the group): the sentinel is not hit (right after the kill it runs
#    with no signal pending), it lives as long as leash does and is gone after; the
#    job's handler completes and the report says interrupted.
#  - kill -TERM -PGID (what a shell sends): the sentinel is stopped while the group
#    signal is sent and resumed once the job got leash's SIGTERM, so that a SIGTERM the
#    sentinel passed on would reach leash apart from the direct one (sent at once the two
#    coalesce into one pending signal, and no test sees the second).  leash takes a second
#    request for "no more grace" and kills the job; with the sentinel out of the group
#    there is none: the handler completes, the report says interrupted.
# The control is the tree before the fix (the sentinel in leash's group): the SIGINT
# pends in the sentinel (it inherits leash's blocked signals, so it is not killed), and
# the SIGTERM it passes on kills the job 1.2 s in, without its grace (tests 3, 12, 13 fail).

. "$(dirname "$0")/lib.sh"

user=$(getent passwd 1000 | cut -d: -f1)
chmod 0777 "$TMP"
# The job: Python, with no child of its own (a shell's background sleep can miss the
# handler's kill: dash resets a trapped signal in a child after the fork, and a signal
# that comes in between is caught by the copy of its handler and lost, so the sleep would
# keep the job cgroup busy until the grace's SIGKILL).  Its SIGINT and SIGTERM handler
# writes got, waits for release, writes done and exits 3.
cat >"$TMP/job.py" <<'PY'
import os, signal, sys, time
d = sys.argv[1]
def handler(sig, frame):
    open(d + "/got", "w").close()
    while not os.path.exists(d + "/release"):
        time.sleep(0.1)
    open(d + "/done", "w").close()
    sys.exit(3)
signal.signal(signal.SIGINT, handler)
signal.signal(signal.SIGTERM, handler)
with open(d + "/job.pid", "w") as f:
    f.write(str(os.getpid()))
while True:
    signal.pause()
PY
cat >"$TMP/login.sh" <<'SH'
set -m
"$LEASH" run -w 300s -g 120s -o "$DIR/s.json" -- /usr/bin/python3 "$DIR/job.py" "$DIR"
echo "$?" >"$DIR/leash.rc"
SH

# sigstate PID: sets STATE and PENDING (SigPnd | ShdPnd, a number) from /proc/PID/status;
# 1 when PID is gone.
sigstate() {
	local k v rest
	STATE='' PENDING=0
	while read -r k v rest; do
		case $k in
		State:) STATE=$v ;;
		SigPnd: | ShdPnd:) PENDING=$((PENDING | 16#$v)) ;;
		esac
	done 2>/dev/null <"/proc/$1/status" || return 1
	[[ -n $STATE ]]
}

# pending_none PID: PID lives, is neither stopped nor a zombie, and has no signal pending
# (a fatal default action pends SIGKILL at once, before the process runs again).
pending_none() {
	sigstate "$1" && [[ $STATE == [SR] && $PENDING -eq 0 ]] && return
	tap_diag "$(grep -s '^State\|^Sig\|^ShdPnd' "/proc/$1/status")"
	return 1
}

# term_taken PID: PID is gone or has no SIGTERM pending (leash read it from its signalfd).
term_taken() { ! sigstate "$1" || ((!(PENDING & (1 << 14)))); }

# passed_on PID: the sentinel PID is gone, or runs with nothing pending to pass on.
passed_on() { gone "$1" || pending_none "$1"; }

# login: logs in and starts the job; sets RPID, JPID, LPID, PGID and SENTINEL.
login() {
	local sid scope p
	rm -f -- "$TMP/s.json" "$TMP/job.pid" "$TMP/leash.rc" "$TMP/got" "$TMP/release" "$TMP/done"
	# job control: a background job of a script ignores SIGINT, its job as well
	set -m
	runuser -l "$user" -c "env LEASH=$LEASH LEASH_CONFIG_DIR=$LEASH_CONFIG_DIR LEASH_RESIDENT=0 DIR=$TMP bash $TMP/login.sh" </dev/null >"$TMP/login.out" 2>&1 &
	RPID=$!
	set +m
	wait_for 120 test -s "$TMP/job.pid"
	JPID=$(cat "$TMP/job.pid")
	sid=$(sed -n 's|^0::/user.slice/user-1000.slice/session-\([^/]*\)\.scope$|\1|p' "/proc/$RPID/cgroup")
	scope=$CG/user.slice/user-1000.slice/session-$sid.scope
	LPID=$(pgrep -o -u 1000 -x leash) # its watchdog is younger
	PGID=$(ps -o pgid= -p "$LPID" | tr -d ' ')
	SENTINEL=
	for p in $(cat "$scope/cgroup.procs"); do
		[[ $(cat "/proc/$p/comm" 2>/dev/null) == leash ]] && SENTINEL=$p
	done
	tap_check "leash ($LPID) leads its own process group ($PGID) in session $sid" test "$PGID" = "$LPID"
	tap_check "leash left its sentinel ($SENTINEL) in the session's scope" test -n "$SENTINEL"
	tap_check "the sentinel is no child of leash (a subreaper): its escape walk would take it for the job's" \
		test "$(ps -o ppid= -p "$SENTINEL" | tr -d ' ')" != "$LPID"
	stopped_scope "/proc/$JPID/cgroup"
}

# finish WHAT: releases the handler, waits for the report, checks the grace and cleanup.
finish() {
	touch "$TMP/release"
	wait_for 60 test -s "$TMP/leash.rc" ||
		tap_diag "leash has not exited: $(ps -o pid,ppid,pgid,stat,wchan:24,args -u 1000)
$(for p in $(pgrep -u 1000); do echo "$p $(cat /proc/$p/cgroup 2>/dev/null) $(grep -s '^Sig[PB]\|^ShdPnd' /proc/$p/status | tr '\n' ' ')"; done)
$(cat "$TMP/login.out")"
	tap_check "$1: the job's handler ran to its end (its grace)" test -e "$TMP/done"
	tap_is "$( [[ -s $TMP/s.json ]] && jget "$TMP/s.json" reason)" interrupted "$1: reason interrupted"
	tap_is "$( [[ -s $TMP/s.json ]] && jget "$TMP/s.json" escaped)" "[]" "$1: the report names no escaped process"
	tap_check "$1: the sentinel ($SENTINEL) is gone with leash ($LPID) and the job ($JPID)" \
		wait_for 30 gone "$SENTINEL" "$LPID" "$JPID"
	[[ -e $TMP/done ]] || cat "$TMP/login.out" >&2
	kill -KILL "$JPID" "$LPID" 2>/dev/null
	wait "$RPID" 2>/dev/null
}

login
kill -INT -- "-$PGID"
tap_check "Ctrl-C (SIGINT to leash's group): the sentinel is not hit" pending_none "$SENTINEL"
wait_for 60 test -e "$TMP/got"
tap_check "Ctrl-C: the job got leash's SIGINT" test -e "$TMP/got"
tap_check "Ctrl-C: the sentinel lives as long as leash ($LPID)" bash -c "kill -0 $LPID && kill -0 $SENTINEL"
finish "Ctrl-C"

login
kill -STOP "$SENTINEL"
kill -TERM -- "-$PGID"
wait_for 60 test -e "$TMP/got"
tap_check "SIGTERM to leash's group: the job got leash's SIGTERM" test -e "$TMP/got"
kill -CONT "$SENTINEL"
# what the sentinel had to pass on, it has passed on, and leash has read it
wait_for 30 passed_on "$SENTINEL"
wait_for 30 term_taken "$LPID"
tap_check "SIGTERM to leash's group: the sentinel lives as long as leash" bash -c "kill -0 $LPID && kill -0 $SENTINEL"
finish "SIGTERM to the group"
tap_check "no leash scope is left" no_leash_scope
tap_plan "$_tap_n"
tap_done
