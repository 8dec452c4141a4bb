#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 22.12: the supervisor's adopt request cannot be raced with pid reuse.
# A task of the job's user asks to be placed, then exits while the supervisor
# is judging it, and a root process is made with the task's pid (the pid
# allocator run round by lh-pidreuse). The supervisor is slowed down around
# its pidfd_open (strace's delay injection, before and after the call) so
# that the swap happens in the window every time. The supervisor must never
# move the root process into the job: what it judges is the process its
# pidfd names. (Control: the build before issue 22 judged the task through
# /proc first and opened the pidfd after, and moved the root process into
# step_0: not ok 5 and 6.)
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "the Prolog runs as root"
command -v strace >/dev/null || skip_all "no strace (its delay injection widens the race window)"
strace -qq -o /dev/null -e trace=pidfd_open -e inject=pidfd_open:delay_enter=1 true 2>/dev/null ||
        skip_all "this strace cannot inject delays (-e inject=SYSCALL:delay_enter)"
pid_max=$(cat /proc/sys/kernel/pid_max)
[ "$pid_max" -le 65536 ] || skip_all "pid_max is $pid_max: running the pid allocator round takes too long for a test"
nobody_dir || skip_all "$SKIP_WHY"
# how long running the pid allocator round takes here: the window is sized by it
rate=$("$HELPERS/lh-pidreuse" --rate)
wrap_ms=$((pid_max * 1000 / (rate > 0 ? rate : 1)))
[ "$wrap_ms" -le 15000 ] || skip_all "running the pid allocator round takes about $wrap_ms ms here ($rate pids/s, pid_max $pid_max; at most 15 s for a test)"
# the supervisor's delays: the task's second, then three times the round
delay_s=$((wrap_ms * 3 / 1000 + 3))

export LEASH_CONFIG_DIR=$TMP/etc
mkdir -p "$LEASH_CONFIG_DIR/profiles.d"
printf '[race]\nwall-time = 120s\n' >"$LEASH_CONFIG_DIR/profiles.d/t.ini"
printf '[slurm]\nprofile = race\nstate-dir = %s\nreport-dir = %s\n' "$NOBODY_DIR/state" "$TMP/reports" \
        >"$LEASH_CONFIG_DIR/slurm.ini"
JOB=$((910000000 + $$))
JOBCG=$CG2/leash/slurm/job_$JOB
had_slurm_dir=false; [ -d "$CG2/leash/slurm" ] && had_slurm_dir=true
had_leash_dir=false; [ -d "$CG2/leash" ] && had_leash_dir=true
hook() { SLURM_HOOK_UID=65534 slurm_hook "$@"; } # for a job of nobody (lib.sh)

hook prolog 2>"$TMP/prolog.err"
check "prolog exits 0" test $? = 0
spid=$(sed -n 's/^supervisor_pid=//p' "$NOBODY_DIR/state/job_$JOB/state" 2>/dev/null)
check "the supervisor runs" kill -0 "${spid:-0}"
sock=$NOBODY_DIR/state/job_$JOB/sock
check "nobody can reach the supervisor's socket" as_nobody test -w "$sock"

# delay_s before and after each pidfd_open of the supervisor
diag "the pid allocator's round takes $wrap_ms ms here: the supervisor waits $delay_s s before and after its pidfd_open"
strace -p "${spid:-0}" -qq -o "$TMP/strace.out" -e trace=pidfd_open \
        -e inject=pidfd_open:delay_enter=$((delay_s * 1000000)):delay_exit=$((delay_s * 1000000)) 2>"$TMP/strace.err" &
tracer=$!
for _ in $(seq 200); do
        [ "$(awk '/^TracerPid:/ {print $2}' "/proc/${spid:-0}/status" 2>/dev/null)" = "$tracer" ] && break
        sleep 0.05
done
attached=false
[ "$(awk '/^TracerPid:/ {print $2}' "/proc/${spid:-0}/status" 2>/dev/null)" = "$tracer" ] && attached=true

# The job's slurmstepd (a root process titled "slurmstepd: [JOB.0]") starts
# the task as nobody; the task asks to be placed and exits a second later,
# inside the supervisor's first delay; the step reaps it and makes a root
# process with its pid.
cat >"$TMP/stepd.py" <<'PYEOF'
import os, socket, subprocess, sys, time
sock, pidreuse = sys.argv[1], sys.argv[2]  # argv[3]: its time limit in s
r, w = os.pipe()
t = os.fork()
if t == 0:
    os.close(r)
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sock)
    s.send(("adopt 0 %d" % os.getpid()).encode())
    os.write(w, b"sent")
    time.sleep(1)
    os._exit(0)
os.close(w)
os.read(r, 4)
os.waitpid(t, 0)
v = subprocess.run([pidreuse, str(t), sys.argv[3]], capture_output=True, text=True).stdout.strip()
print(t, v, flush=True)
PYEOF
t0=$(date +%s)
task=none victim=none
$attached && read -r task victim < <(bash -c 'exec -a "slurmstepd: [$0.0]" "$1" "$2" "$3" "$4" "$5"' "$JOB" "$PY" "$TMP/stepd.py" \
        "$sock" "$HELPERS/lh-pidreuse" $((delay_s - 2)))
diag "task $task exited; the root process made with its pid: $victim"
if ! $attached; then
        # ptrace refused (a container's seccomp, Yama): an environment's limit
        SKIP_WHY="strace could not attach to the supervisor: $(head -n 1 "$TMP/strace.err")"
        skip "the root process has the task's pid"
        skip "the supervisor judged the process it moves"
        skip "the root process is not in the job"
elif [ "$victim" != "$task" ]; then
        SKIP_WHY="another process took pid $task first, or the pid allocator was not run round in $((delay_s - 2)) s ($victim)"
        skip "the root process has the task's pid"
        skip "the supervisor judged the process it moves"
        skip "the root process is not in the job"
else
        check "the root process has the task's pid ($task), made within the supervisor's delay ($(($(date +%s) - t0)) s)" \
                test "$(stat -c %u "/proc/$victim")" = 0
        # the request is answered once both delays are over
        for _ in $(seq $((delay_s * 40 + 200))); do
                grep -qE '^tasks_(placed|refused)=[1-9]' "$NOBODY_DIR/state/job_$JOB/verdict" 2>/dev/null && break
                grep -q '^0::.*/step_0$' "/proc/$victim/cgroup" && break
                sleep 0.05
        done
        check "the supervisor refused the request ($(grep '^tasks_' "$NOBODY_DIR/state/job_$JOB/verdict" 2>/dev/null | tr '\n' ' '))" \
                grep -qx 'tasks_refused=1' "$NOBODY_DIR/state/job_$JOB/verdict"
        check "the root process that took the task's pid is not in the job ($(sed -n 's/^0:://p' "/proc/$victim/cgroup"))" \
                bash -c "! grep -q '^0::${JOBCG#"$CG2"}' /proc/$victim/cgroup"
        kill -KILL "$victim" 2>/dev/null
fi
kill -INT "$tracer" 2>/dev/null
wait "$tracer" 2>/dev/null
hook epilog 2>"$TMP/epilog.err"
check "epilog exits 0" test $? = 0
check "the supervisor is gone" pid_gone "${spid:-0}" 5000
check "the job cgroup is gone" test ! -e "$JOBCG"

$had_slurm_dir || rmdir "$CG2/leash/slurm" 2>/dev/null
$had_leash_dir || rmdir "$CG2/leash" 2>/dev/null
finish
