#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 23: where no cgroup can be had (here: uid 65534 on a host that
# delegates it nothing), leash runs the job anyway as its process tree: the
# report says placement none and what enforced each limit; time limits hold
# over the whole tree; nothing of the job outlives it (double fork + setsid,
# ignored signals, a fork bomb), checked by pid. --strict refuses, with the
# remedy. On the code before issue 23 every run here exited 125 ("find a
# delegated cgroup ... Permission denied").
. "$(dirname "$0")/lib.sh"

NB=65534
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
        skip_all "needs root and setpriv to run leash as uid $NB"
fi
as_nobody() { setpriv --reuid=$NB --regid=$NB --clear-groups "$@"; }
# uid 65534 must reach the binaries (the build tree may be private) and a
# directory of its own for pid files and reports
chmod 0711 "$TMP"
W=$TMP/w
mkdir -m 0755 "$TMP/bin" "$W" && chown $NB:$NB "$W"
cp "$LEASH" "$HELPERS/lh-escape" "$HELPERS/lh-ignore" "$HELPERS/lh-alloc" "$HELPERS/lh-spin" "$HELPERS/lh-forkn" \
        "$HELPERS/lh-zleader" "$HELPERS/lh-undump" "$TMP/bin/"
BOMB=fb$$ # a name no other process has: the check below is by name and uid
cp "$HELPERS/lh-forkbomb" "$TMP/bin/$BOMB"
chmod 0755 "$TMP/bin"/*
L=$TMP/bin/leash
as_nobody test -x "$L" || skip_all "uid $NB cannot reach $TMP (a private ${TMPDIR:-/tmp} above it, as in a package build)"
# what decides this test: uid 65534 has no cgroup here
as_nobody "$L" check >"$TMP/check" 2>&1
if grep -q '^placement:' "$TMP/check" && ! grep -q '^placement: *none' "$TMP/check"; then
        skip_all "uid $NB has a cgroup on this host ($(grep '^placement' "$TMP/check"))"
fi

# nb_run ARGS...: leash run as uid 65534, report to $W/r.json
nb_run() {
        rm -f "$W/r.json"
        as_nobody "$L" run -o "$W/r.json" "$@" >"$TMP/out" 2>"$TMP/err"
        RC=$?
}

nb_run -m 32M -t 1s -- /bin/true
check "runs without a cgroup: exit 0 (was 125)" test "$RC" = 0
check "report: placement kind none" test "$(jget "$W/r.json" placement.kind)" = none
check "report: placement says why" test -n "$(jget "$W/r.json" placement.why | grep 'no delegated unit')"
check "memory enforced by rlimit, cpu_time by leash" \
        test "$(jget "$W/r.json" limits.memory.enforced_by) $(jget "$W/r.json" limits.cpu_time.enforced_by)" = "rlimit leash"
# issue 41.3: a report without a cgroup is titled with the job's name too
# (it read "leash report: " with nothing after it)
nb_run -n untethered -- /bin/true
check "leash report of a placement-none report: titled with the job's name" \
        test "$("$L" report "$W/r.json" | head -1)" = "leash report: untethered"
as_nobody "$L" run -q -f text -o - -- /bin/true >"$TMP/out" 2>&1
check "-f text of a placement-none run: titled with the command's name" test "$(head -1 "$TMP/out")" = "leash report: true"

nb_run -m 32M -- "$TMP/bin/lh-alloc" 100
check "memory: RLIMIT_AS refuses 100 MiB under -m 32M (exit $RC)" test "$RC" != 0 -a "$RC" != 125

# --limit memory: the sampled figure of the whole tree (two processes of 30
# and 40 MiB, each under the limit, together over it)
nb_run --limit memory=50M -w 20s -- sh -c "'$TMP/bin/lh-alloc' 30 5000 & '$TMP/bin/lh-alloc' 40 5000; wait"
check "--limit memory over the tree's sampled PSS: reason memory ($(jget "$W/r.json" reason))" \
        test "$(jget "$W/r.json" reason)" = memory
check "--limit memory: the peak is the tree's, sampled ($(jget "$W/r.json" usage.memory_peak_basis))" \
        fcmp "$(jget "$W/r.json" usage.memory_peak_bytes) > 50 * 2**20"

# CPU time over the tree: the main process only waits, two children spin
nb_run -t 1s -g 0.2 -- sh -c "'$TMP/bin/lh-spin' inf 2"
check "cpu_time over the whole tree: 124" test "$RC" = 124
check "cpu_time: reason cpu_time" test "$(jget "$W/r.json" reason)" = cpu_time
check "cpu_time: the tree's CPU is counted (>= 1 s, $(jget "$W/r.json" usage.cpu_time_s))" \
        fcmp "$(jget "$W/r.json" usage.cpu_time_s) >= 1.0"

# double fork + setsid + every signal ignored: found through the subreaper
nb_run -- "$TMP/bin/lh-escape" "$W/pid"
esc=$(cat "$W/pid" 2>/dev/null)
check "escapee started (pid ${esc:-none})" test -n "$esc"
check "escapee (double fork, setsid, signals ignored) is gone" pid_gone "${esc:-0}" 2000
check "main exit status kept" test "$RC" = 0
check "report counts the leftover" fcmp "$(jget "$W/r.json" usage.leftovers_killed) >= 1"

nb_run -w 0.5 -g 0.2 -- sh -c "'$TMP/bin/lh-escape' '$W/pid2'; exec '$TMP/bin/lh-ignore'"
esc=$(cat "$W/pid2" 2>/dev/null)
check "time limit: 124" test "$RC" = 124
check "time limit: the escapee is gone" pid_gone "${esc:-0}" 2000
check "time limit: KILL after the grace logged" \
        bash -c "grep -q '\"why\": \"grace\"' '$W/r.json' || grep -q '\"why\":\"grace\"' '$W/r.json'"

# a fork bomb, held by RLIMIT_NPROC of uid 65534: stopped, then killed
(ulimit -u 300 && as_nobody "$L" run -o "$W/r.json" -w 3s -g 0.1 -- "$TMP/bin/$BOMB" >"$TMP/out" 2>"$TMP/err")
left=$(pgrep -u $NB -x "$BOMB" | tr '\n' ' ')
check "fork bomb: nothing left running (${left:-none})" test -z "$left"
check "fork bomb: leftovers counted ($(jget "$W/r.json" usage.leftovers_killed))" \
        fcmp "$(jget "$W/r.json" usage.leftovers_killed) >= 2"

# Issue 39 item 9: a leftover behind 4,200 zombie children of leash (a parent
# killed after forking them: they end as leash's, unreaped until a walk). The
# walk's list stopped at 4,096 entries, all zombies: the leftover was not
# seen, ended later uncounted (leftovers_killed 0, no KILL logged: measured
# on the code before, twice). Now every ended child of leash is reaped with
# its rusage as the list is read, and the live ones are walked.
rm -f "$W/left"
(ulimit -u 5000 && as_nobody "$L" run -q -o "$W/r.json" -- sh -c "
'$TMP/bin/lh-forkn' 4200 3000 & f=\$!
while [ \"\$(wc -w </proc/\$f/task/\$f/children)\" -lt 4200 ]; do sleep 0.1; done
kill -9 \$f
sleep 60 & echo \$! >'$W/left'
sleep 4" >"$TMP/out" 2>"$TMP/err")
check "behind 4,200 zombies: the leftover is counted ($(jget "$W/r.json" usage.leftovers_killed))" \
        test "$(jget "$W/r.json" usage.leftovers_killed)" = 1
check "... its KILL logged ($(jget "$W/r.json" signals))" grep -q '"why": "leftover"' <<<"$(jget "$W/r.json" signals)"
check "... and it is gone (pid $(cat "$W/left" 2>/dev/null))" pid_gone "$(cat "$W/left" 2>/dev/null || echo 0)" 2000

# Issue 39 item 9: -t 1s over 3 spinners beside a fork bomb held at 300
# processes by RLIMIT_NPROC: ended by cpu_time, and the report's CPU time,
# a lower bound (the note says so), is never below the limit it says was
# reached (a report said cpu_time_s 0.600 under -t 1s; the figure is now
# at least the one the check that fired read)
(ulimit -u 300 && as_nobody "$L" run -q -t 1s -w 120s -g 1 -o "$W/r.json" -- sh -c \
        "'$TMP/bin/lh-spin' 60 3 & sleep 0.3; '$TMP/bin/$BOMB' >/dev/null; wait" >"$TMP/out" 2>"$TMP/err")
check "bomb under -t 1s: reason cpu_time ($(jget "$W/r.json" reason), wall $(jget "$W/r.json" usage.wall_time_s) s)" \
        test "$(jget "$W/r.json" reason)" = cpu_time
check "... cpu_time_s $(jget "$W/r.json" usage.cpu_time_s) is not below the 1 s limit" \
        fcmp "$(jget "$W/r.json" usage.cpu_time_s) >= 1.0"
check "... the limit's note says the figure is a lower bound" \
        grep -q 'lower bound' <<<"$(jget "$W/r.json" limits.cpu_time.note)"
left=$(pgrep -u $NB -x "$BOMB" | tr '\n' ' ')
check "... nothing of the bomb left (${left:-none})" test -z "$left"

nb_run --strict -m 32M -- /bin/true
check "--strict refuses without a cgroup: 125" test "$RC" = 125
check "--strict names the remedy" grep -q 'cgroup-parent' "$TMP/err"

# leash.limit as uid 65534: a library caller that is no subreaper; the job's
# holder keeps the tree whole (holder.c)
if [ -n "${LEASH_PYTHONPATH:-}" ] && [ -x /usr/bin/python3 ] && [ -z "${LEASH_SAN_CFLAGS:-}" ]; then
        cat >"$TMP/bin/nb.py" <<'PY'
import os, subprocess, sys, time
import leash
esc_bin, pidfile = sys.argv[1], sys.argv[2]
def value():
    return 42
def spin():
    while True:
        pass
def escape():
    subprocess.run([esc_bin, pidfile])
    time.sleep(100)
def hog():
    return len(bytearray(200 << 20))
def outcome(f, **limits):
    try:
        return repr(leash.limit(**limits)(f)())
    except BaseException as e:
        return type(e).__name__
print("value", outcome(value, memory="64M", wall_time=2))
print("cpu", outcome(spin, cpu_time=1, grace=0.2))
print("escape", outcome(escape, wall_time=1, grace=0.2))
print("memory", outcome(hog, memory="64M"))
for _ in range(20):
    outcome(value, wall_time=2)
kids = [c for t in os.listdir("/proc/self/task") for c in open("/proc/self/task/%s/children" % t).read().split()]
print("children", len(kids))
# 4 threads calling at once: a function's process holds none of the other
# calls' holder sockets or pidfds (heldfd.c; issue 22.4 without a cgroup).
# The 4 functions of a round meet at a barrier (a file each in the round's
# directory), so they overlap at any load instead of after a fixed sleep; a
# call that ends by a limit (a loaded host) is said, and is no foreign fd.
import threading
meet = os.path.join(os.path.dirname(pidfile), "meet")
def foreign(rnd):
    d = os.path.join(meet, str(rnd))
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, str(os.getpid())), "w").close()
    for _ in range(6000):
        if len(os.listdir(d)) >= 4:
            break
        time.sleep(0.01)
    met = len(os.listdir(d)) >= 4
    kinds = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            t = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if t.startswith("socket:") or "pidfd" in t:
            kinds.append(t)
    return met, kinds
seen, met, limited, errors = [], [], [], []
def caller():
    for rnd in range(5):
        try:
            m, kinds = leash.limit(wall_time=120)(foreign)(rnd)
            met.append(m)
            seen.extend(kinds)
        except leash.LimitExceeded as e:
            limited.append(type(e).__name__)
        except BaseException as e:
            errors.append("%s: %s" % (type(e).__name__, e))
ts = [threading.Thread(target=caller) for _ in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("threads foreign %d %s" % (len(seen), " ".join(sorted(set(seen)))))
print("threads met %d of %d calls; ended by a limit: %s; errors: %s" %
      (sum(met), len(met), " ".join(limited) or "none", "; ".join(errors) or "none"))
PY
        chmod 0644 "$TMP/bin/nb.py"
        as_nobody env PYTHONPATH="$LEASH_PYTHONPATH" /usr/bin/python3 "$TMP/bin/nb.py" "$TMP/bin/lh-escape" "$W/pypid" \
                >"$TMP/py" 2>&1
        diag "$(tr '\n' ' ' <"$TMP/py")"
        check "leash.limit without a cgroup: the value" grep -qx 'value 42' "$TMP/py"
        check "leash.limit: cpu_time over the tree" grep -qx 'cpu CpuTimeLimitExceeded' "$TMP/py"
        check "leash.limit: wall_time" grep -qx 'escape WallTimeLimitExceeded' "$TMP/py"
        esc=$(cat "$W/pypid" 2>/dev/null)
        check "leash.limit: the escapee (double fork, setsid) is gone (pid ${esc:-none})" \
                bash -c "[ -n '$esc' ] && $(declare -f pid_gone); pid_gone '${esc:-0}' 2000"
        check "leash.limit: memory by RLIMIT_AS (MemoryLimitExceeded)" grep -qx 'memory MemoryLimitExceeded' "$TMP/py"
        check "leash.limit: 20 calls leave no child (holder or job) behind" grep -qx 'children 0' "$TMP/py"
        check "leash.limit from 4 threads: no function holds another call's holder socket or pidfd ($(grep '^threads foreign' "$TMP/py"))" \
                grep -qx 'threads foreign 0 ' "$TMP/py"
        # the check above has power only where the calls overlapped, and
        # every call must have ended as a call (a limit on a loaded host is
        # said, not an error)
        check "leash.limit from 4 threads: the calls met at their barrier, none failed ($(grep '^threads met' "$TMP/py"))" \
                grep -qE '^threads met ([1-9][0-9]*) of [0-9]+ calls; .*errors: none$' "$TMP/py"
else
        SKIP_WHY="configured without Python"
        # an instrumented extension needs its sanitizer's runtime preloaded
        # (tests/python/run.sh does that), and RLIMIT_AS leaves ASan no room
        # for its shadow memory: the uninstrumented build runs these
        [ -n "${LEASH_SAN_CFLAGS:-}" ] && SKIP_WHY="a sanitizer build (the gcc tier runs them)"
        skip "leash.limit as uid $NB"
fi

# Issue 39 item 2 without a cgroup: a leash run inside the job keeps its
# report. The outer's shell dies of the soft signal at once; the inner leash
# passes it on and its job takes 1 s of the grace to end: the outer waits
# (the tree, looked at until it empties) instead of killing the inner leash
# as a leftover. Before: outer signals XCPU then KILL (leftover) 4 ms later,
# leftovers_killed 3, no inner report.
rm -f "$W/inner.json" "$W/outer.json"
as_nobody "$L" run -q -w 1 -g 30 -o "$W/outer.json" -- sh -c \
        "'$L' run -q -o '$W/inner.json' -- sh -c 'trap \"sleep 1; exit 7\" XCPU; while :; do sleep 0.1; done'" 2>"$TMP/err"
check "nested, no cgroup: the inner leash wrote its report, its job's status 7 ($(jget "$W/inner.json" exit.status))" \
        test "$(jget "$W/inner.json" exit.status)" = 7 -a "$(jget "$W/inner.json" reason)" = interrupted
check "nested, no cgroup: the outer killed nothing ($(jget "$W/outer.json" signals))" \
        bash -c "! grep -q KILL <<<'$(jget "$W/outer.json" signals)' && test '$(jget "$W/outer.json" usage.leftovers_killed)' = 0"
# an inner job that ignores the signal: the outer's grace still ends it all
as_nobody "$L" run -q -w 1 -g 1 -o "$W/outer.json" -- sh -c \
        "'$L' run -q -g 60 -- sh -c 'trap \"\" XCPU; echo \$\$ >\"$W/ign\"; while :; do sleep 0.1; done'" 2>"$TMP/err"
check "nested, no cgroup: the grace's SIGKILL ends a tree that ignores the signal ($(jget "$W/outer.json" signals))" \
        grep -q '"why": "grace"' <<<"$(jget "$W/outer.json" signals)"
check "... and nothing of it is left (pid $(cat "$W/ign" 2>/dev/null))" pid_gone "$(cat "$W/ign" 2>/dev/null || echo 0)" 2000

# A process whose main thread ends (pthread_exit) while another runs on:
# /proc/PID/stat says state Z, as for a zombie. The walk took Z for "ended":
# it neither signalled the process nor looked at its children, and its
# memory was not in /proc/PID/smaps_rollup (ESRCH). Control, the code before
# this change as uid 65534 here: the first run exited 0 with
# leftovers_killed 0, the process and its child still running; the second
# was killed at the grace (XCPU never reached it); the third ended by
# wall_time past a 50M sampled limit with 100 MiB touched.
zpids() { cat "$W/zpid" 2>/dev/null || echo 0 0; }
rm -f "$W/zpid"
nb_run -- sh -c "'$TMP/bin/lh-zleader' '$W/zpid' & sleep 0.5"
set -- $(zpids)
check "main thread ended, another runs (state Z): killed as a leftover ($(jget "$W/r.json" usage.leftovers_killed))" \
        test "$(jget "$W/r.json" usage.leftovers_killed)" -ge 2
pid_gone "$1" 2000 && pid_gone "$2" 2000
check "... it and its child are gone (pids $*)" test $? = 0
rm -f "$W/zpid"
nb_run -w 0.5 -g 10 -- "$TMP/bin/lh-zleader" "$W/zpid"
sigs=$(jget "$W/r.json" signals)
check "state Z as the main process: the soft signal reaches it, no SIGKILL ($sigs)" \
        test "$(jget "$W/r.json" exit.signal)" = XCPU -a "${sigs#*KILL}" = "$sigs"
rm -f "$W/zpid"
nb_run --limit memory=50M -w 10 -g 0.2 -- "$TMP/bin/lh-zleader" "$W/zpid" 100
check "state Z holding 100 MiB: the sampled 50M limit ends it (reason $(jget "$W/r.json" reason))" \
        test "$(jget "$W/r.json" reason)" = memory
# An undumpable process (PR_SET_DUMPABLE 0, as a set-uid program is)
# refuses /proc/PID/smaps_rollup to its own uid: a leash of that uid summed
# none of its memory. Control, the code before this change: 100 MiB under
# --limit memory=50M, ended by wall_time; now by memory, its resident set
# counted, and the basis says so.
nb_run --limit memory=50M -w 10 -g 0.2 -- "$TMP/bin/lh-undump" 100
check "undumpable, 100 MiB: the sampled 50M limit ends it (reason $(jget "$W/r.json" reason))" \
        test "$(jget "$W/r.json" reason)" = memory
check "... and the basis says its resident set was counted ($(jget "$W/r.json" usage.memory_peak_basis))" \
        test "$(jget "$W/r.json" usage.memory_peak_basis)" = sampled_pss_rss
# Its /proc/PID/io is refused too, and has no other source here (no io.stat):
# a job could pass a --limit io_write_bytes unseen. Such a limit cannot be
# judged, so it counts as passed, and the report says why. Control, the code
# before: reason wall_time (the io never seen); and the same limit on a
# dumpable process that writes nothing: reason ok.
nb_run --limit io_write_bytes=1G -w 3 -g 0.2 -- "$TMP/bin/lh-undump" 1 5
check "undumpable: an io_write_bytes limit counts as passed, its io unreadable (reason $(jget "$W/r.json" reason), partial $(jget "$W/r.json" sampling.limit_reached.partial))" \
        test "$(jget "$W/r.json" reason)/$(jget "$W/r.json" sampling.limit_reached.partial)" = io_write_bytes/True
check "... and says why" grep -q "made itself undumpable, so its /proc/PID/io is refused" "$TMP/err"
nb_run --limit io_write_bytes=1G -w 1 -- /bin/sleep 0.5
check "control: the same limit on a dumpable process that writes nothing: reason ok ($(jget "$W/r.json" reason))" \
        test "$(jget "$W/r.json" reason)" = ok
# the same below a library's holder (a C caller, tests/truth/lh-truth): the
# function leaves the process behind
LHT=$HELPERS/../truth/lh-truth
LIBL=$(dirname "$(dirname "$LEASH")")/lib/libleash.so.0
if [ -x "$LHT" ] && [ -f "$LIBL" ]; then
        cp "$LHT" "$LIBL" "$TMP/bin/" && chmod 0755 "$TMP/bin/lh-truth" "$TMP/bin/libleash.so.0"
        rm -f "$W/zpid"
        (cd "$W" && as_nobody env LD_LIBRARY_PATH="$TMP/bin" "$TMP/bin/lh-truth" - 0 sh \
                "'$TMP/bin/lh-zleader' '$W/zpid' & sleep 0.5" >"$W/held.json" 2>"$TMP/err")
        set -- $(zpids)
        pid_gone "$1" 2000 && pid_gone "$2" 2000
        gone=$?
        check "below a holder: state Z killed as a leftover ($(jget "$W/held.json" usage.leftovers_killed)), pids $* gone" \
                test "$(jget "$W/held.json" usage.leftovers_killed)" -ge 2 -a "$gone" = 0
else
        echo "# lh-truth or libleash.so.0 not built here: the holder's case is not checked"
fi

# --- issue 39 item 7: leash check's remedy, followed literally ------------------
# A shell of uid 65534 runs leash check and waits; root runs the remedy's
# "as root:" commands as printed; the shell then runs its "as uid 65534:"
# command (leash as $L, with -- true). Control: the remedy before this change
# (the same mkdir and chown, the shell left where it was) exits 125, and the
# error names the common ancestor's cgroup.procs.
# follow_remedy old|new: sets RRC (the user's leash run's exit) and RERR
follow_remedy() {
        local root_cmds user_cmd i
        rm -f "$W/rem" "$W/go" "$W/urc" "$W/uerr" "$W/ucmd" "$W/shpid"
        as_nobody bash -c 'echo $$ >"$2/shpid"; "$1" check >"$2/rem" 2>&1; echo done >>"$2/rem"
                while [ ! -e "$2/go" ]; do sleep 0.05; done
                eval "$(cat "$2/ucmd")" -- true 2>"$2/uerr"; echo $? >"$2/urc"' _ "$L" "$W" &
        local bg=$!
        for ((i = 0; i < 600; i++)); do grep -q '^done' "$W/rem" 2>/dev/null && break; sleep 0.05; done
        root_cmds=$(sed -n 's/^  remedy: as root: \(.*\)\. Then, in that shell (pid [0-9]*), as uid '$NB': .*/\1/p' "$W/rem")
        user_cmd=$(sed -n 's/^  remedy: .*, as uid '$NB': leash \(.*\)/\1/p' "$W/rem")
        # the pid the remedy names is the waiting shell's
        grep -q "echo $(cat "$W/shpid") > " <<<"$root_cmds" || root_cmds="remedy names another pid: $root_cmds"
        [ "$1" = old ] && root_cmds=${root_cmds%; echo *}
        diag "remedy ($1), as root: $root_cmds; as uid $NB: leash $user_cmd"
        bash -c "$root_cmds"
        printf '"%s" %s' "$L" "$user_cmd" >"$W/ucmd"
        touch "$W/go"
        wait "$bg"
        RRC=$(cat "$W/urc" 2>/dev/null || echo none)
        RERR=$(cat "$W/uerr" 2>/dev/null)
}
RBASE=$(sed -n 's/^  remedy: as root: mkdir -p \(.*\)\/shell; .*/\1/p' "$TMP/check")
# the remedy fixes the cgroup's name: concurrent runs take turns, by a lock
# on the directory it goes in (nothing left behind)
lock=
[ -n "$RBASE" ] && exec {lock}<"${RBASE%/*}" && flock -w 600 "$lock"
if [ -z "$RBASE" ] || [ -e "$RBASE" ]; then
        check "remedy: a delegation to follow (${RBASE:-none printed}, not there yet) # SKIP $(grep remedy "$TMP/check")" true
else
        follow_remedy old
        check "remedy control: without the shell moved, the user's leash run exits 125 ($RRC)" test "$RRC" = 125
        check "... and says why: the common ancestor's cgroup.procs ($RERR)" grep -q "common ancestor's cgroup.procs" <<<"$RERR"
        follow_remedy new
        check "remedy followed literally: the user's leash run exits 0 ($RRC: $RERR)" test "$RRC" = 0
        rmdir "$RBASE/shell" "$RBASE"
        check "remedy: nothing left of the delegation" test ! -e "$RBASE"
fi
[ -z "$lock" ] || { flock -u "$lock"; exec {lock}<&-; }

as_nobody "$L" ps >"$TMP/ps" 2>&1
check "ps: says placement none and why jobs are not listed" grep -q '^placement: none (.*no delegated unit' "$TMP/ps"
check "check: placement none with the remedy" grep -q '^  remedy: ' "$TMP/check"
check "check: verdict DEGRADED, not NOTHING CAN RUN" grep -q '^verdict: *DEGRADED' "$TMP/check"
finish
