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

finish
