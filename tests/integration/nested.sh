#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 23: a job inside a job nests. A leash run from inside a leash job
# makes its job cgroup under the job it runs in (placement kind job), after
# moving the outer job's processes into its leash-leaf (no internal
# processes), so the outer limits hold over the inner job, and the outer kill
# leaves nothing. On the code before issue 23 the inner job cgroup was made
# beside the outer job (<mount>/leash for root), outside its limits.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (the inner leash must write the outer job's cgroup)"

run_leash -o "$TMP/outer.json" -w 20 -- "$LEASH" run -o "$TMP/inner.json" -- sh -c "cat /proc/self/cgroup >'$TMP/inner-cg'"
outer=$(jget "$TMP/outer.json" cgroup)
inner=$(jget "$TMP/inner.json" cgroup)
check "outer and inner ran (outer exit $RC, inner $(jget "$TMP/inner.json" exit.code))" \
        test "$RC" = 0 -a "$(jget "$TMP/inner.json" exit.code)" = 0
check "inner report: placement kind job ($(jget "$TMP/inner.json" placement.kind))" \
        test "$(jget "$TMP/inner.json" placement.kind)" = job
check "inner job cgroup is below the outer job's ($inner under $outer)" \
        bash -c "case '$inner' in '$outer'/*) true ;; *) false ;; esac"
check "inner report: placement path is the outer job cgroup" \
        test "$(jget "$TMP/inner.json" placement.path)" = "$outer"
check "the inner job ran in its own cgroup" grep -q "^0::${inner#"$CG2"}\$" "$TMP/inner-cg"

# the outer kill takes the inner job with it
run_leash -o "$TMP/outer2.json" -w 1 -g 0.2 -- sh -c \
        "'$LEASH' run -o '$TMP/inner2.json' -- sh -c 'echo \$\$ >\"$TMP/sleeper\"; exec sleep 100'"
sleeper=$(cat "$TMP/sleeper" 2>/dev/null)
check "outer wall_time with an inner job running: 124" test "$RC" = 124
check "the inner job's process is gone (pid ${sleeper:-none})" pid_gone "${sleeper:-0}" 2000
left=$(find "$PARENT" -mindepth 1 -type d 2>/dev/null | tr '\n' ' ')
check "nothing left under the outer parent (${left:-none})" test -z "$left"

# the soft signal reaches a process of the outer job that the inner leash
# moved into the outer job's leash-leaf (signals go through the cgroups
# below; the main process gets it through its pidfd anyway)
run_leash -o "$TMP/outer3.json" -w 1 -g 3 -s TERM -- sh -c \
        "sh -c 'trap \"echo bg-term >\\\"$TMP/terms\\\"; exit 0\" TERM; while :; do sleep 0.05; done' & '$LEASH' run -- sleep 30; wait"
check "the soft signal reached the outer job's process in leash-leaf" grep -q bg-term "$TMP/terms"
check "outer: reason wall_time" test "$(jget "$TMP/outer3.json" reason)" = wall_time
finish
