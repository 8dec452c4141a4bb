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
# The manager's paths (AttachProcessesToUnit, a scope) are what these scripts test; the
# resident launcher, which a login session's later launches would use, has its own
# (user-50-resident.sh), which turns it back on.
export LEASH_RESIDENT=0

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

# truth_tap FILE [PREFIX]: tests/truth/matrix.py's TAP in FILE renumbered into this
# script's, each description after PREFIX (a TODO line, a known lie, fails nothing).
truth_tap() {
	local line
	while IFS= read -r line; do
		case $line in
		"not ok "*"# TODO"*) _tap_n=$((_tap_n + 1)); echo "not ok $_tap_n - ${2:-}${line#not ok * - }" ;;
		"not ok "*) tap_fail "${2:-}${line#not ok * - }" ;;
		"ok "*) _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - ${2:-}${line#ok * - }" ;;
		"# "*) echo "$line" ;;
		esac
	done <"$1"
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

# This script's service manager: the user's for an ordinary user, the system's for root.
if [[ $(id -u) -eq 0 ]]; then
	SCTL=(systemctl)
	SRUN=(systemd-run)
else
	SCTL=(systemctl --user)
	SRUN=(systemd-run --user)
fi

# wait_for SECONDS CMD...: until CMD succeeds; 1 when it still fails after SECONDS (the
# bound is a correctness bound the caller names, never a timing).
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < end)) || return 1
		sleep 0.2
	done
}

# stopped_scope FILE: the leash scope of the cgroup in FILE (/proc/PID/cgroup) is one this
# test stops: systemd may log ENODEV for it (tests/vm/systemd-suite.sh passes that by).
stopped_scope() {
	local s
	s=$(sed -n 's|^0::.*/leash.slice/\(leash-[^/]*\.scope\)/.*|\1|p' "$1" 2>/dev/null)
	[[ -z $s ]] || echo "$s" >>/run/leash-vm-stopped-scopes
}

# no_leash_scope: the manager has no leash-*.scope loaded.
no_leash_scope() { [[ -z $("${SCTL[@]}" list-units --all --plain --no-legend 'leash-*.scope') ]]; }

# stop_proofs: `systemctl [--user] stop` of a service whose main process is a shell that
# runs `leash run`, and of one whose shell runs Python calling a leash.limit function in
# a loop, stops the job through leash's ladder (the job ignores SIGTERM, so only the
# grace's SIGKILL ends it), leaves nothing, and the report says interrupted.  Each job
# sleeps 40 s: before the fix leash moved itself out of the stopped unit and its job ran
# on, so the 35 s bound below is a correctness bound (the job would still be there).
stop_proofs() {
	local unit=leash-vm-stop-sh-$$ jpid i
	cat >"$TMP/svc.sh" <<'SVC'
"$LEASH" run -w 300s -o "$DIR/sh.json" -- /bin/sh -c 'trap "" TERM; echo $$ >"$1/job.pid"; exec sleep 40' sh "$DIR"
echo "$?" >"$DIR/leash.rc"
SVC
	"${SRUN[@]}" --quiet --unit="$unit" -E LEASH="$LEASH" -E DIR="$TMP" -E LEASH_CONFIG_DIR="$LEASH_CONFIG_DIR" \
		/bin/sh "$TMP/svc.sh"
	wait_for 120 test -s "$TMP/job.pid"
	jpid=$(cat "$TMP/job.pid")
	tap_diag "shell service: the job $jpid in $(cat "/proc/$jpid/cgroup" 2>&1)"
	stopped_scope "/proc/$jpid/cgroup"
	"${SCTL[@]}" stop "$unit.service"
	tap_is "$?" 0 "systemctl stop $unit.service"
	wait_for 35 test -s "$TMP/sh.json"
	tap_is "$(jget "$TMP/sh.json" reason)" interrupted "the shell's leash run: reason interrupted"
	tap_check "its job ($jpid) is gone" gone "$jpid"
	wait_for 35 no_leash_scope
	tap_check "no leash scope is left" no_leash_scope
	kill -KILL "$jpid" 2>/dev/null

	unit=leash-vm-stop-py-$$
	cat >"$TMP/loop.py" <<'PYEOF'
import os, sys, time
import leash

def job(d):
    with open(os.path.join(d, "py.pid"), "w") as f:
        f.write("%d %d" % (os.getpid(), main))
    time.sleep(40)

main = os.getpid()

f = leash.limit(wall_time=300, memory="64M")(job)
for _ in range(100):
    f(sys.argv[1])
PYEOF
	"${SRUN[@]}" --quiet --unit="$unit" -E PYTHONPATH="$LEASH_VM_BUILDDIR/python" -E LEASH_CONFIG_DIR="$LEASH_CONFIG_DIR" \
		/bin/sh -c "$PY '$TMP/loop.py' '$TMP'; echo \$? >'$TMP/py.rc'"
	wait_for 120 test -s "$TMP/py.pid"
	read -r jpid mpid <"$TMP/py.pid"
	tap_diag "Python service: Python $mpid in $(cat "/proc/$mpid/cgroup" 2>&1), the call's job $jpid"
	stopped_scope "/proc/$jpid/cgroup"
	"${SCTL[@]}" stop "$unit.service"
	tap_is "$?" 0 "systemctl stop $unit.service"
	wait_for 35 gone "$jpid" "$mpid"
	tap_check "the leash.limit call's job ($jpid) and its Python ($mpid) are gone" gone "$jpid" "$mpid"
	wait_for 35 no_leash_scope
	tap_check "no leash scope is left" no_leash_scope
	kill -KILL "$jpid" "$mpid" 2>/dev/null
}

# gone PID...: none of them runs.
gone() {
	local p
	for p; do
		! kill -0 "$p" 2>/dev/null || return 1
	done
}

# ps_proofs: a running job, placed where leash run puts it with no --cgroup-parent (the
# shared leash-jobs.service), is listed by `leash ps` with no option, found by `leash stat`
# by its pid, and the placement ps names is the one the job's report names.
ps_proofs() {
	local BG JPID JCG where
	"$LEASH" run -n ps-probe -o "$TMP/bg.json" -- sleep 30 >/dev/null 2>&1 &
	BG=$!
	wait_for 20 grep -q leash "/proc/$BG/cgroup" 2>/dev/null
	wait_for 20 pgrep -P "$BG" -x sleep >/dev/null
	JPID=$(pgrep -P "$BG" -x sleep)
	tap_check "the job runs (leash $BG, sleep ${JPID:-none})" test -n "$JPID"
	JCG=$(sed -n 's/^0:://p' "/proc/$JPID/cgroup" 2>/dev/null)
	echo "# the job's cgroup: $JCG"

	"$LEASH" ps >"$TMP/ps.txt" 2>"$TMP/ps.err"
	tap_is "$?" 0 "leash ps exits 0 ($(head -1 "$TMP/ps.err"))"
	sed 's/^/# ps: /' "$TMP/ps.txt"
	tap_check "leash ps lists the job by its name, with its leash and main pids" \
		grep -qE "^ps-probe +$BG +$JPID " "$TMP/ps.txt"
	"$LEASH" ps -o json >"$TMP/ps.json" 2>"$TMP/ps.err"
	tap_check "leash ps -o json: the job among its jobs" "$PY" -c 'import json, sys
sys.exit(0 if any(j.get("cgroup", "").endswith("/" + sys.argv[2]) for j in json.load(open(sys.argv[1]))["jobs"]) else 1)' \
		"$TMP/ps.json" "$(basename "$JCG")"
	"$LEASH" stat "$JPID" >"$TMP/stat.txt" 2>"$TMP/stat.err"
	tap_is "$?" 0 "leash stat PID finds the job ($(head -1 "$TMP/stat.err"))"
	kill "$BG"
	wait "$BG"
	where=$(jget "$TMP/bg.json" placement.path)
	tap_check "and its report placed it where ps looked ($where)" grep -qE "^placement: systemd $where " "$TMP/ps.txt"
}
