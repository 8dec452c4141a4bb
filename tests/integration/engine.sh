# SPDX-License-Identifier: LGPL-2.1-or-later
# Engine edges (issue 10.3, 10.4, 9.4), each with a control run where the
# attack or the bug can be shown without the defence:
#   - the CPU-time limit cannot be widened by a job that resets its affinity;
#   - SIGTERM during the grace after a time limit kills at once;
#   - SIGTERM while the job cgroup is being made leaks nothing;
#   - the soft signal freezes and thaws the cgroup: the job goes on after it;
#   - a main process that moved itself out of the job cgroup is killed through
#     its pidfd and reported as escaped;
#   - cgroups the job made inside its own are removed depth-first;
#   - the vfork child's stack holds execvp's ENOEXEC fallback of a huge argv.
. "$(dirname "$0")/lib.sh"

# --- 10.3: CPU time paced by what the job can use, not by leash's affinity ---
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
        overrun() { "$PY" -c "import json,sys; r=json.load(open(sys.argv[1])); print('%.3f' % (r['usage']['cpu_time_s'] - 1.0))" "$1"; }
        # control: the job keeps leash's single CPU
        taskset -c 0 "$LEASH" run --cgroup-parent "$PARENT" -o "$TMP/aff0.json" -t 1s -g 0 -- \
                "$HELPERS/lh-spin" inf 2 >/dev/null 2>&1
        check "cpu-time, job on leash's one CPU: ended by cpu_time" test "$(jget "$TMP/aff0.json" reason)" = cpu_time
        O0=$(overrun "$TMP/aff0.json")
        # the job widens its affinity back to every CPU and spins on two
        taskset -c 0 "$LEASH" run --cgroup-parent "$PARENT" -o "$TMP/aff1.json" -t 1s -g 0 -- \
                taskset -c 0-$(($(nproc) - 1)) "$HELPERS/lh-spin" inf 2 >/dev/null 2>&1
        check "cpu-time, job widened its affinity: ended by cpu_time" test "$(jget "$TMP/aff1.json" reason)" = cpu_time
        O1=$(overrun "$TMP/aff1.json")
        diag "cpu-time 1s under taskset -c 0: overrun ${O0} s on leash's CPU, ${O1} s with the affinity widened"
        # before the fix the checks were paced for one CPU while two spun: the
        # overrun grew with the CPU the job took beyond leash's (up to the limit
        # itself; 0.49-0.64 s of 2 s in issue 10). Now: the control's bound,
        # where a check the host runs late costs two spinners twice the CPU
        # it costs one (a loaded machine failed "the control's + 0.1 s")
        check "widened affinity: overrun within twice the control's + 0.1 s" fcmp "$O1 <= 2 * $O0 + 0.1"
else
        SKIP_WHY="needs 2 CPUs and taskset"
        skip "cpu-time pacing with a widened affinity"
fi

# --- 10.4: SIGTERM during the grace after a time limit: at once --------------
t0=$(date +%s.%N)
"$LEASH" run --cgroup-parent "$PARENT" -o "$TMP/g1.json" -w 300ms -g 1500ms -- "$HELPERS/lh-ignore" >/dev/null 2>&1
t1=$(date +%s.%N)
check "control: without SIGTERM the grace is waited (>= 1.5 s)" fcmp "$t1 - $t0 >= 1.5"
check "control: SIGKILL after the grace" test "$(jget "$TMP/g1.json" signals.1.why)" = grace
t0=$(date +%s.%N)
"$LEASH" run --cgroup-parent "$PARENT" -o "$TMP/g2.json" -w 300ms -g 60s -- "$HELPERS/lh-ignore" >/dev/null 2>&1 &
LP=$!
sleep 1
kill -TERM $LP
wait $LP
rc=$?
t1=$(date +%s.%N)
check "SIGTERM in the grace: leash dies of it (143)" test $rc = 143
check "SIGTERM in the grace: ends long before the 60 s grace" fcmp "$t1 - $t0 < 30"
check "SIGTERM in the grace: SIGKILL at once, logged as interrupt" test "$(jget "$TMP/g2.json" signals.1.why)" = interrupt
check "SIGTERM in the grace: the reason stays the time limit" test "$(jget "$TMP/g2.json" reason)" = wall_time

# --- 10.4: SIGTERM while the job cgroup is made ------------------------------
if command -v strace >/dev/null && strace -f -o /dev/null -e trace=none true 2>/dev/null; then
        # control: the injection kills a process that does not block it, after
        # its first mkdir (delivered as the call returns): that directory is left behind
        strace -f -o /dev/null -e trace=mkdir,mkdirat -e inject=mkdir,mkdirat:signal=TERM:when=1 \
                mkdir "$TMP/a" "$TMP/a/b" 2>/dev/null
        check "control: SIGTERM at a mkdir kills a process that does not block it, the directory left behind" test -d "$TMP/a" -a ! -d "$TMP/a/b"
        # the job cgroup is the last directory leash makes: TERM right after it,
        # at the open of the new cgroup. Only leash is traced (no -f): strace
        # counts invocations per tracee, and with -f the job was traced too,
        # got its own TERM at its own nth openat and died of it before leash
        # read its pending one (reason "signal": 13 of 20 runs under load).
        # The same command line both times: the report's destination is opened
        # first, and the job's name is in the cgroup's.
        strace -e trace=openat -o "$TMP/trace" "$LEASH" run --cgroup-parent "$PARENT" -o "$TMP/t.json" -- sleep 0 >/dev/null 2>&1
        n=$(awk '/^openat\(/ { k++; if ($0 ~ /^openat\([0-9]+, "sleep@[0-9]+", O_RDONLY/) { print k; exit } }' "$TMP/trace")
        if [ -n "$n" ]; then
                rm -f "$TMP/t.json"
                strace -o "$TMP/trace2" -e trace=openat -e inject=openat:signal=TERM:when="$n" \
                        "$LEASH" run --cgroup-parent "$PARENT" -o "$TMP/t.json" -- sleep 5 >"$TMP/t.out" 2>&1
                rc=$?
                check "SIGTERM as the job cgroup is opened: leash dies of it after cleaning up (143)" test $rc = 143
                check "SIGTERM as the job cgroup is opened: no cgroup leaked" no_leftover_cgroups
                check "SIGTERM as the job cgroup is opened: reported as interrupted ($(jget "$TMP/t.json" reason))" \
                        test "$(jget "$TMP/t.json" reason)" = interrupted
                if [ $rc != 143 ]; then
                        diag "injected at leash's openat #$n; exit $rc; leash said: $(head -c 600 "$TMP/t.out")"
                        awk -v n="$n" '/^openat\(/ && ++k >= n - 2 && k <= n + 2 { print "# " k ": " $0 }' "$TMP/trace2"
                fi
        else
                not_ok "found the open of the job cgroup in an strace of leash"
        fi
else
        SKIP_WHY="no usable strace (ptrace) here"
        skip "SIGTERM while the job cgroup is made"
fi

# --- 10.4: the soft signal freezes, signals, thaws: the job goes on ---------
run_leash -o "$TMP/s.json" -w 300ms -g 5s -- sh -c "trap 'echo after > $TMP/after; exit 7' XCPU; while :; do sleep 0.05; done"
check "the soft signal reached the job and it ran on (thawed) to its trap" test "$(cat "$TMP/after" 2>/dev/null)" = after
check "... and the cgroup is not left frozen: the job exited by itself before the grace" \
        test "$(jget "$TMP/s.json" exit.status)" = 7

# --- 10.4: the vfork child's stack and execvp's ENOEXEC fallback -------------
printf 'echo $#\n' >"$TMP/noshebang"
chmod 755 "$TMP/noshebang"
seq 100000 >"$TMP/args"
out=$(xargs -a "$TMP/args" -x -s 2000000 "$LEASH" run --cgroup-parent "$PARENT" -q -- "$TMP/noshebang" 2>&1 | tail -1)
check "a script without #! and 100,000 arguments runs through the shell fallback (got '$out')" test "$out" = 100000

# --- 9.4: a main process that leaves the job cgroup ---------------------------
mkdir "$PARENT/elsewhere"
# (bounded: before the fix leash waited for it for ever; 137 is that timeout)
timeout -s KILL 60 "$LEASH" run --cgroup-parent "$PARENT" -o "$TMP/e.json" -w 500ms -g 300ms -- \
        sh -c "echo \$\$ > $PARENT/elsewhere/cgroup.procs && exec $HELPERS/lh-ignore" >/dev/null 2>&1
RC=$?
check "control: the main process did move out (it is in no job cgroup at its end)" \
        test "$(jget "$TMP/e.json" escaped.0.cgroup)" = "${PARENT#"$CG2"}/elsewhere"
check "escaped main process: killed through its pidfd (exit 124; it ignores every signal leash could send by pid)" test "$RC" = 124
check "escaped main process: named in escaped[] with its comm" test "$(jget "$TMP/e.json" escaped.0.comm)" = lh-ignore
check "escaped main process: killed by SIGKILL, as the report says" test "$(jget "$TMP/e.json" exit.signal)" = KILL
check "escaped main process: not counted as a leftover killed in the cgroup" \
        test "$(jget "$TMP/e.json" usage.leftovers_killed)" = 0
rmdir "$PARENT/elsewhere"
run_leash -o "$TMP/n.json" -- true
check "a job that stayed: escaped is empty" test "$(jget "$TMP/n.json" escaped)" = "[]"

# --- 9.4: cgroups the job made inside its own --------------------------------
run_leash -o "$TMP/d.json" -w 500ms -g 100ms -- sh -c '
        cg=$(sed -n "s/^0:://p" /proc/self/cgroup)
        d=$(awk "\$9 == \"cgroup2\" { print \$5; exit }" /proc/self/mountinfo)$cg
        mkdir -p "$d/a/b/c" "$d/x" && echo $$ > "$d/a/b/c/cgroup.procs" && exec sleep 30'
check "nested cgroups: the job ended by the wall time" test "$RC" = 124
check "nested cgroups: the job cgroup and its children removed, deepest first" no_leftover_cgroups

finish
