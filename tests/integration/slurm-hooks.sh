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
# the Prolog makes leash/slurm (and leash): both are left as found
had_slurm_dir=false; [ -d "$CG2/leash/slurm" ] && had_slurm_dir=true
had_leash_dir=false; [ -d "$CG2/leash" ] && had_leash_dir=true
hook() { slurm_hook "$@"; } # as root (lib.sh)
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
        # named as a profile's keys, which the hooks apply (measured limits,
        # below), not as leash run's options, which no Slurm job can give
        check "the remedy in the profile's keys: limit = threads=512 with sample = 100ms" \
                grep -q -- "better here: limit = threads=512 with sample = 100ms" "$TMP/prolog.err"
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
# for people: a page, not the raw state; for scripts: JSON (issue 26)
"$LEASH" slurm status "$JOB" >"$TMP/page" 2>&1; sed "s/^/# /" "$TMP/page"
check "status JOBID is a page for people (job, user, supervisor, limits), not raw state" \
        bash -c "grep -q '^job $JOB\$' '$TMP/page' && grep -q '^  user: ' '$TMP/page' && grep -q '^  supervisor: ' '$TMP/page' && ! grep -q 'started_monotonic_ns=' '$TMP/page'"
"$LEASH" slurm status -o json "$JOB" >"$TMP/sj" 2>&1
check "status -o json JOBID: its job_id and state" \
        "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['job_id']==int(sys.argv[2]) and 'user' in d['state'] and isinstance(d['supervisor_alive'], bool)" "$TMP/sj" "$JOB"
"$LEASH" slurm status -o json >"$TMP/sl" 2>&1
check "status -o json: a list holding the job" \
        "$PY" -c "import json,sys; assert int(sys.argv[2]) in [j['job_id'] for j in json.load(open(sys.argv[1]))]" "$TMP/sl" "$JOB"
"$LEASH" slurm status -o yaml >/dev/null 2>&1
check "status -o yaml: a usage error (125)" test $? = 125

# Epilog: report, nothing left
hook epilog 2>"$TMP/epilog.err"
check "epilog exits 0" test $? = 0
r=$TMP/reports/$JOB.testnode.json
check "the report is there" test -s "$r"
check "reason wall_time" test "$(jget "$r" reason)" = wall_time
check "SIGXCPU then SIGKILL" test "$("$PY" -c "import json,sys; print([s['signal'] for s in json.load(open(sys.argv[1]))['signals']])" "$r")" = "['XCPU', 'KILL']"
check "slurm.job_id" test "$(jget "$r" slurm.job_id)" = "$JOB"
check "39.8 control: a placed task, the report says so and has no 'no task' error" \
        test "$("$PY" -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['slurm']['tasks_placed'], any('no task' in e for e in r.get('errors', [])))" "$r")" = "1 False"
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

# --- issue 22: every value from the job's user is hostile ------------------------
# Each check below fails on the code before issue 22 (the control: the same
# script against that build, see the commit message).
cat >>"$LEASH_CONFIG_DIR/profiles.d/t.ini" <<INI
[long]
wall-time = 600s
INI
slurm_conf() { # [EXTRA LINES]
        printf '[slurm]\nprofile = long\nstate-dir = %s\nreport-dir = %s\n%s\n' "$TMP/state" "$TMP/reports" "${1:-}" \
                >"$LEASH_CONFIG_DIR/slurm.ini"
}
SPANKOPT=SPANK__SLURM_SPANK_OPTION_leash_leash_profile
sv_req() { # [USER] REQUEST...: requests to job $JOB's supervisor, a connection each (one
        # process for all: under emulation a process per request outran the job's wall
        # time); a line per reply, or "fail ERROR"
        local u=root
        [ "${1:-}" = nobody ] && { u=$1; shift; }
        runuser -u "$u" -- "$PY" - "$TMP/state/job_$JOB/sock" "$@" <<'PYEOF'
import socket, sys
for req in sys.argv[2:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    try:
        s.connect(sys.argv[1]); s.send(req.encode()); print(s.recv(512).decode(errors="replace"))
    except Exception as e:
        print("fail", type(e).__name__)
    s.close()
PYEOF
}
new_task() { # a process to be placed, in $TASK
        "$HELPERS/lh-ignore" >"$TMP/ready" &
        TASK=$!
        for _ in $(seq 100); do [ -s "$TMP/ready" ] && break; sleep 0.02; done
        : >"$TMP/ready"
}
in_step() { grep -qx "0::${JOBCG#"$CG2"}/step_$2" "/proc/$1/cgroup"; }
end_job() { hook epilog 2>"$TMP/epilog.err"; [ -n "${TASK:-}" ] && { kill -KILL "$TASK" 2>/dev/null; wait "$TASK" 2>/dev/null; }; TASK=; }

# 22.3: --leash-profile with newlines: the lines it tried to add to the state
# (a supervisor_pid of the user's choice, which the Epilog would SIGKILL) are
# never read as the state's own, and no raw ESC reaches `leash slurm status`
slurm_conf
sleep 300 &
victim=$!
vstart=$(awk '{print $22}' "/proc/$victim/stat")
evil="x"$'\n'"supervisor_pid=$victim"$'\n'"supervisor_start=$vstart"$'\n'"profile=none"$'\n'$'\e[2J'
hook prolog "$SPANKOPT=$evil" 2>"$TMP/prolog.err"
check "22.3 injection: prolog exits 0" test $? = 0
spid=$(sed -n 's/^supervisor_pid=//p' "$TMP/state/job_$JOB/state" 2>/dev/null)
check "22.3 injection: one supervisor_pid in the state, the supervisor's ($spid, not $victim)" \
        test "$(grep -c '^supervisor_pid=' "$TMP/state/job_$JOB/state")/$(ps -o sid= -p "${spid:-1}" | tr -d ' ')" = "1/$spid"
"$LEASH" slurm status "$JOB" >"$TMP/status" 2>&1
check "22.3 injection: no raw ESC in leash slurm status JOBID" bash -c "! grep -q $'\\e' '$TMP/status'"
"$LEASH" slurm status >"$TMP/status" 2>&1
check "22.3 injection: nor in leash slurm status" bash -c "! grep -q $'\\e' '$TMP/status'"
end_job
check "22.3 injection: the Epilog did not kill the process the value named ($victim)" kill -0 "$victim"
kill -KILL "$victim" 2>/dev/null
wait "$victim" 2>/dev/null
# a state file with a key twice is refused by the TaskProlog (fail closed)
hook prolog 2>/dev/null
spid=$(sed -n 's/^supervisor_pid=//p' "$TMP/state/job_$JOB/state" 2>/dev/null)
new_task
echo "refuse=0" >>"$TMP/state/job_$JOB/state"
echo "refuse=0" >>"$TMP/state/job_$JOB/state"
hook task-prolog SLURM_STEP_ID=0 SLURM_TASK_PID=$TASK 2>"$TMP/tp.err"
check "22.3 a state with a key given twice: the task is refused (exit 1)" test $? = 1
check "22.3 and not placed" bash -c "! grep -q step_0 /proc/$TASK/cgroup"
end_job
# the Epilog refuses that state too, yet stops the job's supervisor through
# its socket (it lived on until the job's wall time: the VM tier found it left)
sv_gone() { [ -n "$1" ] && pid_gone "$1" 3000; }
check "22.3 the Epilog stops the supervisor of a job whose state it refused (${spid:-none})" sv_gone "$spid"

# 22.7: the job's own LEASH_CONFIG_DIR (a slurm.ini with another state-dir)
# does not steer the TaskProlog: the task is placed all the same
mkdir -p "$TMP/evil"
printf '[slurm]\nstate-dir = %s/evilstate\n' "$TMP" >"$TMP/evil/slurm.ini"
hook prolog 2>/dev/null
new_task
hook task-prolog SLURM_STEP_ID=0 SLURM_TASK_PID=$TASK LEASH_CONFIG_DIR="$TMP/evil" 2>"$TMP/tp.err"
check "22.7 the job's LEASH_CONFIG_DIR: task-prolog exits 0" test $? = 0
check "22.7 the job's LEASH_CONFIG_DIR is ignored: the task is in step_0" in_step "$TASK" 0
end_job

# 22.8: the supervisor's socket: the job's user's and root's only; silent
# connections hold up nothing
hook prolog 2>/dev/null
sock=$TMP/state/job_$JOB/sock
check "22.8 the socket is the job user's (root here), mode 600" test "$(stat -c '%a %u' "$sock")" = "600 0"
if id nobody >/dev/null 2>&1; then
        got=$(sv_req nobody status)
        check "22.8 another user (nobody) is not heard ($got)" bash -c "case '$got' in ok*) exit 1 ;; esac"
fi
"$PY" - "$sock" "$TMP/held" <<'PYEOF' &
import socket, sys, time
held = []
for _ in range(40):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1]); held.append(s)
open(sys.argv[2], "w").write("ready\n")
time.sleep(12)
PYEOF
holder=$!
for _ in $(seq 250); do [ -s "$TMP/held" ] && break; sleep 0.02; done
new_task
hook task-prolog SLURM_STEP_ID=0 SLURM_TASK_PID=$TASK 2>"$TMP/tp.err"
check "22.8 40 silent connections held open: the task is still placed (task-prolog $?)" in_step "$TASK" 0
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

# 22.12: adopt names only real step names, and at most 64 step cgroups
got=$(sv_req "adopt ../x $TASK")
check "22.12 adopt of a step named ../x is refused ($got)" test "$got" = "error bad request"
got=$(sv_req "adopt "$'\e[31m'" $TASK")
check "22.12 adopt of a step named with an ESC is refused" test "$got" = "error bad request"
reqs=(); for i in $(seq 1 70); do reqs+=("adopt $i $TASK"); done
last=$(sv_req "${reqs[@]}" | tail -n 1)
check "22.12 70 steps asked for: no more than 64 step cgroups" test "$(ls -d "$JOBCG"/step_* | wc -l)" -le 64
check "22.12 and the one too many is refused, saying why ($last)" bash -c "grep -q 'at most 64' <<<'$last'"
# 22.12: a process in a cgroup the job made below its own is a leftover too
mkdir -p "$JOBCG/mine/deeper"
sleep 300 &
deep=$!
echo "$deep" >"$JOBCG/mine/deeper/cgroup.procs"
kill -KILL "$TASK" 2>/dev/null # the only process left is then the one in mine/deeper
wait "$TASK" 2>/dev/null
TASK=
end_job
check "22.12 the process in job/mine/deeper is dead" pid_gone "$deep" 2000
wait "$deep" 2>/dev/null
check "22.12 and counted: usage.leftovers_killed = 1" test "$(jget "$r" usage.leftovers_killed)" = 1

# 22.9: an unknown profile a user asks for (user-profiles = *) is refused:
# at check-profile, and in the Prolog, with the reason in the task's stderr
# and in the report; the job never runs unconfined
slurm_conf "user-profiles = *"
"$LEASH" slurm check-profile nosuch 2>"$TMP/cp.err"
check "22.9 check-profile nosuch: refused (1)" test $? = 1
check "22.9 saying why" grep -q "nosuch.*unknown profile" "$TMP/cp.err"
"$LEASH" slurm check-profile long 2>/dev/null
check "22.9 check-profile long (it exists): allowed" test $? = 0
hook prolog "$SPANKOPT=nosuch" 2>/dev/null
check "22.9 prolog exits 0 (the node stays up)" test $? = 0
new_task
hook task-prolog SLURM_STEP_ID=0 SLURM_TASK_PID=$TASK 2>"$TMP/tp.err"
check "22.9 the task is refused (task-prolog exits 1)" test $? = 1
check "22.9 the user's stderr says why" grep -q "nosuch.*unknown profile" "$TMP/tp.err"
end_job
check "22.9 the report: setup_error, and why" \
        test "$("$PY" -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['reason'], any('unknown profile' in e for e in r['errors']))" "$r")" = "setup_error True"
# 22.12: the admin's profile that does not exist: the reason in the report
slurm_conf "partition.debug = nosuch"
hook prolog 2>/dev/null
end_job
check "22.12 an admin's unknown profile: the report says which and why" \
        test "$("$PY" -c "import json,sys; r=json.load(open(sys.argv[1])); print(any('nosuch' in e and 'unknown profile' in e for e in r['errors']))" "$r")" = True

# --- issue 38.8: every user value escaped in every log line ---------------------
# stderr is slurmd's log, read line by line: a --leash-profile with a newline and
# an ESC must stay on its line (control, before: the Prolog wrote it raw, a
# second line "leash: job N: forged" and a raw ESC; see the commit message)
slurm_conf "user-profiles = *"
forged="x"$'\n'"leash: job $JOB: forged"$'\e[31m'
hook prolog "$SPANKOPT=$forged" 2>"$TMP/prolog.err"
check "38.8 the value reached the Prolog's log (escaped: \\n, \\x1b)" \
        grep -qF "x\\nleash: job $JOB: forged\\x1b[31m" "$TMP/prolog.err"
check "38.8 no line of the Prolog's log is the forged one" bash -c "! grep -q '^leash: job $JOB: forged' '$TMP/prolog.err'"
check "38.8 no raw ESC in the Prolog's log" bash -c "! grep -q $'\\e' '$TMP/prolog.err'"
end_job
check "38.8 nor in the Epilog's" bash -c "! grep -q $'\\e' '$TMP/epilog.err' && ! grep -q '^leash: job $JOB: forged' '$TMP/epilog.err'"

# --- issue 38.10: the TaskProlog fails closed on every error with the state -------
# As the user the TaskProlog runs as (nobody): the control, a state directory
# nobody can search: placed; then the same with the state directory 0700: the
# task is refused, saying why (before: exit 0, the task ran unplaced; see the
# commit message)
# task_as UID: a task of UID's for step 0, as slurmstepd starts one: the child of
# a root process titled "slurmstepd: [JOB.0]", it runs the TaskProlog as its
# own child (SLURM_TASK_PID its pid), then waits to be killed; TASK its pid,
# STEPD its parent's, TP_RC the TaskProlog's exit status, $TMP/tp.err its stderr
cat >"$TMP/task.sh" <<'SH'
#!/bin/bash
SLURM_TASK_PID=$$ bash -c 'exec -a slurm-task-prolog "$LEASH" "--config-dir=$CONF"' 2>"$ERR"
echo $? >"$RC"
exec "$IGN"
SH
cat >"$TMP/stepd.sh" <<'SH'
setpriv --reuid="$SLURM_JOB_UID" --regid="$SLURM_JOB_UID" --clear-groups "$TASK_SH" &
echo $! >"$PIDF"
wait
SH
chmod 755 "$TMP/task.sh"
task_as() {
        install -m 600 -o "$1" /dev/null "$TMP/tp.err"
        install -m 600 -o "$1" /dev/null "$TMP/tp.rc"
        : >"$TMP/ready"
        : >"$TMP/task.pid"
        env -i LEASH="$LEASH" CONF="$LEASH_CONFIG_DIR" ERR="$TMP/tp.err" RC="$TMP/tp.rc" IGN="$HELPERS/lh-ignore" \
                TASK_SH="$TMP/task.sh" PIDF="$TMP/task.pid" SLURM_JOB_ID=$JOB SLURM_JOB_UID="$1" SLURM_JOB_GID="$1" \
                SLURM_JOB_USER=nobody SLURM_STEP_ID=0 SLURMD_NODENAME=testnode \
                bash -c 'exec -a "slurmstepd: [$0.0]" bash "$1"' "$JOB" "$TMP/stepd.sh" >"$TMP/ready" &
        STEPD=$!
        for _ in $(seq 500); do [ -s "$TMP/ready" ] && [ -s "$TMP/task.pid" ] && break; sleep 0.02; done
        TASK=$(cat "$TMP/task.pid")
        TP_RC=$(cat "$TMP/tp.rc")
}
task_end() { kill -KILL "${TASK:-0}" 2>/dev/null; wait "$STEPD" 2>/dev/null; TASK=; }
slurm_conf
if nobody_reaches "$LEASH" && nobody_reaches "$TMP/task.sh" && nobody_reaches "$HELPERS/lh-ignore"; then
        SLURM_HOOK_UID=65534 hook prolog 2>/dev/null
        task_as 65534
        check "38.10 control: a state directory nobody can search: the task is placed (task-prolog $TP_RC: $(head -c 300 "$TMP/tp.err"))" in_step "$TASK" 0
        task_end
        chmod 700 "$TMP/state"
        task_as 65534
        check "38.10 a 0700 state directory: the task is refused (task-prolog exits $TP_RC)" test "$TP_RC" = 1
        check "38.10 saying why ($(head -c 200 "$TMP/tp.err"))" grep -q "job $JOB: task refused: its state: .*Permission denied" "$TMP/tp.err"
        check "38.10 and not placed" bash -c "! grep -q step_ /proc/$TASK/cgroup"
        task_end
        chmod 755 "$TMP/state"
        SLURM_HOOK_UID=65534 end_job
else
        SKIP_WHY="no setpriv, or nobody cannot reach leash or the helpers"
        skip "38.10 a 0700 state directory refuses the task"
fi

# --- issue 39.8: hooks that name their configuration with LEASH_CONFIG_DIR ---------
# (the way before issue 22): the Prolog and Epilog read it, the TaskProlog does
# not, finds no state in the built-in state directory; the job cgroup the
# Prolog made tells it that leash's Prolog ran: the task is refused, saying
# why, and the Epilog's report says no task was placed (before: exit 0, the
# task ran in 0::/, the report said adopted, reason ok, no line anywhere).
# The control is the first job of this file (--config-dir on all three
# hooks): placed, and its report has no such error.
SLURM_HOOKS_NO_ARG=1 hook prolog 2>/dev/null
check "39.8 the Prolog (LEASH_CONFIG_DIR) made the job cgroup" test -d "$JOBCG"
new_task
SLURM_HOOKS_NO_ARG=1 hook task-prolog SLURM_STEP_ID=0 SLURM_TASK_PID=$TASK 2>"$TMP/tp.err"
check "39.8 the TaskProlog refuses the task (exit 1)" test $? = 1
check "39.8 saying why, in its stderr (slurmd's log)" \
        grep -q "job $JOB: task refused: leash's Prolog made the job cgroup .* but its state is not in .*--config-dir.*LEASH_CONFIG_DIR is ignored" "$TMP/tp.err"
check "39.8 the task is not in the job cgroup" bash -c "! grep -q 'job_$JOB' /proc/$TASK/cgroup"
SLURM_HOOKS_NO_ARG=1 end_job
check "39.8 the Epilog's report: no task was placed" \
        test "$("$PY" -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['slurm']['tasks_placed'], 'no task' in r['placement']['why'], any('no task of the job was placed' in e for e in r['errors']))" "$r")" = "0 True True"
check "39.8 and slurmd's log (the Epilog's stderr)" grep -q "job $JOB: no task of the job was placed" "$TMP/epilog.err"

# --- a profile's measured limits (limit = FIGURE=VALUE, sample = INTERVAL) -------
# The tasks live in step_N below the job cgroup: the supervisor's job samples
# the cgroups below it too, ends the job at the limit, and the Epilog's report
# says so (reason, the limit, the sampling, the soft signal's why). Control,
# the code before: 42 threads in step_0 and nothing ended; the report said
# reason ok, listed only the wall-time limit and had no sampling section.
cat >>"$LEASH_CONFIG_DIR/profiles.d/t.ini" <<INI
[sampled]
wall-time = 60s
grace = 1s
limit = threads=20
sample = 100ms
INI
slurm_conf
sed -i 's/^profile = long$/profile = sampled/' "$LEASH_CONFIG_DIR/slurm.ini"
hook prolog 2>/dev/null
new_task
hook task-prolog SLURM_STEP_ID=0 SLURM_TASK_PID=$TASK 2>/dev/null
# a second task of the step that starts 40 sleeps once it is placed
mkfifo "$TMP/go.fifo"
sh -c 'read -r _; i=0; while [ $i -lt 40 ]; do sleep 30 & i=$((i + 1)); done; wait' <"$TMP/go.fifo" &
FORKER=$!
# its stderr a file, as the plugin's task has: the supervisor tells the task
# the limit, the value seen and the signal there
hook task-prolog SLURM_STEP_ID=0 SLURM_TASK_PID=$FORKER 2>"$TMP/measured.err"
check "measured: both tasks in step_0" bash -c "grep -qx '0::${JOBCG#"$CG2"}/step_0' /proc/$TASK/cgroup && grep -qx '0::${JOBCG#"$CG2"}/step_0' /proc/$FORKER/cgroup"
echo go >"$TMP/go.fifo"
wait_gone() { for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done; return 1; }
check "measured: the task that started 40 sleeps is ended (threads limit 20)" wait_gone "$FORKER"
end_job
check "measured: reason threads ($(jget "$r" reason))" test "$(jget "$r" reason)" = threads
check "measured: the report lists the limit, enforced by sampling" \
        test "$(jget "$r" limits.threads.value)/$(jget "$r" limits.threads.enforced_by)" = 20/sampling
check "measured: limit_reached names threads, over 20 ($(jget "$r" sampling.limit_reached.value))" \
        "$PY" -c "import json,sys; l=json.load(open(sys.argv[1]))['sampling']['limit_reached']; assert l['figure'] == 'threads' and l['value'] > 20 and l['partial'] is False" "$r"
check "measured: the peak counts the step's threads, read below the job cgroup ($(jget "$r" sampling.peaks.threads.value), $(jget "$r" sampling.peaks.threads.basis))" \
        test "$(jget "$r" sampling.peaks.threads.basis)" = "cgroup.threads of the job's cgroups"
check "measured: the soft signal's why is the figure" \
        test "$("$PY" -c "import json,sys; print([s['why'] for s in json.load(open(sys.argv[1]))['signals']][:1])" "$r")" = "['threads']"
check "measured: the task was told the limit, the value seen and the signal ($(grep -m1 "^leash: job" "$TMP/measured.err"))" \
        grep -Eq "^leash: job $JOB: threads limit 20 reached \(($(jget "$r" sampling.limit_reached.value)) seen\): sent SIG$(jget "$r" signals.0.signal), SIGKILL in 1s\$" "$TMP/measured.err"
wait "$FORKER" 2>/dev/null

$had_slurm_dir || rmdir "$CG2/leash/slurm" 2>/dev/null
$had_leash_dir || rmdir "$CG2/leash" 2>/dev/null
finish
