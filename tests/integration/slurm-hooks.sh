#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `leash slurm` without Slurm: the Prolog/TaskProlog/Epilog called the way
# slurmd calls them (no arguments, SLURM_* variables, the wrapper names), on
# this host's cgroup2 under leash/slurm. The whole Slurm path (sbatch, srun,
# a non-root user, the SPANK plugin) is the slurm tier: tests/slurm/run.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "the Prolog runs as root"
export LEASH_CONFIG_DIR=$TMP/etc
mkdir -p "$LEASH_CONFIG_DIR/profiles.d"
chmod 755 "$TMP"
cat >"$LEASH_CONFIG_DIR/profiles.d/t.ini" <<INI
[quick]
wall-time = 4s
grace = 1s
pids = 512
INI
cat >"$LEASH_CONFIG_DIR/slurm.ini" <<INI
[slurm]
profile = quick
state-dir = $TMP/state
report-dir = $TMP/reports
INI
JOB=$((900000000 + $$))
JOBCG=$CG2/leash/slurm/job_$JOB
had_slurm_dir=false; [ -d "$CG2/leash/slurm" ] && had_slurm_dir=true # the Prolog makes it; left as found
hook() { # NAME [ENV...]: the hook as slurmd runs it: argv[0] = its wrapper name, no arguments
        local name=$1
        shift
        env -i LEASH="$LEASH" LEASH_CONFIG_DIR="$LEASH_CONFIG_DIR" SLURM_JOB_ID=$JOB SLURM_JOB_UID=0 SLURM_JOB_GID=0 \
                SLURM_JOB_USER=root SLURM_JOB_PARTITION=debug SLURMD_NODENAME=testnode "$@" \
                bash -c 'exec -a "$0" "$LEASH"' "slurm-$name"
}
export LEASH

# usage errors: one line, 125
"$LEASH" slurm prolog extra >/dev/null 2>"$TMP/err"
check "slurm prolog takes no arguments (125)" test $? = 125
check "and says so" grep -q "takes no arguments" "$TMP/err"
env -u SLURM_JOB_ID "$LEASH" slurm prolog 2>"$TMP/err"
check "without SLURM_JOB_ID: 125" test $? = 125
check "naming the variable" grep -q "SLURM_JOB_ID=''" "$TMP/err"
"$LEASH" slurm --help | grep -q "slurm-prolog"
check "slurm --help names the wrappers" test $? = 0

# Prolog: the job cgroup and a supervisor in its own session
hook prolog 2>"$TMP/prolog.err"
check "prolog exits 0" test $? = 0
if grep -qw pids "$CG2/leash/slurm/cgroup.controllers" 2>/dev/null; then
        check "the Prolog's log: no weak-limit line where pids.max enforces" bash -c "! grep -q -- '--pids' '$TMP/prolog.err'"
else
        check "the Prolog's log: a line for pids, not enforced, and the remedy" \
                grep -q -- "job $JOB: --pids 512 is not enforced (no pids controller.*better here" "$TMP/prolog.err"
fi
check "the job cgroup exists" test -d "$JOBCG"
spid=$(sed -n 's/^supervisor_pid=//p' "$TMP/state/job_$JOB/state" 2>/dev/null)
check "the supervisor runs" kill -0 "${spid:-0}"
check "in a session of its own (slurmd kills the Prolog's process group)" \
        test "$(ps -o sid= -p "${spid:-1}" | tr -d ' ')" = "${spid:-none}"

# TaskProlog: a task of step 0 placed by the supervisor
"$HELPERS/lh-ignore" >"$TMP/ready" &
task=$!
for _ in $(seq 100); do [ -s "$TMP/ready" ] && break; sleep 0.02; done
hook task-prolog SLURM_STEP_ID=0 SLURM_TASK_PID=$task
check "task-prolog exits 0" test $? = 0
check "the task is in step_0" grep -qx "0::${JOBCG#"$CG2"}/step_0" "/proc/$task/cgroup"

# the wall-time limit of the whole job: SIGXCPU, then SIGKILL after the grace
# (4 s from the Prolog: the task must still be alive when it is looked at
# above, on a loaded machine too; at 1 s it was killed and reaped first)
wait $task 2>/dev/null
st=$?
check "the task (ignoring SIGXCPU) was SIGKILLed ($st)" test $st = 137
check "leash slurm status lists the job" bash -c "\"$LEASH\" slurm status | grep -q '^$JOB '"

# Epilog: report, nothing left
hook epilog 2>"$TMP/epilog.err"
check "epilog exits 0" test $? = 0
r=$TMP/reports/$JOB.testnode.json
check "the report is there" test -s "$r"
check "reason wall_time" test "$(jget "$r" reason)" = wall_time
check "SIGXCPU then SIGKILL" test "$("$PY" -c "import json,sys; print([s['signal'] for s in json.load(open(sys.argv[1]))['signals']])" "$r")" = "['XCPU', 'KILL']"
check "slurm.job_id" test "$(jget "$r" slurm.job_id)" = "$JOB"
check "the supervisor is gone" pid_gone "${spid:-0}"
check "the job cgroup is gone" test ! -e "$JOBCG"
check "the state is gone" test ! -e "$TMP/state/job_$JOB"

# sweep: what a supervisor that died (no Epilog) leaves is removed; a live one is not touched
hook prolog 2>/dev/null
spid=$(sed -n 's/^supervisor_pid=//p' "$TMP/state/job_$JOB/state" 2>/dev/null)
"$LEASH" slurm sweep --dry-run >"$TMP/sweep" 2>&1
check "sweep leaves a job whose supervisor lives" bash -c "! grep -q 'job $JOB' '$TMP/sweep'"
kill -KILL "${spid:-0}" 2>/dev/null
pid_gone "${spid:-0}" 2000
"$LEASH" slurm sweep >"$TMP/sweep" 2>&1
check "sweep removes the job of a dead supervisor" grep -q "removing job $JOB" "$TMP/sweep"
check "its cgroup and state are gone" bash -c "[ ! -e '$JOBCG' ] && [ ! -e '$TMP/state/job_$JOB' ]"

# on-error = continue: a broken profile never fails the Prolog
echo "partition.debug = nosuch" >>"$LEASH_CONFIG_DIR/slurm.ini"
hook prolog 2>"$TMP/prolog.err"
check "a profile that does not exist: prolog still exits 0 (continue)" test $? = 0
check "no job cgroup then" test ! -e "$JOBCG"
hook epilog 2>/dev/null
check "the report says setup_error" test "$(jget "$r" reason)" = setup_error
sed -i 's/^\[slurm\]$/[slurm]\non-error = drain/' "$LEASH_CONFIG_DIR/slurm.ini"
hook prolog 2>/dev/null
check "with on-error = drain it exits 1 (Slurm drains the node)" test $? = 1
hook epilog 2>/dev/null

$had_slurm_dir || rmdir "$CG2/leash/slurm" 2>/dev/null
finish
