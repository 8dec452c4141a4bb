#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A SIGTERM to a job's watchdog goes to leash: where the watchdog lives in a unit
# leash is not in (systemd's shared unit, leash.slice/leash-jobs.service), a stop of
# that unit reaches leash only so, and leash ends the job through its ladder with
# reason interrupted.  Before, the watchdog died of it and the job ran on (the
# control, with the leash of /work/main before the change: reason ok after the
# job's own 3 s).
. "$(dirname "$0")/lib.sh"

"$LEASH" run --cgroup-parent "$PARENT" -o "$TMP/r.json" -- sh -c "echo \$\$ > '$TMP/main'; exec sleep 3" >/dev/null 2>&1 &
lp=$!
for _ in $(seq 500); do [ -s "$TMP/main" ] && break; sleep 0.01; done
main=$(cat "$TMP/main")
# leash's children: the job's main process and the watchdog (a clone of leash)
wd=$(ps -o pid= --ppid "$lp" | tr -d ' ' | grep -vx "$main" | head -n 1)
check "the watchdog is found ($wd)" test -n "$wd"
kill -TERM "$wd"
wait "$lp"
rc=$?
check "leash ended (exit $rc)" test "$rc" -ne 0
check "the report says interrupted ($(jget "$TMP/r.json" reason))" test "$(jget "$TMP/r.json" reason)" = interrupted
check "by SIGTERM ($(jget "$TMP/r.json" exit.interrupted_by))" \
        test "$(jget "$TMP/r.json" exit.interrupted_by)" = TERM
check "the job is gone" pid_gone "$main" 1000
finish
