#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Each limit, enforced the way the report says: by the controller where the
# parent has it, honestly degraded where it has not.
. "$(dirname "$0")/lib.sh"

# rlimits
run_leash --nofile 17 -- sh -c 'ulimit -n'
check "--nofile sets RLIMIT_NOFILE" test "$OUT" = 17
run_leash --core 0 -- sh -c 'ulimit -c'
check "--core sets RLIMIT_CORE" test "$OUT" = 0
run_leash --fsize 4K -o "$TMP/r.json" -- sh -c "head -c 8192 /dev/zero > '$TMP/big'"
check "--fsize stops a larger write (SIGXFSZ)" test "$RC" = 153 -o "$RC" = 1
check "--fsize enforced_by rlimit" test "$(jget "$TMP/r.json" limits.fsize.enforced_by)" = rlimit

# Issue 39 item 4: a file-size limit is named. dd is the main process: it
# dies of SIGXFSZ, reason fsize, exit 153, a stderr line naming the limit;
# the file on disk (the ground truth) stops at the limit. Before: reason
# signal (XFSZ), no stderr line.
rm -f "$TMP/big"
run_leash --fsize 1M -o "$TMP/r.json" -- dd if=/dev/zero of="$TMP/big" bs=64K count=64
size=$(stat -c %s "$TMP/big" 2>/dev/null)
check "--fsize over dd: reason fsize, exit 153 ($(jget "$TMP/r.json" reason), $RC)" \
        test "$(jget "$TMP/r.json" reason)" = fsize -a "$RC" = 153 -a "$(jget "$TMP/r.json" exit.signal)" = XFSZ
check "--fsize over dd: the file stopped at the limit ($size bytes)" test "$size" = 1048576
check "--fsize over dd: stderr names the limit ($(grep '^leash:' "$TMP/err"))" grep -q "^leash: fsize limit 1.00 MiB reached" "$TMP/err"
# the control: the same dd without --fsize writes it all, reason ok
rm -f "$TMP/big"
run_leash -o "$TMP/r.json" -- dd if=/dev/zero of="$TMP/big" bs=64K count=64
check "control without --fsize: 4 MiB written, reason ok ($(stat -c %s "$TMP/big"), $(jget "$TMP/r.json" reason))" \
        test "$(stat -c %s "$TMP/big")" = 4194304 -a "$(jget "$TMP/r.json" reason)" = ok
# SIGXFSZ leash's limit did not cause (sent by the job itself): reason signal
run_leash -o "$TMP/r.json" -- sh -c 'kill -XFSZ $$'
check "SIGXFSZ without --fsize: reason signal ($(jget "$TMP/r.json" reason))" test "$(jget "$TMP/r.json" reason)" = signal
# through sh -c: the shell reaps dd and exits 153; leash saw no SIGXFSZ, so
# reason exit, and its line says what the status suggests, not more
rm -f "$TMP/big"
run_leash --fsize 1M -o "$TMP/r.json" -- sh -c "dd if=/dev/zero of='$TMP/big' bs=64K count=64"
check "--fsize over sh -c dd: reason exit, status 153 ($(jget "$TMP/r.json" reason), $(jget "$TMP/r.json" exit.status))" \
        test "$(jget "$TMP/r.json" reason)" = exit -a "$(jget "$TMP/r.json" exit.status)" = 153 -a "$RC" = 153
check "--fsize over sh -c dd: the line says may, not reached" \
        bash -c "grep -q 'status 153, a shell.s status for a command that died of SIGXFSZ: a write past the fsize limit 1.00 MiB (RLIMIT_FSIZE) may be why' '$TMP/err' && ! grep -q reached '$TMP/err'"
rm -f "$TMP/big"
# a process that ignores SIGXFSZ (Python does) gets EFBIG and fails by
# itself: likely_cause names the limit (the truth matrix's Python fsize
# cells; before, no likely_cause). The control: the same failure without
# --fsize names nothing.
efbig="import sys; sys.exit(1) if len(sys.argv) > 1 else open('$TMP/big', 'wb').write(bytes(4 << 20))"
if [ -x /usr/bin/python3 ]; then
        run_leash --fsize 1M -o "$TMP/r.json" -- /usr/bin/python3 -c "$efbig"
        check "--fsize, SIGXFSZ ignored: exit 1, the file stopped at the limit ($RC, $(stat -c %s "$TMP/big"))" \
                test "$RC" = 1 -a "$(stat -c %s "$TMP/big")" = 1048576
        check "--fsize, SIGXFSZ ignored: likely_cause names RLIMIT_FSIZE ($(jget "$TMP/r.json" likely_cause))" \
                test -n "$(jget "$TMP/r.json" likely_cause | grep 'limited to 1.00 MiB by RLIMIT_FSIZE')"
        run_leash -o "$TMP/r.json" -- /usr/bin/python3 -c "$efbig" fail
        check "control: exit 1 without --fsize, no likely_cause ($RC, $(jget "$TMP/r.json" likely_cause))" \
                test "$RC" = 1 -a "$(jget "$TMP/r.json" likely_cause)" = null
        rm -f "$TMP/big"
else
        skip "no /usr/bin/python3 (a job that ignores SIGXFSZ)"
fi

# memory
if has_controller memory; then
        run_leash -m 64M -o "$TMP/r.json" -- "$HELPERS/lh-alloc" 200
        check "memory: OOM kill is 137" test "$RC" = 137
        check "memory: reason memory" test "$(jget "$TMP/r.json" reason)" = memory
        check "memory: enforced_by cgroup" test "$(jget "$TMP/r.json" limits.memory.enforced_by)" = cgroup
        check "memory: oom_kills >= 1" fcmp "$(jget "$TMP/r.json" usage.oom_kills) >= 1"
else
        run_leash -m 64M -o "$TMP/r.json" -- "$HELPERS/lh-alloc" 200
        check "memory without controller: allocation refused by RLIMIT_AS" test "$RC" = 3
        check "memory without controller: enforced_by rlimit, said plainly" \
                test "$(jget "$TMP/r.json" limits.memory.enforced_by)" = rlimit
        check "memory without controller: note says why" bash -c "[[ '$(jget "$TMP/r.json" limits.memory.note)' == *'no memory controller'* ]]"
        # issue 39 item 10: the kv report (no stderr where it is read) names
        # the likely cause, as stderr does; before, only reason:exit was there
        run_leash -m 64M -f kv -o "$TMP/r.kv" -- "$HELPERS/lh-alloc" 200
        check "memory without controller: kv names the likely cause ($(grep '^likely_cause:' "$TMP/r.kv"))" \
                grep -q "^likely_cause:the job exited with status 3; memory is limited per process by RLIMIT_AS (64.0 MiB) here: an allocation it refused may be why" "$TMP/r.kv"
        check "... the same line as on stderr" grep -qF "$(sed -n 's/^likely_cause://p' "$TMP/r.kv")" "$TMP/err"
        # the control: the same failure without a memory limit names no cause
        run_leash -f kv -o "$TMP/r.kv" -- sh -c 'exit 3'
        check "control: exit 3 without -m: no likely_cause in kv" bash -c "! grep -q '^likely_cause' '$TMP/r.kv'"
        run_leash -m 256M -- "$HELPERS/lh-alloc" 64
        check "memory without controller: a job within the limit runs" test "$RC" = 0
fi

# pids
if has_controller pids; then
        run_leash -P 10 -o "$TMP/r.json" -- "$HELPERS/lh-forkn" 20 200
        check "pids: forks beyond the limit refused" test "$RC" = 1
        check "pids: reason pids" test "$(jget "$TMP/r.json" reason)" = pids
        check "pids: peak within the limit" fcmp "$(jget "$TMP/r.json" usage.pids_peak) <= 10"
else
        run_leash -P 10 -o "$TMP/r.json" -- true
        check "pids without controller: enforced_by none" test "$(jget "$TMP/r.json" limits.pids.enforced_by)" = none
fi

# cpus
if has_controller cpu; then
        run_leash -c 0.5 -o "$TMP/r.json" -- "$HELPERS/lh-spin" 1
        check "cpus: throttled" fcmp "$(jget "$TMP/r.json" usage.throttled_s) > 0"
        check "cpus: enforced_by cgroup" test "$(jget "$TMP/r.json" limits.cpus.enforced_by)" = cgroup
else
        run_leash -c 0.5 -o "$TMP/r.json" -- true
        check "cpus without controller: enforced_by none" test "$(jget "$TMP/r.json" limits.cpus.enforced_by)" = none
        check "cpus without controller: throttled_s is null" test "$(jget "$TMP/r.json" usage.throttled_s)" = null
fi
finish
