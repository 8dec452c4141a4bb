#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 38.12: a job with leash's uid cannot ptrace leash nor open
# /proc/<leash>/mem for writing (before: PTRACE_SEIZE of leash succeeded and
# the job rewrote leash's memory, turning its wall-time kill into `reason:
# ok`). leash is undumpable while the job runs; the job itself is not (exec
# makes it dumpable again). The control: the same attack, by the same uid,
# on a plain process of that uid, works.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (leash and its job run as the user nobody)"
nobody_dir || skip_all "$SKIP_WHY"
nobody_exec "$LEASH" || skip_all "$SKIP_WHY"
as_nobody test -x "$PY" || skip_all "nobody cannot run $PY"
D=$NOBODY_DIR
chmod 0777 "$D"
# attack PIDFILE: PTRACE_SEIZE of the pid in PIDFILE, then an open of its
# /proc/PID/mem for writing; prints what each gave and whether the attacker
# itself is dumpable
cat >"$D/attack.py" <<'PY'
import ctypes, errno, os, sys
pid = int(open(sys.argv[1]).read())
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
seize = "ok" if libc.ptrace(0x4206, pid, None, None) == 0 else errno.errorcode[ctypes.get_errno()]
try:
    os.close(os.open("/proc/%d/mem" % pid, os.O_RDWR))
    mem = "ok"
except OSError as e:
    mem = errno.errorcode[e.errno]
print("seize=%s mem=%s dumpable=%d" % (seize, mem, libc.prctl(3, 0, 0, 0, 0)))
PY
chmod 0644 "$D/attack.py"

# the attack from inside a job of a `leash run` as nobody, on that leash
# (LEASH_CONFIG_DIR where nobody may look: make check's is in the build tree,
# which a package build's 0700 directory hides, and leash refuses a
# configuration directory it cannot read)
as_nobody env LEASH_CONFIG_DIR="$D/no-such-config" \
        sh -c 'echo $$ >"$1/leash.pid"; exec "$2" run -o "$1/r.json" -- "$3" "$1/attack.py" "$1/leash.pid"' \
        - "$D" "$NOBODY_EXEC" "$PY" >"$TMP/job.out" 2>"$TMP/job.err"
rc=$?
seen=$(cat "$TMP/job.out")
check "the job ran (leash exit $rc, $seen $(head -c 300 "$TMP/job.err"))" test "$rc" = 0 -a -n "$seen"
check "the job cannot PTRACE_SEIZE its leash ($seen)" bash -c '[[ "$1" == *"seize=EPERM"* ]]' - "$seen"
check "the job cannot open /proc/<leash>/mem for writing ($seen)" \
        bash -c '[[ "$1" == *"mem=EACCES"* || "$1" == *"mem=EPERM"* ]]' - "$seen"
check "the job itself is dumpable (exec made it so: its own /proc files, core dumps)" \
        bash -c '[[ "$1" == *"dumpable=1"* ]]' - "$seen"

# the control: the same attack, the same uid, on a process that is not undumpable
setpriv --reuid=65534 --regid=65534 --clear-groups sleep 1000 >/dev/null 2>&1 &
plain=$! # setpriv execs sleep: this is its pid
echo "$plain" >"$D/plain.pid"
seen=$(as_nobody "$PY" "$D/attack.py" "$D/plain.pid" 2>&1)
check "control: the same attack on a plain process of the same uid works ($seen)" \
        bash -c '[[ "$1" == *"seize=ok mem=ok"* ]]' - "$seen"
kill "$plain"
wait "$plain" 2>/dev/null
check "the plain process is gone" pid_gone "$plain" 2000
finish
