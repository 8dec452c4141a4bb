#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The hostile job (issue 9): a job that attacks the terminal leash was started
# from, the stale-cgroup sweep, its supervisor and the cgroup tree. Every
# defence is checked against a control run in which the same attack works
# without it, so that an attack that cannot work here does not pass for the
# wrong reason. Runs as root and as a user with a delegated LEASH_TEST_PARENT.
. "$(dirname "$0")/lib.sh"

H="$HELPERS/lh-hostile"
[ -x "$H" ] || skip_all "no $H"
ROOT=false
[ "$(id -u)" = 0 ] && ROOT=true

# --- 9.1 the terminal ------------------------------------------------------------
# pty FEED_SECONDS CMD: run the shell command CMD in a pseudo-terminal (script(1));
# after CMD, the shell reads one line from the terminal and prints GOT[line],
# so text pushed into the terminal's input by CMD shows up as GOT[text].
pty() {
        local secs=$1
        shift
        sleep "$secs" | script -qec "$*; read -t 1 l; echo \"GOT[\$l]\"" /dev/null >"$TMP/pty" 2>&1
        PTY=$(tr -d '\r' <"$TMP/pty" | sed 's/\^C//g')
}
pty_has() { grep -qxF -- "$1" <<<"$PTY"; }
pty_check() { # pty_check NAME LINE
        if pty_has "$2"; then ok "$1"; else not_ok "$1"; diag "wanted '$2'; got: $(tr '\n' '|' <<<"$PTY")"; fi
}
L="$LEASH run --cgroup-parent $PARENT -q"

if ! command -v script >/dev/null; then
        SKIP_WHY="no script(1) here (util-linux): no pseudo-terminal to test with"
        skip "terminal: the terminal cases"
else
        # control: a process that shares the terminal's session injects input
        pty 2 "$H tty tiocsti 'INJ\$((6*7))'"
        pty_check "control: a process in the terminal's session opens /dev/tty" "tty: ok"
        if pty_has "tiocsti: ok" && pty_has 'GOT[INJ$((6*7))]'; then
                ok "control: TIOCSTI pushes a line into the shell that started it"
                INJECT=true
        else
                INJECT=false
                ok "control: TIOCSTI refused here without CAP_SYS_ADMIN (dev.tty.legacy_tiocsti=0)"
        fi
        # the job of leash has no controlling terminal and injects nothing
        pty 2 "$L -- $H tty tiocsti 'INJ\$((6*7))'"
        pty_check "job: no controlling terminal (open /dev/tty: ENXIO)" "tty: ENXIO"
        pty_check "job: TIOCSTI on the inherited terminal fd refused (EPERM)" "tiocsti: EPERM"
        pty_check "job: nothing reached the shell" "GOT[]"
        if $ROOT; then
                # A job that keeps CAP_SYS_ADMIN may use TIOCSTI on any terminal, its
                # own session or not: the seccomp sets are the defence there.
                pty 2 "$L --caps keep -- $H tiocsti 'INJ\$((6*7))'"
                pty_check "control: a job that keeps CAP_SYS_ADMIN injects without a filter" 'GOT[INJ$((6*7))]'
                for set in no-network no-ptrace no-namespaces no-kernel; do
                        pty 2 "$L --caps keep --seccomp $set -- $H tiocsti 'INJ\$((6*7))' tiocsti-hi 'HI'"
                        pty_check "--seccomp $set: TIOCSTI denied (EPERM)" "tiocsti: EPERM"
                        pty_check "--seccomp $set: TIOCSTI with garbage in the upper 32 bits denied" "tiocsti-hi: EPERM"
                        pty_check "--seccomp $set: nothing reached the shell" "GOT[]"
                done
        else
                SKIP_WHY="needs root (a job that keeps CAP_SYS_ADMIN)"
                skip "TIOCSTI with CAP_SYS_ADMIN, under each seccomp set"
        fi
        # Ctrl-C: the terminal's SIGINT goes to leash's process group, not to the
        # job's session; leash passes it on, then the soft signal, exit 130.
        ( sleep 1.5; printf '\003'; sleep 2.5 ) |
                script -qec "$L -o $TMP/int.json -- $H wait-signal 20" /dev/null >"$TMP/pty" 2>&1
        PTY=$(tr -d '\r' <"$TMP/pty" | sed 's/\^C//g')
        pty_check "Ctrl-C at the terminal reaches the job through leash (SIGINT)" "signal: INT"
        check "Ctrl-C: report reason interrupted" test "$(jget "$TMP/int.json" reason)" = interrupted
        check "Ctrl-C: report exit code 130, interrupted by INT" \
                test "$(jget "$TMP/int.json" exit.code)/$(jget "$TMP/int.json" exit.interrupted_by)" = 130/INT
        # control: a process in a session of its own does not get the terminal's Ctrl-C
        ( sleep 1.5; printf '\003'; sleep 1.5 ) | script -qec "setsid $H wait-signal 2 >$TMP/ctl" /dev/null >/dev/null 2>&1
        for _ in $(seq 40); do grep -q wait-signal "$TMP/ctl" 2>/dev/null && break; sleep 0.1; done
        PTY=$(cat "$TMP/ctl")
        pty_check "control: without leash passing it on, a job in its own session misses Ctrl-C" "wait-signal: EAGAIN"
fi

# --- 9.3 the sweep: only cgroups leash made and marked -----------------------------
# A pid that is dead now: the sweep may judge a cgroup named after it stale.
dead_pid() { sleep 0 & local p=$!; wait $p; echo $p; }
# foreign NAME: a cgroup under the parent with a process in it (its pid in $FPID_NAME)
foreign() {
        mkdir "$PARENT/$1" || return 1
        sleep 120 &
        echo $! >"$PARENT/$1/cgroup.procs"
        eval "FP_${2}=$!"
}
unforeign() { # kill what foreign() made
        local d=$1 pid=$2
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        rmdir "$PARENT/$d" 2>/dev/null
        true
}
MARK=user.leash
$ROOT && MARK=trusted.leash
NS=$(stat -L -c %i /proc/self/ns/pid)
setmark() { /usr/bin/python3 -c 'import os,sys; os.setxattr(sys.argv[1], sys.argv[2], sys.argv[3].encode())' "$@"; }
D=$(dead_pid)
if kill -0 "$D" 2>/dev/null; then D=$(dead_pid); fi
foreign "user@$D.service" A
foreign "x@$D" B
foreign "x@$D.1" C
foreign "y@$D" E
if setmark "$PARENT/x@$D.1" $MARK "pid=$D pidns=1" 2>"$TMP/xattr" && setmark "$PARENT/y@$D" $MARK "pid=$D pidns=$NS" 2>>"$TMP/xattr"; then
        run_leash -q -- true
        check "sweep: the run itself succeeds" test "$RC" = 0
        check "sweep: a user@$D.service-like cgroup survives (no mark)" test -d "$PARENT/user@$D.service"
        check "sweep: its process lives" kill -0 "$FP_A"
        check "sweep: a fake x@$D (exact grammar, dead pid, no mark) survives" test -d "$PARENT/x@$D"
        check "sweep: its process lives" kill -0 "$FP_B"
        check "sweep: a cgroup marked by a leash of another pid namespace survives" test -d "$PARENT/x@$D.1"
        check "sweep: its process lives" kill -0 "$FP_C"
        check "control: the same cgroup with this namespace's $MARK is swept" test ! -d "$PARENT/y@$D"
        check "control: its process was killed" pid_gone "$FP_E" 2000
        # the mark leash writes itself, read while the job runs
        "$LEASH" run --cgroup-parent "$PARENT" -q -n marked -- sh -c "sed -n 's/^0:://p' /proc/self/cgroup >$TMP/cg.tmp; mv $TMP/cg.tmp $TMP/cg; sleep 2" &
        bg=$!
        for _ in $(seq 100); do [ -s "$TMP/cg" ] && break; sleep 0.05; done
        cg="$CG2$(cat "$TMP/cg")"
        m=$(/usr/bin/python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], sys.argv[2]).decode())' "$cg" $MARK 2>&1)
        check "leash marks its job cgroup $(basename "$cg"): $MARK = '$m'" test "$m" = "pid=$bg pidns=$NS"
        wait $bg
        if $ROOT; then
                # a root job without CAP_SYS_ADMIN can neither forge nor read the trusted mark
                run_leash -q -- /usr/bin/python3 -c 'import os,sys
d = sys.argv[1]
try: os.setxattr(d, "trusted.leash", b"pid=1 pidns=1"); print("set: ok")
except OSError as e: print("set:", e.errno)' "$PARENT"
                check "a root job cannot forge trusted.leash (EPERM)" test "$OUT" = "set: 1"
        fi
else
        SKIP_WHY="cgroupfs keeps no $MARK xattrs here: $(head -1 "$TMP/xattr")"
        skip "sweep: foreign cgroups survive, marked ones are swept"
fi
unforeign "user@$D.service" "$FP_A"
unforeign "x@$D" "$FP_B"
unforeign "x@$D.1" "$FP_C"
unforeign "y@$D" "$FP_E"

# A live leash in another pid namespace, whose pid is dead in ours, shares the parent.
if $ROOT && command -v unshare >/dev/null && unshare --pid --fork --mount-proc true 2>/dev/null; then
        N=20000
        while [ -e /proc/$((N + 1)) ]; do N=$((N + 7)); done
        unshare --pid --fork --mount-proc sh -c "echo $N >/proc/sys/kernel/ns_last_pid; exec 3>&-; $LEASH run --cgroup-parent $PARENT -q -n other -o $TMP/other.json -- sleep 3" &
        OTHER=$!
        for _ in $(seq 100); do [ -d "$PARENT/other@$((N + 1))" ] && break; sleep 0.05; done
        check "another pid namespace: its job cgroup other@$((N + 1)) exists, pid $((N + 1)) dead here" \
                sh -c "test -d '$PARENT/other@$((N + 1))' && ! kill -0 $((N + 1)) 2>/dev/null"
        run_leash -q -- true
        check "another pid namespace: our sweep leaves its job cgroup alone" test -d "$PARENT/other@$((N + 1))"
        wait $OTHER
        check "another pid namespace: its job ran to the end (exit 0, reason ok)" \
                test "$?/$(jget "$TMP/other.json" reason)" = 0/ok
else
        SKIP_WHY="needs root and unshare(1) with pid namespaces"
        skip "sweep: a live leash in another pid namespace"
fi

finish
