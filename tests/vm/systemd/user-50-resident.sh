#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The resident launcher (issue 40, src/cli/resident.c) for an ordinary user in a real login
# session under systemd: the first `leash run` has the user manager
# move it into the shared unit's leaf and, at its end, leaves a launcher there; later
# launches ask no manager anything: the launcher starts their leash in the unit, where
# the job's cgroup is made without a move.  Their limits are the cgroup's; stopping the
# user's leash.slice stops the launcher and its jobs through the ladder (the report says
# interrupted); a launch from a terminal is served too; one with LEASH_RESIDENT=0 asks the
# manager as before (the control).

. "$(dirname "$0")/lib.sh"
unset LEASH_RESIDENT

sock=${XDG_RUNTIME_DIR:-/run/user/1000}/leash/resident.sock
shared=$CG/user.slice/user-1000.slice/user@1000.service/leash.slice/leash-jobs.service
probe='gp=$(awk "/^PPid:/{print \$2}" /proc/$PPID/status); echo "gp=$(tr "\0" " " </proc/$gp/cmdline)"'
systemctl --user stop leash-jobs.service 2>/dev/null
wait_for 30 test ! -e "$shared"

run_leash -o "$TMP/first.json" -- sh -c "$probe"
tap_is "$RC" 0 "the first launch runs (stderr: $ERR)"
tap_is "$(jget "$TMP/first.json" placement.kind)" systemd "the first launch: the manager moved leash"
wait_for 30 test -S "$sock"
tap_check "it left a resident launcher ($sock)" test -S "$sock"
"$LEASH" check >"$TMP/check.txt" 2>&1
tap_check "leash check says the launcher runs ($(grep launcher: "$TMP/check.txt"))" \
	grep -q "^  launcher: running ($sock)" "$TMP/check.txt"
lpid=$(pgrep -u 1000 -f '__resident' | head -1)
tap_check "the launcher is in the shared unit's leaf ($(cat /proc/$lpid/cgroup 2>&1))" \
	grep -q '/leash.slice/leash-jobs.service/leash-leaf$' "/proc/$lpid/cgroup"

run_leash -m 32M -w 60s -o "$TMP/oom.json" -- sh -c "$probe; exec \"\$0\" alloc 200" "$LEASH_VM_HOG"
tap_check "a later launch: its leash was started by the launcher ($OUT)" grep -q '^gp=.*__resident' <<<"$OUT"
tap_is "$RC" 137 "-m 32M through the launcher: exit 137 (stderr: $ERR)"
tap_is "$(jget "$TMP/oom.json" reason)" memory "-m 32M through the launcher: reason memory"
tap_is "$(jget "$TMP/oom.json" limits.memory.enforced_by)" cgroup "-m 32M through the launcher: enforced_by cgroup"
cg=$(jget "$TMP/oom.json" cgroup)
tap_check "its job was in the shared unit ($cg)" grep -Eq "^$shared/[^/]+$" <<<"$cg"
keep user-resident-report.json "$TMP/oom.json"

# A job that runs leash: that leash is not in a login session's scope, so it is not
# served (the launcher would start its job outside the outer job's limits); it nests.
run_leash -o "$TMP/outer.json" -- "$LEASH" run -- sh -c 'sed -n "s/^0:://p" /proc/self/cgroup'
outer=$(jget "$TMP/outer.json" cgroup)
tap_check "a leash inside a served job nests its job below the outer one ($OUT in ${outer#$CG})" \
	grep -q "^${outer#$CG}/" <<<"$OUT"

LEASH_RESIDENT=0 run_leash -- sh -c "$probe"
tap_check "control: with LEASH_RESIDENT=0 leash runs the job itself ($OUT)" grep -q '^gp=.*bash' <<<"$OUT"
if command -v script >/dev/null; then
	out=$(script -qec "$LEASH run -- sh -c '$probe; test -t 0 && echo stdin-tty'" /dev/null </dev/null 2>&1 | tr -d '\r')
	tap_check "a launch from a terminal is served too, its stdin the terminal ($out)" \
		eval 'grep -q "^gp=.*__resident" <<<"$out" && grep -q "^stdin-tty" <<<"$out"'
else
	tap_skip "no script(1) to give the launch a terminal"
fi

# Stopping the user's leash.slice stops the launcher and its jobs through the ladder.
"$LEASH" run -w 300s -o "$TMP/stop.json" -- sh -c 'echo $$ >"$1/job.pid"; exec sleep 200' sh "$TMP" </dev/null >/dev/null 2>"$TMP/stop.err" &
cpid=$!
wait_for 30 test -s "$TMP/job.pid"
systemctl --user stop leash.slice
wait "$cpid"
rc=$?
tap_is "$(jget "$TMP/stop.json" reason)" interrupted "systemctl --user stop leash.slice: the served job's report says interrupted"
tap_check "and the caller ends (exit $rc)" test "$rc" -ne 0
tap_check "the launcher is gone and its socket removed" eval '! kill -0 '"$lpid"' 2>/dev/null && test ! -e "$sock"'
tap_check "the job is gone" eval '! kill -0 '"$(cat "$TMP/job.pid")"' 2>/dev/null'

tap_plan "$_tap_n"
tap_done
