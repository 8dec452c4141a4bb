# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# Sourced by tests/vm/systemd/*.sh: tests/vm/tap.sh, a scratch directory, and the
# report reader.  No --cgroup-parent anywhere: where the job goes is what is tested.

. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"

PY=/usr/bin/python3
TMP=$(mktemp -d)
trap 'rm -rf -- "$TMP"' EXIT
CG=/sys/fs/cgroup

# jget FILE DOTTED.PATH: a field of a JSON report (null when absent).
jget() {
	"$PY" - "$1" "$2" <<'PYEOF'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split('.'):
    v = v.get(k) if isinstance(v, dict) else None
print('null' if v is None else (json.dumps(v) if isinstance(v, (dict, list)) else v))
PYEOF
}

# run_leash ARGS...: leash run; sets RC, OUT (stdout), ERR (stderr).
run_leash() {
	"$LEASH" run "$@" >"$TMP/out" 2>"$TMP/err"
	RC=$?
	OUT=$(cat "$TMP/out")
	ERR=$(cat "$TMP/err")
}

# keep NAME FILE: a copy for the host (the closing note's verbatim evidence).
keep() { cp "$2" "$LEASH_VM_KEEP/$1" 2>/dev/null; }
