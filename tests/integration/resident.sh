#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The resident launcher (issue 40, src/cli/resident.c): a `leash run` served by it
# runs its job as the caller would have run it itself, ends as it would, and a
# caller the launcher must not serve runs its job itself.  Here the launcher
# serves the test's own cgroup (--accept-cgroup; in a login session it serves
# the session's scope) on a socket of the test's (LEASH_RESIDENT_SOCKET).
# Each refusal has its control: the same caller without the one difference is
# served.
. "$(dirname "$0")/lib.sh"

# a short path (a unix socket's is at most 107 bytes; a packager's TMPDIR may be long)
SOCKDIR=$(mktemp -d /tmp/leash-rs.XXXXXX)
SOCK=$SOCKDIR/resident.sock
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
"$LEASH" __resident --socket "$SOCK" --accept-cgroup "$own" </dev/null >/dev/null 2>"$TMP/resident.err" &
RPID=$!
R2=
# the launchers go with the script, however it ends
trap 'kill -TERM $RPID $R2 2>/dev/null; rm -rf "$SOCKDIR"' EXIT
for i in $(seq 200); do [ -S "$SOCK" ] && break; sleep 0.01; done
check "the launcher listens" test -S "$SOCK"
export LEASH_RESIDENT_SOCKET=$SOCK

# grandparent CMD...: the pid of the job's leash's parent, as the job sees it
probe='gp=$(awk "/^PPid:/{print \$2}" /proc/$PPID/status); echo "gp=$gp"'
served() { grep -qx "gp=$RPID" <<<"$1"; }
# the job ran (it printed its grandparent), and not through the launcher
not_served() { grep -q '^gp=[0-9]' <<<"$1" && ! served "$1"; }
served_run() { "$@" "$LEASH" run --cgroup-parent "$PARENT" -- sh -c "$probe" </dev/null 2>&1; }

# 1. What the job inherits, the same through the launcher as from leash itself:
# working directory, umask, limits, nice, ignored and blocked signals,
# no_new_privs, OOM score, CPUs, environment, and the exit status.
inherit='pwd; umask; ulimit -a; grep -E "^(SigIgn|SigBlk|NoNewPrivs|Cpus_allowed_list):" /proc/self/status; cat /proc/self/oom_score_adj; nice; env | grep ^PROBE_; exit 3'
attrs() {
	(cd "$TMP" && umask 027 && ulimit -n 77 && ulimit -S -c 0 && trap '' HUP USR2 &&
		echo 500 >/proc/self/oom_score_adj && PROBE_X='a b' LEASH_RESIDENT=$1 \
		nice -n 5 "$LEASH" run --cgroup-parent "$PARENT" -- sh -c "$probe; $inherit" </dev/null 2>"$TMP/err-$1")
	echo "rc=$?"
}
remote=$(attrs 1)
local_=$(attrs 0)
check "served: the job's leash was started by the launcher" served "$remote"
check "control: with LEASH_RESIDENT=0 leash runs it itself" not_served "$local_"
check "served: exit status 3 passed through ($(tail -1 <<<"$remote"))" grep -qx 'rc=3' <<<"$remote"
same() { [ "$(grep -v '^gp=' <<<"$remote")" = "$(grep -v '^gp=' <<<"$local_")" ]; }
check "served: the job inherits what it inherits from leash itself" same
same || diff <(echo "$local_") <(echo "$remote") | sed 's/^/# /'

# The launcher's own limits changed after it started (prlimit, as its user
# may): the job still has its caller's, not the launcher's of the moment nor
# the ones it started with (the caller's too: compared to those, nothing
# differed). Its open-files limit is lowered below the caller's descriptors.
soft=$(ulimit -S -n) stack=$(ulimit -S -s)
if ! command -v prlimit >/dev/null; then
	SKIP_WHY="no prlimit (util-linux)" skip "a launcher whose limits changed after its start"
elif [ "$stack" = unlimited ] || [ "$stack" -le 1024 ] ||
	! prlimit --pid "$RPID" --nofile=55: --stack=$((1024 * 1024)): 2>"$TMP/prlimit.err"; then
	SKIP_WHY="prlimit on the launcher refused ($(head -1 "$TMP/prlimit.err")), or a stack limit of $stack" \
		skip "a launcher whose limits changed after its start"
else
	out=$("$LEASH" run --cgroup-parent "$PARENT" -- sh -c "$probe; ulimit -n; ulimit -s" </dev/null 2>&1)
	check "a launcher whose limits changed since its start: served ($out)" served "$out"
	check "and the job has the caller's open-files limit $soft, not the launcher's 55" \
		test "$(sed -n 2p <<<"$out")" = "$soft"
	check "and the caller's stack limit $stack KiB, not the launcher's 1024" test "$(sed -n 3p <<<"$out")" = "$stack"
	prlimit --pid "$RPID" --nofile="$soft": --stack=$((stack * 1024)):
fi

# 2. Descriptors: leash's own (a report to /dev/fd/5) and the job's stdout.
(cd "$TMP" && "$LEASH" run --cgroup-parent "$PARENT" --report /dev/fd/5 -- sh -c "$probe" </dev/null >"$TMP/o2" 2>&1 5>"$TMP/r2.json")
check "served: the job's stdout is the caller's ($(cat "$TMP/o2"))" served "$(cat "$TMP/o2")"
check "served: the report went to the caller's fd 5" test "$(jget "$TMP/r2.json" reason)" = ok
title=$("$LEASH" run --cgroup-parent "$PARENT" -- sh -c 'ps -o args= -p $PPID' </dev/null 2>&1)
check "served: ps shows the job's leash as its caller's command line ($title)" \
	test "$title" = "leash run --cgroup-parent $PARENT -- sh -c ps -o args= -p \$PPID"

# A terminal changes nothing: the job has it on stdin either way (in a session of its own).
if command -v script >/dev/null; then
	out=$(script -qec "'$LEASH' run --cgroup-parent '$PARENT' -- sh -c '$probe; test -t 0 && echo stdin-tty'" /dev/null </dev/null 2>&1 | tr -d '\r')
	check "a launch from a terminal is served, its stdin the terminal ($out)" \
		eval 'served "$out" && grep -q "^stdin-tty" <<<"$out"'
else
	SKIP_WHY="no script(1) here"
	skip "a launch from a terminal is served"
fi

# 3. Signals to the caller reach the job as from leash; the caller's death kills it.
"$LEASH" run --cgroup-parent "$PARENT" -o "$TMP/r3.json" -- sh -c 'echo $$ >"$1/j3"; exec sleep 60' sh "$TMP" </dev/null >/dev/null 2>&1 &
cpid=$!
for i in $(seq 300); do [ -s "$TMP/j3" ] && break; sleep 0.01; done
kill -TERM "$cpid"
wait "$cpid"
rc=$?
check "SIGTERM to the caller: it dies of SIGTERM (exit $rc)" test "$rc" = 143
check "SIGTERM to the caller: the report says interrupted" test "$(jget "$TMP/r3.json" reason)" = interrupted
"$LEASH" run --cgroup-parent "$PARENT" -- sh -c 'echo $$ >"$1/j4"; exec sleep 60' sh "$TMP" </dev/null >/dev/null 2>&1 &
cpid=$!
for i in $(seq 300); do [ -s "$TMP/j4" ] && break; sleep 0.01; done
kill -KILL "$cpid"
wait "$cpid" 2>/dev/null || true
check "SIGKILL to the caller: its job is gone within 2 s" pid_gone "$(cat "$TMP/j4")" 2000

# 4. Callers it must not serve run their jobs themselves; controls are served.
check "control: a caller like the others is served" served "$(served_run)"
if unshare -m true 2>/dev/null; then
	check "a caller in another mount namespace is not served" not_served "$(served_run unshare -m)"
else
	SKIP_WHY="unshare -m is not permitted here"
	skip "a caller in another mount namespace is not served"
fi
cat >"$TMP/seccomp.py" <<'PYEOF'
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
prog = ctypes.create_string_buffer(struct.pack("HBBI", 0x06, 0, 0, 0x7fff0000))  # return ALLOW
class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
fp = Fprog(1, ctypes.addressof(prog))
if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(fp), 0, 0):
    sys.exit(99)
os.execv(sys.argv[1], sys.argv[1:])
PYEOF
out=$(served_run "$PY" "$TMP/seccomp.py")
if [ $? -ne 99 ]; then
	check "a caller under a seccomp filter is not served ($out)" not_served "$out"
else
	SKIP_WHY="a seccomp filter cannot be set here"
	skip "a caller under a seccomp filter is not served"
fi
mkdir "$PARENT/elsewhere"
out=$(sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$PARENT/elsewhere" "$LEASH" run --cgroup-parent "$PARENT" -- sh -c "$probe" </dev/null 2>&1)
check "a caller in a cgroup it does not serve is not served ($out)" not_served "$out"
rmdir "$PARENT/elsewhere"

# 5. A hostile peer: garbage, or a connection that sends nothing, stalls no one.
"$PY" - "$SOCK" <<'PYEOF' &
import socket, sys, time
g = socket.socket(socket.AF_UNIX); g.connect(sys.argv[1]); g.sendall(b"\xff" * 4096)
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(3)
PYEOF
hostile=$!
sleep 0.3
check "served while a peer sent garbage and another sends nothing" served "$(served_run)"
wait "$hostile"
check "the launcher survived them" kill -0 "$RPID"
# a head whose string counts wrap around 32 bits (the launcher crashed on it before they
# were bounded by the blob), and a well-formed request from another program (refused: it
# is no leash; the launcher goes on serving, where an upgraded leash would end it)
"$PY" - "$SOCK" <<'PYEOF'
import os, socket, struct, sys
def head(argc, envc, blob_len):
    h = struct.pack("=IIIIQQI", 0x6c656173, 1, argc, envc, blob_len, 0, 0) + b"\0" * (63 * 4 + 63)
    return h + b"\0" * (-len(h) % 8)
for h, blob in ((head(2, 0xffffffff, 4), b"ab\0\0"), (head(3, 0, 15), b"leash\0run\0true\0")):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    try:  # refused at the head, the connection may be closed before the blob
        socket.send_fds(s, [h], [os.open(".", os.O_RDONLY)])
        s.sendall(blob)
        s.recv(256)
    except OSError:
        pass
PYEOF
check "the launcher survived a wrapped count and another program's request" kill -0 "$RPID"
check "and still serves" served "$(served_run)"

# 6. Another leash binary: a copy elsewhere is refused (it runs its own job) and the
# launcher goes on; its own program replaced at its path (an upgrade) ends the launcher.
cp "$(readlink "/proc/$RPID/exe")" "$TMP/leash-other"
out=$("$TMP/leash-other" run --cgroup-parent "$PARENT" -- sh -c "$probe" </dev/null 2>&1)
check "a caller running another leash binary runs its job itself" not_served "$out"
check "control: and the launcher goes on serving" served "$(served_run)"
mkdir -m 0700 "$SOCKDIR/bin" "$SOCKDIR/b" # a launcher per directory (its lock)
# the program itself, as the first launcher runs it ($LEASH may be libtool's wrapper script)
cp "$(readlink "/proc/$RPID/exe")" "$SOCKDIR/bin/leash"
"$SOCKDIR/bin/leash" __resident --socket "$SOCKDIR/b/s2" --accept-cgroup "$own" </dev/null >/dev/null 2>&1 &
R2=$!
for i in $(seq 200); do [ -S "$SOCKDIR/b/s2" ] && break; sleep 0.01; done
check "a launcher from a copy of leash listens" test -S "$SOCKDIR/b/s2"
out=$(LEASH_RESIDENT_SOCKET=$SOCKDIR/b/s2 "$SOCKDIR/bin/leash" run --cgroup-parent "$PARENT" -- sh -c "$probe" </dev/null 2>&1)
check "a launcher from a leash at a path serves that leash ($out)" grep -qx "gp=$R2" <<<"$out"
cp "$(readlink "/proc/$RPID/exe")" "$SOCKDIR/bin/leash.new" && mv "$SOCKDIR/bin/leash.new" "$SOCKDIR/bin/leash"
out=$(LEASH_RESIDENT_SOCKET=$SOCKDIR/b/s2 "$SOCKDIR/bin/leash" run --cgroup-parent "$PARENT" -- sh -c "$probe" </dev/null 2>&1)
check "that leash replaced at its path (an upgrade): its caller runs its job itself" \
	eval 'grep -q "^gp=[0-9]" <<<"$out" && ! grep -qx "gp=$R2" <<<"$out"'
for i in $(seq 300); do kill -0 "$R2" 2>/dev/null || break; sleep 0.01; done
check "and that launcher has ended" eval '! kill -0 "$R2" 2>/dev/null'
check "and removed its socket" test ! -e "$SOCKDIR/b/s2"

# A planted symlink for the socket's directory (to a 0700 directory of the same owner: only
# lstat tells them apart): the launcher refuses it and makes nothing there; the control, a real 0700 directory, is
# used above (b/).
mkdir -m 0700 "$SOCKDIR/elsewhere"
ln -s "$SOCKDIR/elsewhere" "$SOCKDIR/link"
"$LEASH" __resident --socket "$SOCKDIR/link/s3" --accept-cgroup "$own" </dev/null >/dev/null 2>&1
rc=$?
check "a symlinked socket directory: the launcher refuses it (exit $rc) and makes nothing there" \
	eval 'test "$rc" = 125 && [ -z "$(ls -A "$SOCKDIR/elsewhere")" ]'

# 7. SIGTERM ends a launcher, which removes its socket.
kill -TERM "$RPID"
wait "$RPID"
check "SIGTERM: the launcher exits 0 and removes its socket" test $? = 0 -a ! -e "$SOCK"
rm -rf "$SOCKDIR"
finish
