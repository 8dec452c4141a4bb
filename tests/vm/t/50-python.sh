#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The Python package on a real cgroup-v2 kernel: a function that allocates past
# memory= is OOM-killed in its cgroup and raises leash.MemoryLimitExceeded (also a
# MemoryError) with reason memory; one that forks past pids= raises PidsLimitExceeded;
# the pynisher drop-in turns the OOM kill into MemoryLimitException, where pynisher
# itself would guess. (tests/python itself runs in make check; under emulation its
# full run exceeds a guest script's time.)

. "$(dirname "$0")/../../integration/lib.sh"

PY=/usr/bin/python3
BUILD=${LEASH_VM_BUILDDIR:-}
if [ -z "$BUILD" ] || ! ls "$BUILD"/python/leash/_leash*.so >/dev/null 2>&1; then
	skip_all "the Python package is not built in ${BUILD:-the build tree}"
fi
for c in memory pids; do
	has_controller $c || { not_ok "the $c controller is available under $PARENT"; finish; }
done
export PYTHONPATH=$BUILD/python

cat >"$TMP/oom.py" <<'PYEOF'
import json, os, sys
import leash
import leash.compat.pynisher as pynisher

leash.configure(cgroup_parent=sys.argv[1])

def allocate(mib):
    blocks = []
    for _ in range(mib):
        b = bytearray(1 << 20)
        b[::4096] = b"x" * len(b[::4096])
        blocks.append(b)
    return len(blocks)

def fork_many(n):
    pids = [os.fork() or os._exit(0) for _ in range(n)]
    return len(pids)

out = {}
try:
    leash.limit(allocate, memory="64M", wall_time=60)(256)
    out["oom"] = "no exception"
except leash.MemoryLimitExceeded as e:
    print("caught: %s: %s" % (type(e).__name__, e))
    print("isinstance MemoryError: %s; reason %s; enforced_by %s; oom_kills %s; signal %s" % (
        isinstance(e, MemoryError), e.report["reason"], e.report["limits"]["memory"]["enforced_by"],
        e.report["usage"]["oom_kills"], e.report["exit"]["signal"]))
    out["oom"] = [type(e).__name__, isinstance(e, MemoryError), e.report["reason"],
                  e.report["limits"]["memory"]["enforced_by"], e.report["usage"]["oom_kills"]]
try:
    leash.limit(fork_many, pids=16, wall_time=60)(64)
    out["pids"] = "no exception"
except leash.PidsLimitExceeded as e:
    out["pids"] = [type(e).__name__, e.report["reason"], e.report["usage"]["pids_max_events"]]
except Exception as e:
    out["pids"] = [type(e).__name__, str(e)]
try:
    pynisher.limit(allocate, memory=(64, "MB"), wall_time=60)(256)
    out["pynisher"] = "no exception"
except pynisher.MemoryLimitException as e:
    out["pynisher"] = [type(e).__name__]
print(json.dumps(out))
PYEOF
"$PY" "$TMP/oom.py" "$PARENT" >"$TMP/out" 2>"$TMP/err"
rc=$?
while read -r line; do diag "$line"; done <"$TMP/out"
check "the Python probe ran (status $rc)" test "$rc" = 0
res=$(tail -1 "$TMP/out")
check "OOM in a limited function: MemoryLimitExceeded, a MemoryError, reason memory, by cgroup, oom_kills >= 1" \
	"$PY" -c 'import json,sys; o=json.loads(sys.argv[1])["oom"]; sys.exit(not (o[:4] == ["MemoryLimitExceeded", True, "memory", "cgroup"] and o[4] >= 1))' "$res"
check "forks past pids=16: PidsLimitExceeded, reason pids" \
	"$PY" -c 'import json,sys; o=json.loads(sys.argv[1])["pids"]; sys.exit(not (o[:2] == ["PidsLimitExceeded", "pids"]))' "$res"
check "the pynisher drop-in: the OOM kill is a MemoryLimitException" \
	"$PY" -c 'import json,sys; sys.exit(json.loads(sys.argv[1])["pynisher"] != ["MemoryLimitException"])' "$res"
[ -s "$TMP/err" ] && diag "stderr: $(tail -5 "$TMP/err" | tr '\n' ' ')"

finish
