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
# (the outer shell waits on TERM too: dying at once, it would end the job
# and its leftovers would be killed before the trap could run)
run_leash -o "$TMP/outer3.json" -w 1 -g 3 -s TERM -- sh -c \
        "trap wait TERM; sh -c 'trap \"echo bg-term >\\\"$TMP/terms\\\"; exit 0\" TERM; while :; do sleep 0.05; done' & '$LEASH' run -- sleep 30; wait"
check "the soft signal reached the outer job's process in leash-leaf" grep -q bg-term "$TMP/terms"
check "outer: reason wall_time" test "$(jget "$TMP/outer3.json" reason)" = wall_time
# Issue 39 item 2: a leash that gets the outer job's soft signal (SIGXCPU by
# default, or the -s of the outer job) ends its own job through its ladder
# and writes its report; the outer job gives the inner leash the grace it
# gives everything it signalled, not a leftover's SIGKILL once its main
# process (the shell) has died. Before: with XCPU no inner report (leash died
# of the signal and left its cgroup to the outer kill); with TERM the outer
# log read TERM (wall_time) then KILL (leftover) at once, no inner report.
for sig in XCPU TERM; do
        rm -f "$TMP/inner-$sig.json"
        run_leash -o "$TMP/outer-$sig.json" -w 1 -g 60 -s $sig -- sh -c \
                "'$LEASH' run -o '$TMP/inner-$sig.json' -- sleep 100"
        sigs=$(jget "$TMP/outer-$sig.json" signals)
        check "outer -s $sig: wall_time, exit 124 ($(jget "$TMP/outer-$sig.json" reason), $RC)" \
                test "$(jget "$TMP/outer-$sig.json" reason)" = wall_time -a "$RC" = 124
        check "outer -s $sig: the inner leash wrote its report" test -s "$TMP/inner-$sig.json"
        check "inner under $sig: reason interrupted by $sig ($(jget "$TMP/inner-$sig.json" reason) $(jget "$TMP/inner-$sig.json" exit.interrupted_by))" \
                test "$(jget "$TMP/inner-$sig.json" reason)" = interrupted -a "$(jget "$TMP/inner-$sig.json" exit.interrupted_by)" = $sig
        check "outer -s $sig: no SIGKILL, no leftover ($sigs)" \
                bash -c "! grep -q KILL <<<'$sigs' && test '$(jget "$TMP/outer-$sig.json" usage.leftovers_killed)' = 0"
done
# the control: the same nested run with no grace (-g 0): the outer kills at
# once, the inner leash cannot write its report; the check above can fail.
# The inner job ignores the soft signal, so the inner leash's own ladder must
# wait out its grace (30 s) before it could report: without that, a job that
# dies of the signal at once let the inner leash, on a loaded machine, write
# its report in the microseconds before the outer's KILL (seen once in CI's
# run of this change).
rm -f "$TMP/inner-g0.json"
run_leash -o "$TMP/outer-g0.json" -w 1 -g 0 -- sh -c \
        "'$LEASH' run -g 30 -o '$TMP/inner-g0.json' -- sh -c 'trap \"\" XCPU; exec sleep 100'"
check "control -g 0: no inner report (outer $RC, $(jget "$TMP/outer-g0.json" signals))" test ! -e "$TMP/inner-g0.json"
finish
