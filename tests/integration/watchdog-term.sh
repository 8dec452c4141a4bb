#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A SIGTERM to a job's watchdog goes to leash when the watchdog is in another cgroup
# than leash: where the watchdog lives in a unit leash is not in (systemd's shared unit,
# leash.slice/leash-jobs.service), a stop of that unit reaches leash only so, and leash
# ends the job through its ladder with reason interrupted.  Before, the watchdog died of
# it and the job ran on (the control, with the leash of /work/main before the change:
# exit 0, reason ok after the job's own 3 s).  In leash's own cgroup the same stop
# signals leash itself, so the watchdog passes nothing on (a second interrupt would end
# the grace): the job runs its 3 s.
. "$(dirname "$0")/lib.sh"

# start: leash run, its job sleeping 3 s; sets LP (leash), MAIN (the job), WD (the watchdog)
start() {
        rm -f "$TMP/main" "$TMP/r.json"
        "$LEASH" run --cgroup-parent "$PARENT" -o "$TMP/r.json" -- sh -c "echo \$\$ > '$TMP/main'; exec sleep 3" >/dev/null 2>&1 &
        LP=$!
        for _ in $(seq 500); do [ -s "$TMP/main" ] && break; sleep 0.01; done
        MAIN=$(cat "$TMP/main")
        # leash's children: the job's main process and the watchdog (a clone of leash)
        WD=$(ps -o pid= --ppid "$LP" | tr -d ' ' | grep -vx "$MAIN" | head -n 1)
}

start
mkdir "$PARENT/wd"
echo "$WD" >"$PARENT/wd/cgroup.procs"
check "the watchdog ($WD) is in a cgroup of its own" grep -q "/wd$" "/proc/$WD/cgroup"
kill -TERM "$WD"
wait "$LP"
rc=$?
check "leash ended (exit $rc)" test "$rc" -ne 0
check "the report says interrupted ($(jget "$TMP/r.json" reason))" test "$(jget "$TMP/r.json" reason)" = interrupted
check "by SIGTERM ($(jget "$TMP/r.json" exit.interrupted_by))" test "$(jget "$TMP/r.json" exit.interrupted_by)" = TERM
check "the job is gone" pid_gone "$MAIN" 1000
rmdir "$PARENT/wd"

start
kill -TERM "$WD"
wait "$LP"
rc=$?
check "in leash's cgroup: nothing passed on, the job ran its 3 s (exit $rc, $(jget "$TMP/r.json" reason))" \
        test "$rc" -eq 0 -a "$(jget "$TMP/r.json" reason)" = ok
finish
