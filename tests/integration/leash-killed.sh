#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# If leash is SIGKILLed, no job process survives more than 1 s and the job's
# cgroup does not stay behind (the watchdog removes it, or the next run).
. "$(dirname "$0")/lib.sh"

wait_file() { for i in $(seq 500); do [ -s "$1" ] && return 0; sleep 0.01; done; return 1; }

"$LEASH" run --cgroup-parent "$PARENT" -- sh -c "'$HELPERS/lh-escape' '$TMP/esc'; sleep 300 & echo \$! > '$TMP/bg'; exec '$HELPERS/lh-ignore'" >/dev/null 2>&1 &
lp=$!
wait_file "$TMP/bg"
esc=$(cat "$TMP/esc"); bg=$(cat "$TMP/bg")
main=$(cat "$(find "$PARENT" -mindepth 1 -maxdepth 1 -type d | head -1)/cgroup.procs" | head -1)
kill -KILL "$lp"
wait "$lp" 2>/dev/null
check "main process gone within 1 s" pid_gone "$main" 1000
check "escapee gone within 1 s" pid_gone "$esc" 1000
check "background child gone within 1 s" pid_gone "$bg" 1000
gone=no
for i in $(seq 300); do
        [ -z "$(find "$PARENT" -mindepth 1 -type d)" ] && { gone=yes; break; }
        sleep 0.01
done
check "job cgroup removed by the watchdog" test $gone = yes

# leash and its watchdog killed together (the whole process group): the
# escapee survives them, and the next leash run sweeps the dead job's cgroup.
rm -f "$TMP/esc"
setsid "$LEASH" run --cgroup-parent "$PARENT" -- sh -c "'$HELPERS/lh-escape' '$TMP/esc'; exec sleep 300" >/dev/null 2>&1 &
wait_file "$TMP/esc"
esc=$(cat "$TMP/esc")
sleep 0.05
pg=$(ps -o pgid= -p $! | tr -d ' ')
kill -KILL -- "-$pg"
sleep 0.2
stale=$(find "$PARENT" -mindepth 1 -maxdepth 1 -type d | head -1)
check "stale job cgroup present after the group kill" test -n "$stale"
run_leash -- true
check "next run sweeps: escapee gone" pid_gone "$esc" 1000
check "next run sweeps: stale cgroup removed" test ! -d "$stale"
finish
