#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Exit status pass-through, 126/127, signals, and the reasons in the report.
. "$(dirname "$0")/lib.sh"

for code in 0 1 3 42 123 124 125 126 127; do
        run_leash -- sh -c "exit $code"
        check "exit $code passes through" test "$RC" = "$code"
done

run_leash -o "$TMP/r.json" -- sh -c 'exit 3'
check "reason exit for a non-zero status" test "$(jget "$TMP/r.json" reason)" = exit
check "status in the report" test "$(jget "$TMP/r.json" exit.status)" = 3

run_leash -o "$TMP/r.json" -- true
check "reason ok" test "$(jget "$TMP/r.json" reason)" = ok

run_leash -o "$TMP/r.json" -- /no/such/command
check "not found: 127" test "$RC" = 127
check "not found: reason exec_error" test "$(jget "$TMP/r.json" reason)" = exec_error
check "not found: one clear line" bash -c "[[ \"$ERR\" == *'/no/such/command: No such file or directory'* ]]"

run_leash -- no-such-command-anywhere
check "not found on PATH: 127" test "$RC" = 127

printf '#!/bin/sh\necho hi\n' >"$TMP/noexec"
chmod 0644 "$TMP/noexec"
run_leash -- "$TMP/noexec"
check "not executable: 126" test "$RC" = 126
run_leash -- "$TMP"
check "a directory: 126" test "$RC" = 126

run_leash -o "$TMP/r.json" -- sh -c 'kill -TERM $$'
check "killed by SIGTERM: 143" test "$RC" = 143
check "reason signal" test "$(jget "$TMP/r.json" reason)" = signal
check "signal named" test "$(jget "$TMP/r.json" exit.signal)" = TERM

# SIGCHLD ignored by whoever started leash: the job's status is still known,
# and the job inherits the ignored SIGCHLD as it would without leash
"$PY" -c "
import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
os.execv(sys.argv[1], sys.argv[1:])" "$LEASH" run --cgroup-parent "$PARENT" -- grep SigIgn /proc/self/status >"$TMP/chld" 2>&1
rc=$?
check "SIGCHLD ignored by the caller: status still seen" test "$rc" = 0
check "SIGCHLD ignored by the caller: the job inherits it" "$PY" -c "
import sys
mask = int(open('$TMP/chld').read().split()[1], 16)
sys.exit(0 if mask & (1 << 16) else 1)"

# stdout and stdin are the job's own
OUT2=$(echo piped | "$LEASH" run --cgroup-parent "$PARENT" -- cat)
check "stdin and stdout pass through" test "$OUT2" = piped

# the fork fallback (kernels without clone3 into cgroup) behaves the same
LEASH_SPAWN=fork run_leash -o "$TMP/r.json" -- sh -c 'cat /proc/self/cgroup; exit 7'
check "fallback spawn: exit status" test "$RC" = 7
check "fallback spawn: job ran inside its cgroup" bash -c "grep -q '^0::.*/t-exit-status-$$/sh@' <<<\"\$0\"" "$OUT"
LEASH_SPAWN=fork run_leash -- /no/such/command
check "fallback spawn: 127" test "$RC" = 127

run_leash -- sh -c 'cat /proc/self/cgroup'
check "clone3 spawn: job ran inside its cgroup" bash -c "grep -q '^0::.*/t-exit-status-$$/sh@' <<<\"\$0\"" "$OUT"

# a setup failure's whole record (step, errno, the rlimit and its value) back
# from the child: through the pipe (the fork form) and through the memory the
# vfork form shares with leash. Above fs.nr_open, RLIMIT_NOFILE fails even for root.
big=$(($(cat /proc/sys/fs/nr_open) + 1))
for spawn in clone3 fork; do
        LEASH_SPAWN=$spawn run_leash -o "$TMP/r.json" --nofile "$big" -- true
        check "$spawn spawn, an rlimit the child cannot set: 125 ($RC)" test "$RC" = 125
        check "$spawn spawn: reason setup_error" test "$(jget "$TMP/r.json" reason)" = setup_error
        check "$spawn spawn: the step, the rlimit, its value and the error said ($ERR)" \
                bash -c '[[ "$1" == *"set an rlimit for the job: RLIMIT_NOFILE = $2 (--nofile): Operation not permitted"* ]]' \
                - "$ERR" "$big"
done
finish
