#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A per-job supervisor whose Epilog never comes (slurmd died) does not wait
# for it forever (issue 27): once the job's wall limit and grace and then
# slurm.ini's epilog-wait have passed, it ends by itself as soon as the job
# cgroup is empty, saying so in its verdict; while a task still runs there it
# stays. A late Epilog then reports as usual, without calling it trouble.
# Control: EPILOG_LOST_CONTROL=1 leaves epilog-wait out of slurm.ini (a build
# from before issue 27 refuses the key): there the supervisor is still alive
# long after the bound: checks 4, 5, 7 and 14 fail (seen against main at 7c9215d).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "the Prolog runs as root"
export LEASH_CONFIG_DIR=$TMP/etc
mkdir -p "$LEASH_CONFIG_DIR/profiles.d" && chmod 755 "$TMP"
printf '[quick]\nwall-time = 2s\ngrace = 1s\n' >"$LEASH_CONFIG_DIR/profiles.d/t.ini"
wait_line="epilog-wait = 2s"
[ "${EPILOG_LOST_CONTROL:-0}" = 1 ] && wait_line=
printf '[slurm]\nprofile = quick\nstate-dir = %s\nreport-dir = %s\n%s\n' "$TMP/state" "$TMP/reports" "$wait_line" \
        >"$LEASH_CONFIG_DIR/slurm.ini"
JOB=$((920000000 + $$))
JOBCG=$CG2/leash/slurm/job_$JOB
had_slurm_dir=false; [ -d "$CG2/leash/slurm" ] && had_slurm_dir=true
had_leash_dir=false; [ -d "$CG2/leash" ] && had_leash_dir=true
new_task() { # a process that ignores SIGXCPU, placed in step_0, in $TASK
        "$HELPERS/lh-ignore" >"$TMP/ready" &
        TASK=$!
        for _ in $(seq 100); do [ -s "$TMP/ready" ] && break; sleep 0.02; done
        : >"$TMP/ready"
        slurm_hook task-prolog SLURM_STEP_ID=0 SLURM_TASK_PID=$TASK 2>>"$TMP/tp.err"
}
verdict=$TMP/state/job_$JOB/verdict
export LEASH

# 1. the job's wall limit kills its task; no Epilog comes
slurm_hook prolog 2>"$TMP/prolog.err"
check "prolog exits 0" test $? = 0
spid=$(sed -n 's/^supervisor_pid=//p' "$TMP/state/job_$JOB/state" 2>/dev/null)
check "the supervisor runs" kill -0 "${spid:-0}"
new_task
check "the task is placed" test $? = 0
wait "$TASK" 2>/dev/null
# the bound: 2 s wall + 1 s grace + 2 s epilog-wait from the Prolog
check "the supervisor ends by itself after the bound, the cgroup being empty" pid_gone "${spid:-0}" 8000
check "its verdict says why" grep -q "^ended=no Epilog" "$verdict"
check "and keeps the job's verdict (wall_time)" grep -qx "reason=wall_time" "$verdict"
new_task
check "a task placed after it ended is refused (task-prolog exits 1)" test $? = 1
kill -KILL "$TASK" 2>/dev/null; wait "$TASK" 2>/dev/null
slurm_hook epilog 2>"$TMP/epilog.err"
check "a late Epilog exits 0" test $? = 0
check "and calls the supervisor's end no trouble" bash -c "! grep -q 'did not answer\|is gone' '$TMP/epilog.err'"
r=$TMP/reports/$JOB.testnode.json
check "its report: reason wall_time" test "$(jget "$r" reason)" = wall_time
check "the job cgroup is gone" test ! -e "$JOBCG"

# 2. a task still in the job cgroup at the bound: the supervisor stays until it ends
slurm_hook prolog 2>"$TMP/prolog.err"
spid=$(sed -n 's/^supervisor_pid=//p' "$TMP/state/job_$JOB/state" 2>/dev/null)
new_task
wait "$TASK" 2>/dev/null # killed at the wall limit's grace
new_task                 # placed after the ladder: it runs on
check "a task placed after the ladder runs" kill -0 "$TASK"
sleep 4
check "past the bound, with a task in the job cgroup: the supervisor stays" kill -0 "${spid:-0}"
kill -KILL "$TASK" 2>/dev/null; wait "$TASK" 2>/dev/null
check "the cgroup empty, it ends" pid_gone "${spid:-0}" 3000
slurm_hook epilog 2>"$TMP/epilog.err"
check "the Epilog exits 0" test $? = 0
check "the job cgroup is gone" test ! -e "$JOBCG"

$had_slurm_dir || rmdir "$CG2/leash/slurm" 2>/dev/null
$had_leash_dir || rmdir "$CG2/leash" 2>/dev/null
finish
